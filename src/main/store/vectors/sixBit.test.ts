/**
 * The 6-bit scan kernel (dot6All in dotKernel.ts) over packed rows (sixBit.ts) gives, row for row, the integer
 * Σ d_i · ((c_i + 128) >> 2) computed here from the int8 codes themselves (not from the packed bytes), on
 * random rows with the extreme codes ±127 and widths that are not multiples of 64; packing then unpacking gives
 * the codes back.
 */
import { describe, expect, it } from 'vitest'
import { normalizeQuery } from '../../recall/dense'
import { dotKernel, kernelModule, wasmMemory } from './dotKernel'
import { Int8Index } from './int8Scan'
import { dotRow } from './vectorIndex'
import { packRow, unpackRow, width6 } from './sixBit'

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return s / 4294967296
  }
}

describe.skipIf(!kernelModule(false, 'dot6All'))('the 6-bit planes', () => {
  for (const dim of [1, 33, 64, 100, 191, 768]) {
    it(`dim ${dim}: the kernel's sums are the scalar sums of the codes' top 6 bits, bit for bit; unpacking gives the codes`, () => {
      const r = rng(dim)
      const n = 300
      const w = width6(dim)
      const h3 = (3 * w) / 4
      const qMax = Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * w)))
      const mem = wasmMemory(Math.ceil((n * h3 + 2 * w + 4 * n) / 65536) + 1)
      const k = dotKernel(mem, false, 'dot6All')!
      const hi = new Uint8Array(mem.buffer, 0, n * h3)
      const lo = new Uint8Array(n * (w / 4))
      const codes: Int8Array[] = []
      for (let row = 0; row < n; row++) {
        // rows of only the extremes, of one extreme, and random codes with some extremes mixed in
        const c = Int8Array.from({ length: dim }, () => {
          const x = r()
          if (row % 3 === 0) return x < 0.5 ? 127 : -127
          if (row % 7 === 1) return 127
          if (x < 0.05) return -127
          if (x > 0.95) return 127
          return Math.floor(r() * 255) - 127
        })
        codes.push(c)
        packRow(c, 0, dim, hi, row * h3, lo, row * (w / 4))
        const back = new Int8Array(dim)
        unpackRow(hi, row * h3, lo, row * (w / 4), dim, back, 0)
        expect(Array.from(back)).toEqual(Array.from(c))
      }
      const qAt = n * h3 + (16 - ((n * h3) % 16))
      const outAt = qAt + 2 * w
      for (const mode of ['random', 'max', 'min']) {
        const d = new Int16Array(mem.buffer, qAt, w)
        d.fill(0)
        for (let i = 0; i < dim; i++) d[i] = mode === 'max' ? qMax : mode === 'min' ? -qMax : Math.round((2 * r() - 1) * qMax)
        k(0, n, w, qAt, outAt)
        const out = new Int32Array(mem.buffer, outAt, n)
        for (let row = 0; row < n; row++) {
          let s = 0
          for (let i = 0; i < dim; i++) s += d[i] * ((codes[row][i] + 128) >> 2)
          expect(out[row]).toBe(s)
        }
      }
    })
  }
})

/**
 * A row the 6-bit bound must keep although its 6-bit estimate is as low as it gets: the query points along the
 * row's own 6-bit error x − x̂6 (computed here from the quantisation's definition), so q·x − q·x̂6 = ‖x − x̂6‖,
 * Cauchy–Schwarz with equality. A second row, on the 6-bit grid (no error but its largest code's 1.5 steps), scores
 * a quarter of that error below the first: a bound a little too small (e6 halved) rules the first row out and
 * returns the second.
 */
