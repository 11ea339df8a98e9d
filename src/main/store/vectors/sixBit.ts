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
 * Pack the int8 codes `codes[0 .. dim)` (the rest of the row 0) into `hi` at `hiAt` (3W/4 bytes) and `lo` at
 * `loAt` (W/4 bytes); returns Σ (4·hi − 126.5)² over the row's dims (‖x̂6‖² / s², exact: quarter-integers).
 */
export function packRow(codes: ArrayLike<number>, dim: number, hi: Uint8Array, hiAt: number, lo: Uint8Array, loAt: number): number {
  const w = width6(dim)
  const h3 = (3 * w) / 4
  const qw = w / 4
  hi.fill(0, hiAt, hiAt + h3)
  lo.fill(0, loAt, loAt + qw)
  let h2 = 0
  for (let i = 0; i < w; i++) {
    const u = (i < dim ? codes[i] : 0) + 128
    const v = u >> 2
    if (i < h3) hi[hiAt + i] |= v
    else {
      const j = hiAt + i - h3
      hi[j] |= (v & 3) << 6
      hi[j + qw] |= ((v >> 2) & 3) << 6
      hi[j + 2 * qw] |= (v >> 4) << 6
    }
    lo[loAt + (i >> 2)] |= (u & 3) << (2 * (i & 3))
    if (i < dim) h2 += (4 * v - 126.5) ** 2
  }
  return h2
}

/** Row `r`'s hi value of dim i from the packed plane (the layout above). */
export function hiOf(hi: Uint8Array, at: number, w: number, i: number): number {
  const h3 = (3 * w) / 4
  if (i < h3) return hi[at + i] & 63
  const j = at + i - h3
  const qw = w / 4
  return (hi[j] >> 6) | ((hi[j + qw] >> 6) << 2) | ((hi[j + 2 * qw] >> 6) << 4)
}

/** Rebuild a row's int8 codes (dims [0, dim)) from its planes into `out` at `outAt`. */
export function unpackRow(hi: Uint8Array, hiAt: number, lo: Uint8Array, loAt: number, dim: number, out: Int8Array, outAt: number): void {
  const w = width6(dim)
  for (let i = 0; i < dim; i++) out[outAt + i] = 4 * hiOf(hi, hiAt, w, i) + ((lo[loAt + (i >> 2)] >> (2 * (i & 3))) & 3) - 128
}
