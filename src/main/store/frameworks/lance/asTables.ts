/**
 * A LanceDB folder as SQLite tables, for "any table by mapping": every `<table>.lance` becomes an
 * in-memory SQLite table of the same name with the same columns, so the mapping dialog (list the
 * tables, suggest a mapping, preview 20 rows) and the mapped source work on a LanceDB table exactly
 * as on a SQLite one. The folder is only read (lance/read.ts: read calls in a child process).
 *
 * Columns: strings → TEXT, integers and booleans → INTEGER, floats → REAL, structs, lists and maps →
 * JSON text, binary → NULL; the vector column (a fixed-size float list) → a little-endian float32 BLOB
 * (the mapping's `f32` encoding), all-zero placeholders → NULL (no direction, no cosine). Rows keep
 * LanceDB's order (rowid = row number).
 */
import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import DatabaseCtor from 'better-sqlite3'
import { lanceTableNames, readLanceTables, sliceVector, type LanceTable } from './read'

/** The SQLite type a LanceDB (Arrow) field is stored as. */
function sqliteType(arrowType: string, isVector: boolean): string {
  if (isVector) return 'BLOB'
  if (/^(Utf8|LargeUtf8)$/.test(arrowType)) return 'TEXT'
  if (/^(Int|Uint)\d+$|^Bool$/.test(arrowType)) return 'INTEGER'
  if (/^Float\d+$/.test(arrowType)) return 'REAL'
  return ''
}

/** A cell as SQLite stores it: objects and arrays as JSON text, booleans as 0/1. */
function cell(v: unknown): string | number | null {
  if (v === null || v === undefined) return null
  if (typeof v === 'boolean') return v ? 1 : 0
  if (typeof v === 'number' || typeof v === 'string') return v
  return JSON.stringify(v)
}

const qi = (name: string) => `"${name.replace(/"/g, '""')}"`

function addTable(db: Database.Database, t: LanceTable, vectors: Buffer, start: number): number {
  const cols = t.fields.map((f) => ({ name: f.name, type: sqliteType(f.type, f.name === t.vectorColumn) }))
  db.exec(`CREATE TABLE ${qi(t.name)} (${cols.map((c) => `${qi(c.name)}${c.type ? ` ${c.type}` : ''}`).join(', ')})`)
  const ins = db.prepare(`INSERT INTO ${qi(t.name)} (${cols.map((c) => qi(c.name)).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`)
  let at = start
  t.rows.forEach((r, i) => {
    const v = sliceVector(vectors, at, t.dims[i])
    at += t.dims[i] * 4
    ins.run(cols.map((c) => (c.name === t.vectorColumn ? (v ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : null) : cell(r[c.name]))))
  })
  return at
}

/**
 * What changes when any table of the folder gets a new version: each table's manifests (`_versions/<n>.manifest`,
 * one per commit) by name, size and time.
 */
function versionKey(dir: string): string {
  return lanceTableNames(dir)
    .map((t) => {
      const v = path.join(dir, `${t}.lance`, '_versions')
      let files: string[] = []
      try {
        files = fs.readdirSync(v).sort()
      } catch {
        /* no manifests yet */
      }
      const manifests = files.map((f) => {
        const st = fs.statSync(path.join(v, f), { throwIfNoEntry: false })
        return `${f}/${st?.size ?? '-'}/${st?.mtimeMs ?? '-'}`
      })
      return `${t}:${manifests.join(',')}`
    })
    .join('|')
}

/**
 * The last folder read, as SQLite bytes: the mapping dialog asks for tables, a suggestion and a preview per
 * change of a select, and each read is a child process through LanceDB (0.5–2 s); unchanged versions reuse it.
 */
let cached: { dir: string; key: string; bytes: Buffer } | null = null

function openDb(src: string | Buffer, nativeBinding?: string): Database.Database {
  return new DatabaseCtor(src, nativeBinding ? { nativeBinding } : {})
}

/** Every table of a LanceDB folder as a table of a fresh in-memory SQLite DB (the caller closes it). */
export function lanceAsSqlite(dir: string, opts: { nativeBinding?: string } = {}): Database.Database {
  const key = versionKey(dir)
  if (cached && cached.dir === dir && cached.key === key) return openDb(cached.bytes, opts.nativeBinding)
  const { tables, vectors } = readLanceTables(dir, '*')
  const db = openDb(':memory:', opts.nativeBinding)
  try {
    let offset = 0
    db.transaction(() => {
      for (const t of tables) offset = addTable(db, t, vectors, offset)
    })()
    cached = { dir, key, bytes: db.serialize() }
  } catch (e) {
    db.close()
    throw e
  }
  return db
}
