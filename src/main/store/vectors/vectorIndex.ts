/**
 * Stored vectors of one (owner type, model) in one contiguous Float32Array with
 * an id map. Rows are L2-normalised on load so cosine similarity is a dot
 * product.
 *
 * Two sources feed one index: the agent DB's embeddings and the workspace's
 * backfilled ones (`ws_embeddings`). A valid agent vector always wins: the
 * workspace only fills memories the agent left without a vector for the model,
 * so what the dense arm sees for an embedded memory is exactly what the agent
 * stored.
 *
 * Loaded lazily on first use, then kept in step cheaply:
 *  1. `PRAGMA data_version` (+ our own write counter) unchanged since the last
 *     check → nothing was committed: no SQL at all (microseconds);
 *  2. else the whole source's `count(*)` (smallest index) and `max(_rid)`
 *     (O(log n)) unchanged → nothing was added or removed;
 *  3. else read only rows with `_rid` above the last seen one, and check the
 *     accounting: the source's new count must equal old + appended. When it
 *     does not, rows were deleted (or replaced: INSERT OR REPLACE deletes the
 *     old row) somewhere; this model's own count tells whether any of *ours*
 *     went beyond the replacements just read — if so, reload from scratch.
 * Blind spots (documented, not guessed around): an in-place UPDATE of a vector
 * that keeps its rowid, and deleting the newest rows then inserting as many
 * with reused rowids between two checks, leave count and max(rowid) unchanged;
 * `Store.reloadVectors()` and reopening the DB pick those up (a workspace
 * snapshot, vectorCache.ts, is only used for a file whose size, mtime and inode
 * are unchanged, and only written from an index no incremental refresh touched).
 *
 * The matrix lives in WebAssembly memory when SIMD is available, so the dense
 * scan runs the SIMD kernel (dotKernel.ts) over it without a copy.
 *
 * Compact mode, for matrices of `VectorIndex.compactBytes` and more (a million
 * 768-d rows are 2.9 GiB): the float32 rows go to a file (rowFile.ts) and only
 * an int8 copy with per-row error bounds stays in memory (int8Scan.ts, a
 * quarter of the size). Where the index's owner can read a stored vector back by
 * its key (`rowSource`: the SQLite source reads the BLOB by rowid), a fresh load
 * writes no float32 rows at all: a row is read back from the DB when a search
 * rescores it, and made unit length again with the load's own float64 norm
 * (`exactNorms`), so the numbers are the same bit for bit. A stored vector whose
 * norm is no longer the loaded one was rewritten in place (the blind spot below):
 * the index says `stale` and its owner reloads it at the next use. Every number is still the float32 row's exact one:
 * `dot` reads the row back, and top-k searches rescore exactly every row the
 * int8 bound cannot rule out, so results are the same as the in-memory matrix
 * gives, ids, order and similarities. `data` is empty in compact mode: read
 * rows through `dot`, `rowVector`, `get`, `readRows`, `countAbove` and `compactTop`.
 *
 * First loads of large sources read the BLOBs in chunks of ~1,000 rows, one SQL
 * row per chunk (`group_concat` of the BLOBs + `json_group_array` of the ids),
 * through a short-lived memory-mapped connection: no per-row Buffer, so ~2×
 * faster than iterating rows. Each chunk's byte count is checked against the
 * sum of its row lengths; anything unusual (JSON text, wrong length) is read
 * row by row exactly as before.
 */
import { dotKernel, dotKernelAvailable, kernelModule, wasmMemory, WASM_MAX_PAGES, type DotAll, type WasmMemory } from './dotKernel'
import { Int8Index } from './int8Scan'
import { RowFile } from './rowFile'
import { sumOfSquares, unitRowFromStored } from './unitRow'
import { ScanPool } from './scanPool'
import os from 'node:os'
import path from 'node:path'
import type { MalformedCounts } from '../../../shared/types'

/** Row bit: the agent DB holds a valid vector for this id. */
export const HELD_AGENT = 1
/** Row bit: the workspace holds a (backfilled) vector for this id. */
export const HELD_WORKSPACE = 2
/** Tie keys of workspace rows sort after every agent row (a full load reads agent rows first). */
export const WS_KEY_OFFSET = 2 ** 52

