/**
 * The order in which the knob search (knobs.ts) tries a knob's candidate values: nearest the
 * current value first (ties: the smaller value first), each value once. A search stops at the
 * first value that injects the memory, or after its cap (a few hundred values), so of the
 * thousands of breakpoints a 5,000-row pool yields it usually walks only the nearest few hundred.
 *
 * Two ways to produce that order, with the same result value for value:
 *  - `sortedValues`: every value deduplicated and sorted (the reference, what the exhaustive search walks);
 *  - `nearestValues`: the nearest batch at a time, found by quickselect and only that batch sorted.
 * And the half-life's values (where, as the half-life moves, the target's score crosses another
 * row's or a row's score crosses the floor), whose every root costs a 50-step bisection:
 * `halfLifeValues` bisects them all (reference), `halfLifeStream` only those of the grid cells
 * nearest the current half-life, cell by cell as the search walks outward.
 */
import { nthLargest } from '../recall/dense'

/** Candidate values of one knob, nearest the current value first (ties: the smaller value first), each once. */
export interface ValueStream {
  /** the next value, or undefined when there are no more */
  next(): number | undefined
}

/** Distance of a value from the current one (the search's order). */
export type Distance = (v: number) => number

/**
 * The reference order: finite values other than `cur`, deduplicated, sorted by (distance, value).
 * −0 is tried as 0 (the same config either way; which copy came first would depend on the row order).
 */
export function sortedValues(values: ArrayLike<number>, count: number, cur: number | null, dist: Distance): ValueStream {
  const uniq = new Set<number>()
  for (let i = 0; i < count; i++) {
    const v = values[i] + 0
    if (Number.isFinite(v) && v !== cur) uniq.add(v)
  }
  // Each value's distance computed once, not per comparison.
  const order = [...uniq].map((v) => ({ v, d: dist(v) })).sort((a, b) => a.d - b.d || a.v - b.v)
  let i = 0
  return { next: () => (i < order.length ? order[i++].v : undefined) }
}

/** The first batch's size; each next batch is 4× larger (a search that walks far pays O(n log n) once, like a sort). */
const FIRST_BATCH = 512

/**
 * The same order as `sortedValues`, produced a batch at a time: the batch's distance threshold is
 * found by quickselect (O(n)), and only the values at or under it are sorted. Equal values have
 * equal distances, so every copy of a value falls in the same batch and is dropped there.
 */
export function nearestValues(values: ArrayLike<number>, count: number, cur: number | null, dist: Distance): ValueStream {
  const v = new Float64Array(count)
  const d = new Float64Array(count)
  let n = 0
  for (let i = 0; i < count; i++) {
    const x = values[i] + 0 // −0 as 0, as sortedValues
    if (!Number.isFinite(x) || x === cur) continue
    const dx = dist(x)
    // A non-finite distance has no place in a threshold: the reference sort decides it.
    if (!Number.isFinite(dx)) return sortedValues(values, count, cur, dist)
    v[n] = x
    d[n] = dx
    n++
  }
  /** indices (in insertion order) not yet in a batch: rest[0..restLen) */
  const rest = new Int32Array(n)
  for (let i = 0; i < n; i++) rest[i] = i
  let restLen = n
  let size = FIRST_BATCH
  let batch: number[] = []
  let at = 0
  const scratch = new Float64Array(n)
  const byDistance = (a: number, b: number) => d[a] - d[b] || v[a] - v[b] || a - b
  const refill = (): boolean => {
    if (restLen === 0) return false
    let picked: number[]
    if (restLen <= size) {
      picked = Array.from(rest.subarray(0, restLen))
      restLen = 0
    } else {
      const t = kthSmallest(rest, restLen, d, size, scratch)
      picked = []
      let keep = 0
      for (let j = 0; j < restLen; j++) {
        const i = rest[j]
        if (d[i] <= t) picked.push(i)
        else rest[keep++] = i
      }
      restLen = keep
    }
    picked.sort(byDistance)
    // Drop repeats: every copy of a value sorts next to the others.
    batch = []
    for (const i of picked) if (batch.length === 0 || v[batch[batch.length - 1]] !== v[i]) batch.push(i)
    at = 0
    size *= 4
    return true
  }
  return {
    next: () => {
      while (at >= batch.length) if (!refill()) return undefined
      return v[batch[at++]]
    },
  }
}

/** The k-th smallest (1-based) of d over the first `len` indices of `idx` (a quickselect on a copy in `work`). */
function kthSmallest(idx: Int32Array, len: number, d: Float64Array, k: number, work: Float64Array): number {
  for (let j = 0; j < len; j++) work[j] = d[idx[j]]
  return nthLargest(work, len, len - k + 1)
}

// ---------------------------------------------------------------------------
// The half-life's crossings
// ---------------------------------------------------------------------------

