/**
 * The SIMD scan gives the very numbers dotRow gives (every bit), for any width,
 * after the matrix grew, and the JS fallback gives them too. The reference is
 * computed here: the documented summation (four float64 sums, element i into
 * sum i mod 4, the remainder into the first, (s0 + s1) + (s2 + s3)), and a naive
 * dot product to show both are the cosine.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { dotKernelAvailable } from '../store/vectors/dotKernel'
import { VectorIndex } from '../store/vectors/vectorIndex'
import { dotAll, firstBySimilarity, firstInOrder, normalizeQuery } from './dense'
import { dotRow } from '../store/vectors/vectorIndex'

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return s / 4294967296 - 0.5
  }
}

/** The documented order of operations, written out independently. */
function reference(row: Float32Array, q: Float64Array): number {
  const s = [0, 0, 0, 0]
  const dim = row.length
  const full = dim - (dim % 4)
  for (let i = 0; i < full; i++) s[i % 4] += row[i] * q[i]
  for (let i = full; i < dim; i++) s[0] += row[i] * q[i]
  return s[0] + s[1] + (s[2] + s[3])
}

function build(n: number, dim: number, seed: number): VectorIndex {
  const r = rng(seed)
  const idx = new VectorIndex('memory', 'x')
  for (let i = 0; i < n; i++) idx.put(`m${i}`, Float32Array.from({ length: dim }, r))
  return idx
}

afterEach(() => {
  VectorIndex.simd = dotKernelAvailable()
})

describe('dense scan', () => {
  it('WebAssembly SIMD is available here (so the kernel path below is really tested)', () => {
    expect(dotKernelAvailable()).toBe(true)
    expect(build(3, 4, 1).simd).toBe(true)
  })

  for (const dim of [1, 2, 3, 4, 5, 7, 8, 13, 64, 255, 768]) {
    it(`${dim}-d: SIMD = JS loop = the documented sum, bit for bit`, () => {
      // 1,500 rows put one by one: the matrix grows (doubling) several times on the way.
      const idx = build(1500, dim, dim)
      const r = rng(1000 + dim)
      const q = normalizeQuery(Array.from({ length: dim }, r))!
      const simd = dotAll(idx, q)
      const js = dotAll(idx, q, undefined, { simd: false })
      expect(simd.length).toBe(1500)
      for (let row = 0; row < idx.count; row++) {
        const unit = idx.data.subarray(row * dim, (row + 1) * dim)
        const want = reference(unit, q)
        expect(Object.is(simd[row], want), `row ${row}`).toBe(true)
        expect(Object.is(js[row], want), `row ${row}`).toBe(true)
        expect(Object.is(dotRow(idx.data, row, dim, q), want)).toBe(true)
        let naive = 0
        for (let i = 0; i < dim; i++) naive += unit[i] * q[i]
        expect(simd[row]).toBeCloseTo(naive, 12)
      }
    })
  }

  it('keeps working as rows are added between scans (scratch space and matrix share one memory)', () => {
    const idx = build(10, 16, 3)
    const q = normalizeQuery(Array.from({ length: 16 }, rng(4)))!
    for (let round = 0; round < 5; round++) {
      const a = dotAll(idx, q)
      for (let row = 0; row < idx.count; row++) expect(Object.is(a[row], dotRow(idx.data, row, 16, q))).toBe(true)
      const r = rng(50 + round)
      for (let i = 0; i < 700; i++) idx.put(`r${round}-${i}`, Float32Array.from({ length: 16 }, r))
    }
    expect(idx.count).toBe(10 + 5 * 700)
  })

  it('without SIMD the index lives in an ordinary array and scans with the same numbers', () => {
    VectorIndex.simd = false
    const plain = build(300, 9, 9)
    VectorIndex.simd = dotKernelAvailable()
    const fast = build(300, 9, 9)
    expect(plain.simd).toBe(false)
    expect(fast.simd).toBe(true)
    const q = normalizeQuery(Array.from({ length: 9 }, rng(10)))!
    const a = dotAll(plain, q)
    const b = dotAll(fast, q)
    for (let i = 0; i < 300; i++) expect(Object.is(a[i], b[i])).toBe(true)
  })
})

describe('firstInOrder', () => {
  it('equals a full sort then slice, with ties broken by the comparator', () => {
    let seed = 3
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    for (let t = 0; t < 300; t++) {
      const rows = Array.from({ length: Math.floor(rnd() * 200) }, (_, i) => ({ id: `r${i}`, sim: Math.round(rnd() * 20) / 20, key: Math.floor(rnd() * 10) }))
      const cmp = (a: (typeof rows)[number], b: (typeof rows)[number]) => b.sim - a.sim || a.key - b.key || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
      const n = Math.floor(rnd() * 40)
      const want = [...rows].sort(cmp).slice(0, n)
      expect(firstInOrder([...rows], n, cmp)).toEqual(want)
    }
  })
})

describe('firstBySimilarity', () => {
  it('equals a full sort then slice: many ties at the cut, −0 beside 0, rows in any order; a NaN falls back to the heap', () => {
    let seed = 5
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    for (let t = 0; t < 400; t++) {
      const m = Math.floor(rnd() * 300)
      const sim = new Float64Array(m)
      // few distinct values (ties), and a zero of either sign
      for (let i = 0; i < m; i++) sim[i] = rnd() < 0.1 ? (rnd() < 0.5 ? -0 : 0) : Math.round((rnd() - 0.5) * 12) / 12
      if (t % 50 === 7 && m > 0) sim[Math.floor(rnd() * m)] = NaN
      const key = Array.from({ length: m }, () => Math.floor(rnd() * 5))
      const cmp = (a: number, b: number) => (sim[b] !== sim[a] ? sim[b] - sim[a] : key[a] - key[b] || a - b)
      const rows = Array.from({ length: m }, (_, i) => i).filter(() => rnd() < 0.9)
      const n = Math.floor(rnd() * 60)
      const hasNaN = rows.some((r) => Number.isNaN(sim[r]))
      const want = hasNaN ? firstInOrder([...rows], n, cmp) : [...rows].sort(cmp).slice(0, n)
      expect(firstBySimilarity([...rows], sim, n, cmp)).toEqual(want)
    }
  })
})