export interface SourceState {
  /** change marker at the last check; null = not loaded */
  version: string | null
  /** the whole source (all models): row count and max `_rid` at the last check */
  total: number
  maxRid: number | null
  /** this (owner type, model)'s rows in the source, rejected ones included */
  rows: number
  /** ids whose row in this source was rejected (so a replacement of one is recognised) */
  rejected: Set<string>
}

const freshState = (): SourceState => ({ version: null, total: 0, maxRid: null, rows: 0, rejected: new Set() })

/** What the last refresh did (tests and benches read it). */
export type RefreshPath = 'unchanged' | 'stats' | 'append' | 'recount' | 'full' | 'cached'

const WASM_PAGE = 65536
const TEMP_SPILL = path.join(os.tmpdir(), 'recallscope-vectors')

export class VectorIndex {
  /**
   * Keep matrices in WebAssembly memory so the SIMD kernel (dotKernel.ts) can scan
   * them. Off, or where SIMD is unavailable: an ordinary Float32Array and the JS loop
   * (same numbers, slower). @default true when WebAssembly SIMD is available
   */
  static simd = dotKernelAvailable()
  /**
   * Matrices in shared WebAssembly memory (when the runtime has it), so the scan pool's
   * helper threads (scanPool.ts) read them in place. @default true where available
   */
  static shared = kernelModule(true) !== null
  /**
   * Scans of at least this many multiply-adds (rows × dim) are split across cores
   * (scanPool.ts); smaller ones stay on the calling thread, where waking a helper
   * costs more than it saves. bench/dense.ts measures the crossover: on 2 idle cores the pool
   * won at every size from 500 × 768 (1.94×; 1,000: 1.56×, 2,000: 1.41×, 4,000: 1.71×); on 2
   * busy cores (load 10+) it lost at 4,000 × 768 (0.71×) and won from 8,000 (1.17–1.31×). About
   * 1,300 rows at 768-d: small scans, where a helper that is slow to wake costs the most, stay here.
   */
  static parallelMin = 1_000_000
  /**
   * Matrices of at least this many bytes (rows × dim × 4) go compact: an int8 copy in memory, the
   * float32 rows in a file (see the module comment). @default 512 MiB (100k × 768 stays in memory)
   */
  static compactBytes = 512 * 2 ** 20
  /**
   * Compact rows of a fresh load are read back from the source when the index has a `rowSource`
   * (no float32 rows file is written). Off: they always go to the rows file (tests reach that path).
   * @default true
   */
  static rowsFromSource = true

