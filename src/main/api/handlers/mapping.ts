/**
 * Handlers for "any table by mapping": the mapping dialog asks for a store's tables,
 * a suggested mapping and a live preview, then opens the store through the mapping.
 * The store is a SQLite file (`path`) or a Postgres database (`pg`: the form's fields
 * or a saved connection, with pg.connect's password rules). It is only ever read;
 * the mapping is saved in the store's workspace.
 */
import type { PgTarget } from '../../../shared/contract'
import type { Mapping } from '../../../shared/mapping'
import type { InspectSource } from '../inspect'
import { isPostgresUrl } from '../../store/postgres/url'
import type { App } from '../app'
import type { Handlers } from '../register'
import { urlOfTarget } from './postgres'

type MappingChannels = 'store.tables' | 'store.suggestMapping' | 'store.previewMapping' | 'store.openMapped'

/** Where a mapping channel reads (`typed`: the form's URL and password, what saving the connection needs). */
type Source = InspectSource & { typed?: ReturnType<typeof urlOfTarget>['typed'] }

/** The source without the form's password record (only saving needs it; it does not cross to a worker). */
function plain(s: Source): InspectSource {
  return s.kind === 'pg' ? { kind: 'pg', opts: s.opts } : { kind: 'file', opts: s.opts }
}

export function mappingHandlers(app: App): Pick<Handlers, MappingChannels> {
  // Paths as for store.open (App.confine): in the desktop app only files picked in its dialog.
  const ws = (w: string | undefined, what: string) => (w === undefined ? undefined : app.confine(w, `${what} workspacePath`, 'write'))
  const fallbackDir = () => app.fallbackDir
  const pgSource = (pg: PgTarget, workspacePath: string | undefined) => {
    const { url, typed } = urlOfTarget(app, pg)
    return { kind: 'pg' as const, opts: { url, workspacePath, nativeBinding: app.nativeBinding, fallbackDir: fallbackDir() }, typed }
  }
  const source = (i: { path?: string; pg?: PgTarget; workspacePath?: string }, what: string): Source => {
    // A postgres:// URL given as the path is read as pg.connect reads the form's URL (no password from the page in browser mode).
    const pg = i.pg ?? (isPostgresUrl(i.path) ? { conn: { url: i.path } } : undefined)
    const workspacePath = ws(i.workspacePath, what)
    if (pg) return pgSource(pg, workspacePath)
    return {
      kind: 'file',
      opts: { path: app.confine(i.path!, what, 'read'), workspacePath, nativeBinding: app.nativeBinding, fallbackDir: fallbackDir() },
    }
  }
  const openMapped = async (i: { path?: string; pg?: PgTarget; workspacePath?: string; saveAs?: string; mapping: Mapping }) => {
    if (!i.pg)
      return app.openStore(app.confine(i.path!, 'store.openMapped', 'read'), { workspacePath: ws(i.workspacePath, 'store.openMapped'), mapping: i.mapping })
    const s = pgSource(i.pg, ws(i.workspacePath, 'store.openMapped'))
    if (i.saveAs && s.typed) app.connections.assertCanSave(s.typed.password)
    // The sampled checks the SQLite side makes on open (times in range, a unique id, one vector length): BAD_INPUT naming the column.
    const info = await app.openStore(s.opts.url, { workspacePath: s.opts.workspacePath, mapping: i.mapping, checkMapping: true })
    if (i.saveAs && s.typed) app.connections.save(i.saveAs, s.typed.url, s.typed.password)
    return info
  }
  return {
    // The reading runs where App.inspect runs it (a store host worker on the server and in the app).
    'store.tables': (i) => app.inspect({ kind: 'tables', source: plain(source(i, 'store.tables')) }),
    'store.suggestMapping': (i) => app.inspect({ kind: 'suggest', source: plain(source(i, 'store.suggestMapping')), table: i.table }),
    'store.previewMapping': (i) => app.inspect({ kind: 'preview', source: plain(source(i, 'store.previewMapping')), mapping: i.mapping }),
    'store.openMapped': openMapped,
  }
}
