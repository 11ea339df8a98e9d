/**
 * Handlers for "any table by mapping": the mapping dialog asks for a file's tables,
 * a suggested mapping and a live preview, then opens the file through the mapping.
 * The file is only ever read; the mapping is saved in the store's workspace.
 */
import path from 'node:path'
import { RecallscopeError } from '../../../shared/result'
import { inspectTables, previewFile, suggestForFile, type FileOptions } from '../../store/mapped/file'
import { isPostgresUrl } from '../../store/postgres/url'
import type { App } from '../app'
import type { Handlers } from '../register'

type MappingChannels = 'store.tables' | 'store.suggestMapping' | 'store.previewMapping' | 'store.openMapped'

export function mappingHandlers(app: App): Pick<Handlers, MappingChannels> {
  // Paths as for store.open (App.confine): in the desktop app only files picked in its dialog.
  const ws = (w: string | undefined, what: string) => (w === undefined ? undefined : app.confine(w, `${what} workspacePath`, 'write'))
  const file = (p: string, what: string, workspacePath?: string): FileOptions => {
    // The dialog reads SQLite files; a Postgres table opens with a mapping file (`--map`) or store.openMapped.
    if (isPostgresUrl(p))
      throw new RecallscopeError(
        'BAD_INPUT',
        'The mapping dialog reads SQLite files: open a Postgres table with a mapping (store.openMapped, or --map FILE on the CLI)',
      )
    return {
      path: app.confine(p, what, 'read'),
      workspacePath: ws(workspacePath, what),
      nativeBinding: app.nativeBinding,
      fallbackDir: path.join(app.dataDir, 'workspaces'),
    }
  }
  return {
    'store.tables': (i) => inspectTables(file(i.path, 'store.tables', i.workspacePath)),
    'store.suggestMapping': (i) => suggestForFile(file(i.path, 'store.suggestMapping'), i.table),
    'store.previewMapping': (i) => previewFile(file(i.path, 'store.previewMapping'), i.mapping),
    'store.openMapped': (i) =>
      app.open(app.confine(i.path, 'store.openMapped', 'read'), { workspacePath: ws(i.workspacePath, 'store.openMapped'), mapping: i.mapping }),
  }
}