  dim = 0
  count = 0
  /**
   * capacity × dim, unit-length rows (zero rows stay zero); rows ≥ count are unused.
   * A view: re-read it after the index changes (growth may move it).
   */
  data: Float32Array<ArrayBufferLike> = new Float32Array(0)
  /** original L2 norm of each row (0 for a zero vector) */
  norms = new Float32Array(0)
  /**
   * Tie-break key of each row: the agent row's `_rid`, or WS_KEY_OFFSET + the
   * workspace rowid. Equal similarities rank by key, so the order never depends
   * on the history of incremental refreshes (a full reload gives the same).
   */
  keys = new Float64Array(0)
  /** HELD_AGENT | HELD_WORKSPACE per row */
  held = new Uint8Array(0)
  ids: string[] = []
  rowOf = new Map<string, number>()
  readonly malformed: Pick<MalformedCounts, 'badVectorShape' | 'nonFiniteVector' | 'wrongDimension'> = {
    badVectorShape: 0,
    nonFiniteVector: 0,
    wrongDimension: 0,
  }
  /** per source: [agent, workspace] */
  readonly sync: [SourceState, SourceState] = [freshState(), freshState()]
  loadedAt = 0
  /** Where a compact index keeps its float32 rows: the workspace's vector folder (with its snapshots), else the OS temp folder. */
  private readonly spillDir: string
  /** Compact mode: the int8 copy searched in memory and the exact rows on disk (null: `data` holds the matrix). */
  private compactStore: { codes: Int8Index; rows: RowFile } | null = null
  /** a block of a load being quantised on the helper threads (queueBlock), joined by flushBlocks */
  private pendingBlock: {
    finish: () => { unit: Float32Array; ss: Float64Array }
    ids: string[]
    keys: ArrayLike<number>
    bit: number
    first: number
    reject: (i: number) => void
  } | null = null
  /**
   * Compact mode with a `rowSource`: each row's float64 norm as the load computed it (the unit row
   * is the stored vector times 1 / this), to make the row again from the stored vector, bit for bit.
   */
  exactNorms = new Float64Array(0)
  /**
   * A row read back from the source no longer has the norm it was loaded with (its vector was
   * rewritten in place, or removed): the owner must reload the index. The search that found it
   * used the stored vector as it is now.
   */
  stale = false
  /** Compact rows read back from the source: one by one (`dot`), and in batches (`dots`) with how many rows. */
  readonly sourceReads = { single: 0, batches: 0, batchedRows: 0 }
  /** one row read back from disk (compact mode) */
  private rowBuf = new Float32Array(0)
  /** a stored vector read back from the source whose bytes are not 4-aligned */
  private rawBuf = new Float32Array(0)
  private memory: WasmMemory | null = null
  private kernel: DotAll | null = null
  /** whether `memory` is shared (the pool can scan it) */
  private sharedMemory = false
  /** What the last refresh did and how long it took (ms). */
  last: { path: RefreshPath; ms: number } = { path: 'unchanged', ms: 0 }
  fullLoads = 0
  /**
   * The agent part is exactly a full load (or a restored snapshot of one) of the file:
   * no incremental refresh of the agent source since. Only then may a snapshot be written.
   */
  pristine = false
  /** valid rows of the matrix's length, and of every other length: the majority-dimension rule */
  dimRows = 0
  readonly lengths = new Map<number, number>()

  /**
   * `workspacePath`: the store's workspace, beside which a compact index keeps its rows (absent: the OS temp folder).
   * `rowSource(key)`: the stored vector (float32 BLOB, not unit length) of the row with this tie key,
   * or null when it is gone; compact rows of a fresh load are then read back through it instead of
   * being written to a file.
   * `rowSourceMany(keys)`: the same for many rows in one read (a search's rescored rows: one SQL statement
   * instead of one a row), each key's vector by key (absent: gone). Without it rows are read one by one.
   */
  constructor(
    readonly ownerType: 'memory' | 'session',
    readonly model: string,
    workspacePath?: string,
    private readonly rowSource: ((key: number) => Uint8Array | null) | null = null,
    private readonly rowSourceMany: ((keys: number[]) => Map<number, Uint8Array>) | null = null,
  ) {
    this.spillDir = workspacePath && path.isAbsolute(workspacePath) ? `${workspacePath}-vectors` : TEMP_SPILL
  }

  /** Forget everything (reload from scratch). */
  reset(): void {
    if (this.pendingBlock) this.flushBlocks() // the helpers must be done with the memory before it goes
    this.compactStore?.rows.close()
    this.compactStore = null
    this.dim = this.count = 0
    this.pristine = false
    this.memory = null
    this.kernel = null
    this.data = new Float32Array(0)
    this.norms = new Float32Array(0)
    this.keys = new Float64Array(0)
    this.held = new Uint8Array(0)
    this.ids = []
    this.rowOf = new Map()
    this.exactNorms = new Float64Array(0)
    this.stale = false
    this.lengths.clear()
    this.dimRows = 0
    this.sync[0] = freshState()
    this.sync[1] = freshState()
    this.malformed.badVectorShape = this.malformed.nonFiniteVector = this.malformed.wrongDimension = 0
  }

  /** Grow storage to hold `rows` rows (exact when the final count is known up front). */
  reserve(rows: number): void {
    this.ensureCapacity(rows, true)
  }

