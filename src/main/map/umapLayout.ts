/**
 * UMAP layout of the embedding map, written for this app in typed arrays
 * (docs/internals/performance.md): an approximate k-nearest-neighbour graph
 * (knn.ts: PCA-reduced search, random-projection trees, NN-descent, exact
 * re-rank), UMAP's fuzzy simplicial set over it, and UMAP's stochastic gradient
 * layout (McInnes, Healy & Melville 2018: attractive moves along sampled edges,
 * negative sampling for repulsion, linearly decaying learning rate). umap-js
 * spent 43 s on 5,656 points, most of it in its exact-ish neighbour search
 * over arrays of arrays.
 *
 * The layout starts from the PCA frame instead of a random one: the picture
 * the user already sees rearranges into clusters rather than jumping to an
 * unrelated layout, and PCA is a well-known good initialisation for UMAP.
 * Pure and seeded, so a worker and the caller's thread compute the same coordinates.
 */
import { mulberry32 } from '../../shared/random'
import { KnnStopped, nearestNeighbours, type KnnGraph } from './knn'

export interface UmapOptions {
  /** @default 15 */
  nNeighbors?: number
  /** @default 200 */
  nEpochs?: number
  /** @default 1 */
  seed?: number
  /**
   * Told how far the whole layout is (`done` of `total`, every phase: neighbours, graph, epochs) and what it
   * is doing; return false to stop early (cancel).
   */
  onProgress?: (done: number, total: number, message: string) => boolean | void
}

/** How the query point was placed on the UMAP layout: the mean position of its nearest rows. */
export type QueryPlacement = 'nearest'

export interface UmapResult {
  /** row i at [2i, 2i+1] */
  coords: Float32Array
  query: [number, number] | null
  /** `nearest`: the mean position of its 5 nearest rows (Euclidean in the original space) */
  queryPlacement: QueryPlacement | null
  /** layout epochs run */
  epochs: number
  nNeighbors: number
  /** stopped before the last epoch (cancelled) */
  stopped: boolean
  /** where the time went, ms */
  timings: { neighboursMs: number; graphMs: number; layoutMs: number }
}

/** UMAP needs more rows than neighbours; below this the map stays PCA. */
export const UMAP_MIN_ROWS = 8

/** Progress units: per-mille of the whole layout. */
const TOTAL = 1000
/** The neighbour search's share of the progress bar (the rest is the epochs). */
const KNN_SHARE = 0.5
/**
 * The curve 1 / (1 + a·d^(2b)) that UMAP fits for min_dist 0.1, spread 1 (its defaults; umap-learn's
 * find_ab_params gives these two numbers).
 */
const A = 1.576943460405378
const B = 0.8950608781227859
/** Negative samples per positive one (UMAP's negative_sample_rate). */
const NEGATIVE_RATE = 5
/** Gradients are clipped to ±4 (UMAP's clip). */
const CLIP = 4

/**
 * Lay out `n` rows (`data[i*dim + j]`) in 2-D, starting from `init` (row i at
 * [2i, 2i+1], e.g. the PCA coordinates), and place `query` on the result.
 */
export function layoutUmap(data: Float32Array, n: number, dim: number, init: Float32Array, query: Float32Array | null, opts: UmapOptions = {}): UmapResult {
  if (n < UMAP_MIN_ROWS) throw new RangeError(`UMAP needs at least ${UMAP_MIN_ROWS} points (got ${n})`)
  const nNeighbors = Math.max(2, Math.min(opts.nNeighbors ?? 15, n - 1))
  const nEpochs = opts.nEpochs ?? 200
  const seed = opts.seed ?? 1
  const progress = opts.onProgress ?? (() => undefined)

  // Start from the PCA frame, scaled into a ±10 box (UMAP's usual starting extent).
  const emb = new Float64Array(2 * n)
  let extent = 0
  for (let i = 0; i < 2 * n; i++) extent = Math.max(extent, Math.abs(init[i]))
  const scale = extent > 0 ? 10 / extent : 0
  for (let i = 0; i < 2 * n; i++) emb[i] = init[i] * scale
  const finish = (epochs: number, stopped: boolean, timings: UmapResult['timings']): UmapResult => {
    const coords = Float32Array.from(emb)
    // The query is placed by its nearest neighbours (a transform would need the graph of the query too).
    const q = query ? nearestPlacement(data, n, dim, coords, query, 5) : null
    return { coords, query: q, queryPlacement: query ? 'nearest' : null, epochs, nNeighbors, stopped, timings }
  }

  const t0 = performance.now()
  let knn: KnnGraph
  try {
    knn = nearestNeighbours(data, n, dim, nNeighbors, {
      seed,
      onProgress: (f, m) => progress(Math.round(TOTAL * KNN_SHARE * f), TOTAL, m),
    })
  } catch (e) {
    if (e instanceof KnnStopped) return finish(0, true, { neighboursMs: performance.now() - t0, graphMs: 0, layoutMs: 0 })
    throw e
  }
  const t1 = performance.now()
  const graph = fuzzyGraph(knn, n, nEpochs)
  const t2 = performance.now()
  if (progress(Math.round(TOTAL * KNN_SHARE), TOTAL, `layout: ${graph.head.length.toLocaleString('en-US')} edges`) === false)
    return finish(0, true, { neighboursMs: t1 - t0, graphMs: t2 - t1, layoutMs: 0 })
  const run = optimizeLayout(emb, n, graph, nEpochs, seed, (e) =>
    progress(Math.round(TOTAL * (KNN_SHARE + ((1 - KNN_SHARE) * e) / nEpochs)), TOTAL, `layout epoch ${e} of ${nEpochs}`),
  )
  return finish(run.epochs, run.stopped, { neighboursMs: t1 - t0, graphMs: t2 - t1, layoutMs: performance.now() - t2 })
}

