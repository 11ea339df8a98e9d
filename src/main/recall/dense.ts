/**
 * The dense arm: exact cosine top-N over stored vectors within a scope.
 *
 * Vectors are unit rows of one contiguous Float32Array (store/vectors/vectorIndex.ts), so
 * cosine is a dot product with the normalised query. Every similarity in a trace
 * is `dotRow`'s number, whichever path computed it (the SIMD scan reproduces it
 * bit for bit), so the same row always gets the same number (event replays
 * compare exactly).
 *
 * Scope strategy (no 1M-row SQL per query when the scope is the whole DB):
 *  - count the scope up to T+1 (T = max(5,000, rows/16));
 *  - ≤ T rows: list their ids and score just those rows (a session, a user…);
 *  - more: scan every vector, then confirm the best rows against the scope in
 *    SQL batches, widening (×4) until N in-scope rows are found.
 */
import type { MemoryFilter, MemorySource, ScopeRows } from '../store/source'
import { dotRow, type VectorIndex } from '../store/vectors/vectorIndex'
import { topKRows } from '../store/vectors/topKRows'

/** The query as a unit Float64Array, or null for a zero / non-finite vector. */
export function normalizeQuery(v: ArrayLike<number>): Float64Array | null {
  let s = 0
  for (let i = 0; i < v.length; i++) s += v[i] * v[i]
  if (!(s > 0) || !Number.isFinite(s)) return null
  const inv = 1 / Math.sqrt(s)
  const q = new Float64Array(v.length)
  for (let i = 0; i < v.length; i++) q[i] = v[i] * inv
  return q
}

/**
 * Similarity of every row: the WebAssembly SIMD kernel when the index has it
 * (store/vectors/dotKernel.ts, bit-identical to dotRow, 3–6× faster), else dotRow in a loop.
 * `simd: false` forces the JS loop (tests and the bench compare the two).
 */
export function dotAll(idx: VectorIndex, q: Float64Array, out?: Float64Array, opts: { simd?: boolean } = {}): Float64Array {
  // A compact index has no matrix in memory: its searches go through top / countAbove / dot.
  if (idx.compact) throw new Error('dotAll on a compact vector index')
  const n = idx.count
  const sims = out && out.length >= n ? out : new Float64Array(n)
  if (opts.simd !== false && idx.dotAllInto(q, sims.length === n ? sims : sims.subarray(0, n))) return sims
  const data = idx.data
  const dim = idx.dim
  for (let r = 0; r < n; r++) sims[r] = dotRow(data, r, dim, q)
  return sims
}

export interface DenseHit {
  id: string
  /** null: no usable vector (ranked at 0 under missingVector 'zero') */
  similarity: number | null
}

/** The store reads the dense arm makes (a gather's PassReads answers each once). */
export type DenseReads = Pick<MemorySource, 'countScope' | 'scopeRows' | 'idsWhere'>

export interface DenseArmResult {
  hits: DenseHit[]
  /** the in-scope rows, when the scope was small enough to list (selective path) */
  scope: ScopeRows | null
  /**
   * Every listed row's similarity, when the arm computed them all (a listed scope in memory):
   * `sim[i]` for `scope.ids[i]` when `rows[i]` (its vector-index row) is ≥ 0; −1: no vector.
   * The same numbers `idx.dot` gives, so a later feature pass reads them instead of recomputing.
   */
  scored: { sim: Float64Array; rows: Int32Array } | null
  /** every in-scope row was ranked (a larger N would add nothing) */
  exhausted: boolean
  /** in-scope rows counted on the way (a lower bound when `inScopeCapped`) */
  inScope: number
  inScopeCapped: boolean
  /** which strategy ran */
  path: 'selective' | 'scan'
}

const VERIFY_CHUNK = 500

/**
 * The first `n` of `rows` sorted by `cmp` (a total order), without sorting them all: a bounded
 * heap keeps the n best seen (its root the worst of them), then those n are sorted. Same
 * answer as `rows.sort(cmp).slice(0, n)`.
 */