  private ensureCapacity(rows: number, exact = false): void {
    if (rows <= this.norms.length) return
    const cap = exact ? rows : Math.max(rows, this.norms.length * 2, 1024)
    if (!this.compactStore && this.dim > 0 && cap * this.dim * 4 >= VectorIndex.compactBytes) this.enterCompact(cap)
    if (this.compactStore) this.compactStore.codes.grow(cap)
    else this.growMatrix(cap)
    const n = new Float32Array(cap)
    n.set(this.norms.subarray(0, this.count))
    this.norms = n
    const k = new Float64Array(cap)
    k.set(this.keys.subarray(0, this.count))
    this.keys = k
    const h = new Uint8Array(cap)
    h.set(this.held.subarray(0, this.count))
    this.held = h
    if (this.compactStore?.rows.readsSource) {
      const e = new Float64Array(cap)
      e.set(this.exactNorms.subarray(0, Math.min(this.count, this.exactNorms.length)))
      this.exactNorms = e
    }
  }

  /**
   * Switch to compact mode with room for `cap` rows, moving the rows held so far. Where the
   * int8 scan cannot run (no WebAssembly SIMD, over 4 GiB of codes), the matrix stays in memory.
   */
  private enterCompact(cap: number): void {
    let codes: Int8Index
    try {
      codes = new Int8Index(cap, this.dim)
    } catch {
      return
    }
    let rows: RowFile
    const fromSource = this.rowSource && VectorIndex.rowsFromSource ? (r: number, out: Float32Array) => this.readSourceRow(r, out) : null
    try {
      rows = new RowFile(this.spillDir, this.dim, fromSource)
    } catch {
      try {
        rows = new RowFile(TEMP_SPILL, this.dim, fromSource) // the workspace folder cannot be written: the OS temp folder
      } catch {
        return
      }
    }
    const dim = this.dim
    for (let r = 0; r < this.count; r++) {
      rows.write(r, this.data, r * dim)
      codes.setRow(r, this.data, r * dim)
    }
    this.compactStore = { codes, rows }
    this.rowBuf = new Float32Array(dim)
    this.data = new Float32Array(0)
    this.memory = null
    this.kernel = null
  }

  /** Whether the index is compact (int8 in memory, float32 rows on disk). */
  get compact(): boolean {
    return this.compactStore !== null
  }

  /** A compact index's int8 copy (snapshots save and restore it), or null. */
  get int8(): Int8Index | null {
    return this.compactStore?.codes ?? null
  }

  /** Room for `cap` rows: WebAssembly memory grown in place when possible, else a new array and a copy. */
  private growMatrix(cap: number, scratchBytes = 0): void {
    const bytes = cap * this.dim * 4 + scratchBytes
    const pages = Math.max(1, Math.ceil(bytes / WASM_PAGE))
    if (VectorIndex.simd && pages <= WASM_MAX_PAGES) {
      try {
        if (!this.memory) {
          const shared = VectorIndex.shared
          const memory = wasmMemory(pages, shared)
          const kernel = dotKernel(memory, shared)
          if (kernel) {
            new Float32Array(memory.buffer, 0, this.count * this.dim).set(this.data.subarray(0, this.count * this.dim))
            this.memory = memory
            this.kernel = kernel
            this.sharedMemory = shared
          }
        } else if (this.memory.buffer.byteLength < pages * WASM_PAGE) {
          // Grows in place: rows already written stay where they are.
          this.memory.grow(pages - this.memory.buffer.byteLength / WASM_PAGE)
        }
        if (this.memory) {
          this.data = new Float32Array(this.memory.buffer, 0, cap * this.dim)
          return
        }
      } catch {
        // Out of address space for WebAssembly memory: fall through to an ordinary array.
      }
    }
    const d = new Float32Array(cap * this.dim)
    d.set(this.data.subarray(0, Math.min(this.count * this.dim, d.length)))
    this.data = d
    this.memory = null
    this.kernel = null
  }

  /**
   * Similarities of every row with a unit query through the SIMD kernel, into `out`
   * (the numbers dotRow gives). False when the kernel is not in use: the caller loops in JS.
   */
  dotAllInto(q: Float64Array, out: Float64Array): boolean {
    const at = this.kernelScratch(q)
    if (!at || !this.kernel || !this.memory) return false
    const n = this.count
    const dim = this.dim
    // Large scans on every core (same kernel per row, so the same numbers); small ones here.
    const pool = this.sharedMemory && n * dim >= VectorIndex.parallelMin ? ScanPool.get() : null
    const scan = { name: 'dotAll', data: 0, n, dim, q: at.qOff, out: at.outOff, rowBytes: dim * 4, outBytes: 8 } as const
    if (!pool?.scan(this.memory, this.kernel, scan)) this.kernel(0, n, dim, at.qOff, at.outOff)
    out.set(new Float64Array(this.memory.buffer, at.outOff, n))
    return true
  }

