/**
 * topBm25 (MaxScore, top-k) against full scoring on random queries: the same rows in the same
 * (bm25, rowid) order with the very same doubles, compared with rankBm25 and with a brute force
 * written here (every row of the range scored, phrases summed in query order). The postings are
 * random: a few words in nearly every row (the case MaxScore is for), a long tail of rare ones,
 * per-row factors from a small set so equal scores (ties broken by rowid) are common.
 */
import { describe, expect, it } from 'vitest'
import { mulberry32 } from '../../../shared/random'
import type { Bm25Index } from './bm25'
import { topBm25, topBm25ByFullScoring } from './bm25Top'

function makeIndex(seed: number, nRow: number, nWord: number): Bm25Index & { postings: Map<string, { rids: Int32Array; tf: Float64Array }> } {
  const rnd = mulberry32(seed)
  const postings = new Map<string, { rids: Int32Array; tf: Float64Array }>()
  const factors = [0.5, 0.75, 1, 1.25, 1.5, 2.2 / 3]
  for (let w = 0; w < nWord; w++) {
    // word 0..2: in ~95% of rows; then ever rarer
    const density = w < 3 ? 0.95 : Math.min(0.6, 3 / (w + 1))
    const rids: number[] = []
    const tf: number[] = []
    for (let r = 1; r <= nRow; r++) {
      if (rnd() < density) {
        rids.push(r)
        tf.push(rnd() < 0.7 ? factors[Math.floor(rnd() * factors.length)] : 0.3 + rnd() * 1.9)
      }
    }
    if (rids.length) postings.set(`w${w}`, { rids: Int32Array.from(rids), tf: Float64Array.from(tf) })
  }
  return {
    nRow,
    avgdl: 10,
    postings,
    tokenOf: (words) => words.map((x) => (x.startsWith('w') ? x : null)),
    // FTS5's IDF formula, clamped as it is (an independent copy: the index is this test's)
    idfOf: (nHit) => Math.max(1e-6, Math.log((nRow - nHit + 0.5) / (nHit + 0.5))),
    close: () => undefined,
  }
}

/** Every row in [lo, hi] scored, phrases in query order; sorted by (bm25, rowid). */
function bruteForce(idx: Bm25Index, byWord: Map<string, Map<number, number>>, words: string[], k: number, lo: number, hi: number, member?: Uint8Array) {
  const rows: { rid: number; bm25: number }[] = []
  for (let rid = lo; rid <= hi; rid++) {
    if (member && !member[rid - lo]) continue
    let score = 0
    let hit = false
    for (const w of words) {
      const tf = byWord.get(w)?.get(rid)
      if (tf !== undefined) {
        hit = true
        score += idx.idfOf(byWord.get(w)!.size) * tf
      }
    }
    if (hit) rows.push({ rid, bm25: -1.0 * score })
  }
  rows.sort((a, b) => a.bm25 - b.bm25 || a.rid - b.rid)
  return rows.slice(0, k)
}

describe('topBm25 (MaxScore) is exact', () => {
  it('same ids, order and scores as full scoring on random queries, ranges, memberships and k', () => {
    const idx = makeIndex(7, 3000, 40)
    const rnd = mulberry32(11)
    const byWord = new Map<string, Map<number, number>>()
    for (const [w, p] of idx.postings) byWord.set(w, new Map(Array.from(p.rids, (r, j) => [r, p.tf[j]])))
    let nonEmpty = 0
    let ties = 0
    for (let q = 0; q < 200; q++) {
      const nw = 1 + Math.floor(rnd() * 6)
      const words = [...new Set(Array.from({ length: nw }, () => `w${Math.floor(rnd() * 45)}`))]
      const lo = rnd() < 0.5 ? 1 : 1 + Math.floor(rnd() * 1500)
      const hi = rnd() < 0.5 ? 3000 : lo + Math.floor(rnd() * 1500)
      const k = [1, 5, 10, 30, 100, 5000][Math.floor(rnd() * 6)]
      const member = rnd() < 0.3 ? Uint8Array.from({ length: hi - lo + 1 }, () => (rnd() < 0.5 ? 1 : 0)) : undefined
      const got = topBm25(idx, words, k, lo, hi, member)!
      const full = topBm25ByFullScoring(idx, words, k, lo, hi, member)!
      const brute = bruteForce(idx, byWord, words, k, lo, hi, member)
      expect(Array.from(got.rids)).toEqual(Array.from(full.rids))
      expect(Array.from(got.bm25)).toEqual(Array.from(full.bm25))
      expect(Array.from(got.rids)).toEqual(brute.map((r) => r.rid))
      expect(Array.from(got.bm25)).toEqual(brute.map((r) => r.bm25))
      if (brute.length) nonEmpty++
      for (let i = 1; i < brute.length; i++) if (brute[i].bm25 === brute[i - 1].bm25) ties++
    }
    // the comparison was not vacuous: most queries matched, and equal scores were ranked by rowid
    expect(nonEmpty).toBeGreaterThan(160)
    expect(ties).toBeGreaterThan(0)
  })

  it('a word not exactly one token gives null (the caller asks FTS5), k = 0 gives nothing', () => {
    const idx = makeIndex(3, 50, 5)
    expect(topBm25(idx, ['w1', 'x'], 10, 1, 50)).toBeNull()
    expect(topBm25(idx, ['w1'], 0, 1, 50)!.rids.length).toBe(0)
  })
})