export function firstInOrder<T>(rows: T[], n: number, cmp: (a: T, b: T) => number): T[] {
  if (n <= 0) return []
  if (rows.length <= 2 * n) return rows.sort(cmp).slice(0, n)
  const heap: T[] = []
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let w = i
      if (l < heap.length && cmp(heap[l], heap[w]) > 0) w = l
      if (r < heap.length && cmp(heap[r], heap[w]) > 0) w = r
      if (w === i) return
      ;[heap[i], heap[w]] = [heap[w], heap[i]]
      i = w
    }
  }
  for (const x of rows) {
    if (heap.length < n) {
      heap.push(x)
      for (let i = heap.length - 1; i > 0;) {
        const p = (i - 1) >> 1
        if (cmp(heap[i], heap[p]) <= 0) break
        ;[heap[i], heap[p]] = [heap[p], heap[i]]
        i = p
      }
    } else if (cmp(x, heap[0]) < 0) {
      heap[0] = x
      down(0)
    }
  }
  return heap.sort(cmp)
}

/**
 * The first `n` of the positions `rows` in the order "similarity descending, then `cmp`" (`cmp`
 * must order by `sim` first, as denseArm's does), without a comparator over every row: the n-th
 * largest similarity from a native sort of the numbers, then only the rows at or above it are
 * put in order by `cmp`. Same answer as `firstInOrder(rows, n, cmp)` (ties at the cut included);
 * with a NaN among the numbers it is firstInOrder.
 */
export function firstBySimilarity(rows: number[], sim: Float64Array, n: number, cmp: (a: number, b: number) => number): number[] {
  const m = rows.length
  if (n <= 0) return []
  if (m <= 2 * n) return firstInOrder(rows, n, cmp)
  const vals = selectionScratch(m)
  for (let i = 0; i < m; i++) {
    const v = sim[rows[i]]
    if (v !== v) return firstInOrder(rows, n, cmp) // NaN: no total order by number
    vals[i] = v
  }
  const cut = nthLargest(vals, m, n)
  const top: number[] = []
  for (let i = 0; i < m; i++) if (sim[rows[i]] >= cut) top.push(rows[i])
  return top.sort(cmp).slice(0, n)
}

/**
 * The n-th largest of the first m numbers of `a` (no NaN; 1 ≤ n ≤ m), reordering them: quickselect
 * (Hoare partition, middle pivot), linear on average.
 */
export function nthLargest(a: Float64Array, m: number, n: number): number {
  const k = m - n // its index in ascending order
  let lo = 0
  let hi = m - 1
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]
    let i = lo
    let j = hi
    while (i <= j) {
      while (a[i] < pivot) i++
      while (a[j] > pivot) j--
      if (i <= j) {
        const x = a[i]
        a[i] = a[j]
        a[j] = x
        i++
        j--
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else return a[k]
  }
  return a[k]
}

/** Scratch for firstBySimilarity's numbers (read before the next call). */
let selBuf = new Float64Array(0)
function selectionScratch(n: number): Float64Array {
  if (selBuf.length < n) selBuf = new Float64Array(Math.max(n, 2 * selBuf.length))
  return selBuf
}

/** Each listed scope's vector-index rows (−1: no vector), per scope listing and index (both are per data version). */
const scopeRowCache = new WeakMap<object, { idx: VectorIndex; mark: string; rows: Int32Array }>()
function indexRowsOf(scope: { ids: string[] }, idx: VectorIndex): Int32Array {
  // The index refreshes in place (a backfill adds workspace vectors without touching the agent DB):
  // its row count and per-source change markers tell a stale mapping.
  const mark = `${idx.count}|${idx.sync[0].version}|${idx.sync[1].version}|${idx.sync[0].rows}|${idx.sync[1].rows}`
  const hit = scopeRowCache.get(scope)
  if (hit && hit.idx === idx && hit.mark === mark) return hit.rows
  const rows = new Int32Array(scope.ids.length)
  for (let i = 0; i < rows.length; i++) rows[i] = idx.rowOf.get(scope.ids[i]) ?? -1
  scopeRowCache.set(scope, { idx, mark, rows })
  return rows
}

