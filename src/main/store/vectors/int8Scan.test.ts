/**
 * The int8 scan with exact rescoring (int8Scan.ts) returns the float32 brute
 * force's top-k — same rows, same order — computed here independently (dotRow
 * on every row, then a full sort by score, key, row), on data built to be hard:
 * exact duplicates (ties decided by key), near-duplicates closer than the int8
 * step, zero rows, a query equal to a row, and a width that is not a multiple
 * of the kernel's 32. The bound it prunes with holds on every row, and it does
 * prune (most rows are never rescored).
 */
import { describe, expect, it } from 'vitest'
import { normalizeQuery } from '../../recall/dense'
import { dotRow } from './vectorIndex'
import { dotKernelAvailable } from './dotKernel'
import { Int8Index } from './int8Scan'
import { ScanPool } from './scanPool'

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return s / 4294967296
  }
}
function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(Math.max(r(), 1e-12))) * Math.cos(2 * Math.PI * r())
}

/** n unit float32 rows of `dim`, with the hard cases mixed in. */
function rows(n: number, dim: number, seed: number): Float32Array {
  const r = rng(seed)
  const m = new Float32Array(n * dim)
  for (let i = 0; i < n; i++) {
    const o = i * dim
    if (i % 211 === 5) continue // a zero row
    if (i % 53 === 7) {
      m.copyWithin(o, o - dim, o) // an exact duplicate of the row before
      continue
    }
    if (i % 61 === 9) {
      m.copyWithin(o, o - dim, o) // a near-duplicate: one coordinate moved by one float32 step
      m[o] = Math.fround(m[o] * (1 + 2 ** -20))
      continue
    }
    let s = 0
    for (let j = 0; j < dim; j++) {
      m[o + j] = gauss(r)
      s += m[o + j] * m[o + j]
    }
    for (let j = 0; j < dim; j++) m[o + j] /= Math.sqrt(s)
  }
  return m
}

/** The reference: every row's dotRow, sorted by score desc, key asc, row asc. */
function bruteTop(m: Float32Array, n: number, dim: number, q: Float64Array, keys: Float64Array, k: number): number[] {
  const sc = Array.from({ length: n }, (_, r) => dotRow(m, r, dim, q))
  return Array.from({ length: n }, (_, r) => r)
    .sort((a, b) => sc[b] - sc[a] || keys[a] - keys[b] || a - b)
    .slice(0, k)
}

