/**
 * The JS bm25 against FTS5's own bm25() on the same index: random texts over a small
 * vocabulary (stop-words in most rows, stems that collide — deploy / deploys / deploying —
 * summaries, empty rows), random OR-queries and rowid ranges. Same rows in the same
 * (bm25, rowid) order; and the very same double values.
 */
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tmpDir } from '../../../../test/helpers/tmp'
import { buildDb, openDb } from '../../../../test/helpers/testDb'
import { ftsTokens, toFtsQuery } from './fts'
import { bm25Counts, bm25IndexFor, bm25Settings, rankBm25 } from './bm25'
import { hasBounds } from './bm25Bounds'
import type { SqliteSource } from './source'

const WORDS = [
  'the',
  'a',
  'to',
  'and',
  'of',
  'what',
  'did',
  'deploy',
  'deploys',
  'deploying',
  'caroline',
  'painting',
  'paint',
  'sunrise',
  'dance',
  'studio',
  'café',
  'naïve',
  'x1',
  'adoption',
]

function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('JS bm25 = FTS5 bm25()', () => {
  const t = tmpDir()
  let store: SqliteSource
  const r = rng(5)
  const text = (n: number) => Array.from({ length: n }, () => (r() < 0.4 ? WORDS[Math.floor(r() * 5)] : WORDS[Math.floor(r() * WORDS.length)])).join(' ')
  beforeAll(() => {
    const memories = Array.from({ length: 300 }, (_, i) => ({
      id: `m${i}`,
      content: i % 37 === 0 ? '' : text(1 + Math.floor(r() * 40)),
      summary: i % 5 === 0 ? text(1 + Math.floor(r() * 8)) : null,
    }))
    store = openDb(buildDb(t.dir, { name: 'bm25.db', memories }))
  })
  afterAll(() => {
    store.close()
    t.cleanup()
  })

  it('ranks the same rows in the same order with the same scores, over random queries and ranges', () => {
    const ctx = store as unknown as Parameters<typeof bm25IndexFor>[0]
    const fts = ctx.ftsTable()
    const idx = bm25IndexFor(ctx, fts)
    expect(idx).not.toBeNull()
    const sql = ctx.db
      .prepare(`SELECT rowid, bm25(${fts.name}) FROM ${fts.qualified} WHERE ${fts.name} MATCH ? AND rowid BETWEEN ? AND ? ORDER BY 2 ASC, 1 ASC`)
      .raw(true)
    let compared = 0
    let rows = 0
    for (let qn = 0; qn < 300; qn++) {
      const q = text(1 + Math.floor(r() * 9))
      const lo = 1 + Math.floor(r() * 200)
      const hi = r() < 0.3 ? 1e9 : lo + Math.floor(r() * 150)
      const want = sql.all(toFtsQuery(q), lo, hi) as [number, number][]
      const got = rankBm25(idx!, ftsTokens(q), lo, hi)!
      expect(Array.from(got.rids), q).toEqual(want.map((x) => Number(x[0])))
      // bit for bit: the same operations in the same order, and the same libm log
      expect(Array.from(got.bm25), q).toEqual(want.map((x) => x[1]))
      compared++
      rows += want.length
    }
    expect(compared).toBe(300)
    expect(rows).toBeGreaterThan(3000)
  })

  it('the lexical arm answers the same with the JS path on and off', () => {
    for (const q of ['what did the studio paint', 'deploying the adoption', 'café naïve x1']) {
      const f = { agentId: 'agent-a' }
      bm25Settings.enabled = false
      const off = store.lexicalPass({ text: q, filter: f, limit: 50, ridRange: [1, 300], listed: store.scopeRows(f, 10_000) })
      bm25Settings.enabled = true
      const on = store.lexicalPass({ text: q, filter: f, limit: 50, ridRange: [1, 300], listed: store.scopeRows(f, 10_000) })
      expect(on.hits.map((h) => h.id)).toEqual(off.hits.map((h) => h.id))
      expect(on.hits.length).toBeGreaterThan(0)
    }
  })
})

