/**
 * Opening a memory store: which source kind and layout a path (or URL) is.
 * Built-in layouts are registered in LAYOUTS, the same list a third party
 * would extend (Datasette's DEFAULT_PLUGINS); a new SQLite-based store is one
 * folder exporting an Adapter, added here.
 */
import { engramAdapter } from './engram/layout'
import type { MemorySource } from './source'
import type { Adapter } from './sqlite/layouts'
import { canonicalAdapter } from './sqlite/layouts'
import { SqliteSource, type SqliteOpenOptions } from './sqlite/source'

/** SQLite layouts, tried in order (the canonical schema first). */
export const LAYOUTS: Adapter[] = [canonicalAdapter, engramAdapter]

export type OpenOptions = SqliteOpenOptions

/** Open a memory store read-only (unless `write`), with its workspace. */
export function openSource(opts: OpenOptions): SqliteSource {
  return SqliteSource.open(opts, LAYOUTS)
}

export type { MemorySource }
