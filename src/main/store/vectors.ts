/**
 * Stored vectors of one (owner type, model) in one contiguous Float32Array with
 * an id map. Rows are L2-normalised on load so cosine similarity is a dot
 * product. Loaded lazily on first use and refreshed incrementally: only rows
 * with `_rid` above the last seen one are read again.
 */
import type Database from 'better-sqlite3'
import { decodeVector, LITTLE_ENDIAN } from './decode'
import type { MalformedCounts } from '../../shared/types'

export class VectorIndex {
  dim = 0
  count = 0
  /** count × dim, unit-length rows (zero rows stay zero) */
  data = new Float32Array(0)
  /** original L2 norm of each row (0 for a zero vector) */
  norms = new Float32Array(0)
  ids: string[] = []
  rowOf = new Map<string, number>()
  maxRid = -Infinity
  /** rows seen in the source, including rejected ones (to detect deletions) */
  sourceRows = 0
  readonly malformed: Pick<MalformedCounts, 'badVectorShape' | 'nonFiniteVector' | 'wrongDimension'> = {
    badVectorShape: 0,
    nonFiniteVector: 0,
    wrongDimension: 0,
  }
  loadedAt = 0
  private bytesView: Uint8Array | null = null

  constructor(
    readonly ownerType: 'memory' | 'session',
    readonly model: string,
  ) {}

  /** Forget everything (the source lost rows: reload from scratch). */
  reset(): void {
    this.dim = this.count = this.sourceRows = 0
    this.data = new Float32Array(0)
    this.norms = new Float32Array(0)
    this.ids = []
    this.rowOf = new Map()
    this.maxRid = -Infinity
    this.malformed.badVectorShape = this.malformed.nonFiniteVector = this.malformed.wrongDimension = 0
  }

  /** Grow storage to hold `rows` rows (exact when the final count is known up front). */
  reserve(rows: number): void {
    this.ensureCapacity(rows, true)
  }

  private ensureCapacity(rows: number, exact = false): void {
    if (rows * this.dim <= this.data.length) return
    const cap = exact ? rows : Math.max(rows, Math.ceil(this.data.length / Math.max(1, this.dim)) * 2, 1024)
    const d = new Float32Array(cap * this.dim)
    d.set(this.data.subarray(0, this.count * this.dim))
    this.data = d
    const n = new Float32Array(cap)
    n.set(this.norms.subarray(0, this.count))
    this.norms = n
  }

  /** Insert or replace one decoded vector. */
  put(id: string, v: Float32Array): void {
    let row = this.rowOf.get(id)
    if (row === undefined) {
      row = this.count++
      this.ensureCapacity(this.count)
      this.ids[row] = id
      this.rowOf.set(id, row)
    }
    let s = 0
    for (let i = 0; i < v.length; i++) s += v[i] * v[i]
    const norm = Math.sqrt(s)
    const off = row * this.dim
    const inv = norm > 0 ? 1 / norm : 0
    for (let i = 0; i < v.length; i++) this.data[off + i] = v[i] * inv
    this.norms[row] = norm
  }

  /**
   * Insert or replace from a little-endian float32 BLOB of exactly `dim` floats,
   * without an intermediate array. Returns a problem name instead of storing a
   * vector with NaN/Infinity.
   */
  putBytes(id: string, bytes: Uint8Array): 'nonFiniteVector' | null {
    let row = this.rowOf.get(id)
    const isNew = row === undefined
    if (isNew) {
      row = this.count
      this.ensureCapacity(this.count + 1)
    }
    const dim = this.dim
    const off = row! * dim
    const data = this.data
    if (this.bytesView?.buffer !== data.buffer) this.bytesView = new Uint8Array(data.buffer)
    this.bytesView.set(bytes, off * 4)
    let s = 0
    const end = off + dim
    for (let i = off; i < end; i++) s += data[i] * data[i]
    if (!Number.isFinite(s)) {
      if (isNew) data.fill(0, off, end)
      return 'nonFiniteVector'
    }
    if (isNew) {
      this.count++
      this.ids[row!] = id
      this.rowOf.set(id, row!)
    }
    const norm = Math.sqrt(s)
    const inv = norm > 0 ? 1 / norm : 0
    for (let i = off; i < end; i++) data[i] *= inv
    this.norms[row!] = norm
    return null
  }

  /** The unit vector of one id (a view, do not mutate), or null. */
  get(id: string): Float32Array | null {
    const row = this.rowOf.get(id)
    return row === undefined ? null : this.data.subarray(row * this.dim, (row + 1) * this.dim)
  }

  /** Bytes held by the matrix (for RSS reports). */
  get bytes(): number {
    return this.data.byteLength + this.norms.byteLength
  }
}

export interface VectorSourceSql {
  /** SELECT _rid, owner_type, owner_id, model, dim, vector FROM … (canonical column names) */
  embeddings: string
  /** Model name to use when the source has none (Engram). */
  defaultModel: string | null
}

/**
 * Load (or top up) `idx` from the agent DB. Returns the number of rows read.
 * A source with fewer rows than before (deletions) triggers a full reload.
 */