describe('JS bm25 order with many exact ties', () => {
  const t = tmpDir()
  let store: SqliteSource
  beforeAll(() => {
    // Five texts repeated: each text's rows have bit-identical bm25, so rowid alone orders them.
    const texts = ['the studio', 'the studio paint', 'paint the sunrise at the studio', 'dance', 'the the the']
    const memories = Array.from({ length: 400 }, (_, i) => ({ id: `t${i}`, content: texts[(i * 7) % texts.length] }))
    store = openDb(buildDb(t.dir, { name: 'ties.db', memories }))
  })
  afterAll(() => {
    store.close()
    t.cleanup()
  })

  it('orders tied rows by rowid, like FTS5, over whole and partial ranges', () => {
    const ctx = store as unknown as Parameters<typeof bm25IndexFor>[0]
    const fts = ctx.ftsTable()
    const idx = bm25IndexFor(ctx, fts)!
    const sql = ctx.db
      .prepare(`SELECT rowid, bm25(${fts.name}) FROM ${fts.qualified} WHERE ${fts.name} MATCH ? AND rowid BETWEEN ? AND ? ORDER BY 2 ASC, 1 ASC`)
      .raw(true)
    for (const q of ['the studio', 'paint sunrise', 'the', 'dance studio the']) {
      for (const [lo, hi] of [
        [1, 400],
        [37, 311],
        [5, 60],
      ]) {
        const want = sql.all(toFtsQuery(q), lo, hi) as [number, number][]
        const got = rankBm25(idx, ftsTokens(q), lo, hi)!
        expect(want.length).toBeGreaterThan(20)
        expect(Array.from(got.rids), q).toEqual(want.map((x) => Number(x[0])))
        expect(Array.from(got.bm25), q).toEqual(want.map((x) => x[1]))
      }
    }
  })
})

