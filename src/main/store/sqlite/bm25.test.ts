/**
 * The JS bm25 against FTS5's own bm25() on the same index: random texts over a small
 * vocabulary (stop-words in most rows, stems that collide — deploy / deploys / deploying —
 * summaries, empty rows), random OR-queries and rowid ranges. Same rows in the same
 * (bm25, rowid) order; and the very same double values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tmpDir } from '../../../../test/helpers/tmp'
import { buildDb, openDb } from '../../../../test/helpers/testDb'
import { ftsTokens, toFtsQuery } from './fts'
import { bm25IndexFor, bm25Settings, rankBm25 } from './bm25'
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
