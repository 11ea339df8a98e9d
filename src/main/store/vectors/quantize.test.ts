/**
 * The quantiser kernel (dotKernel.ts `quantI8`, run by a load's blocks: VectorIndex.queueBlock) makes
 * exactly the numbers of the JS path (VectorIndex.putFrom's norm and unit row, then Int8Index.setRow),
 * bit for bit: norms, unit rows, int8 codes, scales and both error bounds. Raw rows of every kind a
 * store holds: Gaussian directions at magnitudes from 1e-30 to 1e30, widths that are not a multiple of
 * 4 or 32, zero rows, subnormal-only rows (a scale that rounds to 0), constant rows (codes at ±127),
 * rows whose codes fall exactly on ties (x / s = k + ½, which Math.round takes up: the kernel's
 * floor(x / s + ½) must too), and non-finite rows, which both paths reject and leave out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dotKernelAvailable } from './dotKernel'
import { ScanPool } from './scanPool'
import { HELD_AGENT, VectorIndex } from './vectorIndex'

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return s / 4294967296
  }
}

/**
 * Integers whose squares sum to 4⁹ (so the norm, 512, and the unit row are exact) and whose largest is
 * 254 (so the scale is exactly 2 / 512): every odd one quantises from an exact tie, ±126.5 … ±0.5.
 */
const TIES = [254, 253, -253, 253, 73, -15, 5, -3, 3, 1, -1, 1, -1]

/** n raw rows of `dim` (not unit length), the hard cases mixed in; every 97th row is not finite. */
function rawRows(n: number, dim: number, seed: number): Float32Array {
  const r = rng(seed)
  const m = new Float32Array(n * dim)
  for (let i = 0; i < n; i++) {
    const o = i * dim
    const scale = 10 ** (Math.floor(r() * 61) - 30)
    for (let j = 0; j < dim; j++) m[o + j] = Math.sqrt(-2 * Math.log(Math.max(r(), 1e-12))) * Math.cos(2 * Math.PI * r()) * scale
    if (i % 23 === 3) m.fill(0, o, o + dim) // a zero row
    if (i % 29 === 4) m.fill(1.4e-45, o, o + dim) // the smallest subnormal: its scale rounds to 0
    if (i % 31 === 5) m.fill(-0.25, o, o + dim) // a constant row: every code at −127
    if (i % 37 === 6) m[o + dim - 1] = 3 * m[o] // the largest value in the remainder past the last four
    if (i % 41 === 8 && dim >= TIES.length) {
      // exact ties, the last one in the remainder past the last four; a power of two keeps them exact
      m.fill(0, o, o + dim)
      const p2 = 2 ** ((i % 7) * 9 - 27)
      for (let j = 0; j < TIES.length - 1; j++) m[o + j] = TIES[j] * p2
      m[o + dim - 1] = TIES[TIES.length - 1] * p2
    }
    if (i % 97 === 7) m[o + (i % dim)] = i % 2 ? Number.NaN : Number.POSITIVE_INFINITY
  }
  return m
}

const bits = (a: Float32Array | Float64Array | Int8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex')

/** Every number the index keeps for its rows, as bytes (compact mode). */
function dump(idx: VectorIndex) {
  const q = idx.int8!
  const n = idx.count
  const rows = new Float32Array(n * idx.dim)
  idx.readRows(0, n, rows)
  q.n = n
  return {
    n,
    ids: idx.ids.slice(0, n),
    norms: bits(idx.norms.subarray(0, n)),
    keys: bits(idx.keys.subarray(0, n)),
    rows: bits(rows),
    hi: Buffer.from(q.planes().hi).toString('hex'),
    lo: Buffer.from(q.planes().lo).toString('hex'),
    scales: bits(q.scales.subarray(0, n)),
    errs: bits(q.errs.subarray(0, n)),
    hatNorms: bits(q.hatNorms.subarray(0, n)),
    errs6: bits(q.errs6.subarray(0, n)),
    hatNorms6: bits(q.hatNorms6.subarray(0, n)),
    malformed: { ...idx.malformed },
  }
}

describe.runIf(dotKernelAvailable())('the quantiser kernel = the JS reference, bit for bit', () => {
  const compactBytes = VectorIndex.compactBytes
  beforeAll(async () => {
    VectorIndex.compactBytes = 0 // every index compact, however small
    await ScanPool.get()?.started()
  })
  afterAll(() => {
    VectorIndex.compactBytes = compactBytes
  })

  for (const dim of [3, 4, 7, 33, 200, 768]) {
    it(`${dim}-d rows, blocks of 64 (the last one short)`, () => {
      const n = 300
      const raw = rawRows(n, dim, dim * 7 + 1)
      const ids = Array.from({ length: n }, (_, i) => `m${i}`)

      // The reference: row by row through putFrom (its own norm and unit row, then setRow).
      const ref = new VectorIndex('memory', 'ref')
      for (let i = 0; i < n; i++) ref.put(ids[i], raw.subarray(i * dim, (i + 1) * dim), 1000 + i)
      let refRejected = 0
      for (let i = 0; i < n; i++) if (!ref.rowOf.has(ids[i])) refRejected++
      ref.malformed.nonFiniteVector = refRejected // put() does not count (the loader does)

      const blk = new VectorIndex('memory', 'blk')
      blk.dim = dim
      blk.reserve(n)
      const rejected: string[] = []
      for (let i0 = 0; i0 < n; i0 += 64) {
        const m = Math.min(64, n - i0)
        const part = ids.slice(i0, i0 + m)
        const keys = part.map((_, j) => 1000 + i0 + j)
        const bytes = Buffer.from(raw.buffer, i0 * dim * 4, m * dim * 4)
        const queued = blk.queueBlock(part, keys, HELD_AGENT, bytes, (j) => {
          blk.malformed.nonFiniteVector++
          rejected.push(part[j])
        })
        expect(queued).toBe(true)
      }
      blk.flushBlocks()

      expect(refRejected).toBeGreaterThan(0) // the data has non-finite rows, which both paths leave out
      expect(rejected.length).toBe(refRejected)
      const a = dump(ref)
      const b = dump(blk)
      expect(b.n).toBe(n - refRejected)
      for (const k of Object.keys(a) as (keyof typeof a)[]) expect(b[k], k).toEqual(a[k])
      ref.reset()
      blk.reset()
    })
  }
})
