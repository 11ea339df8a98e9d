/**
 * Approximate k-nearest-neighbour graph for the map's UMAP layout, in typed
 * arrays. An exact graph costs n² distances (20,000 × 768: 2·10¹¹ multiply-adds,
 * minutes in JS); UMAP needs only a good one. The steps (docs/internals/performance.md):
 *
 * 1. **Reduce** rows of more than 256 dimensions to `searchDims` by PCA fit on
 *    a seeded sample (one round of subspace iteration): the search then costs
 *    `searchDims` per distance instead of `dim`.
 * 2. **Random-projection trees** (a forest of `trees`): points sharing a leaf
 *    are each other's first guesses (PyNNDescent's initialisation).
 * 3. **NN-descent** (Dong, Moses & Li 2011): a neighbour of a neighbour is
 *    likely a neighbour; rounds of local joins over sampled new/old candidate
 *    lists until fewer than `delta`·n·K entries change.
 * 4. **Exact re-rank**: when the search ran in reduced space, each point's
 *    `1.5·k` candidates are re-measured in the original space and the `k` nearest
 *    kept, so the distances the layout sees are the true ones.
 *
 * Pure and seeded: the same input and seed give the same graph in the worker
 * and in a test.
 */
import { mulberry32 } from '../../shared/random'
import { sharedF64, sharedI32, type MapHelpers } from './mapHelpers'
import { dotKernel, kernelModule, wasmMemory, type DotAll, type WasmMemory } from '../store/vectors/dotKernel'
import { covarianceOperator, orthonormalize, sampleRows } from './pca'

/** Called with the fraction done (0…1) of the whole kNN search; return false to stop. */
export type KnnProgress = (fraction: number, message: string) => boolean | void

export interface KnnOptions {
  /** @default 1 */
  seed?: number
  /**
   * Rows of more than `REDUCE_ABOVE` dimensions are searched in this many PCA dimensions (then re-ranked
   * exactly in all of them). @default 64
   */
  searchDims?: number
  /** random-projection trees. @default 8 */
  trees?: number
  /** NN-descent rounds at most. @default 12 */
  maxRounds?: number
  /** stop when fewer than delta·n·K neighbour entries change in a round. @default 0.002 */
  delta?: number
  onProgress?: KnnProgress
  /** helper threads for the distance batches and the reduction (the graph is the same with or without them) */
  helpers?: MapHelpers | null
}

/** Each point's `k` nearest others (never itself), nearest first. */
export interface KnnGraph {
  k: number
  /** point i's neighbours at [i·k, (i+1)·k) */
  indices: Int32Array
  /** Euclidean distances in the original space, ascending per point */
  dists: Float32Array
  /** NN-descent rounds run (0: the graph is exact, computed by brute force) */
  rounds: number
  /** dimensions the search ran in (`dim` when not reduced) */
  searchDims: number
}

/** Thrown out of the search when progress asks to stop; the caller catches it. */
export class KnnStopped extends Error {
  constructor() {
    super('stopped')
    this.name = 'KnnStopped'
  }
}

/** Below this many points the graph is computed exactly (n²/2 distances is then cheaper than building a forest). */
const EXACT_BELOW = 600
/**
 * Rows up to this many dimensions are searched as they are. Bag-of-words vectors (the hashing embedder's 256)
 * keep their neighbours only in most of their dimensions: LoCoMo's 2,760 dev turns searched in 64 PCA
 * dimensions found half of the true neighbours, in all 256 nine in ten. Dense model embeddings (384–1,536)
 * have a low intrinsic dimension, which PCA keeps.
 */
const REDUCE_ABOVE = 256
/** PCA fit sample for the reduction: the axes of 2,000 rows are, to sampling error, those of all. */
const REDUCE_FIT_ROWS = 2000

