/**
 * The scans touch each row's cache lines before they read it (touchRow, wasmAsm.ts): every one of those loads
 * stays inside the row. Here the last row ends at the memory's last byte, so a touch past a row's end traps
 * ("memory access out of bounds"), for row lengths that are not multiples of a line, shorter than one, and
 * longer than three; the sums are still the scalar ones (and pcaRowsAll's column sums the sequential ones).
 */
import { describe, expect, it } from 'vitest'
import { dotKernel, kernelModule, wasmMemory } from './dotKernel'
import { dotRow } from './vectorIndex'

const PAGE = 65536

/** One page of memory: the query at 0, the output after `qBytes`, and `n` rows of `rowBytes` ending at the page's end. */
function flush(n: number, rowBytes: number, qBytes: number, outBytes: number) {
  const mem = wasmMemory(1)
  const data = PAGE - n * rowBytes
  const out = qBytes
  expect(out + outBytes * n).toBeLessThanOrEqual(data)
  return { mem, data, q: 0, out }
}

describe.skipIf(!kernelModule(false, 'dotAll'))('the touch before each row', () => {
  // the float32 kernels: dotAll (one query), dot2All (two), pcaRowsAll (two axes, then the column sums it adds to)
  const floatKernels = [
    { name: 'dotAll', vectors: 1, outs: 1 },
    { name: 'dot2All', vectors: 2, outs: 2 },
    { name: 'pcaRowsAll', vectors: 3, outs: 3 },
  ] as const
  for (const { name, vectors, outs } of floatKernels)
    for (const dim of [1, 7, 16, 100, 768]) {
      it(`${name}, dim ${dim}: rows flush against the memory's end give dotRow's numbers`, () => {
        const n = 5
        const { mem, data, q, out } = flush(n, 4 * dim, 8 * dim * vectors, 8 * outs)
        const rows = new Float32Array(mem.buffer, data, n * dim)
        for (let i = 0; i < rows.length; i++) rows[i] = Math.sin(i + 1)
        const qv = new Float64Array(mem.buffer, q, dim * vectors)
        for (let i = 0; i < qv.length; i++) qv[i] = Math.cos(i)
        const before = Float64Array.from(qv)
        dotKernel(mem, false, name)!(data, n, dim, q, out)
        const got = new Float64Array(mem.buffer, out, n * outs)
        const query = (v: number) => before.subarray(v * dim, (v + 1) * dim)
        for (let r = 0; r < n; r++) {
          for (let v = 0; v < Math.min(outs, 2); v++) expect(got[r * outs + v]).toBe(dotRow(rows, r, dim, query(v)))
          // pcaRowsAll's third number: the row's squared norm, summed as dotRow sums
          if (outs === 3) expect(got[r * outs + 2]).toBe(dotRow(rows, r, dim, Float64Array.from(rows.subarray(r * dim, (r + 1) * dim))))
        }
        if (vectors === 3)
          for (let i = 0; i < dim; i++) {
            let sum = before[2 * dim + i]
            for (let r = 0; r < n; r++) sum += rows[r * dim + i]
            expect(qv[2 * dim + i]).toBe(sum)
          }
      })
    }

  for (const width of [64, 128, 320, 1024]) {
    it(`dot6All, width ${width}: rows flush against the memory's end give the scalar sums`, () => {
      const n = 7
      const rowBytes = (3 * width) / 4
      const { mem, data, q, out } = flush(n, rowBytes, 2 * width, 4)
      const bytes = new Uint8Array(mem.buffer, data, n * rowBytes)
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 37 + 11) & 255
      const d = new Int16Array(mem.buffer, q, width)
      for (let i = 0; i < width; i++) d[i] = ((i * 131) % 401) - 200
      dotKernel(mem, false, 'dot6All')!(data, n, width, q, out)
      const got = new Int32Array(mem.buffer, out, n)
      const quarter = width / 4
      for (let r = 0; r < n; r++) {
        // the layout of sixBit.ts: byte j's low 6 bits are value j (j < 3W/4); value 3W/4 + j is the top 2 bits
        // of bytes j, j + W/4, j + W/2
        const b = (j: number) => bytes[r * rowBytes + j]
        let s = 0
        for (let j = 0; j < rowBytes; j++) s += d[j] * (b(j) & 63)
        for (let j = 0; j < quarter; j++) s += d[rowBytes + j] * ((b(j) >> 6) | ((b(j + quarter) >> 6) << 2) | ((b(j + 2 * quarter) >> 6) << 4))
        expect(got[r]).toBe(s)
      }
    })
  }
})
