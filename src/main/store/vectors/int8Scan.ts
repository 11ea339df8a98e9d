/**
 * Exact dense top-k over a million rows without the float32 matrix in memory
 * (issue 13 goal 3): scan an int8 copy, then rescore exactly the few rows the
 * scan cannot rule out.
 *
 * Each unit row x (the float32 row the brute force reads) is kept as int8 codes
 * c with a per-row scale s = max|x| / 127, so x̂ = s·c, and two numbers:
 * e = ‖x − x̂‖ and h = ‖x̂‖. The query q (float64, unit) becomes int16 codes d
 * with one scale t (x̂·q̂ is then an exact int32 dot product, dotI8All in
 * dotKernel.ts), q̂ = t·d, and e_q = ‖q − q̂‖. For every row
 *
 *   |q·x − q̂·x̂| = |q·(x − x̂) + (q − q̂)·x̂| ≤ ‖q‖·e + e_q·h      (Cauchy–Schwarz)
 *
 * and the brute force's number (dotRow: float64 sums of float32 × float64
 * products) is within dim·2⁻⁵³·‖q‖‖x‖ < 1e-12 of q·x, as the bound's own terms
 * are of theirs; SLACK (1e-9) covers all of that. So with â = t·s·D the row's
 * score lies in [â − b, â + b], b = ‖q‖·e + e_q·h + SLACK. Let L be the k-th
 * largest lower end. At least k rows score ≥ L, so a row whose upper end is
 * below L cannot be in the top k (whatever the tie-break); every other row is
 * rescored with its exact float32 number, and those are ranked by the same rule
 * as the brute force (score, then key, then row). The answer is the brute
 * force's, ids and order, always; only the work depends on the data.
 *
 * The int8 matrix lives in (shared) WebAssembly memory and the scan is split
 * across cores by the scan pool (scanPool.ts). Rows needing a rescore are read
 * by the caller (from the DB or a file): `exact(rows)` returns their numbers.
 */
import { dotKernel, WASM_MAX_PAGES, wasmMemory, type DotAll, type WasmMemory } from './dotKernel'
import { ScanPool } from './scanPool'

const PAGE = 65536
/** Covers every floating-point rounding in the scores and in the bound (each < 1e-12 for unit vectors). */
const SLACK = 1e-9

/** What one search did. */
export interface Int8SearchResult {
  /** the top-k rows, best first (the brute force's order) */
  rows: number[]
  /** their exact scores */
  scores: number[]
  /** rows rescored exactly (the ones the int8 bound could not rule out) */
  rescored: number
  /**
   * ms spent: the int8 scan (all cores; with the bound pass over this thread's share of the rows, run as
   * it scans them), the rest of the bound passes (this thread), the exact rescoring (the caller's reads included)
   */
  timings: { scanMs: number; boundMs: number; rescoreMs: number }
}

export class Int8Index {
  /** row length in the int8 matrix: dim rounded up to 32 (the kernel reads 32 codes at a time), zero-padded */
  readonly stride: number
  /** rows searched: [0, n) (at most `capacity`; rows are set with setRow first) */
  n: number
  /** rows there is room for (grow() adds room in place) */
  capacity = 0
  /** per-row scale s: x̂ = s · codes */
  scales = new Float32Array(0)
  /** per-row ‖x − x̂‖ */
  errs = new Float64Array(0)
  /** per-row ‖x̂‖ */
  hatNorms = new Float64Array(0)
  private readonly memory: WasmMemory
  private readonly kernel: DotAll
  /** the quantiser (startBlock), instantiated on first use */
  private quant: DotAll | null | undefined
  private readonly shared: boolean
  private qOff = 0
  private outOff = 0
  /** int16 query codes: at most this, so an int32 row sum cannot overflow (127 · qMax · stride < 2³¹) */
  private readonly qMax: number
  /**
   * The query whose int32 sums the scratch holds (a copy), for rows [0, n), with its numbers: a
   * search or count for the same query reuses them instead of scanning 768 MB again (the dense arm
   * widening its k, a why-not after a recall). Dropped by anything that writes codes or moves the scratch.
   */
  private lastScan: { q: Float64Array; n: number; t: number; qn: number; eq: number } | null = null
  /** int8 scans run so far (a search or count that reused the last one does not add; tests and benches read it) */
  scans = 0

