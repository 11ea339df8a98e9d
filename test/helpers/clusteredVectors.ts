/**
 * A seeded, clustered set of unit vectors shaped like text embeddings: `clusters` topics, each a centre
 * plus a few latent directions the points spread along (a low intrinsic dimension, as real embeddings
 * have) and a little isotropic noise, normalised to unit length. The map's tests and `bench map` lay it out;
 * `sameClusterNearest` scores a layout of labelled points.
 */
import { mulberry32 } from '../../src/shared/random'

export interface Clustered {
  data: Float32Array
  n: number
  dim: number
  /** point i's cluster */
  labels: Int32Array
}

export function clusteredVectors(n: number, dim: number, opts: { clusters?: number; latent?: number; noise?: number; seed?: number } = {}): Clustered {
  const c = opts.clusters ?? 12
  const latent = opts.latent ?? 6
  const noise = opts.noise ?? 0.15
  const r = mulberry32(opts.seed ?? 1)
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())
  const unit = () => {
    const v = Float64Array.from({ length: dim }, gauss)
    const s = Math.hypot(...v)
    return v.map((x) => x / s)
  }
  const centres = Array.from({ length: c }, unit)
  const bases = Array.from({ length: c }, () => Array.from({ length: latent }, unit))
  const data = new Float32Array(n * dim)
  const labels = new Int32Array(n)
  const row = new Float64Array(dim)
  for (let i = 0; i < n; i++) {
    const k = i % c
    labels[i] = k
    row.set(centres[k])
    for (const b of bases[k]) {
      const z = 0.35 * gauss()
      for (let j = 0; j < dim; j++) row[j] += z * b[j]
    }
    const nz = noise / Math.sqrt(dim)
    for (let j = 0; j < dim; j++) row[j] += nz * gauss()
    let s = 0
    for (let j = 0; j < dim; j++) s += row[j] * row[j]
    const inv = 1 / Math.sqrt(s)
    for (let j = 0; j < dim; j++) data[i * dim + j] = row[j] * inv
  }
  return { data, n, dim, labels }
}

/** Share of points whose nearest point on the map is of their own cluster. */
export function sameClusterNearest(coords: Float32Array, labels: Int32Array): number {
  const n = labels.length
  let same = 0
  for (let i = 0; i < n; i++) {
    let best = -1
    let bd = Infinity
    for (let j = 0; j < n; j++) {
      if (j === i) continue
      const d = (coords[2 * i] - coords[2 * j]) ** 2 + (coords[2 * i + 1] - coords[2 * j + 1]) ** 2
      if (d < bd) [bd, best] = [d, j]
    }
    if (labels[best] === labels[i]) same++
  }
  return same / n
}