/** The symmetric weighted graph the layout samples: one entry per direction of each edge. */
interface FuzzyGraph {
  head: Int32Array
  tail: Int32Array
  /** epochs between two samples of the edge: max weight / weight */
  epochsPerSample: Float64Array
}

/**
 * UMAP's fuzzy simplicial set: per point, ρ = distance to its nearest other point and σ found by bisection
 * so that Σ exp(−(d−ρ)/σ) = log₂ k; weight exp(−(d−ρ)/σ); symmetrised by the fuzzy union a + b − ab. Edges
 * under max/nEpochs would never be sampled and are dropped (as UMAP does).
 */
function fuzzyGraph(g: KnnGraph, n: number, nEpochs: number): FuzzyGraph {
  const { k, indices, dists } = g
  const w = new Float64Array(n * k)
  const target = Math.log2(k)
  let meanAll = 0
  for (let t = 0; t < n * k; t++) meanAll += dists[t]
  meanAll /= n * k
  for (let i = 0; i < n; i++) {
    const o = i * k
    let rho = 0
    for (let t = 0; t < k; t++)
      if (dists[o + t] > 0) {
        rho = dists[o + t]
        break
      }
    let lo = 0
    let hi = Infinity
    let sigma = 1
    for (let it = 0; it < 64; it++) {
      let s = 0
      for (let t = 0; t < k; t++) {
        const d = dists[o + t] - rho
        s += d > 0 ? Math.exp(-d / sigma) : 1
      }
      if (Math.abs(s - target) < 1e-5) break
      if (s > target) {
        hi = sigma
        sigma = (lo + hi) / 2
      } else {
        lo = sigma
        sigma = hi === Infinity ? sigma * 2 : (lo + hi) / 2
      }
    }
    // UMAP's floor on σ: a point whose neighbours all sit at one distance must not get infinite weights.
    let mean = 0
    for (let t = 0; t < k; t++) mean += dists[o + t]
    mean /= k
    sigma = Math.max(sigma, 1e-3 * (rho > 0 ? mean : meanAll))
    for (let t = 0; t < k; t++) {
      const d = dists[o + t] - rho
      w[o + t] = d > 0 ? Math.exp(-d / sigma) : 1
    }
  }
  // Fuzzy union: for each pair, a (i→j) and b (j→i, 0 when j does not list i).
  const reverse = (i: number, j: number) => {
    for (let t = 0; t < k; t++) if (indices[j * k + t] === i) return w[j * k + t]
    return 0
  }
  const heads: number[] = []
  const tails: number[] = []
  const weights: number[] = []
  let maxW = 0
  for (let i = 0; i < n; i++)
    for (let t = 0; t < k; t++) {
      const j = indices[i * k + t]
      if (j < 0 || j === i) continue
      const b = reverse(i, j)
      // A pair both list is emitted once from its smaller end (then both directions below).
      if (b > 0 && j < i) continue
      const a = w[i * k + t]
      const u = a + b - a * b
      heads.push(i)
      tails.push(j)
      weights.push(u)
      if (u > maxW) maxW = u
    }
  const keep = weights.map((u) => u >= maxW / nEpochs)
  const m = keep.filter(Boolean).length
  const head = new Int32Array(2 * m)
  const tail = new Int32Array(2 * m)
  const eps = new Float64Array(2 * m)
  let e = 0
  for (let t = 0; t < weights.length; t++) {
    if (!keep[t]) continue
    const per = maxW / weights[t]
    head[e] = heads[t]
    tail[e] = tails[t]
    eps[e++] = per
    head[e] = tails[t]
    tail[e] = heads[t]
    eps[e++] = per
  }
  return { head, tail, epochsPerSample: eps }
}

