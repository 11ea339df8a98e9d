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
 * and `lo` at `loAt` (W/4 bytes). hi = (c + 128) >> 2 = (c >> 2) + 32 and lo = (c + 128) & 3 = c & 3 (128 is 4 · 32).
 */
export function packRow(codes: ArrayLike<number>, codesAt: number, dim: number, hi: Uint8Array, hiAt: number, lo: Uint8Array, loAt: number): void {
  const w = width6(dim)
  const h3 = (3 * w) / 4
  const qw = w / 4
  if (dim < w) {
    // a width that is not a multiple of 64: through a zero-padded copy
    const padded = new Int8Array(w)
    for (let i = 0; i < dim; i++) padded[i] = codes[codesAt + i]
    packRow(padded, 0, w, hi, hiAt, lo, loAt)
    return
  }
  if (codes instanceof Int8Array && (codes.byteOffset + codesAt) % 4 === 0 && (hi.byteOffset + hiAt) % 4 === 0 && (lo.byteOffset + loAt) % 4 === 0) {
    const c = words(codes)
    const h = words(hi)
    const l = words(lo)
    packWords(c, (codes.byteOffset + codesAt) / 4, h, (hi.byteOffset + hiAt) / 4, l, (lo.byteOffset + loAt) / 4, h3 / 4, qw / 4)
    return
  }
  for (let i = 0; i < h3; i++) hi[hiAt + i] = (codes[codesAt + i] >> 2) + 32
  for (let j = 0; j < qw; j++) {
    const v = (codes[codesAt + h3 + j] >> 2) + 32
    hi[hiAt + j] |= (v & 3) << 6
    hi[hiAt + j + qw] |= ((v >> 2) & 3) << 6
    hi[hiAt + j + 2 * qw] |= (v >> 4) << 6
  }
  for (let i = 0; i < qw; i++) {
    const c = codesAt + 4 * i
    lo[loAt + i] = (codes[c] & 3) | ((codes[c + 1] & 3) << 2) | ((codes[c + 2] & 3) << 4) | ((codes[c + 3] & 3) << 6)
  }
}

const wordViews = new WeakMap<ArrayBufferLike, Uint32Array>()
/** A 32-bit view of all of `a`'s buffer (one per buffer: a grown WebAssembly memory has a new one). */
function words(a: Uint8Array | Int8Array): Uint32Array {
  let v = wordViews.get(a.buffer)
  if (!v) wordViews.set(a.buffer, (v = new Uint32Array(a.buffer, 0, a.buffer.byteLength >> 2)))
  return v
}

/**
 * packRow four codes at a time (32-bit words `c`, `h`, `l` from word `ca`, `ha`, `la`; little-endian like every
 * view of the kernels' memory): c + 128 is c with its top bit flipped, so a word's u = w ^ 0x80808080, its hi
 * values (u >>> 2) & 0x3f3f3f3f and its lo values u & 0x03030303; four lo values (one a byte) make one byte as
 * x | x >>> 6 | x >>> 12 | x >>> 18. `h3`, `qw`: 3W/16 and W/16 words.
 */
function packWords(c: Uint32Array, ca: number, h: Uint32Array, ha: number, l: Uint32Array, la: number, h3: number, qw: number): void {
  for (let i = 0; i < h3; i++) h[ha + i] = ((c[ca + i] ^ 0x80808080) >>> 2) & 0x3f3f3f3f
  for (let j = 0; j < qw; j++) {
    const v = ((c[ca + h3 + j] ^ 0x80808080) >>> 2) & 0x3f3f3f3f
    h[ha + j] |= (v & 0x03030303) << 6
    h[ha + j + qw] |= ((v >>> 2) & 0x03030303) << 6
    h[ha + j + 2 * qw] |= ((v >>> 4) & 0x03030303) << 6
  }
  for (let i = 0; i < qw; i++) {
    let word = 0
    for (let k = 0; k < 4; k++) {
      const x = (c[ca + 4 * i + k] ^ 0x80808080) & 0x03030303
      word |= ((x | (x >>> 6) | (x >>> 12) | (x >>> 18)) & 0xff) << (8 * k)
    }
    l[la + i] = word
  }
}

/**
 * A row's e6 = ‖x − x̂6‖ and h6 = ‖x̂6‖ from its int8 numbers: x̂6 = x̂ − s·L with L = lo − 1.5 for each dim, so
 * e6² = e² + 2s·X + s²·Z and h6² = h² − 2s·Y + s²·Z, where e² = Σ (x − x̂)², h² = Σ x̂², X = Σ (x − x̂)·L,
 * Y = Σ x̂·L, Z = Σ L² (the quantiser kernel's sums, or setRow's). Rounding moves them by ~1e-17, within SLACK.
 */
export function sixFrom(e2: number, h2: number, s: number, X: number, Y: number, Z: number): { e6: number; h6: number } {
  return { e6: Math.sqrt(Math.max(0, e2 + 2 * s * X + s * s * Z)), h6: Math.sqrt(Math.max(0, h2 - 2 * s * Y + s * s * Z)) }
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