  /**
   * Similarities of listed rows through the SIMD kernel (dotRow's numbers): `out[i]` for each
   * `rows[i]` ≥ 0 (−1: skipped, left as is), one kernel call per run of consecutive rows — a
   * scope listed in storage order is mostly one run. False when the kernel is not in use.
   */
  dotRowsInto(rows: Int32Array, q: Float64Array, out: Float64Array): boolean {
    const at = this.kernelScratch(q)
    if (!at || !this.kernel || !this.memory) return false
    const dim = this.dim
    const res = new Float64Array(this.memory.buffer, at.outOff, this.count)
    for (let i = 0; i < rows.length;) {
      const r0 = rows[i]
      if (r0 < 0) {
        i++
        continue
      }
      let j = i + 1
      while (j < rows.length && rows[j] === r0 + (j - i)) j++
      this.kernel(r0 * dim * 4, j - i, dim, at.qOff, at.outOff)
      for (let k = i; k < j; k++) out[k] = res[k - i]
      i = j
    }
    return true
  }

  /** The kernel's scratch after the matrix's capacity (the query, then a result per row), with `q` written in; null without the kernel. */
  private kernelScratch(q: Float64Array): { qOff: number; outOff: number } | null {
    if (!this.kernel || !this.memory || q.length !== this.dim) return null
    const dim = this.dim
    const qOff = Math.ceil((this.norms.length * dim * 4) / 16) * 16
    const outOff = qOff + dim * 8
    const need = outOff + this.count * 8
    if (this.memory.buffer.byteLength < need) {
      this.growMatrix(this.norms.length, need - this.norms.length * dim * 4)
      if (!this.kernel || !this.memory) return null
    }
    new Float64Array(this.memory.buffer, qOff, dim).set(q)
    return { qOff, outOff }
  }

  /** Whether scans run through the WebAssembly SIMD kernel. */
  get simd(): boolean {
    return this.kernel !== null
  }

  /**
   * Insert or replace the vector of `id` from one source: `v[off .. off+dim)`,
   * not yet normalised. `row` is `rowOf.get(id)` (the caller has looked it up, or
   * knows the id is new). A workspace vector never replaces an agent one.
   * Returns a problem name instead of storing NaN/Infinity.
   */
  putFrom(id: string, v: Float32Array, off: number, key: number, bit: number, row: number | undefined): 'nonFiniteVector' | null {
    if (this.pendingBlock) this.flushBlocks()
    const dim = this.dim
    const end = off + dim
    const end4 = off + (dim & ~3)
    const s = sumOfSquares(v, off, dim)
    if (!Number.isFinite(s)) return 'nonFiniteVector'
    if (row === undefined) {
      row = this.count
      if (row >= this.norms.length) this.ensureCapacity(row + 1)
      this.count++
      this.ids[row] = id
      this.rowOf.set(id, row)
      this.held[row] = 0
    } else if (bit === HELD_WORKSPACE && this.held[row] & HELD_AGENT) {
      // Agent wins: remember the workspace has one too, keep the agent's numbers.
      this.held[row] |= HELD_WORKSPACE
      return null
    }
    this.held[row] |= bit
    this.keys[row] = key
    const norm = Math.sqrt(s)
    const inv = norm > 0 ? 1 / norm : 0
    const cs = this.compactStore
    // Compact: the unit row is built in one row's room, then stored (same float32 roundings).
    const data = cs ? this.rowBuf : this.data
    let o = cs ? 0 : row * dim
    let i = off
    for (; i < end4; i += 4, o += 4) {
      data[o] = v[i] * inv
      data[o + 1] = v[i + 1] * inv
      data[o + 2] = v[i + 2] * inv
      data[o + 3] = v[i + 3] * inv
    }
    for (; i < end; i++, o++) data[o] = v[i] * inv
    this.norms[row] = norm
    if (cs) {
      cs.rows.write(row, data)
      cs.codes.setRow(row, data)
    }
    return null
  }

