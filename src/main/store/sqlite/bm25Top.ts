/**
 * The best `k` rows of a BM25 query without scoring every match: MaxScore (Turtle & Flood)
 * document-at-a-time over the JS postings of bm25.ts, exact.
 *
 * Why: a query word that nearly every row holds makes rankBm25 score (and partly sort) every
 * row it matches; a top-k caller needs only rows that can still beat the k-th best. Each
 * query phrase gets an upper bound (its IDF × the largest per-row factor in its postings,
 * cached per postings list); phrases whose bounds sum to at most the current k-th best score
 * are "non-essential": a row matching none of the others cannot enter, so candidates come
 * from the essential lists only, and the non-essential lists are probed (binary search)
 * only while the row's partial score plus their remaining bounds can still win. When one list
 * is left essential (a single word, or one word far above the others), its blocks of 64 postings
 * are skipped whole while their largest factor cannot win either (block-max); with several, the
 * rows up to the nearest block end are skipped while the blocks' maxima cannot win.
 *
 * Exactness: a candidate's score is summed in query order from its per-phrase products (a
 * phrase absent from the row adds 0, which changes no double), the same additions as
 * rankBm25 and FTS5's bm25(), so the numbers are bit for bit rankBm25's. Bounds only prune:
 * a skip bound is summed in query order too (sumInQueryOrder: monotone rounding makes it ≥ the
 * score exactly); the early exit while probing sums in another order, so it widens by a relative
 * 1e-9. Ties: rows come in ascending rid, and a later row equal to the k-th best loses the (bm25,
 * rowid) order, so "≤" may prune. Verified against rankBm25 on random queries (bm25Top.test.ts).
 */
import { rankBm25, swap, type Bm25Index } from './bm25'
import { BLOCK, blockMaxOf, maxFactorOf } from './bm25Bounds'
import type { Postings as PostingList } from './bm25Index'

/** The top rows in (bm25, rowid) order (FTS5's sign: lower bm25 is better). */
export interface TopBm25 {
  rids: Int32Array
  bm25: Float64Array
}

/** First index in `rids` from `from` on whose rid is ≥ `rid` (galloping, then binary search). */
function seek(rids: Int32Array, from: number, rid: number): number {
  let step = 1
  let hi = from
  while (hi < rids.length && rids[hi] < rid) {
    from = hi + 1
    hi += step
    step <<= 1
  }
  if (hi > rids.length) hi = rids.length
  let a = from
  let b = hi
  while (a < b) {
    const m = (a + b) >> 1
    if (rids[m] < rid) a = m + 1
    else b = m
  }
  return a
}

/**
 * The best `k` (score, rid) pairs seen: a min-heap with the worst on top (ties: the larger rid is
 * worse, as in the (bm25, rowid) order).
 */
class TopRows {
  private readonly hs: Float64Array
  private readonly hr: Int32Array
  size = 0
  constructor(private readonly k: number) {
    this.hs = new Float64Array(k)
    this.hr = new Int32Array(k)
  }

  worstScore(): number {
    return this.hs[0]
  }

  push(score: number, rid: number): void {
    const { hs, hr } = this
    if (this.size === this.k) {
      // full: the new row replaces the worst
      hs[0] = score
      hr[0] = rid
      this.siftDown(0)
      return
    }
    let i = this.size++
    hs[i] = score
    hr[i] = rid
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.worse(i, parent)) break
      this.swap(parent, i)
      i = parent
    }
  }

  /** The rows best first (bm25 in FTS5's sign); empties the heap. */
  drain(): TopBm25 {
    const { hs, hr } = this
    const rids = new Int32Array(this.size)
    const bm25 = new Float64Array(this.size)
    for (let t = this.size - 1; t >= 0; t--) {
      rids[t] = hr[0]
      bm25[t] = -1.0 * hs[0]
      this.size--
      if (this.size > 0) {
        hs[0] = hs[this.size]
        hr[0] = hr[this.size]
        this.siftDown(0)
      }
    }
    return { rids, bm25 }
  }

  private worse(a: number, b: number): boolean {
    return this.hs[a] < this.hs[b] || (this.hs[a] === this.hs[b] && this.hr[a] > this.hr[b])
  }

  private swap(a: number, b: number): void {
    swap(this.hs, this.hr, a, b)
  }

  private siftDown(i: number): void {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let w = i
      if (l < this.size && this.worse(l, w)) w = l
      if (r < this.size && this.worse(r, w)) w = r
      if (w === i) return
      this.swap(w, i)
      i = w
    }
  }
}

