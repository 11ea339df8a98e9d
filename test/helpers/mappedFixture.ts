/**
 * Test helper: an "arbitrary" SQLite file recallscope has no layout for, the kind a
 * user maps by hand: unusual table and column names (spaces, mixed case, quotes),
 * unix-ms timestamps, float32 BLOB vectors in one table, JSON text vectors in
 * another, a sqlite-vec vec0 table keyed by rowid, and bad columns for the error
 * tests. Values come from a seeded PRNG; the returned rows are what the tests
 * compute the expected answers from (never the code under test).
 */
import { createRequire } from 'node:module'
import Database from 'better-sqlite3'

export const DIM = 8
/** created times: 2026-06-01T12:00Z + i hours, in ms */
export const BASE_MS = Date.UTC(2026, 5, 1, 12, 0, 0)

export interface FixtureRow {
  key: string
  text: string
  createdMs: number
  speaker: string
  thread: string
  who: string
  bot: string
  weight: number
  vec: number[]
}

function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), a | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const f32 = (v: number[]) => Buffer.from(new Float32Array(v).buffer)

/** Build the file; returns the rows as written (vectors already rounded to float32). */
export function buildMappedFixture(file: string, n = 40, seed = 7): FixtureRow[] {
  const r = prng(seed)
  const topics = ['deploy', 'billing', 'refund', 'staging', 'invoice', 'latency', 'rollback', 'on-call']
  const rows: FixtureRow[] = []
  for (let i = 0; i < n; i++) {
    const vec = Array.from(new Float32Array(Array.from({ length: DIM }, () => r() * 2 - 1)))
    rows.push({
      key: `n-${String(i).padStart(3, '0')}`,
      text: `note ${i}: the ${topics[i % topics.length]} ${topics[(i * 3) % topics.length]} thing`,
      createdMs: BASE_MS + i * 3_600_000,
      speaker: i % 2 ? 'Assistant' : 'user',
      thread: `t${i % 4}`,
      who: `u${i % 3}`,
      bot: 'helper-bot',
      weight: Math.round(r() * 100) / 100,
      vec,
    })
  }
  const db = new Database(file)
  const sqliteVec = createRequire(__filename)('sqlite-vec') as { getLoadablePath(): string }
  db.loadExtension(sqliteVec.getLoadablePath())
  db.exec(`
    CREATE TABLE "Agent Notes ""v2""" ("Note Key" TEXT PRIMARY KEY, "Body Text" TEXT, "whenMS" INTEGER, "Spkr" TEXT, "thread" TEXT,
      "who" TEXT, "bot" TEXT, "imp" REAL, "Emb" BLOB, "mood" TEXT, "bad blob" BLOB, "mixed" BLOB);
    CREATE TABLE json_vecs (rid INTEGER PRIMARY KEY, text TEXT, created_at INTEGER, embedding TEXT);
    CREATE VIRTUAL TABLE note_vec USING vec0(embedding float[${DIM}]);
    CREATE TABLE unrelated (a INTEGER, b TEXT);
  `)
  const ins = db.prepare(`INSERT INTO "Agent Notes ""v2""" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const insJ = db.prepare(`INSERT INTO json_vecs VALUES (?, ?, ?, ?)`)
  const insV = db.prepare(`INSERT INTO note_vec (rowid, embedding) VALUES (?, ?)`)
  db.transaction(() => {
    rows.forEach((x, i) => {
      // "bad blob": 10 bytes (not a multiple of 4); "mixed": 8-d and 6-d vectors.
      ins.run(
        x.key,
        x.text,
        x.createdMs,
        x.speaker,
        x.thread,
        x.who,
        x.bot,
        x.weight,
        f32(x.vec),
        i % 3 ? 'calm' : 'busy',
        Buffer.alloc(10, 1),
        f32(x.vec.slice(0, i % 2 ? 6 : 8)),
      )
      insJ.run(i + 1, x.text, x.createdMs, JSON.stringify(x.vec))
      // vec0 rowids follow the notes table's rowids (1-based insertion order).
      insV.run(BigInt(i + 1), f32(x.vec))
    })
  })()
  db.close()
  return rows
}

/** Cosine similarity, computed here independently of the code under test. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return d / Math.sqrt(na * nb)
}
