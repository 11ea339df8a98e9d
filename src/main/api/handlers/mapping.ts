/**
 * Handlers for "any table by mapping": the mapping dialog asks for a store's tables,
 * a suggested mapping and a live preview, then opens the store through the mapping.
 * The store is a SQLite file (`path`) or a Postgres database (`pg`: the form's fields
 * or a saved connection, with pg.connect's password rules). It is only ever read;
 * the mapping is saved in the store's workspace.
 */
import path from 'node:path'
import type { PgTarget } from '../../../shared/contract'
import type { Mapping } from '../../../shared/mapping'
import { inspectTables, previewFile, suggestForFile, type FileOptions } from '../../store/mapped/file'
import { assertPgMappingFits, inspectPgTables, previewPg, suggestForPg, type PgDialogOptions } from '../../store/mapped/pgTables'
import { isPostgresUrl } from '../../store/postgres/url'
import type { App } from '../app'
import type { Handlers } from '../register'
import { urlOfTarget } from './postgres'

type MappingChannels = 'store.tables' | 'store.suggestMapping' | 'store.previewMapping' | 'store.openMapped'

/** Where a mapping channel reads: a SQLite file, or a Postgres database by URL. */
type Source = { kind: 'file'; opts: FileOptions } | { kind: 'pg'; opts: PgDialogOptions; typed: ReturnType<typeof urlOfTarget>['typed'] }

export function mappingHandlers(app: App): Pick<Handlers, MappingChannels> {
  // Paths as for store.open (App.confine): in the desktop app only files picked in its dialog.
  const ws = (w: string | undefined, what: string) => (w === undefined ? undefined : app.confine(w, `${what} workspacePath`, 'write'))
  const fallbackDir = () => path.join(app.dataDir, 'workspaces')
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
  const openMapped = (i: { path?: string; pg?: PgTarget; workspacePath?: string; saveAs?: string; mapping: Mapping }) => {
    if (!i.pg) return app.open(app.confine(i.path!, 'store.openMapped', 'read'), { workspacePath: ws(i.workspacePath, 'store.openMapped'), mapping: i.mapping })
    const s = pgSource(i.pg, ws(i.workspacePath, 'store.openMapped'))
    if (i.saveAs && s.typed) app.connections.assertCanSave(s.typed.password)
    // The sampled checks the SQLite side makes on open (times in range, a unique id, one vector length): BAD_INPUT naming the column.
    assertPgMappingFits(s.opts, i.mapping)
    const info = app.open(s.opts.url, { workspacePath: s.opts.workspacePath, mapping: i.mapping })
    if (i.saveAs && s.typed) app.connections.save(i.saveAs, s.typed.url, s.typed.password)
    return info
  }
  return {
    'store.tables': (i) => {
      const s = source(i, 'store.tables')
      return s.kind === 'pg' ? inspectPgTables(s.opts) : inspectTables(s.opts)
    },
    'store.suggestMapping': (i) => {
      const s = source(i, 'store.suggestMapping')
      return s.kind === 'pg' ? suggestForPg(s.opts, i.table) : suggestForFile(s.opts, i.table)
    },
    'store.previewMapping': (i) => {
      const s = source(i, 'store.previewMapping')
      return s.kind === 'pg' ? previewPg(s.opts, i.mapping) : previewFile(s.opts, i.mapping)
    },
    'store.openMapped': openMapped,
  }
}