  /**
   * A fresh load's block (compact mode): rows whose ids the index does not hold, `bytes` their raw
   * float32 vectors (ids.length × dim × 4, not yet unit length), quantised by the WebAssembly kernel on
   * the helper threads while the caller reads the next block (int8Scan.ts, startBlock); the rows join
   * the index when the next block comes or at `flushBlocks`. The numbers are putFrom's, bit for bit.
   * `reject(i)` is called for row i of the block when it is not finite (it is left out, as putFrom
   * leaves it). False: this path does not apply (an in-memory index, no kernel, no room): the caller
   * puts the rows one by one.
   */
  queueBlock(ids: string[], keys: ArrayLike<number>, bit: number, bytes: Uint8Array, reject: (i: number) => void): boolean {
    const cs = this.compactStore
    if (!cs) return false
    this.flushBlocks()
    const m = ids.length
    const first = this.count
    if (first + m > this.norms.length) return false
    const finish = cs.codes.startBlock(first, bytes, m)
    if (!finish) return false
    this.pendingBlock = { finish, ids, keys, bit, first, reject }
    return true
  }

  /** Add the rows of a block still being quantised (queueBlock): call before anything reads the index. */
  flushBlocks(): void {
    const b = this.pendingBlock
    const cs = this.compactStore
    if (!b || !cs) return
    this.pendingBlock = null
    const { unit, ss } = b.finish()
    const dim = this.dim
    let row = b.first
    // Read back from the source (nothing written), or written to the rows file.
    const fromSource = this.rowSource !== null && cs.rows.readsSource
    // the first rejected row: the kept rows after it move up one place per rejection before them
    let gapAt = -1
    for (let j = 0; j < b.ids.length; j++) {
      if (!Number.isFinite(ss[j])) {
        b.reject(j)
        if (gapAt < 0) gapAt = j
        continue
      }
      if (gapAt >= 0) {
        cs.codes.moveRow(b.first + j, row)
        if (!fromSource) cs.rows.write(row, unit, j * dim)
      }
      const id = b.ids[j]
      this.ids[row] = id
      this.rowOf.set(id, row)
      this.held[row] = b.bit
      this.keys[row] = b.keys[j]
      const norm = Math.sqrt(ss[j])
      this.norms[row] = norm
      if (fromSource) this.exactNorms[row] = norm
      row++
    }
    if (fromSource) cs.rows.markSource(b.first, row - b.first)
    else {
      // The rows before any gap are in place: one write.
      const inPlace = gapAt < 0 ? b.ids.length : gapAt
      if (inPlace > 0) cs.rows.writeRows(b.first, unit.subarray(0, inPlace * dim))
    }
    this.count = row
  }

  /**
   * Row `r`'s unit vector made again from its stored vector (rowSource): each value times 1 / the load's
   * float64 norm, rounded to float32, as putFrom and the quantiser made it. A stored vector gone or with
   * another norm marks the index stale (see the module comment) and is used as it is now.
   */
  private readSourceRow(r: number, out: Float32Array): void {
    this.sourceReads.single++
    if (this.rawBuf.length !== this.dim) this.rawBuf = new Float32Array(this.dim)
    if (!unitRowFromStored(this.rowSource!(this.keys[r]), this.exactNorms[r], out.subarray(0, this.dim), this.rawBuf)) this.stale = true
  }

  /** Row `row`'s exact similarity with unit query `q` (dotRow's number, whichever mode). */
  dot(row: number, q: Float64Array): number {
    const cs = this.compactStore
    return cs ? dotRow(cs.rows.read(row, this.rowBuf), 0, this.dim, q) : dotRow(this.data, row, this.dim, q)
  }

  /** Row `row`'s unit vector: a view of the matrix (do not mutate), or a copy read back in compact mode. */
  rowVector(row: number): Float32Array {
    const cs = this.compactStore
    return cs ? cs.rows.read(row, new Float32Array(this.dim)) : this.data.subarray(row * this.dim, (row + 1) * this.dim)
  }

