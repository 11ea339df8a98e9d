/**
 * UMAP refinement of the embedding map (umap-js, MIT), started from the PCA
 * frame instead of umap-js's random one: the picture the user already sees
 * rearranges into clusters rather than jumping to an unrelated layout, and PCA
 * is a well-known good initialisation for UMAP. Pure and seeded (umap-js takes
 * the PRNG), so a worker and the caller's thread compute the same coordinates.
 */
import { UMAP } from 'umap-js'
import { mulberry32 } from '../../shared/random'

export interface UmapOptions {
  /** @default 15 (umap-js's default) */
  nNeighbors?: number
  /** @default 200 */
  nEpochs?: number
  /** @default 1 */
  seed?: number
  /** called after each epoch; return false to stop early (cancel) */
  onEpoch?: (epoch: number, total: number) => boolean | void
}

/** How the query point was placed on the UMAP layout: the mean position of its nearest rows. */
export type QueryPlacement = 'nearest'

export interface UmapResult {
  /** row i at [2i, 2i+1] */
  coords: Float32Array
  query: [number, number] | null
  /** `nearest`: the mean position of its 5 nearest rows (Euclidean in the original space) */
  queryPlacement: QueryPlacement | null
  epochs: number
  nNeighbors: number
  /** stopped before the last epoch (cancelled) */
  stopped: boolean
}

/** UMAP needs more rows than neighbours; below this the map stays PCA. */
export const UMAP_MIN_ROWS = 8

/**
 * Lay out `n` rows (`data[i*dim + j]`) in 2-D, starting from `init` (row i at
 * [2i, 2i+1], e.g. the PCA coordinates), and place `query` on the result.
 */
export function layoutUmap(data: Float32Array, n: number, dim: number, init: Float32Array, query: Float32Array | null, opts: UmapOptions = {}): UmapResult {
  if (n < UMAP_MIN_ROWS) throw new RangeError(`UMAP needs at least ${UMAP_MIN_ROWS} points (got ${n})`)
  const nNeighbors = Math.max(2, Math.min(opts.nNeighbors ?? 15, n - 1))
  const rows: number[][] = new Array<number[]>(n)
  for (let i = 0; i < n; i++) rows[i] = Array.from(data.subarray(i * dim, (i + 1) * dim))
  const umap = new UMAP({ nComponents: 2, nNeighbors, nEpochs: opts.nEpochs ?? 200, random: mulberry32(opts.seed ?? 1) })
  const total = umap.initializeFit(rows)
  // Seed the layout with the PCA frame, scaled into umap-js's own start box (±10). The optimiser holds this very
  // array (getEmbedding returns it), so writing into it in place replaces the random start.
  const emb = umap.getEmbedding()
  let extent = 0
  for (let i = 0; i < 2 * n; i++) extent = Math.max(extent, Math.abs(init[i]))
  const scale = extent > 0 ? 10 / extent : 0
  for (let i = 0; i < n; i++) {
    emb[i][0] = init[2 * i] * scale
    emb[i][1] = init[2 * i + 1] * scale
  }
  let epochs = 0
  let stopped = false
  for (let e = 0; e < total; e++) {
    umap.step()
    epochs = e + 1
    if (opts.onEpoch?.(epochs, total) === false) {
      stopped = true
      break
    }
  }
  const out = umap.getEmbedding()
  const coords = new Float32Array(n * 2)
  for (let i = 0; i < n; i++) {
    coords[2 * i] = out[i][0]
    coords[2 * i + 1] = out[i][1]
  }
  // The query is placed by its nearest neighbours, not umap-js's `transform`: in umap-js 1.4.0 `transform`
  // never returns when the layout holds duplicate vectors (common: agents store the same memory many times),
  // and a worker that never answers is a job that never ends.
  const q = query ? nearestPlacement(data, n, dim, coords, query, 5) : null
  const placement: QueryPlacement | null = query ? 'nearest' : null
  return { coords, query: q, queryPlacement: placement, epochs, nNeighbors, stopped }
}

/** The mean position of the `k` rows closest to `v` (Euclidean in the original space). */
function nearestPlacement(data: Float32Array, n: number, dim: number, coords: Float32Array, v: Float32Array, k: number): [number, number] {
  const best: { i: number; d: number }[] = []
  for (let i = 0; i < n; i++) {
    let d = 0
    for (let j = 0; j < dim; j++) {
      const x = data[i * dim + j] - v[j]
      d += x * x
    }
    if (best.length < k || d < best[best.length - 1].d) {
      best.push({ i, d })
      best.sort((a, b) => a.d - b.d)
      if (best.length > k) best.pop()
    }
  }
  let x = 0
  let y = 0
  for (const b of best) {
    x += coords[2 * b.i]
    y += coords[2 * b.i + 1]
  }
  return best.length ? [x / best.length, y / best.length] : [0, 0]
}