/** One similarity buffer reused across calls on this thread (read before the next call). */
let simBuf = new Float64Array(0)
function simScratch(n: number): Float64Array {
  if (simBuf.length < n) simBuf = new Float64Array(n)
  return simBuf
}

/**
 * A compact index (int8 in memory, exact rows on disk) reads listed rows back one by one up to
 * this many; above it, one int8 scan with exact rescoring of what it cannot rule out is cheaper.
 */
const COMPACT_DIRECT_ROWS = 2000

/** Scopes up to this many rows are listed and scored directly; larger ones are scanned. */
function selectiveThreshold(vectors: number): number {
  // Listing a scope costs ~1.5 µs a row; the SIMD scan ~0.1 µs a 256-d vector (~0.3 µs at 768-d): list below ~1/16 of the index.
  return Math.max(5000, Math.floor(vectors / 16))
}

/**
 * The exact top k of every row for unit query q, best first (similarity, then key, then row), for
 * growing k: one full scan kept for every k in memory; a compact index searches its int8 copy anew.
 */
export function rankAll(idx: VectorIndex, q: Float64Array): (k: number) => { rows: number[]; sims: ArrayLike<number> } {
  if (idx.compact) {
    // One int8 scan for every k (Int8Index keeps the last query's sums), each row read back once.
    const memo = new Map<number, number>()
    return (k) => idx.compactTop(q, k, undefined, memo)
  }
  const sims = dotAll(idx, q)
  return (k) => {
    const rows = topKRows(sims, idx.count, k, undefined, idx.keys)
    return { rows, sims: rows.map((r) => sims[r]) }
  }
}

/**
 * The best `n` in-scope rows by similarity, best first (ties: lower tie key
 * first — the row's source `_rid`, so the order is the same however the index
 * was loaded — like topKRows). With `missingZero`, in-scope rows without a
 * vector rank at 0 (seed 002: Engram keeps them in its ranking).
 */
