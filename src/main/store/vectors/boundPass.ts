/**
 * The bound pass of the exact dense top-k (int8Scan.ts): from each row's approximate score and its error
 * bound, the k-th largest lower end L and the rows whose upper end reaches it (the only ones that can be in
 * the top k, whatever the tie-break).
 */

/** Covers every floating-point rounding in the scores and in the bound (each < 1e-12 for unit vectors). */
export const SLACK = 1e-9

/**
 * A scan's numbers: row r's approximate score is a = t · scales[r] · (mul · D[·] + off) within
 * ± (qn · errs[r] + eq · hatNorms[r] + SLACK). D is read at the row (`pos` false) or at the row's place in
 * the subset passed over (`pos` true: sums of listed rows only). The int8 sums have mul 1 and off 0 (a is
 * then t · s · D exactly); the 6-bit ones mul 4 and off −126.5 · Σ d (sixBit.ts).
 */
export interface ScanNumbers {
  t: number
  qn: number
  eq: number
  D: Int32Array
  mul: number
  off: number
  pos: boolean
}

/** Row r's approximate score and its bound (the same arithmetic everywhere, so the same numbers). */
export const approx = (s: ScanNumbers, scale: number, d: number): number => s.t * scale * (s.mul * d + s.off)

/**
 * A min-heap of the k largest lower ends over rows in any order (its root rises towards L, the k-th largest of
 * all), and every row whose upper end reaches the root as it stands when the row is met (never above L: a
 * superset of the rows that reach L, filtered once L is known by `kept`). L and the filtered set are the same
 * whatever order the rows come in.
 */
export class BoundPass {
  readonly heap: Float64Array
  size = 0
  root = -Infinity
  m = 0
  cand: Int32Array

  constructor(
    readonly k: number,
    private readonly scales: Float32Array,
    private readonly errs: Float64Array,
    private readonly hatNorms: Float64Array,
  ) {
    this.heap = new Float64Array(k)
    this.cand = new Int32Array(Math.max(1024, 16 * k))
  }

  /** Rows from … to−1 (or subset[from … to−1]). The state is kept in locals for the loop (a hot million-row pass). */
  visit(s: ScanNumbers, from: number, to: number, subset?: Int32Array): void {
    const { k, heap, scales, errs, hatNorms } = this
    const { t, qn, eq, D, mul, off, pos } = s
    let { size, root, m, cand } = this
    for (let i = from; i < to; i++) {
      const r = subset ? subset[i] : i
      const a = t * scales[r] * (mul * D[pos ? i : r] + off)
      const b = qn * errs[r] + eq * hatNorms[r] + SLACK
      const lo = a - b
      if (size < k) {
        let j = size++
        heap[j] = lo
        while (j > 0) {
          const p = (j - 1) >> 1
          if (heap[p] <= heap[j]) break
          const x = heap[p]
          heap[p] = heap[j]
          heap[j] = x
          j = p
        }
        if (size === k) root = heap[0]
      } else if (lo > root) {
        heap[0] = lo
        for (let j = 0; ;) {
          const l = 2 * j + 1
          if (l >= k) break
          const c = l + 1 < k && heap[l + 1] < heap[l] ? l + 1 : l
          if (heap[j] <= heap[c]) break
          const x = heap[c]
          heap[c] = heap[j]
          heap[j] = x
          j = c
        }
        root = heap[0]
      }
      if (a + b >= root) {
        if (m === cand.length) {
          const c = new Int32Array(cand.length * 2)
          c.set(cand)
          cand = c
        }
        cand[m++] = r
      }
    }
    this.size = size
    this.root = root
    this.m = m
    this.cand = cand
  }

  /**
   * The rows whose upper end reaches L (the final root), ascending: of the rows met (kept as candidates), or,
   * for numbers by place (`pos`), of every row of `subset` (the rows visited, ascending).
   */
  kept(s: ScanNumbers, subset?: Int32Array): Int32Array {
    const rows = s.pos && subset ? subset : this.cand.subarray(0, this.m)
    const out = reaching(s, this.root, rows, this.scales, this.errs, this.hatNorms, s.pos && subset !== undefined)
    return s.pos ? out : out.sort()
  }
}

/**
 * The rows of `rows` whose upper end (the numbers `s`, the per-row bounds `errs`, `hatNorms`) reaches `floor`, in
 * their order; D read at each row's place in `rows` (`byPlace`) or at the row. Plain loops over locals: a hot
 * pass over ~25,000 candidates a search.
 */
export function reaching(
  s: ScanNumbers,
  floor: number,
  rows: Int32Array,
  scales: Float32Array,
  errs: Float64Array,
  hatNorms: Float64Array,
  byPlace: boolean,
): Int32Array {
  const { t, qn, eq, D, mul, off } = s
  const out = new Int32Array(rows.length)
  let m = 0
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]
    const a = t * scales[r] * (mul * D[byPlace ? i : r] + off)
    if (a + (qn * errs[r] + eq * hatNorms[r] + SLACK) >= floor) out[m++] = r
  }
  return out.subarray(0, m)
}

/** Whether the first `dim` values of `a` and `b` are the same numbers (a NaN never is). */
export function sameValues(a: Float64Array, b: Float64Array, dim: number): boolean {
  if (b.length < dim) return false
  for (let i = 0; i < dim; i++) if (a[i] !== b[i]) return false
  return true
}