describe('JS bm25 index on a growing store (rows appended)', () => {
  /** as the app runs it (this file turns appends on for its append tests) */
  const appendByDefault = bm25Settings.append
  const t = tmpDir()
  const r = rng(11)
  const text = (n: number) => Array.from({ length: n }, () => (r() < 0.4 ? WORDS[Math.floor(r() * 5)] : WORDS[Math.floor(r() * WORDS.length)])).join(' ')
  let dbPath: string
  let store: SqliteSource
  let next = 0
  const memory = () => {
    const i = next++
    return { id: `g${i}`, content: i % 23 === 0 ? '' : text(1 + Math.floor(r() * 30)), summary: i % 4 === 0 ? text(1 + Math.floor(r() * 6)) : null }
  }
  /** An agent's commit: new memories and their FTS rows, as an agent writing the canonical schema does. */
  const append = (n: number, also?: (db: Database.Database) => void) => {
    const db = new Database(dbPath)
    try {
      db.transaction(() => {
        const ins = db.prepare(`INSERT INTO memories (id, content, summary, created_at) VALUES (?, ?, ?, 0)`)
        const fts = db.prepare(`INSERT INTO memories_fts (rowid, content, summary) VALUES (?, ?, ?)`)
        for (let k = 0; k < n; k++) {
          const m = memory()
          const rid = Number(ins.run(m.id, m.content, m.summary).lastInsertRowid)
          fts.run(rid, m.content, m.summary)
        }
        also?.(db)
      })()
    } finally {
      db.close()
    }
  }
  beforeAll(() => {
    dbPath = buildDb(t.dir, { name: 'grow.db', memories: Array.from({ length: 200 }, memory) })
    store = openDb(dbPath)
    bm25Settings.append = true
  })
  afterAll(() => {
    bm25Settings.append = appendByDefault
    store.close()
    t.cleanup()
  })

  /** `idx` against a full build of the file as it is now (a fresh store) and FTS5's bm25(): random queries and ranges. */
  const expectSameAsFullBuild = (idx: NonNullable<ReturnType<typeof bm25IndexFor>>) => {
    const fresh = openDb(dbPath)
    try {
      const fctx = fresh as unknown as Parameters<typeof bm25IndexFor>[0]
      const full = bm25IndexFor(fctx, fctx.ftsTable())!
      expect(idx.nRow).toBe(full.nRow)
      expect(idx.avgdl).toBe(full.avgdl)
      const fts = fctx.ftsTable()
      const sql = fctx.db
        .prepare(`SELECT rowid, bm25(${fts.name}) FROM ${fts.qualified} WHERE ${fts.name} MATCH ? AND rowid BETWEEN ? AND ? ORDER BY 2 ASC, 1 ASC`)
        .raw(true)
      let rows = 0
      for (let qn = 0; qn < 150; qn++) {
        const q = text(1 + Math.floor(r() * 6))
        const lo = 1 + Math.floor(r() * 100)
        const hi = r() < 0.5 ? 1e9 : lo + Math.floor(r() * 300)
        const got = rankBm25(idx, ftsTokens(q), lo, hi)!
        const want = rankBm25(full, ftsTokens(q), lo, hi)!
        expect(Array.from(got.rids), q).toEqual(Array.from(want.rids))
        expect(Array.from(got.bm25), q).toEqual(Array.from(want.bm25))
        const fts5 = sql.all(toFtsQuery(q), lo, hi) as [number, number][]
        expect(Array.from(got.bm25), q).toEqual(fts5.map((x) => x[1]))
        rows += fts5.length
      }
      expect(rows).toBeGreaterThan(1000)
    } finally {
      fresh.close()
    }
  }

  it('takes appended rows in without a rebuild, and scores as a full build (and FTS5) does', () => {
    const ctx = store as unknown as Parameters<typeof bm25IndexFor>[0]
    const first = bm25IndexFor(ctx, ctx.ftsTable())!
    expect(first.nRow).toBe(200)
    for (const n of [1, 37, 120]) {
      const before = bm25IndexFor(ctx, ctx.ftsTable())!
      append(n)
      const builds = bm25Counts.builds
      const idx = bm25IndexFor(ctx, ctx.ftsTable())!
      expect(bm25Counts.builds).toBe(builds) // appended, not built again
      // the same pooled postings carried over (no rebuild read them again), the new rows on top
      expect(idx).not.toBe(before)
      expect(idx.nRow).toBe(before.nRow + n)
      expect(idx.postings.get('studio')!.rids.subarray(0, before.postings.get('studio')!.rids.length)).toEqual(before.postings.get('studio')!.rids)
      expectSameAsFullBuild(idx)
    }
    // a commit to another table only: the same rows, the same numbers
    const before = bm25IndexFor(ctx, ctx.ftsTable())!
    append(0, (db) => db.prepare(`INSERT INTO sessions (id) VALUES ('s-new')`).run())
    expect(bm25IndexFor(ctx, ctx.ftsTable())!.nRow).toBe(before.nRow)
    expectSameAsFullBuild(bm25IndexFor(ctx, ctx.ftsTable())!)
  })

  it('a deletion or an updated row is not an append: the index is built again, exact', () => {
    const ctx = store as unknown as Parameters<typeof bm25IndexFor>[0]
    for (const change of ['delete', 'update'] as const) {
      const before = bm25IndexFor(ctx, ctx.ftsTable())!
      const grow = before.appendRows?.bind(before)
      expect(grow).toBeTypeOf('function')
      append(3, (db) => {
        const [rid, content, summary] = db
          .prepare(`SELECT rowid, content, summary FROM memories WHERE rowid = ?`)
          .raw(true)
          .get(change === 'delete' ? 7 : 9) as [number, string, string | null]
        db.prepare(`INSERT INTO memories_fts (memories_fts, rowid, content, summary) VALUES ('delete', ?, ?, ?)`).run(rid, content, summary)
        if (change === 'update') {
          db.prepare(`UPDATE memories SET content = 'the studio the studio' WHERE rowid = ?`).run(rid)
          db.prepare(`INSERT INTO memories_fts (rowid, content, summary) VALUES (?, 'the studio the studio', ?)`).run(rid, summary)
        } else db.prepare(`DELETE FROM memories WHERE rowid = ?`).run(rid)
      })
      // appendRows refuses (the counts do not add up as an append's would), so the next call builds afresh
      expect(grow!()).toBeNull()
      const builds = bm25Counts.builds
      const idx = bm25IndexFor(ctx, ctx.ftsTable())!
      expect(bm25Counts.builds).toBe(builds + 1)
      expectSameAsFullBuild(idx)
    }
  })
  it('by default a row rewritten in place with the same token counts ("likes tea" → "likes coffee") builds again, exact; appendRows cannot see it', () => {
    const ctx = store as unknown as Parameters<typeof bm25IndexFor>[0]
    const rewrite = () =>
      append(2, (db) => {
        const [rid, content, summary] = db
          .prepare(`SELECT rowid, content, summary FROM memories WHERE content != '' ORDER BY rowid LIMIT 1`)
          .raw(true)
          .get() as [number, string, string | null]
        const words = content.split(' ')
        // one word swapped for another single-token word: every column's token count stays as it was
        const next = [...words.slice(0, -1), words[words.length - 1] === 'studio' ? 'garden' : 'studio'].join(' ')
        db.prepare(`INSERT INTO memories_fts (memories_fts, rowid, content, summary) VALUES ('delete', ?, ?, ?)`).run(rid, content, summary)
        db.prepare(`UPDATE memories SET content = ? WHERE rowid = ?`).run(next, rid)
        db.prepare(`INSERT INTO memories_fts (rowid, content, summary) VALUES (?, ?, ?)`).run(rid, next, summary)
      })
    // The blind spot, shown: with appends trusted, the rewrite passes appendRows' check.
    const trusted = bm25IndexFor(ctx, ctx.ftsTable())!
    rewrite()
    expect(trusted.appendRows!()).not.toBeNull()
    // So appends are off by default: the next version is built again, and scores as a full build does.
    expect(appendByDefault).toBe(false)
    bm25Settings.append = false
    try {
      bm25IndexFor(ctx, ctx.ftsTable())
      rewrite()
      const builds = bm25Counts.builds
      const idx = bm25IndexFor(ctx, ctx.ftsTable())!
      expect(bm25Counts.builds).toBe(builds + 1)
      expectSameAsFullBuild(idx)
    } finally {
      bm25Settings.append = true
    }
  })
})