export function denseArm(store: DenseReads, idx: VectorIndex, q: Float64Array, filter: MemoryFilter, n: number, missingZero: boolean): DenseArmResult {
  const threshold = selectiveThreshold(idx.count)
  // Counting is ~10× cheaper per row than listing: decide first, list only a small scope.
  const big = !missingZero && filter.sessionId === undefined && store.countScope(filter, threshold).capped
  const scope = big ? null : store.scopeRows(filter, missingZero ? 5_000_000 : threshold + 1)
  if (scope && (missingZero || scope.ids.length <= threshold)) {
    const ids = scope.ids
    const m = ids.length
    const rowOf = indexRowsOf(scope, idx)
    const keys = idx.keys
    // Positions in `ids` of the rows that rank (no per-row objects: an eval asks this ~1,000 times).
    const sim = new Float64Array(m)
    const rows: number[] = []
    let ranked: number
    let scored: DenseArmResult['scored'] = null
    const withVector = idx.compact ? rowOf.reduce((c, r) => c + (r >= 0 ? 1 : 0), 0) : 0
    if (withVector > COMPACT_DIRECT_ROWS) {
      // Compact and large: only the scope's exact top n with a vector can be among the first n (the
      // rest of the order is the same as over all of them), then the rows without one.
      const subset = new Int32Array(withVector)
      for (let i = 0, j = 0; i < m; i++) if (rowOf[i] >= 0) subset[j++] = rowOf[i]
      const top = idx.compactTop(q, n, subset)
      const simOf = new Map(top.rows.map((r, i) => [r, top.sims[i]]))
      for (let i = 0; i < m; i++) {
        const s = rowOf[i] >= 0 ? simOf.get(rowOf[i]) : undefined
        if (s !== undefined) {
          sim[i] = s
          rows.push(i)
        } else if (rowOf[i] < 0 && missingZero) rows.push(i)
      }
      ranked = withVector + (missingZero ? m - withVector : 0)
    } else {
      // A scope covering a good part of the index (an eval over one conversation DB): one SIMD pass over
      // every row; a smaller one: the SIMD kernel over its runs of consecutive rows; else (no kernel, or
      // compact) row by row. The same numbers bit for bit, whichever.
      const all = !idx.compact && m * 4 >= idx.count && idx.count > 0 ? dotAll(idx, q, simScratch(idx.count)) : null
      const listed = !all && !idx.compact && idx.dotRowsInto(rowOf, q, sim)
      // compact: the listed rows read back together (idx.dots), in the order they are met below
      const direct =
        !all && !listed
          ? idx.dots(
              rowOf.filter((r) => r >= 0),
              q,
            )
          : null
      let next = 0
      for (let i = 0; i < m; i++) {
        const row = rowOf[i]
        if (row >= 0) {
          if (!listed) sim[i] = all ? all[row] : direct![next++]
          rows.push(i)
        } else if (missingZero) rows.push(i) // no vector: ranks at 0 (sim stays 0), tie key Infinity
      }
      ranked = rows.length
      scored = { sim, rows: rowOf }
    }
    const keyOf = (i: number) => (rowOf[i] >= 0 ? keys[rowOf[i]] : Infinity)
    const cmp = (a: number, b: number) => {
      if (sim[b] !== sim[a]) return sim[b] - sim[a]
      const ka = keyOf(a)
      const kb = keyOf(b)
      if (ka !== kb) return ka < kb ? -1 : 1
      return ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0
    }
    return {
      hits: firstBySimilarity(rows, sim, n, cmp).map((i) => ({ id: ids[i], similarity: rowOf[i] >= 0 ? sim[i] : null })),
      exhausted: ranked <= n,
      scope,
      scored,
      inScope: ids.length,
      inScopeCapped: false,
      path: 'selective',
    }
  }
  const best = rankAll(idx, q)
  const simOf = new Map<number, number>()
  const found: number[] = []
  let examined = 0
  // In memory a bigger first k is nearly free (one more heap pass over the same similarities); a compact
  // index rescores more rows from disk for it (~1,100 at k = 256 vs ~170 at 30, 1M × 768), while a
  // widening reuses its int8 scan and the rows already read (rankAll): it asks for just n.
  let k = Math.min(idx.count, idx.compact ? n : Math.max(4 * n, 256))
  for (;;) {
    // The top k is a prefix-stable order (ties: lower key first), so rows past `examined` are the new ones.
    const ranked = best(k)
    const top = ranked.rows
    for (let i = examined; i < top.length; i++) simOf.set(top[i], ranked.sims[i])
    const fresh = top.slice(examined)
    examined = top.length
    // The first chunk asks only for as many rows as are still missing: a scope of (nearly) the whole
    // store is confirmed by its first n rows (100 probes instead of 256 at a million rows).
    for (let i = 0; i < fresh.length;) {
      const chunk = fresh.slice(i, i + (i === 0 ? Math.min(VERIFY_CHUNK, Math.max(n - found.length, 1)) : VERIFY_CHUNK))
      i += chunk.length
      const ok = new Set(store.idsWhere({ ...filter, ids: chunk.map((r) => idx.ids[r]) }, chunk.length))
      for (const r of chunk) if (ok.has(idx.ids[r])) found.push(r)
      if (found.length >= n) break
    }
    if (found.length >= n || k >= idx.count) break
    k = Math.min(idx.count, k * 4)
  }
  return {
    hits: found.slice(0, n).map((r) => ({ id: idx.ids[r], similarity: simOf.get(r)! })),
    exhausted: found.length < n,
    scope: null,
    scored: null,
    inScope: threshold + 1,
    inScopeCapped: true,
    path: 'scan',
  }
}
