/**
 * Opening a memory store: which source kind and layout a path (or URL) is.
 * Built-in layouts are registered in LAYOUTS, the same list a third party
 * would extend (Datasette's DEFAULT_PLUGINS); a new SQLite-based store is one
 * folder exporting an Adapter, added here. A `postgres://` / `postgresql://`
 * URL opens the Postgres source (store/postgres/), whose layouts are detected
 * from information_schema.
 */
import { engramAdapter } from './engram/layout'
import { PgSource } from './postgres/source'
import { isPostgresUrl } from './postgres/url'
import type { MemorySource } from './source'
import type { Adapter } from './sqlite/layouts'
import { canonicalAdapter } from './sqlite/layouts'
import { SqliteSource, type SqliteOpenOptions } from './sqlite/source'

/** SQLite layouts, tried in order (the canonical schema first). */
export const LAYOUTS: Adapter[] = [canonicalAdapter, engramAdapter]

export type OpenOptions = SqliteOpenOptions

/** Open a SQLite memory store read-only (unless `write`), with its workspace. */
export function openSource(opts: OpenOptions): SqliteSource {
  return SqliteSource.open(opts, LAYOUTS)
}

/**
 * Open any memory store by path or URL: a SQLite file, or a `postgres://` URL
 * (read-only, search pushed down). What the CLI, `serve`, the app and the
 * Library use.
 */
export function openStore(opts: OpenOptions): MemorySource {
  if (isPostgresUrl(opts.path))
    return PgSource.open({ url: opts.path, workspacePath: opts.workspacePath, fallbackDir: opts.fallbackDir, nativeBinding: opts.nativeBinding, write: opts.write, countCap: opts.countCap })
  return openSource(opts)
}

export type { MemorySource }