/** The half-life knob's range (KNOBS in src/shared/trace.ts) and the log grid its crossings are scanned on. */
export const HALF_LIFE_LO = 1
export const HALF_LIFE_HI = 8760
const GRID = 64
const LN_LO = Math.log(HALF_LIFE_LO)
const LN_HI = Math.log(HALF_LIFE_HI)
/** ln h at each grid point, and h */
const GRID_X = new Float64Array(GRID + 1)
const GRID_H = new Float64Array(GRID + 1)
for (let i = 0; i <= GRID; i++) {
  GRID_X[i] = i === 0 ? LN_LO : LN_LO + ((LN_HI - LN_LO) * i) / GRID
  GRID_H[i] = Math.exp(GRID_X[i])
}
const NUDGE = 1e-6

/**
 * 0.5^(age/h) at one grid point for rows of given ages (in hours), made when a scan first reads
 * it and kept: a scan over the nearest cells reads only their grid points.
 */
export class HalfLifeGrid {
  private readonly cols = new Array<Float64Array | undefined>(GRID + 1)
  /** rest = score − wr·0.5^(age/h0) needs 0.5^(age/h0) per row: kept per h0 */
  private readonly atH0 = new Map<number, Float64Array>()
  constructor(readonly ageHours: Float64Array) {}
  column(g: number): Float64Array {
    let c = this.cols[g]
    if (!c) {
      const ages = this.ageHours
      c = this.cols[g] = new Float64Array(ages.length)
      const h = GRID_H[g]
      for (let i = 0; i < ages.length; i++) c[i] = Math.pow(0.5, ages[i] / h)
    }
    return c
  }
  at(h0: number): Float64Array {
    let c = this.atH0.get(h0)
    if (!c) {
      const ages = this.ageHours
      c = new Float64Array(ages.length)
      for (let i = 0; i < ages.length; i++) c[i] = Math.pow(0.5, ages[i] / h0)
      this.atH0.set(h0, c)
    }
    return c
  }
}

/** The pool's rows as the half-life search sees them: rows 0..n−1 of the grid's. */
export interface HalfLifeRows {
  n: number
  /** the target's row */
  target: number
  /** composite score under the config */
  score: Float64Array
  /** the rows' ages (max(0, age) in hours, from the recency source) and their powers */
  grid: HalfLifeGrid
}

/**
 * Where the target's score crosses another row's (or a row's crosses the floor) as the half-life
 * moves: score(h) = rest + wr·0.5^(age/h). Each sign change on the 64-cell log grid is one root,
 * refined by 50 bisection steps (a difference exactly 0 on a grid point is a root there). A cell's
 * roots depend only on its two grid points, so cells are scanned one at a time, when the search
 * reaches them: roots far from the current value are never looked for.
 */
class Crossings {
  readonly rest: Float64Array
  constructor(
    readonly rows: HalfLifeRows,
    readonly wr: number,
    h0: number,
    readonly floor: number | null,
  ) {
    const { n, score } = rows
    const p0 = rows.grid.at(h0)
    const rest = (this.rest = new Float64Array(n))
    for (let i = 0; i < n; i++) rest[i] = score[i] - wr * p0[i]
  }

  /** Cell c's roots (between grid points c−1 and c), raw (before the nudge), pushed to `out`. */
  cell(c: number, out: number[]): void {
    const { rest, wr, floor } = this
    const { n, target } = this.rows
    const p0 = this.rows.grid.column(c - 1)
    const p1 = this.rows.grid.column(c)
    const ft0 = rest[target] + wr * p0[target]
    const ft1 = rest[target] + wr * p1[target]
    for (let o = 0; o < n; o++) {
      const fo0 = rest[o] + wr * p0[o]
      const fo1 = rest[o] + wr * p1[o]
      if (o !== target) this.root(c, o, 0, ft0 - fo0, ft1 - fo1, out)
      if (floor !== null) this.root(c, o, 1, fo0 - floor, fo1 - floor, out)
    }
  }

  /** One difference over cell c (`y0`, `y1` at its ends): a zero at its start is a root there, a sign change is bisected. */
  private root(c: number, o: number, kind: number, y0: number, y1: number, out: number[]): void {
    if (y0 === 0) {
      out.push(Math.exp(GRID_X[c - 1]))
      return
    }
    if (Math.sign(y1) === Math.sign(y0) || y1 === 0) return
    const { rest, wr, floor } = this
    const { target } = this.rows
    const ages = this.rows.grid.ageHours
    const at = ages[target]
    const ao = ages[o]
    let a = GRID_X[c - 1]
    let b = GRID_X[c]
    let ya = y0
    for (let k = 0; k < 50; k++) {
      const m = (a + b) / 2
      const h = Math.exp(m)
      const fo = rest[o] + wr * Math.pow(0.5, ao / h)
      const ym = kind === 0 ? rest[target] + wr * Math.pow(0.5, at / h) - fo : fo - (floor as number)
      if (Math.sign(ym) === Math.sign(ya)) {
        a = m
        ya = ym
      } else b = m
    }
    out.push(Math.exp(a), Math.exp(b))
  }
}

