/**
 * The dense scan split across threads (scanPool.ts) gives every row the number
 * the single-thread kernel gives (every bit), so the top-k after it is the same:
 * checked on a matrix big enough to be split, against dotRow row by row, with
 * duplicated rows (exact ties) ordered by their keys. The pool really runs
 * (its helpers are up and the scan was split), and a matrix that changes
 * between scans (another memory, grown rows) is scanned right. A scan's
 * `onDone` reports each chunk at most once, only once its results are in
 * place, and reports a helper's finished chunks too.
 */
import { describe, expect, it } from 'vitest'
import { dotAll, normalizeQuery } from '../../recall/dense'
import { dotRow } from './vectorIndex'
import { dotKernel, kernelModule, wasmMemory } from './dotKernel'
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

  it('reports each chunk once, with its results in place, the helpers’ finished chunks included', async () => {
    expect(await pool!.started()).toBeGreaterThanOrEqual(1)
    const n = 64 * 1024 // 64 chunks of 1,024 rows
    const stride = 64
    const qOff = n * stride
    const outOff = qOff + stride * 2
    const memory = wasmMemory(Math.ceil((outOff + n * 4) / 65536), true)
    const kernel = dotKernel(memory, true, 'dotI8All')!
    const codes = new Int8Array(memory.buffer, 0, n * stride)
    const r = rng(31)
    for (let i = 0; i < codes.length; i++) codes[i] = Math.round(r() * 254)
    const qc = new Int16Array(memory.buffer, qOff, stride)
    const out = new Int32Array(memory.buffer, outOff, n)
    // each row's int32 sum, computed here in plain JS
    const sum = (row: number) => {
      let s = 0
      for (let j = 0; j < stride; j++) s += codes[row * stride + j] * qc[j]
      return s
    }
    let helperReported = 0
    let scansWithTwoHelperChunks = 0
    for (let t = 0; t < 12; t++) {
      for (let j = 0; j < stride; j++) qc[j] = Math.round(r() * 60000)
      out.fill(0x7fffffff) // no row's sum: a chunk reported before its kernel ran shows it
      // What each report saw, checked after the scan (a cheap callback, as the int8 search's bound pass is).
      const atReport = new Int32Array(n)
      const reports = new Uint8Array(n)
      let reportedRows = 0
      const before = pool!.stats.helperChunks
      const ok = pool!.scan(
        memory,
        kernel,
        { name: 'dotI8All', data: 0, n, dim: stride, q: qOff, out: outOff, rowBytes: stride, outBytes: 4 },
        (from, count) => {
          atReport.set(out.subarray(from, from + count), from)
          reports[from]++
          reportedRows += count
        },
      )
      let twice = 0 // chunks reported again
      let early = 0 // rows reported before their sums were in place
      for (let row = 0; row < n; row++) {
        if (reports[row] > 1) twice++
        if (reports[row] > 0) for (let j = row; j < row + 1024; j++) if (atReport[j] !== sum(j)) early++
      }
      expect(ok).toBe(true)
      expect({ twice, early }).toEqual({ twice: 0, early: 0 })
      for (let row = 0; row < n; row += 13) expect(out[row]).toBe(sum(row))
      const helperChunks = pool!.stats.helperChunks - before
      const ownRows = (64 - helperChunks) * 1024
      expect(reportedRows).toBeGreaterThanOrEqual(ownRows)
      helperReported += reportedRows - ownRows
      if (helperChunks >= 2) scansWithTwoHelperChunks++
    }
    // a helper that finishes a chunk and starts another is seen (between this thread's chunks, or waking it)
    if (scansWithTwoHelperChunks > 0) expect(helperReported).toBeGreaterThan(0)
  })
})