describe('JS bm25 build: the longest lists come ready', () => {
  it('makes the top-k bounds of every list of at least warmMinPostings postings, longest first within warmMaxPostings', () => {
    const t = tmpDir()
    const r = rng(5)
    // a few words in most rows (the long lists), the rest rarer
    const text = () => Array.from({ length: 1 + Math.floor(r() * 12) }, () => WORDS[Math.floor(r() * r() * WORDS.length)]).join(' ')
    const dbPath = buildDb(t.dir, { name: 'warm.db', memories: Array.from({ length: 300 }, (_, i) => ({ id: `w${i}`, content: text(), summary: null })) })
    // rows per term, from SQLite's own fts5vocab (not from the index under test)
    const raw = new Database(dbPath)
    raw.exec(`CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, memories_fts, row)`)
    const docs = raw.prepare(`SELECT term, doc FROM temp.v`).all() as { term: string; doc: number }[]
    raw.close()
    const saved = { min: bm25Settings.warmMinPostings, max: bm25Settings.warmMaxPostings }
    const longest = Math.max(...docs.map((d) => d.doc))
    const min = 60
    const long = docs.filter((d) => d.doc >= min)
    expect(long.length).toBeGreaterThan(2)
    expect(long.length).toBeLessThan(docs.length)
    try {
      for (const max of [1e9, longest]) {
        bm25Settings.warmMinPostings = min
        bm25Settings.warmMaxPostings = max
        const store = openDb(dbPath)
        try {
          const ctx = store as unknown as Parameters<typeof bm25IndexFor>[0]
          const before = bm25Counts.warmed
          const idx = bm25IndexFor(ctx, ctx.ftsTable())!
          const warmed = docs.filter((d) => hasBounds(idx.postings.get(d.term)!))
          if (max === 1e9) expect(warmed.map((d) => d.term).sort()).toEqual(long.map((d) => d.term).sort())
          else expect(warmed.map((d) => d.doc)).toEqual([longest]) // the budget holds the longest list only
          expect(bm25Counts.warmed - before).toBe(warmed.length)
        } finally {
          store.close()
        }
      }
    } finally {
      bm25Settings.warmMinPostings = saved.min
      bm25Settings.warmMaxPostings = saved.max
      t.cleanup()
    }
  })
})