/** A root's value nudged to both sides (the score is exactly tied at the root itself), kept inside the range. */
function pushNudged(h: number, out: number[]): void {
  pushInRange(h * (1 - NUDGE), out)
  pushInRange(h, out)
  pushInRange(h * (1 + NUDGE), out)
}

function pushInRange(x: number, out: number[]): void {
  if (x >= HALF_LIFE_LO && x <= HALF_LIFE_HI) out.push(x)
}

/** The whole min-max grid: with min-max normalisation the features couple, so a fine grid replaces the roots. */
function minMaxGrid(): number[] {
  const out: number[] = []
  for (let i = 0; i <= 240; i++) out.push(Math.exp(LN_LO + ((LN_HI - LN_LO) * i) / 240))
  return out
}

/** Every half-life value the search may try (the reference: every cell scanned, every root bisected). */
export function halfLifeValues(rows: HalfLifeRows, wr: number, h0: number, floor: number | null, minmax: boolean): number[] {
  if (minmax) return minMaxGrid()
  const x = new Crossings(rows, wr, h0, floor)
  const raw: number[] = []
  for (let c = 1; c <= GRID; c++) x.cell(c, raw)
  const out: number[] = []
  for (const h of raw) pushNudged(h, out)
  out.push(HALF_LIFE_LO, HALF_LIFE_HI)
  return out
}

/** Slack on a cell's distance bound: a nudged value lies ~1e-6 outside its cell (in ln h), plus rounding. */
const CELL_SLACK = 1e-5

/**
 * The half-life values in the search's order (`sortedValues` of `halfLifeValues`, the distance
 * |ln(h/cur)|), bisecting cells nearest-first: a value is given out only once every cell that
 * could hold a nearer one has been refined.
 */
export function halfLifeStream(rows: HalfLifeRows, wr: number, h0: number, floor: number | null, minmax: boolean, cur: number): ValueStream {
  const dist = (v: number) => Math.abs(Math.log(v / cur))
  // Every value lies in [lo, hi]: finite distances at both ends mean finite ones throughout (the
  // order is then a plain (distance, value) order); otherwise the reference sort decides.
  if (!Number.isFinite(dist(HALF_LIFE_LO)) || !Number.isFinite(dist(HALF_LIFE_HI))) {
    const all = halfLifeValues(rows, wr, h0, floor, minmax)
    return sortedValues(all, all.length, cur, dist)
  }
  if (minmax) return nearestValues(minMaxGrid(), 241, cur, dist)
  const x = new Crossings(rows, wr, h0, floor)
  // Cells by their nearest possible distance.
  const lnCur = Math.log(cur)
  const cells: { cell: number; near: number }[] = []
  for (let c = 1; c <= GRID; c++) cells.push({ cell: c, near: Math.max(0, GRID_X[c - 1] - lnCur, lnCur - GRID_X[c]) - CELL_SLACK })
  cells.sort((a, b) => a.near - b.near || a.cell - b.cell)
  const heap = new ValueHeap()
  const offer = (h: number) => {
    if (h !== cur) heap.push(dist(h), h)
  }
  offer(HALF_LIFE_LO)
  offer(HALF_LIFE_HI)
  let next = 0
  const raw: number[] = []
  const nudged: number[] = []
  return {
    next: () => {
      // Refine every cell that could hold a value as near as the nearest one found so far.
      while (next < cells.length && (heap.size === 0 || cells[next].near <= heap.topD())) {
        raw.length = 0
        nudged.length = 0
        x.cell(cells[next].cell, raw)
        for (const h of raw) pushNudged(h, nudged)
        for (const h of nudged) if (Number.isFinite(h)) offer(h)
        next++
      }
      if (heap.size === 0) return undefined
      const v = heap.topV()
      while (heap.size > 0 && heap.topV() === v) heap.pop()
      return v
    },
  }
}

/** A binary min-heap of (distance, value), ordered like the search: distance, then value. */
class ValueHeap {
  private d: number[] = []
  private v: number[] = []
  get size(): number {
    return this.d.length
  }
  topD(): number {
    return this.d[0]
  }
  topV(): number {
    return this.v[0]
  }
  private less(i: number, j: number): boolean {
    return this.d[i] < this.d[j] || (this.d[i] === this.d[j] && this.v[i] < this.v[j])
  }
  private swap(i: number, j: number): void {
    const td = this.d[i]
    this.d[i] = this.d[j]
    this.d[j] = td
    const tv = this.v[i]
    this.v[i] = this.v[j]
    this.v[j] = tv
  }
  push(d: number, v: number): void {
    this.d.push(d)
    this.v.push(v)
    let i = this.d.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!this.less(i, p)) break
      this.swap(i, p)
      i = p
    }
  }
  pop(): void {
    const last = this.d.length - 1
    this.swap(0, last)
    this.d.pop()
    this.v.pop()
    let i = 0
    const n = this.d.length
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < n && this.less(l, m)) m = l
      if (r < n && this.less(r, m)) m = r
      if (m === i) break
      this.swap(i, m)
      i = m
    }
  }
}