/**
 * A bound on a row's score from per-phrase bounds `u` (by query position, 0 for a phrase the row
 * cannot hold): summed in query order, as the row's score is. Rounding is monotone, so with every
 * u[i] ≥ that phrase's product the sum is ≥ the score exactly, with no widening: a row whose bound
 * only ties the k-th best is skipped too (it comes later in rid, and a tie loses) — a word in every
 * row with equal factors.
 */
function sumInQueryOrder(u: Float64Array): number {
  let s = 0
  for (let i = 0; i < u.length; i++) s += u[i]
  return s
}

/**
 * Block-max skip over the essential lists (from `from` on; the lists before it are non-essential and
 * bound by their `ub`): every rid up to `end`, the end of the shortest-reaching current block, lies in
 * each list's current block or, for a list whose next posting is past `end`, in none of its rows; the
 * blocks' maxima bound those rows' scores. When that cannot beat `theta`, every list moves past `end`.
 * True when it moved. `u`: scratch, one slot per query position.
 */
function skipBlocks(lists: List[], from: number, rest: number, theta: number, u: Float64Array): boolean {
  let end = 2147483647
  for (let j = from; j < lists.length; j++) {
    const L = lists[j]
    if (L.pos >= L.p.rids.length) continue
    const b = (L.pos / BLOCK) | 0
    const last = L.p.rids[Math.min(L.p.rids.length, (b + 1) * BLOCK) - 1]
    if (last < end) end = last
  }
  if (end === 2147483647) return false
  let approx = rest
  for (let j = from; j < lists.length; j++) {
    const L = lists[j]
    if (L.pos < L.p.rids.length && L.p.rids[L.pos] <= end) approx += L.idf * blockMaxOf(L.p)[(L.pos / BLOCK) | 0]
  }
  // the cheap sum decides unless it is within a relative 1e-9 of theta; then the query-order sum does
  if (approx * (1 - 1e-9) > theta) return false
  if (approx * (1 + 1e-9) > theta) {
    u.fill(0)
    for (let j = 0; j < lists.length; j++) {
      const L = lists[j]
      if (j < from) u[L.q] = L.ub
      else if (L.pos < L.p.rids.length && L.p.rids[L.pos] <= end) u[L.q] = L.idf * blockMaxOf(L.p)[(L.pos / BLOCK) | 0]
    }
    if (sumInQueryOrder(u) > theta) return false
  }
  for (let j = from; j < lists.length; j++) {
    const L = lists[j]
    if (L.pos < L.p.rids.length) L.pos = seek(L.p.rids, L.pos, end + 1)
  }
  return true
}

/** A query phrase's postings in the walk: query position, idf, bound (idf × largest factor), cursor. */
interface List {
  q: number
  p: PostingList
  idf: number
  ub: number
  pos: number
}

/**
 * The best `k` rows in [lo, hi] for `words` (unique, query order, as rankBm25 takes them), in
 * (bm25, rowid) order; `member` (indexed by rid − lo, 1 = keep) leaves rows out first. Null when
 * a word is not exactly one token (the caller asks FTS5), like rankBm25.
 */