  /**
   * Exact similarities of `rows` with unit query `q`: `dot`'s numbers, in the order of `rows`. A compact
   * index reads the rows it keeps in the source back in one batch (`rowSourceMany`): a search rescores
   * hundreds of rows, and one statement for all of them costs about half of one lookup a row.
   */
  dots(rows: ArrayLike<number>, q: Float64Array): Float64Array {
    const out = new Float64Array(rows.length)
    const cs = this.compactStore
    const many = this.rowSourceMany
    const batch: number[] = [] // positions in `rows` read back from the source together
    for (let i = 0; i < rows.length; i++) {
      if (cs && many && cs.rows.inSourceAt(rows[i])) batch.push(i)
      else out[i] = this.dot(rows[i], q)
    }
    if (batch.length === 0) return out
    const stored = many!(batch.map((i) => this.keys[rows[i]]))
    this.sourceReads.batches++
    this.sourceReads.batchedRows += batch.length
    if (this.rawBuf.length !== this.dim) this.rawBuf = new Float32Array(this.dim)
    const unit = this.rowBuf
    for (const i of batch) {
      const r = rows[i]
      // readSourceRow's numbers, from the batch's bytes
      if (!unitRowFromStored(stored.get(this.keys[r]) ?? null, this.exactNorms[r], unit, this.rawBuf)) this.stale = true
      out[i] = dotRow(unit, 0, this.dim, q)
    }
    return out
  }

  /** Exact scores of `rows` (ascending) with `q`; with `memo`, rows already rescored for this query are not read again. */
  private exactScores(q: Float64Array, memo?: Map<number, number>): (rows: Int32Array) => Float64Array {
    return (rows) => {
      if (!memo) return this.dots(rows, q)
      const out = new Float64Array(rows.length)
      const need: number[] = []
      const at: number[] = []
      for (let i = 0; i < rows.length; i++) {
        const s = memo.get(rows[i])
        if (s === undefined) {
          need.push(rows[i])
          at.push(i)
        } else out[i] = s
      }
      const got = this.dots(need, q)
      for (let j = 0; j < need.length; j++) {
        out[at[j]] = got[j]
        memo.set(need[j], got[j])
      }
      return out
    }
  }

  /**
   * Compact mode: the exact top `k` rows (of every row, or of `subset`) for unit query `q`,
   * ranked by similarity, then key, then row — the order topKRows gives over the full scan.
   * `memo`: exact scores of rows already rescored for this query (read, and added to): a search
   * for a larger k of the same query then reads only the new rows (and its scan is not run again).
   */
  compactTop(q: Float64Array, k: number, subset?: Int32Array, memo?: Map<number, number>): { rows: number[]; sims: number[] } {
    const codes = this.int8Searchable()
    if (!codes) throw new Error('compactTop on an in-memory index')
    const r = codes.search(q, k, this.keys, this.exactScores(q, memo), subset)
    return { rows: r.rows, sims: r.scores }
  }

  /** A compact index's int8 copy set to search rows [0, count), the rows gathered so far written out; null in memory. */
  private int8Searchable(): Int8Index | null {
    const cs = this.compactStore
    if (!cs) return null
    this.flushBlocks()
    cs.rows.flush()
    cs.codes.n = this.count
    return cs.codes
  }

  /**
   * How many rows (every row, or `subset`) have a similarity with `q` above `threshold`, ties
   * counting when the row is below `tieRow`. Exact in both modes.
   */
  countAbove(q: Float64Array, threshold: number, tieRow: number, subset?: ArrayLike<number>): number {
    const codes = this.int8Searchable()
    if (codes) return codes.countAbove(q, threshold, tieRow, this.exactScores(q), subset ? Int32Array.from(subset) : undefined)
    let n = 0
    const total = subset ? subset.length : this.count
    for (let i = 0; i < total; i++) {
      const r = subset ? subset[i] : i
      const x = dotRow(this.data, r, this.dim, q)
      if (x > threshold || (x === threshold && r < tieRow)) n++
    }
    return n
  }

