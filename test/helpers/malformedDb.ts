/**
 * The malformed-DB corpus (issue 10): canonical DBs damaged in one specific way each,
 * generated from the demo generator so nothing binary is committed.
 */
import fs from 'node:fs'
import Database from 'better-sqlite3'
import { generateDemo } from '../../src/main/demo/generate'

export const DEEP_JSON = '['.repeat(5000) + ']'.repeat(5000)

/** A demo DB with `memories` rows, then `mutate` run on a read-write connection. */
export function damagedDb(out: string, mutate: (db: Database.Database) => void, memories = 120): string {
  generateDemo({ out, memories })
  const db = new Database(out)
  try {
    mutate(db)
  } finally {
    db.close()
  }
  return out
}

/** One memory's metadata set to JSON nested 5000 deep; returns that memory's id. */
export function withDeepMetadata(db: Database.Database): string {
  const id = db.prepare(`SELECT id FROM memories ORDER BY created_at DESC LIMIT 1`).pluck().get() as string
  db.prepare(`UPDATE memories SET metadata = ? WHERE id = ?`).run(DEEP_JSON, id)
  return id
}

/** Overwrite `count` pages from the middle of the file with noise (a "damaged page"). */
export function damagePages(file: string, count = 4): void {
  const buf = fs.readFileSync(file)
  const pageSize = buf.readUInt16BE(16) === 1 ? 65536 : buf.readUInt16BE(16)
  const pages = Math.floor(buf.length / pageSize)
  const first = Math.max(2, Math.floor(pages / 2))
  const fd = fs.openSync(file, 'r+')
  try {
    let x = 12345
    for (let p = first; p < Math.min(pages, first + count); p++) {
      const noise = Buffer.alloc(pageSize)
      for (let i = 0; i < pageSize; i++) noise[i] = (x = (x * 1103515245 + 12345) & 0x7fffffff) & 0xff
      fs.writeSync(fd, noise, 0, pageSize, (p - 1) * pageSize)
    }
  } finally {
    fs.closeSync(fd)
  }
}

/** Cut the file to `fraction` of its size. */
export function truncateFile(file: string, fraction = 0.5): void {
  const size = fs.statSync(file).size
  fs.truncateSync(file, Math.floor(size * fraction))
}

/**
 * Overwrite the root pages of the full-text index's shadow tables with noise: the layout
 * probe then fails with SQLite's generic "vtable constructor failed", not "malformed".
 */
export function damageFtsPages(file: string): void {
  const db = new Database(file, { readonly: true })
  const roots = db.prepare(`SELECT rootpage FROM sqlite_master WHERE name LIKE 'memories_fts_%' AND rootpage > 0`).pluck().all() as number[]
  const pageSize = db.pragma('page_size', { simple: true }) as number
  db.close()
  if (!roots.length) throw new Error(`${file} has no memories_fts shadow tables`)
  const fd = fs.openSync(file, 'r+')
  try {
    for (const p of roots) fs.writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (p - 1) * pageSize)
  } finally {
    fs.closeSync(fd)
  }
}