export function topBm25(idx: Bm25Index, words: string[], k: number, lo: number, hi: number, member?: Uint8Array): TopBm25 | null {
  const terms = idx.tokenOf(words)
  const n = terms.length
  for (let i = 0; i < n; i++) if (terms[i] === null) return null
  if (k <= 0) return { rids: new Int32Array(0), bm25: new Float64Array(0) }
  // Phrases present in the index, by ascending bound; each keeps its query position.
  const lists: List[] = []
  for (let i = 0; i < n; i++) {
    const p = idx.postings.get(terms[i]!)
    const idf = idx.idfOf(p?.rids.length ?? 0)
    if (!p || p.rids.length === 0) continue
    const pos = seek(p.rids, 0, lo)
    if (pos < p.rids.length && p.rids[pos] <= hi) lists.push({ q: i, p, idf, ub: idf * maxFactorOf(p), pos })
  }
  lists.sort((a, b) => a.ub - b.ub)
  const m = lists.length
  // prefix[j]: bound of a row holding lists 0..j only (exact, sumInQueryOrder)
  const prefix = new Float64Array(m)
  const u = new Float64Array(n)
  for (let j = 0; j < m; j++) {
    u[lists[j].q] = lists[j].ub
    prefix[j] = sumInQueryOrder(u)
  }
  const heap = new TopRows(k)
  const contrib = new Float64Array(n)
  let theta = -Infinity // the k-th best score once k rows are kept
  let firstEssential = 0
  for (;;) {
    while (firstEssential < m && prefix[firstEssential] <= theta) firstEssential++
    if (firstEssential >= m) break
    if (firstEssential === m - 1 && heap.size === k) {
      // One essential list (a single word, or one that dominates): skip its blocks whose best row,
      // with every other phrase's bound added, still cannot beat the k-th best (block-max).
      const L = lists[m - 1]
      const bm = blockMaxOf(L.p)
      const rest = m > 1 ? prefix[m - 2] : 0
      for (;;) {
        if (L.pos >= L.p.rids.length) break
        const top = L.idf * bm[(L.pos / BLOCK) | 0]
        const approx = rest + top
        if (approx * (1 - 1e-9) > theta) break
        if (approx * (1 + 1e-9) > theta) {
          // near theta: the query-order sum decides (exact, a tie is skipped)
          u.fill(0)
          for (let j = 0; j < m - 1; j++) u[lists[j].q] = lists[j].ub
          u[L.q] = top
          if (sumInQueryOrder(u) > theta) break
        }
        L.pos = (((L.pos / BLOCK) | 0) + 1) * BLOCK
      }
    }
    if (heap.size === k && skipBlocks(lists, firstEssential, firstEssential > 0 ? prefix[firstEssential - 1] : 0, theta, u)) continue
    // next candidate: the smallest current rid among the essential lists
    let rid = 2147483647
    for (let j = firstEssential; j < m; j++) {
      const L = lists[j]
      if (L.pos < L.p.rids.length && L.p.rids[L.pos] < rid) rid = L.p.rids[L.pos]
    }
    if (rid > hi || rid === 2147483647) break // (the sentinel: every essential list is done)
    let partial = 0
    for (let j = firstEssential; j < m; j++) {
      const L = lists[j]
      if (L.pos < L.p.rids.length && L.p.rids[L.pos] === rid) {
        contrib[L.q] = L.idf * L.p.tf[L.pos]
        partial += contrib[L.q]
        L.pos++
      }
    }
    if (member && !member[rid - lo]) {
      for (let j = firstEssential; j < m; j++) contrib[lists[j].q] = 0
      continue
    }
    // probe the non-essential lists, best bound first, while the row can still win
    let alive = true
    for (let j = firstEssential - 1; j >= 0; j--) {
      if (partial * (1 + 1e-9) + prefix[j] <= theta) {
        alive = false
        break
      }
      const L = lists[j]
      L.pos = seek(L.p.rids, L.pos, rid)
      if (L.pos < L.p.rids.length && L.p.rids[L.pos] === rid) {
        contrib[L.q] = L.idf * L.p.tf[L.pos]
        partial += contrib[L.q]
      }
    }
    if (alive) {
      // the exact number: phrases summed in query order, as bm25() does
      let score = 0
      for (let i = 0; i < n; i++) score += contrib[i]
      if (heap.size < k || score > theta) {
        heap.push(score, rid)
        if (heap.size === k) theta = heap.worstScore()
      }
    }
    contrib.fill(0)
  }
  const { rids, bm25 } = heap.drain()
  return { rids, bm25 }
}

/** Full scoring, for comparison (tests and the bench): rankBm25's first `k` rows. */
export function topBm25ByFullScoring(idx: Bm25Index, words: string[], k: number, lo: number, hi: number, member?: Uint8Array): TopBm25 | null {
  const all = rankBm25(idx, words, lo, hi, { member, ordered: k })
  if (!all) return null
  const m = Math.min(k, all.n)
  return { rids: all.rids.slice(0, m), bm25: all.bm25.slice(0, m) }
}
