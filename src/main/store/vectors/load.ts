/**
 * Loading and refreshing a VectorIndex from SQL sources (the agent DB's embeddings
 * and the workspace's backfilled ones): the rules are in vectorIndex.ts's header.
 * A big fresh load into a compact index reads its chunks on reader threads
 * (chunkReader.ts, disjoint `_rid` ranges, one snapshot) while this thread and the
 * scan pool quantise the previous ones.
 */
import os from 'node:os'
import type Database from 'better-sqlite3'
import { decodeVector, LITTLE_ENDIAN } from '../decode'
import { ChunkReaderFailed, startChunkReaders, type ChunkRow, type ReaderFile } from './chunkReader'
import { HELD_AGENT, HELD_WORKSPACE, WS_KEY_OFFSET, VectorIndex, type RefreshPath, type SourceState } from './vectorIndex'

export interface VectorSourceSql {
  /** SELECT _rid, owner_type, owner_id, model, dim, vector FROM … (canonical column names) */
  embeddings: string
  /** Model name to use when the source has none (Engram). */
  defaultModel: string | null
}

/** One place vectors come from. */
export interface VectorSource extends VectorSourceSql {
  /** HELD_AGENT (wins) or HELD_WORKSPACE */
  bit: typeof HELD_AGENT | typeof HELD_WORKSPACE
  db: Database.Database
  /**
   * Changes whenever the rows may have changed: PRAGMA data_version (other
   * connections' commits) plus a counter of our own writes through `db`.
   */
  version(): string
  /** A (owner type, owner id, model) appears at most once, so a new row for a known id replaced the old one. */
  unique: boolean
  /**
   * A fresh read-only connection for a big first load, memory-mapped unless `mmap` is false; closed
   * after use. null: use `db`.
   */
  openBulk?: (opts: { mmap: boolean }) => Database.Database | null
  /**
   * The file a reader thread may open for a big first load (chunkReader.ts): set only where a plain
   * read-only connection reads the source as `db` does (no attached files, no extension). Absent: in-thread.
   */
  readerFile?: ReaderFile
}

export interface RefreshOptions {
  /** First loads of at least this many rows use the bulk connection. @default 50,000 */
  bulkMinRows?: number
  /** Rows per chunk of the chunked BLOB read. @default 1024 (fewer for wide vectors: ≤ 16 MB a chunk) */
  chunkRows?: number
  /** Read in chunks at all (off: row by row, the reference path the tests compare against). @default true */
  chunked?: boolean
  /** A big compact first load reads its chunks on threads of their own (chunkReader.ts) when the source allows. @default true */
  threaded?: boolean
  /**
   * Reader threads of such a load, on disjoint `_rid` ranges: the SQL read is about half of a million-row
   * load's CPU, so one reader would be the load's critical path on two cores. @default 2 (1 on one core)
   */
  readers?: number
}

/** Loads that read their chunks on reader threads so far, and how many readers the last one used (tests check the path is taken). */
export const loadCounts = { threaded: 0, readers: 0 }

const bitSlot = (bit: number) => (bit === HELD_AGENT ? 0 : 1)

/**
 * Bring `idx` up to date with its sources (agent first: it wins). Cheap when
 * nothing changed; see the module comment for the rules. Returns what it did.
 */
export function refreshVectorIndex(idx: VectorIndex, sources: VectorSource[], opts: RefreshOptions = {}): RefreshPath {
  const t0 = performance.now()
  let path: RefreshPath = 'unchanged'
  const loaded = sources.every((s) => idx.sync[bitSlot(s.bit)].version !== null)
  if (!loaded) {
    path = fullLoad(idx, sources, opts)
  } else {
    for (const src of sources) {
      const r = topUp(idx, src)
      if (src.bit === HELD_AGENT && r !== 'unchanged') idx.pristine = false
      if (r === 'reload') {
        path = fullLoad(idx, sources, opts)
        break
      }
      if (rank(r) > rank(path)) path = r
    }
  }
  idx.loadedAt = Date.now()
  idx.last = { path, ms: performance.now() - t0 }
  return path
}

const ORDER: RefreshPath[] = ['unchanged', 'stats', 'append', 'recount', 'full', 'cached']
const rank = (p: RefreshPath) => ORDER.indexOf(p)

