/**
 * SQL helpers shared by the framework adapters (frameworks/<name>/): the
 * frameworks store timestamps as ISO-8601 text, the canonical shape wants epoch ms.
 */
import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { openRegularFile } from '../safeFiles'

/**
 * An SQL expression turning an ISO-8601 text timestamp (any fractional digits, `Z` or
 * `±HH:MM`) into epoch ms; numbers pass through (some writers store epoch values).
 * SQLite's julianday() parses every ISO form Python's isoformat() and JS toISOString() write.
 */
export function isoToMs(expr: string): string {
  return `(CASE typeof(${expr}) WHEN 'text' THEN CAST(round((julianday(${expr}) - 2440587.5) * 86400000.0) AS INTEGER) ELSE ${expr} END)`
}

/** The file behind a connection's main database ('' for in-memory). */
export function mainFile(db: Database.Database): string {
  return db.name === ':memory:' ? '' : path.resolve(db.name)
}

/** Table → columns of an attached schema. */
function readSchemaTables(db: Database.Database, schema: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  const names = db.prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type IN ('table','view')`).pluck().all() as string[]
  for (const name of names) {
    const cols = db.prepare(`SELECT name FROM pragma_table_info(?, ?)`).pluck().all(name, schema) as string[]
    out.set(name, new Set(cols))
  }
  return out
}

/** Is this the start of a SQLite file? (16-byte magic; unreadable → false.) */
export function looksLikeSqlite(file: string): boolean {
  try {
    const fd = openRegularFile(file) // a FIFO is not SQLite and must not block the sniff
    try {
      const buf = Buffer.alloc(16)
      const n = fs.readSync(fd, buf, 0, 16, 0)
      return n === 16 && buf.toString('latin1') === 'SQLite format 3\0'
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return false
  }
}

/**
 * Attach a sibling SQLite file under `schema` on the (read-only) agent connection. An
 * attached file inherits the connection's read-only open flags and `query_only`, so it
 * is never written. Returns its tables, or null when it cannot be attached.
 */
export function attachSibling(db: Database.Database, file: string, schema: string): Map<string, Set<string>> | null {
  try {
    const already = (db.prepare(`SELECT name FROM pragma_database_list`).pluck().all() as string[]).includes(schema)
    if (!already) db.prepare(`ATTACH DATABASE ? AS ${schema}`).run(file)
    return readSchemaTables(db, schema)
  } catch {
    return null
  }
}
