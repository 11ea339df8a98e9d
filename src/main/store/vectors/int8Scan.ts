/**
 * Exact dense top-k over a million rows without the float32 matrix in memory
 * (issue 13 goal 3): scan an int8 copy, then rescore exactly the few rows the
 * scan cannot rule out.
 *
 * Each unit row x (the float32 row the brute force reads) is kept as int8 codes
 * c with a per-row scale s = max|x| / 127, so x̂ = s·c, and two numbers:
 * e = ‖x − x̂‖ and h = ‖x̂‖. The query q (float64, unit) becomes int16 codes d
 * with one scale t (x̂·q̂ is then t·s times an exact integer dot product), q̂ = t·d,
 * and e_q = ‖q − q̂‖. For every row
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
 * The codes are kept as two planes (sixBit.ts): the top 6 bits of c + 128 packed
 * in (shared) WebAssembly memory, ¾ of the int8 bytes, which the scan reads on
 * every core (the scan pool, scanPool.ts), and the low 2 bits beside them. The
 * scan's approximation x̂6 = s·(4·hi + 1.5 − 128) has its own two numbers,
 * e6 = ‖x − x̂6‖ and h6 = ‖x̂6‖, so the same argument bounds every row's score
 * from the 6-bit sums; the rows that bound keeps (well under 1 % on isotropic
 * data) get their int8 codes back from both planes and the int8 bound above,
 * then the rows it keeps are rescored. Each step only drops rows that cannot be
 * in the top k, so the answer is unchanged. Rows needing a rescore are read by
 * the caller (from the DB or a file): `exact(rows)` returns their numbers.
 */
import { approx, BoundPass, reaching, sameValues, SLACK, type ScanNumbers } from './boundPass'
import { dotKernel, WASM_MAX_PAGES, wasmMemory, type DotAll, type WasmMemory } from './dotKernel'
import { ScanPool } from './scanPool'
import { packRow, sixFrom, unpackRow, width6 } from './sixBit'

const PAGE = 65536

/** What one search did. */
export interface Int8SearchResult {
  /** the top-k rows, best first (the brute force's order) */
  rows: number[]
  /** their exact scores */
  scores: number[]
  /** rows rescored exactly (the ones the int8 bound could not rule out) */
  rescored: number
  /** rows the 6-bit bound kept (their int8 bounds then computed) */
  kept6: number
  /**
   * ms spent: the 6-bit scan (all cores; with the bound pass over this thread's share of the rows, run as
   * it scans them), the rest of the bound passes and the int8 bound of the rows kept (this thread), the exact
   * rescoring (the caller's reads included)
   */
  timings: { scanMs: number; boundMs: number; rescoreMs: number }
}