/** The k-nearest-neighbour graph of `n` rows (`data[i*dim + j]`), Euclidean. */
export function nearestNeighbours(data: Float32Array, n: number, dim: number, k: number, opts: KnnOptions = {}): KnnGraph {
  if (!Number.isInteger(k) || k < 1 || k > n - 1) throw new RangeError(`nearestNeighbours: k = ${k} needs 1 ≤ k < n (n = ${n})`)
  const report = opts.onProgress ?? (() => undefined)
  const tell = (f: number, m: string) => {
    if (report(f, m) === false) throw new KnnStopped()
  }
  if (n < EXACT_BELOW) {
    tell(0, `nearest neighbours (exact, ${n} points)`)
    const g = exactNeighbours(data, n, dim, k)
    tell(1, 'nearest neighbours done')
    return g
  }
  const rand = mulberry32(opts.seed ?? 1)
  const target = opts.searchDims ?? 64
  const reduced = dim > REDUCE_ABOVE && dim > target
  // Phase shares of the progress bar, roughly their cost.
  const [rShare, tShare, dShare] = reduced ? [0.2, 0.1, 0.5] : [0, 0.15, 0.85]
  tell(0, reduced ? `reducing ${dim} dimensions to ${target} for the search` : 'random-projection trees')
  const p = reduced ? target : dim
  const helpers = opts.helpers ?? null
  const full = shared(data.subarray(0, n * dim))
  const y = reduced ? reduceRows(full, n, dim, p, rand, helpers) : full

  // K: the search keeps more candidates than wanted when it ran in reduced space, for the exact re-rank to choose
  // from (each extra one costs: a round's joins grow as K²).
  const K = reduced ? Math.min(n - 1, k + Math.ceil(k / 2)) : k
  const heap = newHeap(n, K, true)
  const batch = new PairBatch([y, full], [p, dim], [heap], n, helpers)
  tell(rShare, 'random-projection trees')
  const leafSize = Math.max(10, K)
  const trees = opts.trees ?? 8
  for (let t = 0; t < trees; t++) {
    for (const leaf of rpTreeLeaves(y, n, p, leafSize, rand))
      for (let a = 0; a < leaf.length; a++) for (let b = a + 1; b < leaf.length; b++) batch.add(leaf[a], leaf[b])
    batch.flush()
    tell(rShare + (tShare * (t + 1)) / trees, `random-projection trees: ${t + 1} of ${trees}`)
  }
  // A point no leaf paired (tiny leaves after degenerate splits) still needs K entries: random ones, improved below.
  for (let i = 0; i < n; i++)
    for (let tries = 0; heap.idx[i * K] < 0 && tries < 4 * K; tries++) {
      const j = Math.floor(rand() * n)
      if (j !== i) heapPush(heap, i, j, sqDist2(y, i * p, y, j * p, p), 1)
    }

  const maxRounds = opts.maxRounds ?? 12
  const delta = opts.delta ?? 0.002
  let rounds = 0
  for (let r = 0; r < maxRounds; r++) {
    rounds = r + 1
    const updates = descentRound(heap, batch, n, rand)
    tell(rShare + tShare + (dShare * (r + 1)) / maxRounds, `nearest neighbours: NN-descent round ${r + 1} (${updates.toLocaleString('en-US')} updates)`)
    if (updates <= delta * n * K) break
  }
  tell(rShare + tShare + dShare, reduced ? `nearest neighbours: exact distances in ${dim} dimensions` : 'nearest neighbours done')
  const g = reduced ? rerankExact(heap, batch, n, k) : sortedGraph(heap, n, k)
  tell(1, 'nearest neighbours done')
  return { ...g, rounds, searchDims: p }
}

/** The rows over shared memory (helper threads read them in place): as they are when they already are, else a copy. */
function shared(data: Float32Array): Float32Array {
  if (typeof SharedArrayBuffer !== 'function' || data.buffer instanceof SharedArrayBuffer) return data
  const out = new Float32Array(new SharedArrayBuffer(4 * data.length))
  out.set(data)
  return out
}

/** Pairs per batch: a few MB of buffers, and enough chunks for two to four threads to balance. */
const PAIR_BATCH = 1 << 16
/** Pairs per chunk of a batch's distances. */
const PAIR_CHUNK = 2048
/** Point partitions of a batch's heap updates: each owns the heaps of a range of points. */
const OFFER_PARTS = 8

/** The shared state a helper runs a batch's chunks from (`pairs` chunks, mapWorker.ts). */
export interface PairState {
  /** the matrices distances are measured in: 0 the search space, 1 the original rows */
  mats: Float32Array[]
  dims: number[]
  u: Int32Array
  v: Int32Array
  out: Float64Array
  /** the heaps offered to: 0 the search's, 1 the exact re-rank's */
  heaps: Heap[]
  /** partition q owns the heaps of points [parts[q], parts[q+1]) */
  parts: Int32Array
  /** heap changes per partition in the last offer step */
  updates: Int32Array
}

/** A batch step: measure the distances, or offer the measured pairs to the heaps. */
const MEASURE = 0
const OFFER = 1

