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
import { sharedF64, sharedI32, type MapHelpers } from './mapHelpers'

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
  /**
   * Helper threads for the parallel steps (MapHelpers.start); the layout is the same with or without them.
   * @default none: every step on the calling thread
   */
  helpers?: MapHelpers | null
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
      helpers: opts.helpers,
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
  const run = optimizeLayout(emb, n, graph, nEpochs, seed, opts.helpers ?? null, (e) =>
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

/** The epochs' state, every array over a SharedArrayBuffer when there is one (helper threads read and write it in place). */
export interface EpochState {
  n: number
  nEpochs: number
  /** row i at [2i, 2i+1]: the live positions (a partition writes only its own points) */
  emb: Float64Array
  /** the positions at the start of the epoch: what a partition reads of points it does not own */
  snap: Float64Array
  /** partition q owns points [pointStart[q], pointStart[q+1]) and edges [edgeStart[q], edgeStart[q+1]) (those whose head it owns) */
  pointStart: Int32Array
  edgeStart: Int32Array
  head: Int32Array
  tail: Int32Array
  epochsPerSample: Float64Array
  epsNeg: Float64Array
  nextSample: Float64Array
  nextNeg: Float64Array
  /** each partition's xorshift32 state for its negative samples */
  rng: Int32Array
}

/**
 * Partitions of the epochs: a fixed number, whatever the thread count, so the layout does not depend on how
 * many threads ran it (each partition's updates depend only on its own earlier ones and the epoch's snapshot).
 * Eight balance two to four threads on a busy machine.
 */
const PARTS = 8

/** The epochs' state: the edges grouped by the partition owning their head (in their graph order within it). */
function epochState(emb: Float64Array, n: number, g: FuzzyGraph, nEpochs: number, seed: number): EpochState {
  const m = g.head.length
  const pointStart = sharedI32(PARTS + 1)
  for (let q = 0; q <= PARTS; q++) pointStart[q] = Math.floor((q * n) / PARTS)
  const partOf = (i: number) => {
    let q = Math.min(PARTS - 1, Math.floor((i * PARTS) / n))
    while (i < pointStart[q]) q--
    while (i >= pointStart[q + 1]) q++
    return q
  }
  const edgeStart = sharedI32(PARTS + 1)
  const parts = new Int32Array(m)
  for (let e = 0; e < m; e++) edgeStart[(parts[e] = partOf(g.head[e])) + 1]++
  for (let q = 0; q < PARTS; q++) edgeStart[q + 1] += edgeStart[q]
  const at = Int32Array.from(edgeStart.subarray(0, PARTS))
  const s: EpochState = {
    n,
    nEpochs,
    emb: sharedF64(2 * n),
    snap: sharedF64(2 * n),
    pointStart,
    edgeStart,
    head: sharedI32(m),
    tail: sharedI32(m),
    epochsPerSample: sharedF64(m),
    epsNeg: sharedF64(m),
    nextSample: sharedF64(m),
    nextNeg: sharedF64(m),
    rng: sharedI32(PARTS),
  }
  for (let e = 0; e < m; e++) {
    const t = at[parts[e]]++
    s.head[t] = g.head[e]
    s.tail[t] = g.tail[e]
    s.epochsPerSample[t] = s.nextSample[t] = g.epochsPerSample[e]
    s.epsNeg[t] = s.nextNeg[t] = g.epochsPerSample[e] / NEGATIVE_RATE
  }
  s.emb.set(emb)
  s.snap.set(emb)
  // Negative samples draw from xorshift32 inline (seeded per partition by mulberry32): a closure call per draw was
  // a measurable share of the epochs.
  const r = mulberry32(seed ^ 0x5bd1e995)
  for (let q = 0; q < PARTS; q++) s.rng[q] = Math.floor(r() * 0xfffffffe) + 1
  return s
}

/**
 * UMAP's stochastic gradient descent (optimize_layout_euclidean), each epoch in `PARTS` partitions that may run
 * on different threads: every edge due for a sample pulls its head towards its tail and pushes the head away
 * from `NEGATIVE_RATE` random points; the learning rate falls linearly from 1 to 0. A partition moves only the
 * points it owns and reads the others as they were when the epoch began, so its result does not depend on the
 * other partitions' timing. The tail is not moved (UMAP's move_other): the graph holds both directions of every
 * edge, and the tail's own entry pulls it back, so the head takes both pulls (twice the gradient) instead.
 * `onEpoch` returning false stops it.
 */
function optimizeLayout(
  emb: Float64Array,
  n: number,
  g: FuzzyGraph,
  nEpochs: number,
  seed: number,
  helpers: MapHelpers | null,
  onEpoch: (epoch: number) => boolean | void,
): { epochs: number; stopped: boolean } {
  const s = epochState(emb, n, g, nEpochs, seed)
  helpers?.setTask('epochs', s)
  const run = (q: number, params: Int32Array) => runEpochPart(s, q, params[0])
  let epochs = nEpochs
  let stopped = false
  for (let epoch = 0; epoch < nEpochs; epoch++) {
    if (helpers) helpers.step(PARTS, [epoch], run)
    else for (let q = 0; q < PARTS; q++) runEpochPart(s, q, epoch)
    s.snap.set(s.emb)
    if (onEpoch(epoch + 1) === false) {
      epochs = epoch + 1
      stopped = true
      break
    }
  }
  emb.set(s.emb)
  return { epochs, stopped }
}

/** One epoch of partition `q` (the unit a thread runs): its edges in order, moving only its own points. */
export function runEpochPart(s: EpochState, q: number, epoch: number): void {
  const { n, emb, snap, head, tail, epochsPerSample, epsNeg, nextSample, nextNeg } = s
  const lo = 2 * s.pointStart[q]
  const hi = 2 * s.pointStart[q + 1]
  const alpha = 1 - epoch / s.nEpochs
  let state = s.rng[q]
  const end = s.edgeStart[q + 1]
  for (let e = s.edgeStart[q]; e < end; e++) {
    if (nextSample[e] > epoch) continue
    const j = 2 * head[e]
    const k = 2 * tail[e]
    const from = k >= lo && k < hi ? emb : snap
    let dx = emb[j] - from[k]
    let dy = emb[j + 1] - from[k + 1]
    let d2 = dx * dx + dy * dy
    if (d2 > 0) {
      const pb = powB(d2)
      const c = (-2 * A * B * (pb / d2)) / (A * pb + 1)
      emb[j] += 2 * clip(c * dx) * alpha
      emb[j + 1] += 2 * clip(c * dy) * alpha
    }
    nextSample[e] += epochsPerSample[e]
    const nNeg = Math.floor((epoch - nextNeg[e]) / epsNeg[e])
    for (let t = 0; t < nNeg; t++) {
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      // A multiply instead of `% n`: the unsigned state above 2³¹ made the remainder a slow floating-point one.
      const r = 2 * Math.floor((state >>> 0) * n * 2.3283064365386963e-10)
      if (r === j) continue
      const at = r >= lo && r < hi ? emb : snap
      dx = emb[j] - at[r]
      dy = emb[j + 1] - at[r + 1]
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
  s.rng[q] = state
}

function clip(x: number): number {
  return x > CLIP ? CLIP : x < -CLIP ? -CLIP : x
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