function modelFilter(src: VectorSourceSql, idx: VectorIndex): { where: string; params: Record<string, unknown> } {
  const modelExpr = src.defaultModel ? `coalesce(e.model, @defaultModel)` : 'e.model'
  return {
    where: `e.owner_type = @ownerType AND ${modelExpr} = @model`,
    params: { ownerType: idx.ownerType, model: idx.model, defaultModel: src.defaultModel ?? '' },
  }
}

/** count(*) and max(_rid) of the whole source, as two queries: together SQLite would scan the table. */
function sourceStats(db: Database.Database, src: VectorSourceSql): { n: number; r: number | null } {
  const n = db.prepare(`SELECT count(*) FROM (${src.embeddings})`).pluck().get() as number
  const r = db.prepare(`SELECT max(_rid) FROM (${src.embeddings})`).pluck().get() as number | null
  return { n, r: r === null ? null : Number(r) }
}

/** Run `fn` inside one read transaction, so every query sees the same snapshot. */
function inSnapshot<T>(db: Database.Database, fn: () => T): T {
  if (db.inTransaction) return fn()
  db.exec('BEGIN')
  try {
    return fn()
  } finally {
    if (db.inTransaction) db.exec('COMMIT')
  }
}

interface ApplyStats {
  read: number
  /** rows for ids this source already had (a replacement) */
  replaced: number
  /** a known valid vector was replaced by a rejected row: the old one must go */
  mustReload: boolean
}

/**
 * Apply one source row to the index (shared by every read path). `fresh`: the
 * index is known not to hold this id (first source of a full load, unique keys),
 * which saves a Map lookup per row on a million-row load.
 */
function applyRow(
  idx: VectorIndex,
  src: VectorSource,
  st: SourceState,
  rid: number,
  id: string,
  raw: unknown,
  acc: ApplyStats,
  f: Float32Array | null,
  off: number,
  fresh: boolean,
): void {
  acc.read++
  const row = fresh ? undefined : idx.rowOf.get(id)
  const hadValid = row !== undefined && (idx.held[row] & src.bit) !== 0
  const hadRejected = st.rejected.size > 0 && st.rejected.has(id)
  if (hadValid || hadRejected) acc.replaced++
  const key = src.bit === HELD_AGENT ? rid : WS_KEY_OFFSET + rid
  let problem: 'badVectorShape' | 'nonFiniteVector' | 'wrongDimension' | null
  if (f) {
    idx.dimRows++
    problem = idx.putFrom(id, f, off, key, src.bit, row)
  } else {
    const v = decodeVector(raw, null)
    if (typeof v === 'string') problem = v
    else if (v.length !== idx.dim) {
      idx.lengths.set(v.length, (idx.lengths.get(v.length) ?? 0) + 1)
      problem = 'wrongDimension'
    } else {
      idx.dimRows++
      problem = idx.putFrom(id, v, 0, key, src.bit, row)
    }
  }
  if (problem) {
    idx.malformed[problem]++
    st.rejected.add(id)
    // A valid vector replaced by a bad row must disappear; only a reload removes rows.
    if (hadValid) acc.mustReload = true
  } else if (hadRejected) st.rejected.delete(id)
}

/** `_rid` below every real one: "no lower bound". */
const NO_RID = Number.MIN_SAFE_INTEGER

/**
 * Read this model's rows with `after < _rid ≤ upto` from `db` into the index.
 * Chunked (one SQL row per ~1,000 source rows) when the source's `_rid` is a
 * rowid range and the vectors are BLOBs; row by row otherwise.
 */
function readRows(
  idx: VectorIndex,
  src: VectorSource,
  st: SourceState,
  db: Database.Database,
  after: number | null,
  upto: number | null,
  opts: RefreshOptions,
  fresh = false,
): ApplyStats {
  const acc: ApplyStats = { read: 0, replaced: 0, mustReload: false }
  if (upto === null) return acc
  const { where, params } = modelFilter(src, idx)
  const p = { ...params, after: after ?? NO_RID, upto }
  const dim = idx.dim
  if (dim > 0 && opts.chunked !== false && LITTLE_ENDIAN && chunkable(db, src, where)) {
    const chunkRows = chunkRowsFor(opts, dim)
    readChunked(idx, src, st, db, where, p, chunkRows, acc, fresh)
    return acc
  }
  const stmt = db
    .prepare(`SELECT e._rid, e.owner_id, e.vector FROM (${src.embeddings}) e WHERE ${where} AND e._rid > @after AND e._rid <= @upto ORDER BY e._rid`)
    .raw(true)
  let scratch: Float32Array | null = null
  for (const row of stmt.iterate(p) as Iterable<unknown[]>) {
    const raw = row[2]
    const id = String(row[1])
    const rid = Number(row[0])
    // A float32 BLOB of the right size is read in place (aligned) or through one scratch row.
    if (dim > 0 && raw instanceof Uint8Array && raw.byteLength === dim * 4 && LITTLE_ENDIAN) {
      let f: Float32Array
      if (raw.byteOffset % 4 === 0) f = new Float32Array(raw.buffer, raw.byteOffset, dim)
      else {
        scratch ??= new Float32Array(dim)
        new Uint8Array(scratch.buffer).set(raw)
        f = scratch
      }
      applyRow(idx, src, st, rid, id, raw, acc, f, 0, fresh)
    } else applyRow(idx, src, st, rid, id, raw, acc, null, 0, fresh)
  }
  return acc
}