/**
 * Chunk `c` of a batch step (`params`: step, pair count, then for MEASURE the matrix, for OFFER the heap, both
 * directions or only u's, the flag). MEASURE: the squared distances of pairs [c·PAIR_CHUNK, …). OFFER: every
 * pair, in the batch's order, offered to the heaps of partition c's points — each heap sees its offers in the
 * same order whichever thread runs it, so the heaps end the same as offered one by one.
 */
export function runPairChunk(s: PairState, c: number, params: Int32Array): void {
  const count = params[1]
  const { u, v, out } = s
  if (params[0] === MEASURE) {
    const y = s.mats[params[2]]
    const p = s.dims[params[2]]
    const end = Math.min(count, (c + 1) * PAIR_CHUNK)
    for (let t = c * PAIR_CHUNK; t < end; t++) out[t] = sqDist2(y, u[t] * p, y, v[t] * p, p)
    return
  }
  const h = s.heaps[params[2]]
  const both = params[3] === 1
  const flag = params[4]
  const lo = s.parts[c]
  const hi = s.parts[c + 1]
  let updates = 0
  for (let t = 0; t < count; t++) {
    const a = u[t]
    const b = v[t]
    if (a >= lo && a < hi && heapPush(h, a, b, out[t], flag)) updates++
    if (both && b >= lo && b < hi && heapPush(h, b, a, out[t], flag)) updates++
  }
  s.updates[c] = updates
}

/**
 * Pairs whose distances are wanted, queued in order; `flush` measures a batch, then offers each pair to the heap
 * (both ends, or only the first), both steps in parallel chunks; the heaps change exactly as if each pair had
 * been measured and offered when it was met.
 */
class PairBatch {
  private readonly s: PairState
  private count = 0
  /** heap changes since `take()` */
  private changed = 0
  /** what the queued pairs are: measured in matrix `mat`, offered to heap `heap`, to both ends or u only, with `flag` */
  mode = { mat: 0, heap: 0, both: true, flag: 1 }

  constructor(
    mats: Float32Array[],
    dims: number[],
    heaps: Heap[],
    n: number,
    private readonly helpers: MapHelpers | null,
  ) {
    const parts = sharedI32(OFFER_PARTS + 1)
    for (let q = 0; q <= OFFER_PARTS; q++) parts[q] = Math.floor((q * n) / OFFER_PARTS)
    this.s = { mats, dims, u: sharedI32(PAIR_BATCH), v: sharedI32(PAIR_BATCH), out: sharedF64(PAIR_BATCH), heaps, parts, updates: sharedI32(OFFER_PARTS) }
    helpers?.setTask('pairs', this.s)
  }

  /** Use `heap` as heap `i` of the following batches (the exact re-rank's is made after the search). */
  setHeap(i: number, heap: Heap): void {
    this.s.heaps[i] = heap
    this.helpers?.setTask('pairs', this.s)
  }

  add(u: number, v: number): void {
    this.s.u[this.count] = u
    this.s.v[this.count++] = v
    if (this.count === PAIR_BATCH) this.flush()
  }

  flush(): void {
    const count = this.count
    if (count === 0) return
    const { mat, heap, both, flag } = this.mode
    this.run(Math.ceil(count / PAIR_CHUNK), [MEASURE, count, mat])
    this.run(OFFER_PARTS, [OFFER, count, heap, both ? 1 : 0, flag])
    for (let q = 0; q < OFFER_PARTS; q++) this.changed += this.s.updates[q]
    this.count = 0
  }

  /** Heap changes since the last call (queued pairs flushed first). */
  take(): number {
    this.flush()
    const c = this.changed
    this.changed = 0
    return c
  }

  private run(chunks: number, params: number[]): void {
    const go = (c: number, ps: Int32Array) => runPairChunk(this.s, c, ps)
    if (this.helpers) this.helpers.step(chunks, params, go)
    else {
      const ps = Int32Array.from(params)
      for (let c = 0; c < chunks; c++) go(c, ps)
    }
  }
}

/** The exact graph by brute force (O(n²·dim)), for small inputs. */
function exactNeighbours(data: Float32Array, n: number, dim: number, k: number): KnnGraph {
  const heap = newHeap(n, k)
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const d = sqDist2(data, i * dim, data, j * dim, dim)
      heapPush(heap, i, j, d, 0)
      heapPush(heap, j, i, d, 0)
    }
  return { ...sortedGraph(heap, n, k), rounds: 0, searchDims: dim }
}