describe.skipIf(!kernelModule(false, 'dot6All'))('the 6-bit bound where Cauchy–Schwarz is tight', () => {
  it('keeps the row whose error points along the query', () => {
    const dim = 64
    const r = rng(7)
    const x = Float32Array.from({ length: dim }, () => r() - 0.5)
    const s = Math.fround(Math.max(...Array.from(x, Math.abs)) / 127)
    const hiOf = (v: number) => (Math.max(-127, Math.min(127, Math.round(v / s))) + 128) >> 2
    const x6 = Array.from(x, (v) => s * (4 * hiOf(v) - 126.5))
    const err = Array.from(x, (v, i) => v - x6[i])
    const e6 = Math.hypot(...err)
    const q = normalizeQuery(err)!
    const score = (v: ArrayLike<number>) => dotRow(Float32Array.from(v), 0, dim, q)
    const t0 = score(x)
    // the second row: x̂6 on x's grid, its largest value the scale's 127 steps, moved a step at a time towards q
    const big = Array.from(x, Math.abs).indexOf(Math.max(...Array.from(x, Math.abs)))
    const h = Array.from(x, hiOf)
    const z = () => Float32Array.from(h, (v, i) => (i === big ? Math.sign(x[i]) * 127 * s : s * (4 * v - 126.5)))
    const order = Array.from({ length: dim }, (_, i) => i)
      .filter((i) => i !== big)
      .sort((a, b) => Math.abs(q[b]) - Math.abs(q[a]))
    for (let j = 0; score(z()) < t0 - 0.3 * e6; j = (j + 1) % order.length) {
      const i = order[j]
      h[i] = Math.max(0, Math.min(63, h[i] + Math.sign(q[i])))
    }
    const zr = z()
    expect(score(zr)).toBeLessThan(t0 - 0.1 * e6)
    const idx = new Int8Index(2, dim)
    idx.setRow(0, x)
    idx.setRow(1, zr)
    const rows = [x, zr]
    const got = idx.search(q, 1, [0, 1], (rs) => Array.from(rs, (i) => score(rows[i])))
    expect(got.rows).toEqual([0])
    expect(got.kept6).toBe(2)
    // e6 and h6 (made from the int8 sums, sixFrom) are the norms computed here from their definition
    expect(idx.errs6[0]).toBeCloseTo(e6, 14)
    expect(idx.hatNorms6[0]).toBeCloseTo(Math.hypot(...x6), 14)
    const b = idx.boundsOf(q, 0)
    expect(t0).toBeGreaterThanOrEqual(b.lo6)
    expect(t0).toBeLessThanOrEqual(b.hi6)
  })
})

describe.skipIf(!kernelModule(false, 'dot6All'))('the int8 sums of the rows the 6-bit bound keeps', () => {
  for (const dim of [100, 768]) {
    it(`dim ${dim}: 4·(the 6-bit sum) + the 2-bit plane's sum − 128·Σ d is Σ d·c of the row's own codes`, () => {
      const n = 500
      const r = rng(dim + 1)
      const rows = new Float32Array(n * dim)
      for (let i = 0; i < n * dim; i++) rows[i] = r() < 0.02 ? (r() < 0.5 ? 1 : -1) : r() - 0.5 // some rows' largest values repeat: codes ±127
      const idx = new Int8Index(n, dim)
      for (let row = 0; row < n; row++) idx.setRow(row, rows, row * dim)
      const q = normalizeQuery(Array.from({ length: dim }, () => r() - 0.5))!
      const list = Int32Array.from({ length: n / 2 }, (_, i) => 2 * i + 1)
      const got = idx.int8Sums(q, list)
      // the query's codes and the rows' codes, from their definitions (int8Scan.ts)
      const qMax = Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * width6(dim))))
      const t = Math.max(...Array.from(q, Math.abs)) / qMax
      const d = Array.from(q, (v) => Math.round(v / t))
      list.forEach((row, i) => {
        const x = rows.subarray(row * dim, (row + 1) * dim)
        const s = Math.fround(Math.max(...Array.from(x, Math.abs)) / 127)
        let sum = 0
        for (let j = 0; j < dim; j++) sum += d[j] * Math.max(-127, Math.min(127, Math.round(x[j] / s)))
        expect(got[i]).toBe(sum)
      })
    })
  }
})

describe.skipIf(!kernelModule(false, 'pack6'))('the packing kernel', () => {
  for (const w of [64, 128, 768]) {
    it(`width ${w}: pack6 writes packRow's bytes`, () => {
      const n = 200
      const r = rng(w + 5)
      const mem = wasmMemory(Math.ceil((n * w * 2) / 65536) + 1)
      const codes = new Int8Array(mem.buffer, 0, n * w)
      for (let i = 0; i < codes.length; i++) codes[i] = r() < 0.1 ? (r() < 0.5 ? 127 : -127) : Math.floor(r() * 255) - 127
      const hiAt = n * w
      const loAt = hiAt + (n * 3 * w) / 4
      dotKernel(mem, false, 'pack6')!(0, n, w, hiAt, loAt)
      const hi = new Uint8Array((n * 3 * w) / 4)
      const lo = new Uint8Array((n * w) / 4)
      for (let row = 0; row < n; row++) packRow(Array.from(codes.subarray(row * w, (row + 1) * w)), 0, w, hi, (row * 3 * w) / 4, lo, (row * w) / 4)
      expect(Buffer.from(mem.buffer, hiAt, hi.length).equals(Buffer.from(hi))).toBe(true)
      expect(Buffer.from(mem.buffer, loAt, lo.length).equals(Buffer.from(lo))).toBe(true)
    })
  }
})