const chunkableCache = new WeakMap<Database.Database, Map<string, boolean>>()

/**
 * Does `_rid > ? AND _rid <= ?` use the rowid (so a chunk costs its own rows, not a table scan, and meets
 * them in `_rid` order)? `range`: the reader threads' statement (rangeChunkSql), else the in-thread one's rows.
 */
function chunkable(db: Database.Database, src: VectorSourceSql, where: string, range = false): boolean {
  let m = chunkableCache.get(db)
  if (!m) chunkableCache.set(db, (m = new Map<string, boolean>()))
  const key = `${range}\u0000${src.embeddings}\u0000${where}`
  let ok = m.get(key)
  if (ok === undefined) {
    try {
      const sql = range
        ? rangeChunkSql(src, where, 1)
        : `SELECT e._rid FROM (${src.embeddings}) e WHERE ${where} AND e._rid > @after AND e._rid <= @upto ORDER BY e._rid LIMIT 1`
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ ownerType: 'memory', model: '', defaultModel: '', after: 0, upto: 0, to: 0 }) as {
        detail: string
      }[]
      const text = plan.map((r) => r.detail).join('\n')
      ok = /INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/.test(text) && !/TEMP B-TREE/.test(text)
      // group_concat passes BLOB bytes through untouched only in a UTF-8 database.
      ok &&= String(db.pragma('encoding', { simple: true })).toUpperCase() === 'UTF-8'
    } catch {
      ok = false
    }
    m.set(key, ok)
  }
  return ok
}

/** The aggregates of a chunk statement: one SQL row for the rows of `e`. */
function chunkColumns(dim: number): string {
  const bytes = dim * 4
  const fast = `typeof(e.vector) = 'blob' AND length(e.vector) = ${bytes}`
  // All aggregates see the rows in the same order, so ids, keys, flags and the concatenated BLOBs
  // line up whatever that order is.
  return `SELECT count(*) AS n, max(e._rid) AS hi, json_group_array(e._rid) AS rids, json_group_array(e.owner_id) AS ids,
       json_group_array(${fast}) AS ok, sum(CASE WHEN ${fast} THEN ${bytes} ELSE 0 END) AS nbytes,
       CAST(group_concat(CASE WHEN ${fast} THEN e.vector END, x'') AS BLOB) AS v`
}

/** The chunk statement: one SQL row per chunk of up to `chunkRows` rows with `@after < _rid ≤ @upto`. */
function chunkSql(src: VectorSourceSql, where: string, dim: number, chunkRows: number): string {
  return `${chunkColumns(dim)}
     FROM (SELECT e._rid AS _rid, e.owner_id AS owner_id, e.vector AS vector FROM (${src.embeddings}) e
           WHERE ${where} AND e._rid > @after AND e._rid <= @upto ORDER BY e._rid LIMIT ${chunkRows}) e`
}

/**
 * The reader threads' chunk statement: the rows with `@after < _rid ≤ @to`. No LIMIT, so SQLite folds the
 * source's SQL into it and the aggregates read each BLOB from its page (the LIMIT form copies every row
 * once more, ~10 % of the read). Rows come in `_rid` order: `chunkable` checks the plan is a rowid range.
 */
function rangeChunkSql(src: VectorSourceSql, where: string, dim: number): string {
  return `${chunkColumns(dim)} FROM (${src.embeddings}) e WHERE ${where} AND e._rid > @after AND e._rid <= @to`
}