describe.skipIf(!dotKernelAvailable())('int8 scan + exact rescoring', () => {
  for (const [n, dim, seed] of [
    [6000, 100, 1],
    [3000, 768, 2],
  ]) {
    it(`${n} × ${dim}: the brute force's top-k, ids and order, for k = 1, 10, 30`, () => {
      const m = rows(n, dim, seed)
      const idx = new Int8Index(n, dim)
      for (let r = 0; r < n; r++) idx.setRow(r, m, r * dim)
      // keys: not the row order (ties must follow them), with some equal keys (then the row decides)
      const keys = Float64Array.from({ length: n }, (_, r) => (r * 7919) % Math.floor(n / 2))
      const r = rng(seed + 100)
      const queries: Float64Array[] = []
      for (let t = 0; t < 4; t++) queries.push(normalizeQuery(Array.from({ length: dim }, () => gauss(r)))!)
      queries.push(normalizeQuery(m.subarray(8 * dim, 9 * dim))!) // a stored row: its duplicates tie at the top
      queries.push(normalizeQuery(m.subarray(60 * dim, 61 * dim))!) // the row a near-duplicate copies
      let rescored = 0
      let kept6 = 0
      for (const q of queries) {
        for (const k of [1, 10, 30]) {
          const got = idx.search(q, k, keys, (rs) => Array.from(rs, (row) => dotRow(m, row, dim, q)))
          expect(got.rows).toEqual(bruteTop(m, n, dim, q, keys, k))
          expect(got.scores).toEqual(got.rows.map((row) => dotRow(m, row, dim, q)))
          rescored = Math.max(rescored, got.rescored)
          kept6 = Math.max(kept6, got.kept6)
        }
        for (let row = 0; row < n; row += 13) {
          const b = idx.boundsOf(q, row)
          const s = dotRow(m, row, dim, q)
          expect(s).toBeGreaterThanOrEqual(b.lo)
          expect(s).toBeLessThanOrEqual(b.hi)
          // the 6-bit first pass's bound (sixBit.ts) too
          expect(s).toBeGreaterThanOrEqual(b.lo6)
          expect(s).toBeLessThanOrEqual(b.hi6)
        }
      }
      // It prunes: far fewer rows than the store are read back, and the 6-bit pass leaves few for the int8 bound.
      expect(rescored).toBeLessThan(n / 4)
      expect(kept6).toBeLessThan(n / 2)
    })
  }

  it('one scan per query: a larger k, a count, reuse it; new values in the same array, a changed row or another n scan again — every answer the brute force’s', () => {
    const n = 4000
    const dim = 96
    const m = rows(n, dim, 11)
    const idx = new Int8Index(n, dim)
    for (let r = 0; r < n; r++) idx.setRow(r, m, r * dim)
    const keys = Float64Array.from({ length: n }, (_, r) => r)
    const exact = (q: Float64Array) => (rs: Int32Array) => Array.from(rs, (row) => dotRow(m, row, dim, q))
    const r = rng(12)
    const q = normalizeQuery(Array.from({ length: dim }, () => gauss(r)))!
    const s0 = idx.scans
    for (const k of [10, 40, 160]) expect(idx.search(q, k, keys, exact(q)).rows).toEqual(bruteTop(m, n, dim, q, keys, k))
    const ref = bruteTop(m, n, dim, q, keys, 160)
    const threshold = dotRow(m, ref[99], dim, q)
    expect(idx.countAbove(q, threshold, ref[99], exact(q))).toBe(99) // the rows ahead of rank 100
    expect(idx.scans - s0).toBe(1)

    // The same array with other values: a new query, scanned again.
    q.set(normalizeQuery(Array.from({ length: dim }, () => gauss(r)))!)
    expect(idx.search(q, 30, keys, exact(q)).rows).toEqual(bruteTop(m, n, dim, q, keys, 30))
    expect(idx.scans - s0).toBe(2)

    // A row rewritten to the query itself: the next search must see it first.
    const best = 1234
    m.set(Float32Array.from(q), best * dim)
    idx.setRow(best, m, best * dim)
    const after = idx.search(q, 30, keys, exact(q))
    expect(after.rows[0]).toBe(best)
    expect(after.rows).toEqual(bruteTop(m, n, dim, q, keys, 30))
    expect(idx.scans - s0).toBe(3)

    // Fewer rows searched: only those compete.
    idx.n = 2000
    expect(idx.search(q, 30, keys, exact(q)).rows).toEqual(bruteTop(m, 2000, dim, q, keys, 30))
    expect(idx.scans - s0).toBe(4)
  })

  it('with the scan pool running: the bound pass over this thread’s rows during the scan, the helpers’ after, gives the brute force’s top-k', async () => {
    const pool = ScanPool.get()
    if (!pool) return // one core: no pool, the plain path above
    await pool.started()
    const n = 40_000
    const dim = 64
    const m = rows(n, dim, 21)
    const idx = new Int8Index(n, dim)
    for (let r = 0; r < n; r++) idx.setRow(r, m, r * dim)
    const keys = Float64Array.from({ length: n }, (_, r) => (r * 31) % 9973)
    const r = rng(22)
    const before = { ...pool.stats }
    for (let t = 0; t < 6; t++) {
      const q = normalizeQuery(Array.from({ length: dim }, () => gauss(r)))!
      const k = [1, 30, 100][t % 3]
      const got = idx.search(q, k, keys, (rs) => Array.from(rs, (row) => dotRow(m, row, dim, q)))
      expect(got.rows).toEqual(bruteTop(m, n, dim, q, keys, k))
    }
    // split across threads (64 chunks a scan); the helper may be slow to wake on a busy machine, so only the split is checked
    expect(pool.stats.scans - before.scans).toBe(6)
    expect(pool.stats.chunks - before.chunks).toBe(6 * 64)
  })

  it('k larger than the store, and an empty k', () => {
    const m = rows(40, 33, 5)
    const idx = new Int8Index(40, 33)
    for (let r = 0; r < 40; r++) idx.setRow(r, m, r * 33)
    const keys = Float64Array.from({ length: 40 }, (_, r) => r)
    const q = normalizeQuery(Array.from({ length: 33 }, (_, i) => Math.sin(i + 1)))!
    expect(idx.search(q, 100, keys, (rs) => Array.from(rs, (row) => dotRow(m, row, 33, q))).rows).toEqual(bruteTop(m, 40, 33, q, keys, 40))
    expect(idx.search(q, 0, keys, () => []).rows).toEqual([])
  })
})
