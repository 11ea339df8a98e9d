/**
 * The 6+2-bit planes of the int8 codes (int8Scan.ts; docs/internals/performance.md, "stop 35"): the dense
 * scan reads a packed 6-bit plane (¾ of the int8 bytes), the 2 low bits are read only for the rows its bound
 * keeps.
 *
 * An int8 code c ∈ [−127, 127] is u = c + 128 ∈ [1, 255] = 4·hi + lo, hi = u >> 2 (6 bits), lo = u & 3. A row's
 * width is padded to W (a multiple of 64, the pad codes 0): its hi values take 3W/4 bytes (the scan kernel
 * dot6All in dotKernel.ts): byte j's low 6 bits hold hi of dim j (j < 3W/4), and hi of dim 3W/4 + j (j < W/4)
 * is spread over the top 2 bits of bytes j, j + W/4, j + W/2 (its bits 0–1, 2–3, 4–5). Its lo values take W/4
 * bytes: dim i's in bits 2·(i mod 4) of byte ⌊i / 4⌋.
 *
 * The first pass's approximation of a row is x̂6 = s·(4·hi + 1.5 − 128) (lo replaced by its middle), so for a
 * query coded as t·d, q̂·x̂6 = t·s·(4·Σ d·hi − 126.5·Σ d): the kernel's integer sum and a per-query constant.
 */

/** The padded width W of rows of `dim`: a multiple of 64. */
export const width6 = (dim: number): number => Math.ceil(dim / 64) * 64

/**
 * Pack the int8 codes `codes[codesAt .. codesAt + dim)` (the rest of the row 0) into `hi` at `hiAt` (3W/4 bytes)
 * and `lo` at `loAt` (W/4 bytes).
 */
export function packRow(codes: ArrayLike<number>, codesAt: number, dim: number, hi: Uint8Array, hiAt: number, lo: Uint8Array, loAt: number): void {
  const w = width6(dim)
  const h3 = (3 * w) / 4
  const qw = w / 4
  for (let i = 0; i < qw; i++) {
    // dims 4i … 4i+3: their lo bits in one byte
    let b = 0
    for (let k = 0; k < 4; k++) {
      const d = 4 * i + k
      const u = (d < dim ? codes[codesAt + d] : 0) + 128
      b |= (u & 3) << (2 * k)
      if (d < h3) hi[hiAt + d] = u >> 2
    }
    lo[loAt + i] = b
  }
  for (let j = 0; j < qw; j++) {
    const d = h3 + j
    const v = ((d < dim ? codes[codesAt + d] : 0) + 128) >> 2
    hi[hiAt + j] |= (v & 3) << 6
    hi[hiAt + j + qw] |= ((v >> 2) & 3) << 6
    hi[hiAt + j + 2 * qw] |= (v >> 4) << 6
  }
}

/**
 * A row's e6 = ‖x − x̂6‖ and h6 = ‖x̂6‖ (x̂6 = s·(4·hi − 126.5), hi = (c + 128) >> 2) from its unit row
 * `v[off .. off + dim)`, its scale and its int8 codes.
 */
export function sixNumbers(v: ArrayLike<number>, off: number, dim: number, s: number, codes: ArrayLike<number>, codesAt: number): { e6: number; h6: number } {
  let e2 = 0
  let h2 = 0
  for (let i = 0; i < dim; i++) {
    const xh = s * (4 * ((codes[codesAt + i] + 128) >> 2) - 126.5)
    const d = v[off + i] - xh
    e2 += d * d
    h2 += xh * xh
  }
  return { e6: Math.sqrt(e2), h6: Math.sqrt(h2) }
}

/** Rebuild a row's int8 codes (dims [0, dim)) from its planes into `out` at `outAt`. */
export function unpackRow(hi: Uint8Array, hiAt: number, lo: Uint8Array, loAt: number, dim: number, out: Int8Array, outAt: number): void {
  const w = width6(dim)
  const h3 = (3 * w) / 4
  const qw = w / 4
  const lowBits = (i: number) => (lo[loAt + (i >> 2)] >> (2 * (i & 3))) & 3
  for (let i = 0; i < Math.min(dim, h3); i++) out[outAt + i] = 4 * (hi[hiAt + i] & 63) + lowBits(i) - 128
  for (let i = h3; i < dim; i++) {
    const j = hiAt + i - h3
    out[outAt + i] = 4 * ((hi[j] >> 6) | ((hi[j + qw] >> 6) << 2) | ((hi[j + 2 * qw] >> 6) << 4)) + lowBits(i) - 128
  }
}