/**
 * UMAP's stochastic gradient descent (optimize_layout_euclidean): each epoch, every edge due for a sample
 * pulls its two ends together and pushes its head away from `NEGATIVE_RATE` random points; the learning
 * rate falls linearly from 1 to 0. `onEpoch` returning false stops it.
 */
function optimizeLayout(
  emb: Float64Array,
  n: number,
  g: FuzzyGraph,
  nEpochs: number,
  seed: number,
  onEpoch: (epoch: number) => boolean | void,
): { epochs: number; stopped: boolean } {
  const { head, tail, epochsPerSample } = g
  const m = head.length
  const epsNeg = new Float64Array(m)
  const nextSample = new Float64Array(m)
  const nextNeg = new Float64Array(m)
  for (let e = 0; e < m; e++) {
    epsNeg[e] = epochsPerSample[e] / NEGATIVE_RATE
    nextSample[e] = epochsPerSample[e]
    nextNeg[e] = epsNeg[e]
  }
  // Negative samples draw from xorshift32 inline (seeded by mulberry32): a closure call per draw was a
  // measurable share of the epochs.
  let state = Math.floor(mulberry32(seed ^ 0x5bd1e995)() * 0xfffffffe) + 1
  const clip = (x: number) => (x > CLIP ? CLIP : x < -CLIP ? -CLIP : x)
  for (let epoch = 0; epoch < nEpochs; epoch++) {
    const alpha = 1 - epoch / nEpochs
    for (let e = 0; e < m; e++) {
      if (nextSample[e] > epoch) continue
      const j = 2 * head[e]
      const k = 2 * tail[e]
      let dx = emb[j] - emb[k]
      let dy = emb[j + 1] - emb[k + 1]
      let d2 = dx * dx + dy * dy
      if (d2 > 0) {
        const pb = powB(d2)
        const c = (-2 * A * B * (pb / d2)) / (A * pb + 1)
        const gx = clip(c * dx) * alpha
        const gy = clip(c * dy) * alpha
        emb[j] += gx
        emb[j + 1] += gy
        emb[k] -= gx
        emb[k + 1] -= gy
      }
      nextSample[e] += epochsPerSample[e]
      const nNeg = Math.floor((epoch - nextNeg[e]) / epsNeg[e])
      for (let s = 0; s < nNeg; s++) {
        state ^= state << 13
        state ^= state >>> 17
        state ^= state << 5
        const r = 2 * ((state >>> 0) % n)
        if (r === j) continue
        dx = emb[j] - emb[r]
        dy = emb[j + 1] - emb[r + 1]
        d2 = dx * dx + dy * dy
        if (d2 > 0) {
          const c = (2 * B) / ((0.001 + d2) * (A * powB(d2) + 1))
          emb[j] += clip(c * dx) * alpha
          emb[j + 1] += clip(c * dy) * alpha
        } else {
          // Two points on the same spot: push apart by the clip (UMAP's rule for a zero gradient coefficient).
          emb[j] += CLIP * alpha
          emb[j + 1] += CLIP * alpha
        }
      }
      nextNeg[e] += nNeg * epsNeg[e]
    }
    if (onEpoch(epoch + 1) === false) return { epochs: epoch + 1, stopped: true }
  }
  return { epochs: nEpochs, stopped: false }
}

const f64 = new Float64Array(1)
const u32 = new Uint32Array(f64.buffer)
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const HI = LITTLE ? 1 : 0
const LO = 1 - HI

/**
 * x^B for x > 0 to a relative error under 10⁻⁴, several times faster than Math.pow: the layout's
 * gradients call it once per sample (tens of millions of times), and Math.pow was most of the epochs' time.
 * 2^(B·log₂x), log₂ from the float's exponent plus a quintic on its mantissa, 2^f by a quartic and the exponent
 * written back. Deterministic (plain arithmetic), and the gradient it feeds is clipped anyway.
 */
function powB(x: number): number {
  f64[0] = x
  const hi = u32[HI]
  const m = 1 + (hi & 0xfffff) / 1048576 + u32[LO] / 4503599627370496
  // Least-squares fits on [1, 2) and [0, 1): |error| < 4·10⁻⁵ in log₂, < 10⁻⁵ relative in 2^f.
  const lg =
    (hi >>> 20) -
    1023 +
    (-2.7868129538668147 +
      m * (5.0468760449737635 + m * (-3.4924942798763934 + m * (1.5939013634971635 + m * (-0.40486717441854486 + m * 0.04342890782205806)))))
  const y = B * lg
  const i = Math.floor(y)
  const f = y - i
  f64[0] = 1.0000072832543414 + f * (0.6929312891618595 + f * (0.24171026247088204 + f * (0.05166687743062185 + f * 0.013676531087903416)))
  u32[HI] += i << 20
  return f64[0]
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