/** Per point a bounded max-heap of (index, squared distance, new flag): the root holds the worst kept. */
interface Heap {
  K: number
  idx: Int32Array
  dist: Float32Array
  flag: Uint8Array
}

/** `shared`: over SharedArrayBuffers, for the helper threads of a batch (PairBatch) to update in place. */
function newHeap(n: number, K: number, shared = false): Heap {
  const sab = shared && typeof SharedArrayBuffer === 'function'
  const idx = sab ? new Int32Array(new SharedArrayBuffer(4 * n * K)) : new Int32Array(n * K)
  const dist = sab ? new Float32Array(new SharedArrayBuffer(4 * n * K)) : new Float32Array(n * K)
  const flag = sab ? new Uint8Array(new SharedArrayBuffer(n * K)) : new Uint8Array(n * K)
  return { K, idx: idx.fill(-1), dist: dist.fill(Infinity), flag }
}

/** Offer j (at squared distance d) to i's heap; true when it was taken. */
function heapPush(h: Heap, i: number, j: number, d: number, f: number): boolean {
  const { K, idx, dist, flag } = h
  const o = i * K
  if (!(d < dist[o])) return false
  for (let t = 0; t < K; t++) if (idx[o + t] === j) return false
  let pos = 0
  for (;;) {
    const l = 2 * pos + 1
    if (l >= K) break
    const r = l + 1
    const c = r < K && dist[o + r] > dist[o + l] ? r : l
    if (dist[o + c] <= d) break
    idx[o + pos] = idx[o + c]
    dist[o + pos] = dist[o + c]
    flag[o + pos] = flag[o + c]
    pos = c
  }
  idx[o + pos] = j
  dist[o + pos] = d
  flag[o + pos] = f
  return true
}

/** Squared distance between two rows, four sums (the hot loop of every phase). */
function sqDist2(x: Float32Array, a: number, z: Float32Array, b: number, dim: number): number {
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  const d4 = dim & ~3
  let j = 0
  for (; j < d4; j += 4) {
    const e0 = x[a + j] - z[b + j]
    const e1 = x[a + j + 1] - z[b + j + 1]
    const e2 = x[a + j + 2] - z[b + j + 2]
    const e3 = x[a + j + 3] - z[b + j + 3]
    s0 += e0 * e0
    s1 += e1 * e1
    s2 += e2 * e2
    s3 += e3 * e3
  }
  for (; j < dim; j++) {
    const e = x[a + j] - z[b + j]
    s0 += e * e
  }
  return s0 + s1 + (s2 + s3)
}

/**
 * Every row projected on the top `p` principal axes of a seeded sample (one round of subspace iteration:
 * enough for a search space, whose distances are re-measured exactly afterwards). Centring is left out of
 * the projection: it shifts every point alike and distances do not change.
 */
function reduceRows(data: Float32Array, n: number, dim: number, p: number, rand: () => number, helpers: MapHelpers | null): Float32Array {
  const fit = n > REDUCE_FIT_ROWS ? sampleRows(data, n, dim, REDUCE_FIT_ROWS, rand) : { data, n }
  const mean = new Float64Array(dim)
  for (let i = 0; i < fit.n; i++) for (let j = 0; j < dim; j++) mean[j] += fit.data[i * dim + j]
  for (let j = 0; j < dim; j++) mean[j] /= fit.n
  const start = Array.from({ length: p }, () => Float64Array.from({ length: dim }, () => rand() - 0.5))
  orthonormalize(start)
  const q = covarianceOperator(fit.data, fit.n, dim, mean)(start)
  orthonormalize(q)
  const s = projectState(data, n, dim, q)
  const chunks = Math.ceil(n / PROJECT_ROWS)
  if (helpers) {
    helpers.setTask('project', s)
    helpers.step(chunks, [], (c) => runProjectChunk(s, c))
  } else for (let c = 0; c < chunks; c++) runProjectChunk(s, c)
  return s.y
}

/** Rows per chunk of the reduction's projection. */
const PROJECT_ROWS = 512

