/**
 * The 6-bit scan kernel (dot6All in dotKernel.ts) over packed rows (sixBit.ts) gives, row for row, the integer
 * Σ d_i · ((c_i + 128) >> 2) computed here from the int8 codes themselves (not from the packed bytes), on
 * random rows with the extreme codes ±127 and widths that are not multiples of 64; packing then unpacking gives
 * the codes back.
 */
import { describe, expect, it } from 'vitest'
import { dotKernel, kernelModule, wasmMemory } from './dotKernel'
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
        packRow(c, dim, hi, row * h3, lo, row * (w / 4))
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
