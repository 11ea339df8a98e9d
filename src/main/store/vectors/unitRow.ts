/**
 * The numbers of a unit row, in the one order every path uses (VectorIndex.putFrom, the
 * quantiser kernel in dotKernel.ts, a compact row read back from the DB): the sum of squares
 * as four float64 sums (element i in sum i mod 4, the rest in sum 0, then (s0 + s1) + (s2 + s3)),
 * and each value times 1 / √sum rounded to float32. The same operations give the same bits.
 */

/** Σ v[i]² over v[off .. off+dim) in the order above. Unrolled by 4: ~3× a plain loop in V8 on a million-row load. */
export function sumOfSquares(v: Float32Array, off: number, dim: number): number {
  const end = off + dim
  const end4 = off + (dim & ~3)
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  let i = off
  for (; i < end4; i += 4) {
    const a = v[i]
    const b = v[i + 1]
    const c = v[i + 2]
    const d = v[i + 3]
    s0 += a * a
    s1 += b * b
    s2 += c * c
    s3 += d * d
  }
  for (; i < end; i++) s0 += v[i] * v[i]
  return s0 + s1 + (s2 + s3)
}

/**
 * A compact row made again from its stored vector `raw` (float32 bytes, not unit length) and the
 * float64 norm the load computed: `out` gets the unit row. Returns false when `raw` is not that
 * vector any more (another length or another norm: rewritten in place); `out` then holds the unit
 * row of what is stored now (zeros when it is unusable). `scratch` takes unaligned bytes.
 */
export function unitRowFromStored(raw: Uint8Array | null, norm: number, out: Float32Array, scratch: Float32Array): boolean {
  const dim = out.length
  if (!raw || raw.byteLength !== dim * 4) {
    out.fill(0)
    return false
  }
  let v: Float32Array
  if (raw.byteOffset % 4 === 0) v = new Float32Array(raw.buffer, raw.byteOffset, dim)
  else {
    new Uint8Array(scratch.buffer, scratch.byteOffset, dim * 4).set(raw)
    v = scratch
  }
  let now = Math.sqrt(sumOfSquares(v, 0, dim))
  const same = now === norm
  if (!Number.isFinite(now)) now = 0
  const inv = now > 0 ? 1 / now : 0
  for (let i = 0; i < dim; i++) out[i] = v[i] * inv
  return same
}