  /**
   * Room for `capacity` rows of `dim` (all of them searched until `n` says otherwise); throws a
   * RangeError when WebAssembly SIMD is unavailable or the matrix would be over 4 GiB.
   */
  constructor(
    capacity: number,
    readonly dim: number,
  ) {
    this.stride = Math.ceil(dim / 32) * 32
    this.n = capacity
    this.shared = ScanPool.get() !== null
    this.memory = wasmMemory(this.pagesFor(capacity), this.shared)
    const k = dotKernel(this.memory, this.shared, 'dotI8All')
    if (!k) throw new RangeError('WebAssembly SIMD is not available')
    this.kernel = k
    this.qMax = Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * this.stride)))
    this.grow(capacity)
  }

  private pagesFor(capacity: number): number {
    const pages = Math.ceil((capacity * this.stride + this.stride * 2 + capacity * 4) / PAGE)
    if (pages > WASM_MAX_PAGES) throw new RangeError(`an int8 matrix of ${capacity} × ${this.dim} is over 4 GiB`)
    return Math.max(1, pages)
  }

  /** Room for `capacity` rows; rows already set stay (the memory grows in place). Throws a RangeError past 4 GiB. */
  grow(capacity: number): void {
    if (capacity < this.capacity) return
    const pages = this.pagesFor(capacity)
    const have = this.memory.buffer.byteLength / PAGE
    if (pages > have) this.memory.grow(pages - have)
    const keep = this.capacity
    const more = <T extends Float32Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const a = make(capacity)
      a.set(old.subarray(0, keep))
      return a
    }
    this.scales = more(this.scales, (n) => new Float32Array(n))
    this.errs = more(this.errs, (n) => new Float64Array(n))
    this.hatNorms = more(this.hatNorms, (n) => new Float64Array(n))
    this.capacity = capacity
    this.lastScan = null
    // The scratch after the matrix: the query codes, then one int32 sum per row.
    this.qOff = capacity * this.stride
    this.outOff = this.qOff + this.stride * 2
  }

  /** Bytes held (the int8 matrix and the per-row numbers). */
  get bytes(): number {
    return this.memory.buffer.byteLength + this.scales.byteLength + this.errs.byteLength + this.hatNorms.byteLength
  }

  /**
   * Quantise row `r` (< capacity) from the unit row `v[off .. off+dim)` (the float32 row the exact scores
   * are computed on). The JS reference of the quantiser kernel (dotKernel.ts, `startBlock`): the same
   * numbers bit for bit, the error sums kept as four float64 sums as that kernel's lanes do.
   */
  setRow(r: number, v: Float32Array, off = 0): void {
    const dim = this.dim
    let max = 0
    for (let i = 0; i < dim; i++) {
      const a = Math.abs(v[off + i])
      if (a > max) max = a
    }
    const s = Math.fround(max / 127)
    this.lastScan = null
    const codes = new Int8Array(this.memory.buffer, r * this.stride, this.stride)
    const e = [0, 0, 0, 0]
    const h = [0, 0, 0, 0]
    const dim4 = dim & ~3
    for (let i = 0; i < dim; i++) {
      const x = v[off + i]
      const c = s > 0 ? Math.max(-127, Math.min(127, Math.round(x / s))) : 0
      codes[i] = c
      const xh = s * c
      // element i in sum i mod 4, the remainder (past the last full four) in sum 0
      const k = i < dim4 ? i & 3 : 0
      e[k] += (x - xh) * (x - xh)
      h[k] += xh * xh
    }
    this.scales[r] = s
    this.errs[r] = Math.sqrt(e[0] + e[1] + (e[2] + e[3]))
    this.hatNorms[r] = Math.sqrt(h[0] + h[1] + (h[2] + h[3]))
  }

  /**
   * Start making rows first … first+m−1 from `m` raw float32 rows (`bytes`: m × dim × 4, not yet unit
   * length) with the quantiser kernel, on the helper threads when there are any (the caller is free
   * until it calls the finish; one block at a time). The finish waits, sets the rows' scale and bounds
   * and returns per row its unit float32 row (`unit`, m × dim, VectorIndex.putFrom's numbers) and its
   * sum of squares (`ss`: not finite for a row that must be rejected — its slot then holds garbage the
   * caller overwrites). The views are valid until the next block. null: no kernel (WebAssembly SIMD
   * unavailable) or no room: the caller quantises row by row (putFrom + setRow, the same numbers).
   */
  startBlock(first: number, bytes: Uint8Array, m: number): (() => { unit: Float32Array; ss: Float64Array }) | null {
    const dim = this.dim
    if (m <= 0 || first + m > this.capacity || bytes.byteLength !== m * dim * 4) return null
    this.quant ??= dotKernel(this.memory, this.shared, 'quantI8')
    const quant = this.quant
    if (!quant) return null
    this.lastScan = null
    const at = Math.ceil((this.outOff + this.capacity * 4) / 16) * 16
    const outAt = at + m * dim * 4
    const need = Math.ceil((outAt + m * 32) / PAGE)
    const have = this.memory.buffer.byteLength / PAGE
    if (need > WASM_MAX_PAGES) return null
    if (need > have) this.memory.grow(need - have)
    const copyIn = () => new Uint8Array(this.memory.buffer, at, bytes.byteLength).set(bytes)
    copyIn()
    const req = { name: 'quantI8', data: at, n: m, dim, q: first * this.stride, out: outAt, rowBytes: dim * 4, outBytes: 32, qBytes: this.stride } as const
    const pool = this.shared ? ScanPool.get() : null
    let finish = pool?.start(this.memory, quant, req) ?? null
    if (!finish) {
      quant(at, m, dim, req.q, outAt)
      finish = () => true
    }
    return () => {
      if (!finish()) {
        // A helper died mid-block: the rows done so far are unit rows already; start again from the raw ones.
        copyIn()
        quant(at, m, dim, req.q, outAt)
      }
      const out = new Float64Array(this.memory.buffer, outAt, m * 4)
      const ss = new Float64Array(m)
      for (let j = 0; j < m; j++) {
        const r = first + j
        ss[j] = out[4 * j]
        this.scales[r] = out[4 * j + 1]
        this.errs[r] = Math.sqrt(out[4 * j + 2])
        this.hatNorms[r] = Math.sqrt(out[4 * j + 3])
      }
      return { unit: new Float32Array(this.memory.buffer, at, m * dim), ss }
    }
  }

  /** Move row `from`'s codes and numbers to row `to` (a block closing the gap a rejected row left). */
  moveRow(from: number, to: number): void {
    const st = this.stride
    this.lastScan = null
    new Int8Array(this.memory.buffer).copyWithin(to * st, from * st, (from + 1) * st)
    this.scales[to] = this.scales[from]
    this.errs[to] = this.errs[from]
    this.hatNorms[to] = this.hatNorms[from]
  }

  /**
   * The query's int16 codes and the integer scan of rows [0, n) on every core: each row's
   * approximate score is t · scales[r] · D[r] within ± (qn · errs[r] + eq · hatNorms[r] + SLACK).
   */
  private scanQuery(q: Float64Array, onMine?: (s: ScanNumbers, from: number, count: number) => void): ScanNumbers {
    const { n, dim, stride } = this
    const last = this.lastScan
    if (last && last.n === n && sameValues(last.q, q, dim))
      return { t: last.t, qn: last.qn, eq: last.eq, D: new Int32Array(this.memory.buffer, this.outOff, n) }
    let qmax = 0
    let qn2 = 0
    for (let i = 0; i < dim; i++) {
      qmax = Math.max(qmax, Math.abs(q[i]))
      qn2 += q[i] * q[i]
    }
    const t = qmax / this.qMax
    const qc = new Int16Array(this.memory.buffer, this.qOff, stride)
    qc.fill(0)
    let eq2 = 0
    for (let i = 0; i < dim; i++) {
      const d = t > 0 ? Math.round(q[i] / t) : 0
      qc[i] = d
      eq2 += (q[i] - t * d) ** 2
    }
    this.scans++
    const numbers = { t, qn: Math.sqrt(qn2), eq: Math.sqrt(eq2), D: new Int32Array(this.memory.buffer, this.outOff, n) }
    const pool = this.shared && n > 0 ? ScanPool.get() : null
    const scan = { name: 'dotI8All', data: 0, n, dim: stride, q: this.qOff, out: this.outOff, rowBytes: stride, outBytes: 4 } as const
    const mine = onMine && ((from: number, count: number) => onMine(numbers, from, count))
    if (n > 0 && !pool?.scan(this.memory, this.kernel, scan, mine)) this.kernel(0, n, stride, this.qOff, this.outOff)
    this.lastScan = { q: Float64Array.from(q.subarray(0, dim)), n, t, qn: numbers.qn, eq: numbers.eq }
    return numbers
  }

  /**
   * The exact top `k` rows for unit query `q`, ranked like the brute force: score
   * descending, then `keys[row]` ascending, then row. `exact(rows)` (rows ascending)
   * returns each row's exact float32 score, in the same order. With `subset`, only
   * those rows (each < n, no repeats) compete.
   */
  search(q: Float64Array, k: number, keys: ArrayLike<number>, exact: (rows: Int32Array) => ArrayLike<number>, subset?: Int32Array): Int8SearchResult {
    const total = subset ? subset.length : this.n
    k = Math.min(k, total)
    if (k <= 0) return { rows: [], scores: [], rescored: 0, timings: { scanMs: 0, boundMs: 0, rescoreMs: 0 } }
    const t0 = performance.now()
    // The bound pass (BoundPass) runs over the rows this thread scanned as soon as it has scanned them,
    // while the helpers still scan theirs (the pass's answer does not depend on the order it sees rows in).
    const pass = new BoundPass(k, this.scales, this.errs, this.hatNorms)
    const seen: number[] = [] // [from, count] of the ranges passed over during the scan
    const { t, qn, eq, D } = this.scanQuery(
      q,
      subset
        ? undefined
        : (s, from, count) => {
            pass.visit(s, from, from + count)
            seen.push(from, count)
          },
    )
    const t1 = performance.now()
    const numbers = { t, qn, eq, D }
    if (subset) pass.visit(numbers, 0, total, subset)
    else {
      // The rows the helpers scanned (or all of them: no pool, or the last scan reused).
      const ranges = Array.from({ length: seen.length / 2 }, (_, i) => [seen[2 * i], seen[2 * i + 1]]).sort((a, b) => a[0] - b[0])
      let at = 0
      for (const [from, count] of ranges) {
        if (from > at) pass.visit(numbers, at, from)
        at = from + count
      }
      if (at < total) pass.visit(numbers, at, total)
    }
    const L = pass.root
    const { scales, errs, hatNorms } = this
    const cand = pass.cand
    let m = pass.m
    // Keep the rows whose upper end reaches L (the same arithmetic as above, so the same numbers).
    let kept = 0
    for (let i = 0; i < m; i++) {
      const r = cand[i]
      if (t * scales[r] * D[r] + (qn * errs[r] + eq * hatNorms[r] + SLACK) >= L) cand[kept++] = r
    }
    m = kept
    const rows = cand.subarray(0, m)
    rows.sort() // ascending (the pass met the ranges in the order the threads finished them)
    const t2 = performance.now()
    const sc = exact(rows)
    const order = Array.from({ length: m }, (_, i) => i)
    order.sort((a, b) => sc[b] - sc[a] || keys[rows[a]] - keys[rows[b]] || rows[a] - rows[b])
    const top = order.slice(0, k)
    const timings = { scanMs: t1 - t0, boundMs: t2 - t1, rescoreMs: performance.now() - t2 }
    return { rows: top.map((i) => rows[i]), scores: top.map((i) => sc[i]), rescored: m, timings }
  }

  /**
   * How many rows (of [0, n), or of `subset`) score above `threshold` for unit query `q`,
   * a row scoring exactly `threshold` counting when it is below `tieRow`. Exact: rows whose
   * bounds straddle the threshold are rescored through `exact` (rows ascending).
   */
  countAbove(q: Float64Array, threshold: number, tieRow: number, exact: (rows: Int32Array) => ArrayLike<number>, subset?: Int32Array): number {
    const total = subset ? subset.length : this.n
    if (total === 0) return 0
    const { t, qn, eq, D } = this.scanQuery(q)
    const { scales, errs, hatNorms } = this
    let above = 0
    const unsure: number[] = []
    for (let i = 0; i < total; i++) {
      const r = subset ? subset[i] : i
      const a = t * scales[r] * D[r]
      const b = qn * errs[r] + eq * hatNorms[r] + SLACK
      if (a - b > threshold) above++
      else if (a + b >= threshold) unsure.push(r)
    }
    const rows = Int32Array.from(unsure).sort()
    const sc = exact(rows)
    for (let i = 0; i < rows.length; i++) if (sc[i] > threshold || (sc[i] === threshold && rows[i] < tieRow)) above++
    return above
  }

  /** The int8 matrix's bytes (n × stride; a view, do not keep across growth): read, or filled by a snapshot restore. */
  codeBytes(): Uint8Array {
    this.lastScan = null // the caller may fill it
    return new Uint8Array(this.memory.buffer, 0, this.n * this.stride)
  }

  /** Row `r`'s score bounds for query `q` as `search` uses them (tests check that they hold). */
  boundsOf(q: Float64Array, r: number): { lo: number; hi: number } {
    const sums = new Int32Array(1)
    // Recompute this one row the way search does (no kernel: a plain loop over the codes).
    let qmax = 0
    let qn2 = 0
    for (let i = 0; i < this.dim; i++) {
      qmax = Math.max(qmax, Math.abs(q[i]))
      qn2 += q[i] * q[i]
    }
    const t = qmax / this.qMax
    const codes = new Int8Array(this.memory.buffer, r * this.stride, this.dim)
    let eq2 = 0
    for (let i = 0; i < this.dim; i++) {
      const d = t > 0 ? Math.round(q[i] / t) : 0
      sums[0] += d * codes[i]
      eq2 += (q[i] - t * d) ** 2
    }
    const a = t * this.scales[r] * sums[0]
    const b = Math.sqrt(qn2) * this.errs[r] + Math.sqrt(eq2) * this.hatNorms[r] + SLACK
    return { lo: a - b, hi: a + b }
  }
}

/** A scan's numbers: each row's approximate score is t · scales[r] · D[r] within ± (qn · errs[r] + eq · hatNorms[r] + SLACK). */
interface ScanNumbers {
  t: number
  qn: number
  eq: number
  D: Int32Array
}

/**
 * The bound pass of a top-k search, over rows in any order: a min-heap of the k largest lower ends (its
 * root rises towards L, the k-th largest of all), and every row whose upper end reaches the root as it
 * stands when the row is met (never above L: a superset of the rows that reach L, filtered once L is
 * known). L and the filtered set are the same whatever order the rows come in.
 */
class BoundPass {
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
  visit({ t, qn, eq, D }: ScanNumbers, from: number, to: number, subset?: Int32Array): void {
    const { k, heap, scales, errs, hatNorms } = this
    let { size, root, m, cand } = this
    for (let i = from; i < to; i++) {
      const r = subset ? subset[i] : i
      const a = t * scales[r] * D[r]
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
}

/** Whether the first `dim` values of `a` and `b` are the same numbers (a NaN never is). */
function sameValues(a: Float64Array, b: Float64Array, dim: number): boolean {
  if (b.length < dim) return false
  for (let i = 0; i < dim; i++) if (a[i] !== b[i]) return false
  return true
}