  /** Rows [first, first + count) into `out` (count × dim unit values), from memory or disk. */
  readRows(first: number, count: number, out: Float32Array): void {
    const cs = this.compactStore
    if (cs) cs.rows.readRange(first, count, out)
    else out.set(this.data.subarray(first * this.dim, (first + count) * this.dim))
  }

  /**
   * Compact mode: serve rows [0, count) from a snapshot's float32 rows (`file` from byte `at`);
   * later writes go to the spill file. Their int8 copy is read or made separately.
   */
  attachRows(file: string, at: number, count: number): void {
    const cs = this.compactStore
    if (!cs) throw new Error('attachRows on an in-memory index')
    cs.rows.attachBase(file, at, count)
  }

  /** Compact mode with a row source: rows [0, count) are read back from it (a snapshot that stored none being restored). */
  attachSource(count: number): boolean {
    const cs = this.compactStore
    if (!cs?.rows.readsSource) return false
    cs.rows.attachSource(count)
    return true
  }

  /**
   * Where a compact index's rows are: 'all' read back from the source (a snapshot then stores `exactNorms`
   * instead of rows), 'some' (the others in the rows file), or 'none'.
   */
  get rowsFromSourceNow(): 'all' | 'some' | 'none' {
    const rows = this.compactStore?.rows
    return rows?.allInSource(this.count) ? 'all' : rows?.someInSource ? 'some' : 'none'
  }

  /** Whether every row is read back from the source. */
  get rowsInSource(): boolean {
    return this.rowsFromSourceNow === 'all'
  }

  /**
   * Compact mode: move the float32 rows file to `dest` (a snapshot's rows, no copy) when it holds
   * exactly rows [0, count); the index keeps reading it there. False: the caller copies them.
   */
  handOverRows(dest: string): boolean {
    return this.compactStore?.rows.handOver(dest, this.count) ?? false
  }

  /** Compact mode: wait until the float32 rows written so far are on disk (a snapshot is about to name their file). */
  async syncRows(): Promise<void> {
    await this.compactStore?.rows.sync()
  }

  /** Compact mode: make the int8 copy of rows first, first + 1, … from the float32 block `v` (a snapshot being restored). */
  quantizeRows(first: number, v: Float32Array): void {
    const cs = this.compactStore
    if (!cs) throw new Error('quantizeRows on an in-memory index')
    for (let r = 0; r * this.dim < v.length; r++) cs.codes.setRow(first + r, v, r * this.dim)
  }

  /** Insert or replace one decoded vector as an agent row (tests, tools). */
  put(id: string, v: Float32Array, key = this.count): void {
    if (this.dim === 0) this.dim = v.length
    this.putFrom(id, v, 0, key, HELD_AGENT, this.rowOf.get(id))
  }

  /** The unit vector of one id (a view, do not mutate), or null. */
  get(id: string): Float32Array | null {
    const row = this.rowOf.get(id)
    return row === undefined ? null : this.rowVector(row)
  }

  /** Rows whose vector came from the workspace (backfilled, no valid agent vector). */
  get backfilled(): number {
    let n = 0
    const h = this.held
    for (let r = 0; r < this.count; r++) if (h[r] === HELD_WORKSPACE) n++
    return n
  }

  /** Bytes held by the matrix (for RSS reports). */
  get bytes(): number {
    return (this.compactStore?.codes.bytes ?? 0) + this.data.byteLength + this.norms.byteLength + this.keys.byteLength + this.held.byteLength
  }
}

/** Dot product of row `row` with q (4 accumulators: ~2× a naive loop, same result on every path). */
export function dotRow(data: Float32Array, row: number, dim: number, q: Float64Array): number {
  const off = row * dim
  let s0 = 0
  let s1 = 0
  let s2 = 0
  let s3 = 0
  let i = 0
  for (; i + 3 < dim; i += 4) {
    s0 += data[off + i] * q[i]
    s1 += data[off + i + 1] * q[i + 1]
    s2 += data[off + i + 2] * q[i + 2]
    s3 += data[off + i + 3] * q[i + 3]
  }
  for (; i < dim; i++) s0 += data[off + i] * q[i]
  return s0 + s1 + (s2 + s3)
}