/** The reduction's projection: `y` (n × p) = rows × basisᵀ, shared so helper threads fill disjoint row ranges. */
export interface ProjectState {
  data: Float32Array
  n: number
  dim: number
  p: number
  /** the axes, row k at [k·dim, (k+1)·dim) (the JS loop's; the kernel reads its float64 copy) */
  basis: Float32Array
  y: Float32Array
  /**
   * The rows and the axes in a shared WebAssembly memory, for the SIMD kernel (every thread instantiates it over
   * this memory); chunk c writes its float64 outputs at `outAt + c·PROJECT_ROWS·16`. Null: the JS loop.
   */
  wasm: { memory: WasmMemory; basisAt: number; outAt: number } | null
}

/**
 * The projection's state: the rows copied (once: 61 MB at 20,000 × 768, a few ms) into a shared WebAssembly
 * memory beside the axes when the SIMD kernel is there — 20 times the JS loop's speed (row × 64 axes × 768 was
 * a fifth of a 5,000 × 768 layout's CPU time).
 */
function projectState(data: Float32Array, n: number, dim: number, q: Float64Array[]): ProjectState {
  const p = q.length
  const s: ProjectState = { data, n, dim, p, basis: shared(new Float32Array(p * dim)), y: shared(new Float32Array(n * p)), wasm: null }
  for (let c = 0; c < p; c++) s.basis.set(q[c], c * dim)
  if (p < 2 || !kernelModule(true, 'dot2All')) return s
  const basisAt = 8 * Math.ceil((n * dim) / 2)
  const outAt = basisAt + 8 * p * dim
  try {
    const memory = wasmMemory(Math.ceil((outAt + 16 * PROJECT_ROWS * Math.ceil(n / PROJECT_ROWS)) / 65536) + 1, true)
    new Float32Array(memory.buffer, 0, n * dim).set(data.subarray(0, n * dim))
    const basis = new Float64Array(memory.buffer, basisAt, p * dim)
    for (let c = 0; c < p; c++) basis.set(q[c], c * dim)
    s.wasm = { memory, basisAt, outAt }
  } catch {
    // No address space for the copy: the JS loop.
  }
  return s
}

/** Each thread's kernel instance per projection memory (a helper receives the memory once per task). */
const projectKernels = new WeakMap<WasmMemory, DotAll>()

/** Chunk `c` of the projection: rows [c·PROJECT_ROWS, …). */
export function runProjectChunk(s: ProjectState, c: number): void {
  const { data, dim, p, basis, y } = s
  const first = c * PROJECT_ROWS
  const end = Math.min(s.n, first + PROJECT_ROWS)
  if (s.wasm) {
    const { memory, basisAt, outAt } = s.wasm
    let dot2 = projectKernels.get(memory)
    if (!dot2) projectKernels.set(memory, (dot2 = dotKernel(memory, true, 'dot2All')!))
    const at = outAt + 16 * PROJECT_ROWS * c
    const out = new Float64Array(memory.buffer, at, 2 * PROJECT_ROWS)
    // Two axes per pass over the chunk's rows; an odd last axis comes with the one before it (measured twice).
    for (let k = 0; k < p; k += 2) {
      const from = Math.min(k, p - 2)
      dot2(4 * first * dim, end - first, dim, basisAt + 8 * from * dim, at)
      for (let i = first; i < end; i++) {
        const r = i - first
        if (from === k) y[i * p + k] = out[2 * r]
        y[i * p + from + 1] = out[2 * r + 1]
      }
    }
    return
  }
  for (let i = first; i < end; i++) {
    const o = i * dim
    for (let k = 0; k < p; k++) {
      const b = k * dim
      let t = 0
      for (let j = 0; j < dim; j++) t += data[o + j] * basis[b + j]
      y[i * p + k] = t
    }
  }
}

/**
 * One random-projection tree's leaves: each split is the hyperplane halfway between two random points
 * (PyNNDescent's Euclidean split); a split that leaves one side empty (duplicates) halves at random.
 */