export class Int8Index {
  /**
   * the int8 codes' row length where the quantiser writes them (before packing) and in snapshots written before the
   * planes: dim rounded up to 32, zero-padded
   */
  readonly stride: number
  /** the planes' padded width W (sixBit.ts): dim rounded up to 64 */
  readonly width: number
  /** bytes of a row in the 6-bit plane (3W/4) */
  private readonly hiBytes: number
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
  /** per-row ‖x − x̂6‖ (the 6-bit approximation, sixBit.ts) */
  errs6 = new Float64Array(0)
  /** per-row ‖x̂6‖ */
  hatNorms6 = new Float64Array(0)
  /** the 2-bit plane: W/4 bytes a row (the 6-bit plane is in `memory`, from byte 0) */
  lo = new Uint8Array(0)
  private readonly memory: WasmMemory
  private readonly kernel: DotAll
  /** the quantiser (startBlock), instantiated on first use */
  private quant: DotAll | null | undefined
  /** the packing kernel (startBlock; null: rows of codes are not the planes' width), instantiated on first use */
  private packer: DotAll | null | undefined
  private readonly shared: boolean
  private qOff = 0
  private outOff = 0
  /** int16 query codes: at most this, so an int32 row sum cannot overflow (127 · qMax · width < 2³¹) */
  private readonly qMax: number
  /**
   * The query whose 6-bit sums the scratch holds (a copy), for rows [0, n), with its numbers: a
   * search or count for the same query reuses them instead of scanning again (the dense arm
   * widening its k, a why-not after a recall). Dropped by anything that writes codes or moves the scratch.
   */
  private lastScan: { q: Float64Array; n: number; t: number; qn: number; eq: number; sumD: number } | null = null
  /** int8Numbers' table for the query codes in place (made on first use after a scan) */
  private loTable: { T: Int32Array; sumD: number } | null = null
  /** scans run so far (a search or count that reused the last one does not add; tests and benches read it) */
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
    this.width = width6(dim)
    this.hiBytes = (3 * this.width) / 4
    this.n = capacity
    this.shared = ScanPool.get() !== null
    this.memory = wasmMemory(this.pagesFor(capacity), this.shared)
    const k = dotKernel(this.memory, this.shared, 'dot6All')
    if (!k) throw new RangeError('WebAssembly SIMD is not available')
    this.kernel = k
    this.qMax = Math.min(32767, Math.floor((2 ** 31 - 1) / (127 * this.width)))
    this.grow(capacity)
  }

  private pagesFor(capacity: number): number {
    const pages = Math.ceil((capacity * this.hiBytes + this.width * 2 + capacity * 4) / PAGE)
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
    const more = <T extends Float32Array | Float64Array | Uint8Array>(old: T, make: (n: number) => T, per = 1): T => {
      const a = make(capacity * per)
      a.set(old.subarray(0, keep * per))
      return a
    }
    this.scales = more(this.scales, (n) => new Float32Array(n))
    this.errs = more(this.errs, (n) => new Float64Array(n))
    this.hatNorms = more(this.hatNorms, (n) => new Float64Array(n))
    this.errs6 = more(this.errs6, (n) => new Float64Array(n))
    this.hatNorms6 = more(this.hatNorms6, (n) => new Float64Array(n))
    this.lo = more(this.lo, (n) => new Uint8Array(n), this.width / 4)
    this.capacity = capacity
    this.lastScan = null
    // The scratch after the 6-bit plane: the query codes, then one int32 sum per row.
    this.qOff = capacity * this.hiBytes
    this.outOff = this.qOff + this.width * 2
  }

  /** Bytes held (the two planes and the per-row numbers). */
  get bytes(): number {
    const perRow = [this.scales, this.errs, this.hatNorms, this.errs6, this.hatNorms6, this.lo]
    return this.memory.buffer.byteLength + perRow.reduce((s, a) => s + a.byteLength, 0)
  }

  /** Where the scratch past the per-row sums starts (a block's rows). */
  private get freeAt(): number {
    return Math.ceil((this.outOff + this.capacity * 4) / 16) * 16
  }

  /** Room in memory up to byte `end`; false past 4 GiB. */
  private room(end: number): boolean {
    const need = Math.ceil(end / PAGE)
    const have = this.memory.buffer.byteLength / PAGE
    if (need > WASM_MAX_PAGES) return false
    if (need > have) this.memory.grow(need - have)
    return true
  }

  /** Row `r`'s numbers from the quantiser's sums (`sums`: e², h², X, Y, Z, see sixFrom); its scale already set. */
  private setNumbers(r: number, sums: ArrayLike<number>): void {
    const [e2, h2, X, Y, Z] = [sums[0], sums[1], sums[2], sums[3], sums[4]]
    this.errs[r] = Math.sqrt(e2)
    this.hatNorms[r] = Math.sqrt(h2)
    const { e6, h6 } = sixFrom(e2, h2, this.scales[r], X, Y, Z)
    this.errs6[r] = e6
    this.hatNorms6[r] = h6
  }

  /** Row `r`'s planes from its int8 codes (`codes` at `at`). */
  private pack(r: number, codes: ArrayLike<number>, at: number): void {
    packRow(codes, at, this.dim, new Uint8Array(this.memory.buffer), r * this.hiBytes, this.lo, (r * this.width) / 4)
  }

  /**
   * Rows first … first+m−1's planes from their int8 codes at `codesAt` (`stride` apart): the packing kernel when a
   * row of codes is exactly the planes' width (then its 2-bit rows through the scratch at `loAt`), else packRow.
   */
  private packBlock(first: number, m: number, codesAt: number, loAt: number): void {
    const lb = this.width / 4
    this.packer ??= this.stride === this.width ? dotKernel(this.memory, this.shared, 'pack6') : null
    if (this.packer) {
      this.packer(codesAt, m, this.width, first * this.hiBytes, loAt)
      this.lo.set(new Uint8Array(this.memory.buffer, loAt, m * lb), first * lb)
    } else {
      const codes = new Int8Array(this.memory.buffer)
      for (let j = 0; j < m; j++) this.pack(first + j, codes, codesAt + j * this.stride)
    }
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
    const codes = new Int8Array(dim)
    // e², h², X, Y, Z (sixFrom), four sums each
    const sums = Array.from({ length: 5 }, () => [0, 0, 0, 0])
    const dim4 = dim & ~3
    for (let i = 0; i < dim; i++) {
      const x = v[off + i]
      const c = s > 0 ? Math.max(-127, Math.min(127, Math.round(x / s))) : 0
      codes[i] = c
      const xh = s * c
      const L = (c & 3) - 1.5 // ((c + 128) mod 4) − 1.5
      // element i in sum i mod 4, the remainder (past the last full four) in sum 0
      const k = i < dim4 ? i & 3 : 0
      sums[0][k] += (x - xh) * (x - xh)
      sums[1][k] += xh * xh
      sums[2][k] += (x - xh) * L
      sums[3][k] += xh * L
      sums[4][k] += L * L
    }
    this.scales[r] = s
    this.setNumbers(
      r,
      sums.map(([a, b, c, d]) => a + b + (c + d)),
    )
    this.pack(r, codes, 0)
  }

  /**
   * Row `r`'s planes from its int8 codes (`codes` at `at`: an older snapshot's), its scale and int8 error already
   * set. h6 is exact; e6 is bounded: x − x̂6 = (x − x̂) + s·(lo − 1.5), so ‖x − x̂6‖ ≤ e + s·‖lo − 1.5‖ (the
   * unit row, which would give it exactly, is not in memory).
   */
  setCodes(r: number, codes: Int8Array, at: number): void {
    const s = this.scales[r]
    this.lastScan = null
    this.pack(r, codes, at)
    let l2 = 0
    let h2 = 0
    for (let i = 0; i < this.dim; i++) {
      const u = codes[at + i] + 128
      l2 += ((u & 3) - 1.5) ** 2
      h2 += (s * (4 * (u >> 2) - 126.5)) ** 2
    }
    this.errs6[r] = this.errs[r] + s * Math.sqrt(l2)
    this.hatNorms6[r] = Math.sqrt(h2)
  }

  /**
   * Start making rows first … first+m−1 from `m` raw float32 rows (`bytes`: m × dim × 4, not yet unit
   * length) with the quantiser kernel, on the helper threads when there are any (the caller is free
   * until it calls the finish; one block at a time). The finish waits, sets the rows' scale, bounds and
   * planes and returns per row its unit float32 row (`unit`, m × dim, VectorIndex.putFrom's numbers) and its
   * sum of squares (`ss`: not finite for a row that must be rejected — its slot then holds garbage the
   * caller overwrites). The views are valid until the next block. null: no kernel (WebAssembly SIMD
   * unavailable) or no room: the caller quantises row by row (putFrom + setRow, the same numbers).
   */
  startBlock(first: number, bytes: Uint8Array, m: number): (() => { unit: Float32Array; ss: Float64Array }) | null {
    const dim = this.dim
    const stride = this.stride
    if (m <= 0 || first + m > this.capacity || bytes.byteLength !== m * dim * 4) return null
    this.quant ??= dotKernel(this.memory, this.shared, 'quantI8')
    const quant = this.quant
    if (!quant) return null
    this.lastScan = null
    const at = this.freeAt
    const outAt = at + m * dim * 4
    const codesAt = outAt + m * 56
    const loAt = codesAt + m * stride
    if (!this.room(loAt + (m * this.width) / 4)) return null
    // the codes past dim stay 0 (the quantiser writes dims [0, dim) only; the packing kernel reads whole rows)
    if (dim < stride) new Uint8Array(this.memory.buffer, codesAt, m * stride).fill(0)
    const copyIn = () => new Uint8Array(this.memory.buffer, at, bytes.byteLength).set(bytes)
    copyIn()
    const req = { name: 'quantI8', data: at, n: m, dim, q: codesAt, out: outAt, rowBytes: dim * 4, outBytes: 56, qBytes: stride } as const
    const pool = this.shared ? ScanPool.get() : null
    let finish = pool?.start(this.memory, quant, req) ?? null
    if (!finish) {
      quant(at, m, dim, codesAt, outAt)
      finish = () => true
    }
    return () => {
      if (!finish()) {
        // A helper died mid-block: the rows done so far are unit rows already; start again from the raw ones.
        copyIn()
        quant(at, m, dim, codesAt, outAt)
      }
      // per row [ss, s, e², h², X, Y, Z]
      const out = new Float64Array(this.memory.buffer, outAt, m * 7)
      const ss = new Float64Array(m)
      for (let j = 0; j < m; j++) {
        const r = first + j
        ss[j] = out[7 * j]
        this.scales[r] = out[7 * j + 1]
        this.setNumbers(r, out.subarray(7 * j + 2, 7 * j + 7))
      }
      this.packBlock(first, m, codesAt, loAt)
      return { unit: new Float32Array(this.memory.buffer, at, m * dim), ss }
    }
  }

  /** Move row `from`'s codes and numbers to row `to` (a block closing the gap a rejected row left). */
  moveRow(from: number, to: number): void {
    const hb = this.hiBytes
    const lb = this.width / 4
    this.lastScan = null
    new Uint8Array(this.memory.buffer).copyWithin(to * hb, from * hb, (from + 1) * hb)
    this.lo.copyWithin(to * lb, from * lb, (from + 1) * lb)
    for (const a of [this.scales, this.errs, this.hatNorms, this.errs6, this.hatNorms6]) a[to] = a[from]
  }

  /**
   * The query's int16 codes and the 6-bit scan of rows [0, n) on every core: each row's approximate
   * score is t · scales[r] · (4 · D[r] − 126.5 · Σ d) within ± (qn · errs6[r] + eq · hatNorms6[r] + SLACK).
   */
  private scanQuery(q: Float64Array, onMine?: (s: ScanNumbers, from: number, count: number) => void): ScanNumbers {
    const { n, dim, width } = this
    const D = new Int32Array(this.memory.buffer, this.outOff, n)
    const numbers = (t: number, qn: number, eq: number, sumD: number): ScanNumbers => ({ t, qn, eq, D, mul: 4, off: -126.5 * sumD, pos: false })
    const last = this.lastScan
    if (last && last.n === n && sameValues(last.q, q, dim)) return numbers(last.t, last.qn, last.eq, last.sumD)
    const qc = new Int16Array(this.memory.buffer, this.qOff, width)
    qc.fill(0)
    const { t, qn, eq, sumD } = this.codeQuery(q, qc)
    this.scans++
    this.loTable = null
    const s = numbers(t, qn, eq, sumD)
    const pool = this.shared && n > 0 ? ScanPool.get() : null
    const scan = { name: 'dot6All', data: 0, n, dim: width, q: this.qOff, out: this.outOff, rowBytes: this.hiBytes, outBytes: 4 } as const
    const mine = onMine && ((from: number, count: number) => onMine(s, from, count))
    if (n > 0 && !pool?.scan(this.memory, this.kernel, scan, mine)) this.kernel(0, n, width, this.qOff, this.outOff)
    this.lastScan = { q: Float64Array.from(q.subarray(0, dim)), n, t, qn: s.qn, eq: s.eq, sumD }
    return s
  }

  /**
   * Unit query `q` as int16 codes d (written into `d`, dims [0, dim)) with one scale t (q̂ = t·d), and its numbers:
   * ‖q‖, e_q = ‖q − q̂‖ and Σ d.
   */
  private codeQuery(q: Float64Array, d: Int16Array): { t: number; qn: number; eq: number; sumD: number } {
    const dim = this.dim
    let qmax = 0
    let qn2 = 0
    for (let i = 0; i < dim; i++) {
      qmax = Math.max(qmax, Math.abs(q[i]))
      qn2 += q[i] * q[i]
    }
    const t = qmax / this.qMax
    let eq2 = 0
    let sumD = 0
    for (let i = 0; i < dim; i++) {
      const c = t > 0 ? Math.round(q[i] / t) : 0
      d[i] = c
      sumD += c
      eq2 += (q[i] - t * c) ** 2
    }
    return { t, qn: Math.sqrt(qn2), eq: Math.sqrt(eq2), sumD }
  }

  /**
   * The int8 numbers of listed rows, after scanQuery (its query codes d and 6-bit sums D6 in place): a row's
   * int8 sum is Σ d·c = 4·D6 + Σ d·lo − 128·Σ d (c = 4·hi + lo − 128), its middle sum read from the 2-bit plane
   * through a table of each lo byte's 256 values (4 dims a byte). D by place in `rows`.
   */
  private int8Numbers(s: ScanNumbers, rows: Int32Array): ScanNumbers {
    const qw = this.width / 4
    const { T, sumD } = (this.loTable ??= this.makeLoTable())
    // the plane read 4 bytes at a time (a row's W/4 bytes are a multiple of 16), the first byte the low one
    // (little-endian, as every typed-array view of the kernels' memory here assumes)
    const lo32 = new Uint32Array(this.lo.buffer, this.lo.byteOffset, this.lo.length >> 2)
    const qw4 = qw >> 2
    const D6 = s.D
    const D = new Int32Array(rows.length)
    for (let j = 0; j < rows.length; j++) {
      const r = rows[j]
      const at = r * qw4
      let L = 0
      for (let i = 0, t = 0; i < qw4; i++, t += 1024) {
        const w = lo32[at + i]
        L += T[t | (w & 255)] + T[(t + 256) | ((w >>> 8) & 255)] + T[(t + 512) | ((w >>> 16) & 255)] + T[(t + 768) | (w >>> 24)]
      }
      D[j] = 4 * D6[r] + L - 128 * sumD
    }
    return { t: s.t, qn: s.qn, eq: s.eq, D, mul: 1, off: 0, pos: true }
  }

  /** The table of int8Numbers for the query codes in place: per 2-bit byte i and value b, Σ d·lo of its 4 dims. */
  private makeLoTable(): { T: Int32Array; sumD: number } {
    const qw = this.width / 4
    const d = new Int16Array(this.memory.buffer, this.qOff, this.width)
    const T = new Int32Array(qw * 256)
    let sumD = 0
    for (let i = 0; i < qw; i++) {
      const [d0, d1, d2, d3] = [d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]]
      sumD += d0 + d1 + d2 + d3
      for (let b = 0; b < 256; b++) T[(i << 8) | b] = d0 * (b & 3) + d1 * ((b >> 2) & 3) + d2 * ((b >> 4) & 3) + d3 * (b >> 6)
    }
    return { T, sumD }
  }

  /** The int8 sums Σ d·c of listed rows for unit query `q`, as search and countAbove compute them (tests check them). */
  int8Sums(q: Float64Array, rows: Int32Array): Int32Array {
    return this.int8Numbers(this.scanQuery(q), rows).D
  }

  /**
   * Of the rows the 6-bit bound keeps (`kept6`, its k-th largest lower end L6), the ones the int8 bound keeps,
   * ascending. The int8 sums go first to the rows whose 6-bit lower end reaches L6 (at least k: L6 is the k-th
   * largest); their k-th largest int8 lower end is a floor at least k rows reach, so a kept row whose 6-bit
   * upper end is below it cannot be in the top k, and only the others get their int8 sums.
   */
  private int8Kept(s6: ScanNumbers, kept6: Int32Array, L6: number, k: number): Int32Array {
    const { scales, errs, hatNorms, errs6, hatNorms6 } = this
    const a6 = (r: number) => approx(s6, scales[r], s6.D[r])
    const b6 = (r: number) => s6.qn * errs6[r] + s6.eq * hatNorms6[r] + SLACK
    const pass8 = (rows: Int32Array) => {
      const n8 = this.int8Numbers(s6, rows)
      const p = new BoundPass(k, scales, errs, hatNorms)
      p.visit(n8, 0, rows.length, rows)
      return { p, n8 }
    }
    const floor = pass8(kept6.filter((r) => a6(r) - b6(r) >= L6)).p.root
    const rest = reaching(s6, floor, kept6, scales, errs6, hatNorms6, false)
    const { p, n8 } = pass8(rest)
    return p.kept(n8, rest)
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
    if (k <= 0) return { rows: [], scores: [], rescored: 0, kept6: 0, timings: { scanMs: 0, boundMs: 0, rescoreMs: 0 } }
    const t0 = performance.now()
    // The 6-bit bound pass runs over the rows this thread scanned as soon as it has scanned them,
    // while the helpers still scan theirs (the pass's answer does not depend on the order it sees rows in).
    const pass = new BoundPass(k, this.scales, this.errs6, this.hatNorms6)
    const seen: number[] = [] // [from, count] of the ranges passed over during the scan
    const numbers = this.scanQuery(
      q,
      subset
        ? undefined
        : (s, from, count) => {
            pass.visit(s, from, from + count)
            seen.push(from, count)
          },
    )
    const t1 = performance.now()
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
    // The rows the 6-bit bound keeps, then of them the rows the int8 bound keeps.
    const kept6 = pass.kept(numbers)
    const rows = this.int8Kept(numbers, kept6, pass.root, k)
    const m = rows.length
    const t2 = performance.now()
    const sc = exact(rows)
    const order = Array.from({ length: m }, (_, i) => i)
    order.sort((a, b) => sc[b] - sc[a] || keys[rows[a]] - keys[rows[b]] || rows[a] - rows[b])
    const top = order.slice(0, k)
    const timings = { scanMs: t1 - t0, boundMs: t2 - t1, rescoreMs: performance.now() - t2 }
    return { rows: top.map((i) => rows[i]), scores: top.map((i) => sc[i]), rescored: m, kept6: kept6.length, timings }
  }

  /**
   * How many rows (of [0, n), or of `subset`) score above `threshold` for unit query `q`,
   * a row scoring exactly `threshold` counting when it is below `tieRow`. Exact: rows whose
   * 6-bit bounds straddle the threshold get their int8 bounds, rows whose int8 bounds straddle it are
   * rescored through `exact` (rows ascending).
   */
  countAbove(q: Float64Array, threshold: number, tieRow: number, exact: (rows: Int32Array) => ArrayLike<number>, subset?: Int32Array): number {
    const total = subset ? subset.length : this.n
    if (total === 0) return 0
    const s6 = this.scanQuery(q)
    let above = 0
    // rows above for sure, and the rows left unsure, by one approximation
    const sort = (s: ScanNumbers, errs: Float64Array, hatNorms: Float64Array, count: number, rowAt: (i: number) => number): number[] => {
      const unsure: number[] = []
      for (let i = 0; i < count; i++) {
        const r = rowAt(i)
        const a = approx(s, this.scales[r], s.D[s.pos ? i : r])
        const b = s.qn * errs[r] + s.eq * hatNorms[r] + SLACK
        if (a - b > threshold) above++
        else if (a + b >= threshold) unsure.push(r)
      }
      return unsure
    }
    const unsure6 = Int32Array.from(sort(s6, this.errs6, this.hatNorms6, total, (i) => (subset ? subset[i] : i))).sort()
    const n8 = this.int8Numbers(s6, unsure6)
    const rows = Int32Array.from(sort(n8, this.errs, this.hatNorms, unsure6.length, (i) => unsure6[i]))
    const sc = exact(rows)
    for (let i = 0; i < rows.length; i++) if (sc[i] > threshold || (sc[i] === threshold && rows[i] < tieRow)) above++
    return above
  }

  /**
   * The planes' bytes for rows [0, n) (views, do not keep across growth): the 6-bit plane (n × 3W/4) and the
   * 2-bit plane (n × W/4), read, or filled by a snapshot restore.
   */
  planes(): { hi: Uint8Array; lo: Uint8Array } {
    this.lastScan = null // the caller may fill them
    return { hi: new Uint8Array(this.memory.buffer, 0, this.n * this.hiBytes), lo: this.lo.subarray(0, (this.n * this.width) / 4) }
  }

  /**
   * Row `r`'s score bounds for query `q` as `search` uses them, the int8 ones (lo, hi) and the 6-bit ones
   * (lo6, hi6); tests check that they hold. Plain loops over the row's codes, no kernel.
   */
  boundsOf(q: Float64Array, r: number): { lo: number; hi: number; lo6: number; hi6: number } {
    const d = new Int16Array(this.dim)
    const { t, qn, eq } = this.codeQuery(q, d)
    const codes = new Int8Array(this.dim)
    unpackRow(new Uint8Array(this.memory.buffer), r * this.hiBytes, this.lo, (r * this.width) / 4, this.dim, codes, 0)
    let d8 = 0
    let d6 = 0
    for (let i = 0; i < this.dim; i++) {
      d8 += d[i] * codes[i]
      d6 += d[i] * (4 * ((codes[i] + 128) >> 2) - 126.5)
    }
    const a = t * this.scales[r] * d8
    const b = qn * this.errs[r] + eq * this.hatNorms[r] + SLACK
    const a6 = t * this.scales[r] * d6
    const b6 = qn * this.errs6[r] + eq * this.hatNorms6[r] + SLACK
    return { lo: a - b, hi: a + b, lo6: a6 - b6, hi6: a6 + b6 }
  }
}
