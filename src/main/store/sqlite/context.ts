/**
 * What the SQLite source's query modules (browse, facts, events, candidates,
 * vectors) share: the two connections, the detected layout and a few cached
 * helpers. `SqliteSource` implements it; the modules take it as their first
 * argument, so the class stays a thin list of methods.
 */
import type Database from 'better-sqlite3'
import type { MalformedCounts, Memory } from '../../../shared/types'
import type { SqlLayout } from './layouts'

export interface Memo {
  version: string | null
  memories: Map<string, Memory>
  scopes: Map<string, unknown>
}

export interface FtsTable {
  /** the FTS5 table's name (for bm25() and MATCH) */
  name: string
  /** its name as seen from the agent connection (`ws.ws_fts` for the workspace's index) */
  qualified: string
}

export interface SqliteCtx {
  /** absolute path of the store the user opened (a file or a folder) */
  readonly path: string
  /**
   * false when `db` is an in-memory copy read from a non-SQLite store (a JSONL file, a folder):
   * then there is no file to memory-map, snapshot or write.
   */
  readonly fileBacked: boolean
  /** the private copy read instead of `path` when its folder is read-only and it needed recovery; else null */
  readonly snapshotPath: string | null
  readonly workspacePath: string
  /** agent connection (read-only unless write mode), with the workspace attached as `ws` */
  readonly db: Database.Database
  /** workspace connection (ours, read-write) */
  readonly ws: Database.Database
  readonly sql: SqlLayout
  readonly readOnly: boolean
  readonly countCap: number
  readonly malformed: MalformedCounts
  /** (owner_type, owner_id) sub-selects of every stored vector: the agent's and the workspace's */
  readonly embeddingOwners: string[]
  /** Per-version memo of decoded rows and scope listings (emptied by any commit). */
  memo(): Memo
  /** The FTS table to query, building the workspace's index first when the store has none. */
  ftsTable(onProgress?: (done: number, total: number) => boolean | void): FtsTable
  /** Whether the workspace's FTS index has been built. */
  wsFtsReady(): boolean
  /** count(*) capped at countCap: {total, truncated}. */
  cappedCount(fromWhere: string, params: Record<string, unknown>): { total: number; truncated: boolean }
  /** A value cached in the workspace under the agent DB's content signature. */
  cached<T>(key: string, compute: () => T): T
}

/** The memories sub-select for a filter: the lean one (no session join) unless it filters by tenant. */
export function memSqlFor(ctx: Pick<SqliteCtx, 'sql'>, f: { tenantId?: string }): string {
  return f.tenantId === undefined ? ctx.sql.memoriesLite : ctx.sql.memories
}
