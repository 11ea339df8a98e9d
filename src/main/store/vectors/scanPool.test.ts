/**
 * The dense scan split across threads (scanPool.ts) gives every row the number
 * the single-thread kernel gives (every bit), so the top-k after it is the same:
 * checked on a matrix big enough to be split, against dotRow row by row, with
 * duplicated rows (exact ties) ordered by their keys. The pool really runs
 * (its helpers are up and the scan was split), and a matrix that changes
 * between scans (another memory, grown rows) is scanned right.
 */
import { describe, expect, it } from 'vitest'
import { dotAll, normalizeQuery } from '../../recall/dense'
import { dotRow } from './vectorIndex'
import { kernelModule } from './dotKernel'
import { ScanPool } from './scanPool'
import { VectorIndex } from './vectorIndex'
import { topKRows } from './topKRows'

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return s / 4294967296 - 0.5
  }
}

/**
 * `dim` draws of `r`: what Float32Array.from({ length: dim }, r) gives, without its per-element iteration (the
 * matrices here hold ~34 M numbers; measured ~5× faster).
 */
function randomRow(dim: number, r: () => number): Float32Array<ArrayBuffer> {
  const v = new Float32Array(dim)
  for (let j = 0; j < dim; j++) v[j] = r()
  return v
}

function build(n: number, dim: number, seed: number): VectorIndex {
  const r = rng(seed)
  const idx = new VectorIndex('memory', 'x')
  idx.dim = dim
  idx.reserve(n)
  let v = new Float32Array(dim)
  for (let i = 0; i < n; i++) {
    // every 97th row repeats the one before (same input, same unit row): equal similarities, ordered by key
    if (i % 97 !== 1) v = randomRow(dim, r)
    idx.put(`m${i}`, v, n - i)
  }
  return idx
}

const pool = kernelModule(true) ? ScanPool.get() : null

describe.skipIf(!pool)('the scan pool', () => {
  it('splits a large scan across threads and gives every row dotRow’s number; the top-30 is unchanged', async () => {
    expect(await pool!.started()).toBeGreaterThanOrEqual(1)
    for (const [n, dim, seed] of [
      [24_000, 256, 1],
      [20_011, 333, 2], // a row count and width that do not divide into chunks or SIMD lanes
    ]) {
      const idx = build(n, dim, seed)
      expect(n * dim).toBeGreaterThanOrEqual(VectorIndex.parallelMin)
      const r = rng(seed + 10)
      for (let t = 0; t < 3; t++) {
        const q = normalizeQuery(Array.from({ length: dim }, r))!
        const sims = dotAll(idx, q)
        const ref = new Float64Array(n)
        for (let row = 0; row < n; row++) ref[row] = dotRow(idx.data, row, dim, q)
        expect(Buffer.from(sims.buffer, 0, n * 8).equals(Buffer.from(ref.buffer))).toBe(true)
        expect(topKRows(sims, n, 30, undefined, idx.keys)).toEqual(topKRows(ref, n, 30, undefined, idx.keys))
      }
    }
  })

  it('is really used: the helpers take chunks of a large scan', () => {
    const idx = build(30_000, 256, 5)
    const q = normalizeQuery(Array.from({ length: 256 }, rng(6)))!
    const before = pool!.stats.helperChunks
    for (let i = 0; i < 20; i++) dotAll(idx, q)
    expect(pool!.stats.helperChunks).toBeGreaterThan(before)
  })

  it('scans right after the matrix grows and between two indexes (two memories)', () => {
    const a = build(31_000, 200, 7)
    const b = build(30_500, 200, 8)
    const r = rng(9)
    for (let round = 0; round < 3; round++) {
      for (const idx of [a, b]) {
        const q = normalizeQuery(Array.from({ length: 200 }, r))!
        const sims = dotAll(idx, q)
        for (let row = 0; row < idx.count; row += 7) expect(sims[row]).toBe(dotRow(idx.data, row, 200, q))
        expect(sims[idx.count - 1]).toBe(dotRow(idx.data, idx.count - 1, 200, q))
      }
      for (let i = 0; i < 1500; i++) a.put(`g${round}-${i}`, randomRow(200, r))
    }
  })

  it('small scans stay on the calling thread', () => {
    const idx = build(500, 64, 11)
    const q = normalizeQuery(Array.from({ length: 64 }, rng(12)))!
    const before = pool!.stats.scans
    dotAll(idx, q)
    expect(pool!.stats.scans).toBe(before)
  })
})