function rpTreeLeaves(y: Float32Array, n: number, p: number, leafSize: number, rand: () => number): Int32Array[] {
  const leaves: Int32Array[] = []
  const stack: Int32Array[] = [Int32Array.from({ length: n }, (_, i) => i)]
  const normal = new Float64Array(p)
  while (stack.length) {
    const ids = stack.pop()!
    if (ids.length <= leafSize) {
      leaves.push(ids)
      continue
    }
    const a = ids[Math.floor(rand() * ids.length)]
    let b = ids[Math.floor(rand() * ids.length)]
    if (b === a) b = ids[(ids.indexOf(a) + 1) % ids.length]
    let offset = 0
    for (let j = 0; j < p; j++) {
      normal[j] = y[a * p + j] - y[b * p + j]
      offset += (normal[j] * (y[a * p + j] + y[b * p + j])) / 2
    }
    const side = new Uint8Array(ids.length)
    let left = 0
    for (let t = 0; t < ids.length; t++) {
      const o = ids[t] * p
      let m = -offset
      for (let j = 0; j < p; j++) m += normal[j] * y[o + j]
      side[t] = m > 0 || (m === 0 && rand() < 0.5) ? 1 : 0
      left += 1 - side[t]
    }
    if (left === 0 || left === ids.length) {
      left = 0
      for (let t = 0; t < ids.length; t++) left += 1 - (side[t] = rand() < 0.5 ? 1 : 0)
      if (left === 0 || left === ids.length) {
        // Still one-sided (two rows): split in the middle.
        left = ids.length >> 1
        for (let t = 0; t < ids.length; t++) side[t] = t < left ? 0 : 1
      }
    }
    const l = new Int32Array(left)
    const r = new Int32Array(ids.length - left)
    let li = 0
    let ri = 0
    for (let t = 0; t < ids.length; t++)
      if (side[t]) r[ri++] = ids[t]
      else l[li++] = ids[t]
    stack.push(l, r)
  }
  return leaves
}

/**
 * One NN-descent round: per point, sample its new and old neighbours (forward and reverse) into candidate
 * lists by random priority, mark the sampled new ones old, then measure every new–new and new–old pair
 * among each point's candidates and offer each to both ends. Returns the number of heap changes.
 */
function descentRound(h: Heap, batch: PairBatch, n: number, rand: () => number): number {
  const K = h.K
  const C = Math.min(K, 40)
  const fresh = newHeap(n, C)
  const old = newHeap(n, C)
  for (let i = 0; i < n; i++)
    for (let t = 0; t < K; t++) {
      const j = h.idx[i * K + t]
      if (j < 0) continue
      const pr = rand()
      const into = h.flag[i * K + t] ? fresh : old
      heapPush(into, i, j, pr, 0)
      heapPush(into, j, i, pr, 0)
    }
  // The new entries that made it into a candidate list are now old: they will have been joined.
  for (let i = 0; i < n; i++)
    for (let t = 0; t < K; t++) {
      if (!h.flag[i * K + t]) continue
      const j = h.idx[i * K + t]
      for (let c = 0; c < C; c++)
        if (fresh.idx[i * C + c] === j) {
          h.flag[i * K + t] = 0
          break
        }
    }
  batch.take()
  for (let i = 0; i < n; i++) {
    const o = i * C
    for (let a = 0; a < C; a++) {
      const u = fresh.idx[o + a]
      if (u < 0) continue
      for (let b = a + 1; b < C; b++) {
        const v = fresh.idx[o + b]
        if (v >= 0) batch.add(u, v)
      }
      for (let b = 0; b < C; b++) {
        const v = old.idx[o + b]
        if (v >= 0 && v !== u) batch.add(u, v)
      }
    }
  }
  return batch.take()
}

/** The heap's k nearest per point, ascending, as Euclidean distances. */
function sortedGraph(h: Heap, n: number, k: number): Pick<KnnGraph, 'k' | 'indices' | 'dists'> {
  const indices = new Int32Array(n * k)
  const dists = new Float32Array(n * k)
  const order = Array.from({ length: h.K }, (_, t) => t)
  for (let i = 0; i < n; i++) {
    const o = i * h.K
    order.sort((a, b) => h.dist[o + a] - h.dist[o + b] || h.idx[o + a] - h.idx[o + b])
    for (let t = 0; t < k; t++) {
      indices[i * k + t] = h.idx[o + order[t]]
      dists[i * k + t] = Math.sqrt(h.dist[o + order[t]])
    }
  }
  return { k, indices, dists }
}

/** Each point's candidates re-measured in the original space; the k nearest kept. */
function rerankExact(h: Heap, batch: PairBatch, n: number, k: number): Pick<KnnGraph, 'k' | 'indices' | 'dists'> {
  const exact = newHeap(n, k, true)
  batch.flush()
  batch.setHeap(1, exact)
  batch.mode = { mat: 1, heap: 1, both: false, flag: 0 }
  for (let i = 0; i < n; i++)
    for (let t = 0; t < h.K; t++) {
      const j = h.idx[i * h.K + t]
      if (j >= 0) batch.add(i, j)
    }
  batch.flush()
  return sortedGraph(exact, n, k)
}