export function refreshVectorIndex(db: Database.Database, src: VectorSourceSql, idx: VectorIndex): number {
  const modelExpr = src.defaultModel ? `coalesce(e.model, @defaultModel)` : 'e.model'
  const where = `e.owner_type = @ownerType AND ${modelExpr} = @model`
  const params = { ownerType: idx.ownerType, model: idx.model, defaultModel: src.defaultModel ?? '' }
  const stats = db.prepare(`SELECT count(*) AS n, max(e._rid) AS maxRid FROM (${src.embeddings}) e WHERE ${where}`).get(params) as {
    n: number
    maxRid: number | null
  }
  if (stats.n < idx.sourceRows) {
    // Rows were deleted: start over (rare; incremental refresh covers appends and replacements).
    idx.reset()
  }
  if (stats.maxRid === null || (idx.sourceRows > 0 && stats.maxRid <= idx.maxRid && stats.n === idx.sourceRows)) {
    idx.loadedAt = Date.now()
    return 0
  }
  if (idx.dim === 0) idx.dim = majorityDim(db, src, where, params)
  if (idx.dim === 0) return 0
  // Size the matrix once: the row count is known, so no doubling copies of a GB-sized array.
  idx.reserve(Math.max(stats.n, idx.count))
  const stmt = db
    .prepare(`SELECT e._rid, e.owner_id, e.vector FROM (${src.embeddings}) e WHERE ${where} AND e._rid > @after ORDER BY e._rid`)
    .raw(true)
  let read = 0
  const after = idx.sourceRows === 0 ? -1 : idx.maxRid
  for (const row of stmt.iterate({ ...params, after: Number.isFinite(after) ? after : -1 }) as Iterable<unknown[]>) {
    read++
    const rid = Number(row[0])
    if (rid > idx.maxRid) idx.maxRid = rid
    const raw = row[2]
    // Fast path: a float32 BLOB of the right size is copied straight into the matrix.
    if (raw instanceof Uint8Array && raw.byteLength === idx.dim * 4 && LITTLE_ENDIAN) {
      const problem = idx.putBytes(String(row[1]), raw)
      if (problem) idx.malformed[problem]++
      continue
    }
    const v = decodeVector(raw, idx.dim)
    if (typeof v === 'string') {
      idx.malformed[v]++
      continue
    }
    idx.put(String(row[1]), v)
  }
  idx.sourceRows = stats.n
  idx.loadedAt = Date.now()
  return read
}

/** The most common vector length for a model: the shape everyone else must match. */
function majorityDim(db: Database.Database, src: VectorSourceSql, where: string, params: Record<string, unknown>): number {
  // `dim` column when present; otherwise measure a sample of rows (JSON text or BLOB).
  const fromCol = db
    .prepare(`SELECT e.dim AS d, count(*) AS n FROM (${src.embeddings}) e WHERE ${where} AND e.dim IS NOT NULL GROUP BY e.dim ORDER BY n DESC LIMIT 1`)
    .get(params) as { d: number; n: number } | undefined
  if (fromCol && fromCol.d > 0) return Number(fromCol.d)
  const sample = db.prepare(`SELECT e.vector FROM (${src.embeddings}) e WHERE ${where} LIMIT 200`).pluck().all(params)
  const tally = new Map<number, number>()
  for (const raw of sample) {
    const v = decodeVector(raw, null)
    if (typeof v !== 'string') tally.set(v.length, (tally.get(v.length) ?? 0) + 1)
  }
  let best = 0
  let bestN = 0
  for (const [d, n] of tally) if (n > bestN) [best, bestN] = [d, n]
  return best
}

/** Cosine of a raw query vector against every row; returns similarities (length = idx.count). */
export function cosineAll(idx: VectorIndex, query: ArrayLike<number>, out?: Float32Array): Float32Array {
  const dim = idx.dim
  const sims = out && out.length >= idx.count ? out : new Float32Array(idx.count)
  let qn = 0
  for (let i = 0; i < dim; i++) qn += query[i] * query[i]
  qn = Math.sqrt(qn)
  if (qn === 0) return sims.fill(0, 0, idx.count)
  const q = new Float32Array(dim)
  for (let i = 0; i < dim; i++) q[i] = query[i] / qn
  const data = idx.data
  for (let r = 0, off = 0; r < idx.count; r++, off += dim) {
    let s = 0
    for (let i = 0; i < dim; i++) s += data[off + i] * q[i]
    sims[r] = s
  }
  return sims
}

/**
 * Indices of the k largest values among rows [0, n) accepted by `accept`,
 * best first (ties: lower row first). A bounded min-heap: O(n log k).
 */
export function topKRows(scores: ArrayLike<number>, n: number, k: number, accept?: (row: number) => boolean): number[] {
  if (k <= 0) return []
  const heap: number[] = [] // rows; heap[0] is the worst kept
  const worse = (a: number, b: number) => scores[a] < scores[b] || (scores[a] === scores[b] && a > b)
  const siftUp = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!worse(heap[i], heap[p])) break
      ;[heap[i], heap[p]] = [heap[p], heap[i]]
      i = p
    }
  }
  const siftDown = (i: number) => {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < heap.length && worse(heap[l], heap[m])) m = l
      if (r < heap.length && worse(heap[r], heap[m])) m = r
      if (m === i) break
      ;[heap[i], heap[m]] = [heap[m], heap[i]]
      i = m
    }
  }
  for (let row = 0; row < n; row++) {
    if (accept && !accept(row)) continue
    if (heap.length < k) {
      heap.push(row)
      siftUp(heap.length - 1)
    } else if (worse(heap[0], row)) {
      heap[0] = row
      siftDown(0)
    }
  }
  return heap.sort((a, b) => scores[b] - scores[a] || a - b)
}