const chunkRowsFor = (opts: RefreshOptions, dim: number) => Math.max(1, Math.min(opts.chunkRows ?? 1024, Math.floor((16 << 20) / (dim * 4))))

function readChunked(
  idx: VectorIndex,
  src: VectorSource,
  st: SourceState,
  db: Database.Database,
  where: string,
  p: Record<string, unknown>,
  chunkRows: number,
  acc: ApplyStats,
  fresh: boolean,
): void {
  const chunk = db.prepare(chunkSql(src, where, idx.dim, chunkRows))
  let after = p.after as number
  applyChunks(idx, src, st, db, acc, fresh, () => {
    const r = chunk.get({ ...p, after }) as ChunkRow | undefined
    if (!r || r.n === 0 || r.hi === null) return null
    after = Number(r.hi)
    return r.n < chunkRows ? { ...r, last: true } : r
  })
}

/** Apply chunk rows from `next` (null: no more; `last`: this one is the last) to the index; odd rows are read one by one from `db`. */
function applyChunks(
  idx: VectorIndex,
  src: VectorSource,
  st: SourceState,
  db: Database.Database,
  acc: ApplyStats,
  fresh: boolean,
  next: () => (ChunkRow & { last?: boolean }) | null,
): void {
  const dim = idx.dim
  const bytes = dim * 4
  const one = db.prepare(`SELECT e.vector FROM (${src.embeddings}) e WHERE e._rid = ?`).pluck()
  let aligned = new Float32Array(0)
  for (let r = next(); r; r = r.last ? null : next()) {
    const rids = JSON.parse(r.rids) as number[]
    const ids = JSON.parse(r.ids) as unknown[]
    const v = r.v ?? new Uint8Array(0)
    // A fresh compact load's block of well-formed rows: quantised on the helper threads while the next is read.
    if (fresh && v.byteLength === (r.nbytes ?? 0) && v.byteLength === rids.length * bytes && queueBlock(idx, src, st, rids, ids, v, acc)) continue
    const ok = JSON.parse(r.ok) as number[]
    if (v.byteLength !== (r.nbytes ?? 0)) {
      // Never trust bytes whose count does not add up: read this chunk row by row.
      for (let i = 0; i < rids.length; i++) applyRow(idx, src, st, rids[i], String(ids[i]), one.get(rids[i]), acc, null, 0, fresh)
    } else {
      let f: Float32Array
      if (v.byteOffset % 4 === 0) f = new Float32Array(v.buffer, v.byteOffset, v.byteLength / 4)
      else {
        if (aligned.length < v.byteLength / 4) aligned = new Float32Array(v.byteLength / 4)
        new Uint8Array(aligned.buffer).set(v)
        f = aligned
      }
      let off = 0
      for (let i = 0; i < rids.length; i++) {
        if (ok[i]) {
          applyRow(idx, src, st, rids[i], String(ids[i]), null, acc, f, off, fresh)
          off += dim
        } else applyRow(idx, src, st, rids[i], String(ids[i]), one.get(rids[i]), acc, null, 0, fresh)
      }
    }
  }
  idx.flushBlocks()
}

/** Starts of the reader threads a version change sends back before the load goes in-thread. */
const READER_STARTS = 3

/**
 * A big fresh compact load through reader threads (chunkReader.ts): the source's stats read here, the
 * chunks (disjoint `_rid` ranges of ~chunkRows rows) read by `opts.readers` threads and applied here in
 * `_rid` order, as the in-thread read applies them. One snapshot for all: `version` is read before the
 * stats and again once every reader holds its read transaction; equal, no commit came in between, so
 * the stats and every reader see the same rows (else the readers start again). Returns the version
 * the rows are of. null: not applicable (the caller reads in-thread). Throws ChunkReaderFailed when a
 * thread fails.
 */
