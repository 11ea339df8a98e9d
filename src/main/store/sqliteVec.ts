/**
 * sqlite-vec for reading `vec0` virtual tables (mcp-memory-service, LangGraph's
 * store_vectors) on the agent's read-only connection. The extension comes from the
 * `sqlite-vec` npm package; loading it registers functions and the vec0 module only,
 * it writes nothing to the file.
 */
import { createRequire } from 'node:module'
import type Database from 'better-sqlite3'
import { RecallscopeError } from '../../shared/result'

const loaded = new WeakSet<Database.Database>()

/** Load sqlite-vec into `db` once. Throws INTERNAL with the reason when the package or its platform build is missing. */
export function loadSqliteVec(db: Database.Database): void {
  if (loaded.has(db)) return
  try {
    // Resolved on first use, so a build without the package still opens every other layout.
    const sqliteVec = createRequire(__filename)('sqlite-vec') as { getLoadablePath(): string }
    db.loadExtension(sqliteVec.getLoadablePath())
  } catch (e) {
    throw new RecallscopeError('INTERNAL', `Cannot load the sqlite-vec extension (needed for vec0 tables): ${(e as Error).message}`)
  }
  loaded.add(db)
}

/** True when the file declares a vec0 virtual table named `table`. */
export function isVec0Table(db: Database.Database, table: string): boolean {
  const sql = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).pluck().get(table) as string | undefined
  return typeof sql === 'string' && /USING\s+vec0\s*\(/i.test(sql)
}

/**
 * Load sqlite-vec when the file declares any vec0 table: without the module even
 * `PRAGMA table_info` on such a table fails ("no such module: vec0"). Returns whether it did.
 */
export function loadSqliteVecIfDeclared(db: Database.Database): boolean {
  const n = db.prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING vec0%'`).pluck().get() as number
  if (n === 0) return false
  loadSqliteVec(db)
  return true
}