function readThreaded(
  idx: VectorIndex,
  src: VectorSource,
  st: SourceState,
  opts: RefreshOptions,
  fresh: boolean,
  expected: number,
): { s: { n: number; r: number | null }; acc: ApplyStats; version: string } | null {
  const dim = idx.dim
  if (!fresh || !idx.compact || !src.readerFile || opts.threaded === false || opts.chunked === false || dim <= 0 || !LITTLE_ENDIAN) return null
  // Our own connection inside a transaction would not see a commit the readers see.
  if (src.db.inTransaction) return null
  const { where, params } = modelFilter(src, idx)
  if (!chunkable(src.db, src, where, true)) return null
  const chunkRows = chunkRowsFor(opts, dim)
  const readers = Math.max(1, Math.floor(opts.readers ?? Math.min(2, os.availableParallelism())))
  for (let start = 1; ; start++) {
    const version = src.version()
    const s = sourceStats(src.db, src)
    const lo = src.db.prepare(`SELECT min(_rid) FROM (${src.embeddings})`).pluck().get() as number | null
    const acc: ApplyStats = { read: 0, replaced: 0, mustReload: false }
    if (s.r === null || lo === null) return { s, acc, version }
    const span = s.r - Number(lo) + 1
    // ~chunkRows rows a chunk if this model's rows are spread evenly; never over 16 MB even where every `_rid` is one.
    const width = Math.max(1, Math.min(Math.floor((16 << 20) / (dim * 4)), Math.ceil((chunkRows * span) / Math.max(1, expected))))
    const chunks = Math.ceil(span / width)
    // `_rid`s far sparser than the rows (huge gaps): mostly empty ranges; the in-thread read pages by rows.
    if (chunks > 4 * Math.ceil(expected / chunkRows) + 64) return null
    const reader = startChunkReaders(src.readerFile, {
      pinSql: `SELECT max(_rid) FROM (${src.embeddings})`,
      chunkSql: rangeChunkSql(src, where, dim),
      params,
      lo: Number(lo),
      width,
      chunks,
      readers,
    })
    try {
      reader.ready()
      if (src.version() !== version) {
        if (start < READER_STARTS) continue
        throw new ChunkReaderFailed('the source kept changing while the vector readers started')
      }
      loadCounts.threaded++
      loadCounts.readers = readers
      applyChunks(idx, src, st, src.db, acc, fresh, reader.next)
      return { s, acc, version }
    } finally {
      reader.close()
    }
  }
}

/** readChunked's block path (VectorIndex.queueBlock): the accounting applyRow does per row. False: not taken. */
function queueBlock(idx: VectorIndex, src: VectorSource, st: SourceState, rids: number[], ids: unknown[], v: Uint8Array, acc: ApplyStats): boolean {
  const keys = src.bit === HELD_AGENT ? rids : rids.map((rid) => WS_KEY_OFFSET + rid)
  const names = ids.map(String)
  const queued = idx.queueBlock(names, keys, src.bit, v, (i) => {
    idx.malformed.nonFiniteVector++
    st.rejected.add(names[i])
  })
  if (!queued) return false
  acc.read += rids.length
  idx.dimRows += rids.length
  return true
}

function countModel(db: Database.Database, src: VectorSourceSql, idx: VectorIndex, extra = '', extraParams: Record<string, unknown> = {}): number {
  const { where, params } = modelFilter(src, idx)
  return db
    .prepare(`SELECT count(*) FROM (${src.embeddings}) e WHERE ${where}${extra}`)
    .pluck()
    .get({ ...params, ...extraParams }) as number
}

/** Lengths of decodable vectors: a sample (first 256 rows), or every row. */
function tallyLengths(idx: VectorIndex, src: VectorSource, limit: number | null): Map<number, number> {
  const tally = new Map<number, number>()
  const { where, params } = modelFilter(src, idx)
  const stmt = src.db.prepare(`SELECT e.vector FROM (${src.embeddings}) e WHERE ${where}${limit === null ? '' : ` LIMIT ${limit}`}`).pluck()
  for (const raw of stmt.iterate(params)) {
    const v = decodeVector(raw, null)
    if (typeof v !== 'string') tally.set(v.length, (tally.get(v.length) ?? 0) + 1)
  }
  return tally
}

/** The most frequent key; ties keep `prefer` when it is among the best. */
function majority(tally: Map<number, number>, prefer: number): number {
  let best = 0
  let bestN = 0
  for (const [d, n] of tally) if (n > bestN || (n === bestN && d === prefer)) [best, bestN] = [d, n]
  return best
}

/** Everything from scratch: agent rows first, then workspace rows for ids the agent left without a vector. */
function fullLoad(idx: VectorIndex, sources: VectorSource[], opts: RefreshOptions, forcedDim?: number): RefreshPath {
  idx.reset()
  idx.fullLoads++
  idx.pristine = true
  const plan = sources.map((src) => ({ src, version: src.version(), expected: countModel(src.db, src, idx) }))
  const withRows = plan.filter((p) => p.expected > 0)
  // The matrix width: the most common vector length. A sample decides it (cheap); every row's
  // length is tallied while loading, and a different majority triggers one more load below.
  let dim = forcedDim ?? 0
  for (const p of withRows) if (!dim) dim = majority(tallyLengths(idx, p.src, 256), 0)
  for (const p of withRows) if (!dim) dim = majority(tallyLengths(idx, p.src, null), 0)
  idx.dim = dim
  for (const { src, version, expected } of plan) {
    const st = idx.sync[bitSlot(src.bit)]
    // The first source into an empty index, with one row per id: no lookups needed.
    const fresh = idx.count === 0 && src.unique
    if (dim > 0) idx.reserve(idx.count + expected)
    if (dim > 0 && expected >= (opts.bulkMinRows ?? 50_000)) {
      let done: ReturnType<typeof readThreaded>
      try {
        done = readThreaded(idx, src, st, opts, fresh, expected)
      } catch (e) {
        if (!(e instanceof ChunkReaderFailed)) throw e
        return fullLoad(idx, sources, { ...opts, threaded: false }, forcedDim) // from scratch, in-thread
      }
      if (done) {
        Object.assign(st, { version: done.version, total: done.s.n, maxRid: done.s.r, rows: done.acc.read })
        continue
      }
    }
    let db = src.db
    let bulk: Database.Database | null = null
    if (dim > 0 && expected >= (opts.bulkMinRows ?? 50_000) && src.openBulk) {
      try {
        // A compact index is for a matrix too big for memory: mapping its GBs of BLOBs would put them in RSS.
        bulk = src.openBulk({ mmap: !idx.compact })
        if (bulk) db = bulk
      } catch {
        bulk = null // the main connection still works, only slower
      }
    }
    try {
      inSnapshot(db, () => {
        const s = sourceStats(db, src)
        const acc = expected > 0 ? readRows(idx, src, st, db, null, s.r, opts, fresh) : { read: 0 }
        Object.assign(st, { version, total: s.n, maxRid: s.r, rows: acc.read })
      })
    } finally {
      bulk?.close()
    }
  }
  const tally = new Map(idx.lengths)
  tally.set(idx.dim, (tally.get(idx.dim) ?? 0) + idx.dimRows)
  const best = majority(tally, idx.dim)
  if (forcedDim === undefined && best !== idx.dim && best > 0) return fullLoad(idx, sources, opts, best)
  return 'full'
}

/** Incremental step for one source; 'reload' when only a full load can be exact. */
function topUp(idx: VectorIndex, src: VectorSource): RefreshPath | 'reload' {
  const st = idx.sync[bitSlot(src.bit)]
  const version = src.version()
  if (version === st.version) return 'unchanged'
  return inSnapshot(src.db, (): RefreshPath | 'reload' => {
    const s = sourceStats(src.db, src)
    if (s.n === st.total && s.r === st.maxRid) {
      st.version = version
      return 'stats'
    }
    const grew = s.r !== null && (st.maxRid === null || s.r > st.maxRid)
    const after = st.maxRid ?? NO_RID
    // No width yet (no valid vector so far): any new row of this model needs a full load to pick one.
    if (idx.dim === 0 && grew && countModel(src.db, src, idx, ' AND e._rid > @after AND e._rid <= @upto', { after, upto: s.r }) > 0) return 'reload'
    const appended = grew ? (src.db.prepare(`SELECT count(*) FROM (${src.embeddings}) e WHERE e._rid > ?`).pluck().get(after) as number) : 0
    const acc = grew && idx.dim > 0 ? readRows(idx, src, st, src.db, after, s.r, {}) : { read: 0, replaced: 0, mustReload: false }
    if (acc.mustReload) return 'reload'
    let path: RefreshPath = 'append'
    if (s.n === st.total + appended && (src.unique || acc.replaced === 0)) {
      // Nothing left the source: every row read is an addition (or, where duplicates are
      // allowed, a newer copy that wins exactly as it would on a full load).
      st.rows += acc.read
    } else {
      // Something left the source. Ours: only the rows the replacements just read displaced?
      if (!src.unique && acc.replaced > 0) return 'reload'
      const m = countModel(src.db, src, idx)
      if (m !== st.rows + acc.read - acc.replaced) return 'reload'
      st.rows = m
      path = 'recount'
    }
    Object.assign(st, { version, total: s.n, maxRid: s.r })
    return path
  })
}
