/**
 * FTS5's bm25 for small scopes, computed in JS from the FTS index's own numbers.
 *
 * Why: FTS5's bm25() computes each query phrase's IDF by walking the phrase's whole
 * doclist (once per query, whatever the rowid range), so an OR-query full of stop-words
 * ("what did … the … to …") costs a walk over nearly every row even when the scope is a
 * few hundred rows. Here the index is read once per data version (fts5vocab `instance`:
 * every (term, row) occurrence; `%_docsize`: each row's token count; the averages record
 * in `%_data`: the row count and total tokens — exactly what bm25() reads), query words
 * are tokenized by FTS5's own tokenizer (a one-column temp FTS5 table with the same
 * `tokenize=` option), and the formula is FTS5's (fts5_aux.c, fts5Bm25Function:
 * k1 = 1.2, b = 0.75, IDF = ln((N − n + ½)/(n + ½)) clamped to 1e-6, phrases summed in
 * query order, the logarithm taken with SQLite's ln() so it is the same libm log). The
 * order it yields is FTS5's (bm25, then rowid), ties included; the eval bench still
 * compares every case's top-k with FTS5's and prints any difference.
 *
 * Used only when the index has at most MAX_ROWS rows and every query word is exactly one
 * token; otherwise null and the caller asks FTS5. Built on the caller's thread (the store
 * host's, not the UI's) once, streaming fts5vocab's rows into typed arrays (measured times
 * in docs/internals/performance.md); 8 bytes a (term, row) pair, pooled (bm25Index.ts). A later
 * data version builds again; with `bm25Settings.append` one that only added rows (a live agent
 * writing) is taken in by `appendRows` instead.
 */
import Database from 'better-sqlite3'
import { openReadOnlyAgentDb } from './readOnlyOpen'
import type { FtsTable, SqliteCtx } from './context'
import { blockMaxOf, maxFactorOf } from './bm25Bounds'
import { averagesOf, bm25Counts, indexOf, MAX_ROWS, quoteIdent, readVarints, RUN, tokenizerOf, type Bm25Index, type Pool, type Postings } from './bm25Index'

export { bm25Counts, type Bm25Index } from './bm25Index'

/**
 * `enabled`: flip to compare against FTS5 (the eval bench does; nothing else should). `syncRows`:
 * indexes up to this many rows are built when first asked for (tens of ms); bigger ones in the
 * background, FTS5 answering meanwhile (tests lower it to reach that path on a small DB).
 * `append`: take a data version that looks like rows only added in by `appendRows` instead of a new
 * build. Off: the check behind it (FTS5's totals, the new rows' `%_docsize`, their text re-tokenized)
 * cannot see a row rewritten in place with the same token count per column ("likes tea" → "likes
 * coffee"), and that row would keep its old terms; nothing in FTS5's tables tells such an update from
 * no change without reading every row. A store known to be append-only may turn it on.
 * `warmMinPostings` / `warmMaxPostings`: a build ends by making the per-row factors and top-k bounds of
 * its lists of at least warmMinPostings postings, longest first, up to warmMaxPostings postings in all
 * (8 bytes each): otherwise the first query with a word in every one of 1M rows spends ~40 ms on them.
 */
export const bm25Settings = { enabled: true, syncRows: 20_000, append: false, warmMinPostings: 16_384, warmMaxPostings: 8_000_000 }

/** fts5vocab / docsize rows read between two yields of a background build (a few ms of work). */
const STEP_ROWS = 32_768

/** One table's index for one data version: built, or being built in the background (FTS5 answers meanwhile). */
interface Entry {
  version: string | null
  idx: Bm25Index | null
  /** set while a background build runs; resolves when it ends (built, failed or cancelled) */
  building: Promise<void> | null
  cancel: () => void
  /** run once when a background build ends built, in its last slice (onBm25Built: the latest query asked meanwhile) */
  onBuilt: (() => void) | null
}

/**
 * The JS index of `fts` for the store's current data version, or null (FTS5 answers): not
 * applicable, or a big index still being built. Up to bm25Settings.syncRows rows it is built here and now;
 * above, in slices between the caller's other work (setImmediate; its own read-only connection),
 * so the first recalls of a big store keep FTS5's speed instead of waiting for the build.
 */
export function bm25IndexFor(ctx: SqliteCtx, fts: FtsTable, snapshot?: object): Bm25Index | null {
  if (!bm25Settings.enabled || !ctx.fileBacked) return null
  const key = fts.qualified
  let perCtx = live.get(ctx)
  if (!perCtx) live.set(ctx, (perCtx = new Map<string, Entry>()))
  const prev = perCtx.get(key)
  // One gather's later requests (same snapshot) skip the version check while the index is the one
  // its first request saw: ~1,000 PRAGMA reads less per eval pass.
  if (snapshot && prev && snapshotVersions.get(snapshot) === prev.version) return prev.idx
  // Valid for one data version of the store (the per-version memo's), kept beside it rather than in
  // it: the memo's scope map is cleared when it grows, and a rebuild is not free.
  const version = ctx.memo().version
  if (snapshot) snapshotVersions.set(snapshot, version)
  if (prev && prev.version === version) return prev.idx
  // Only rows added since (an agent writing its memories): the built index takes them in, no rebuild,
  // when appends are trusted (bm25Settings.append says why they are not by default).
  const grown = bm25Settings.append ? (prev?.idx?.appendRows?.() ?? null) : null
  if (grown) {
    perCtx.set(key, { version, idx: grown, building: null, cancel: () => undefined, onBuilt: null })
    return grown
  }
  // The previous version's index (and its private connection) is done with; so is a build of it.
  prev?.cancel()
  prev?.idx?.close()
  const entry: Entry = { version, idx: null, building: null, cancel: () => undefined, onBuilt: null }
  perCtx.set(key, entry)
  let steps: ReturnType<typeof buildSteps>
  try {
    steps = buildSteps(fts.qualified.startsWith('ws.') ? ctx.workspacePath : ctx.path, fts.name)
    const first = steps.next() // reads the row count
    if (first.done) return (entry.idx = first.value)
    const { rows, wal } = first.value ?? { rows: 0, wal: false }
    if (rows <= bm25Settings.syncRows) {
      let r = steps.next()
      while (!r.done) r = steps.next()
      return (entry.idx = r.value)
    }
    // A build in slices holds one read transaction for seconds to minutes. In WAL mode a reader never
    // blocks a writer; in a rollback journal its SHARED lock would make a live agent's commits wait and
    // fail with SQLITE_BUSY. There FTS5 keeps answering (for this data version).
    if (!wal) {
      steps.return(null)
      return null
    }
  } catch {
    return null // an unreadable index, no ln(), a missing tokenizer: FTS5 answers instead
  }
  let cancelled = false
  // Cancelled between slices (never during one: a slice runs to its yield without giving the thread
  // back): the generator's finally closes its connection now, so its read lock is gone when close() returns.
  entry.cancel = () => {
    cancelled = true
    steps.return(null)
  }
  entry.building = new Promise<void>((resolve) => {
    const slice = () => {
      try {
        if (cancelled) return resolve()
        const r = steps.next()
        if (!r.done) return void setImmediate(slice)
        entry.idx = r.value
      } catch {
        entry.idx = null // FTS5 keeps answering for this version
      }
      entry.building = null
      const then = entry.onBuilt
      entry.onBuilt = null
      try {
        // Only on an index of the store as it is now: after a commit meanwhile, the query would start another build
        // (a live agent writing would keep the store building with nobody asking). The next real query does.
        if (entry.idx && then && ctx.memo().version === version) {
          bm25Counts.rerunAtBuild++
          then()
        }
      } catch {
        // a warm-up only: the next query asks again and gets its own error
      }
      resolve()
    }
    setImmediate(slice)
  })
  return null
}

/**
 * Runs `run` once, in the last slice of the background build of `fts`'s index now in flight for `ctx`, when it
 * ends built (before whenBm25IndexesBuilt resolves); a later call during the same build replaces it. Nothing when
 * no build is in flight, when it is cancelled (the store closed) or fails, or when the store's data moved on
 * while it built. The lexical arm runs the query FTS5 just answered once more there: the first recall on the new
 * index then runs compiled code and finds its SQL prepared (docs/internals/performance.md, "stop 36").
 */
export function onBm25Built(ctx: SqliteCtx, fts: FtsTable, run: () => void): void {
  const e = live.get(ctx)?.get(fts.qualified)
  if (e?.building) e.onBuilt = run
}

/** The store's data version each gather (snapshot object) first saw. */
const snapshotVersions = new WeakMap<object, string | null>()

/** Resolves when every background index build of `ctx` has ended (benchmarks and tests wait on it). */
export async function whenBm25IndexesBuilt(ctx: SqliteCtx): Promise<void> {
  const perCtx = live.get(ctx)
  if (perCtx) for (const e of [...perCtx.values()]) if (e.building) await e.building
}

/** The index last built per source and table, to close its connection when a newer version replaces it. */
const live = new WeakMap<SqliteCtx, Map<string, Entry>>()

/** Close the indexes (and their private connections) of a source being closed; stop their builds. */
export function closeBm25Indexes(ctx: SqliteCtx): void {
  const perCtx = live.get(ctx)
  if (!perCtx) return
  for (const e of perCtx.values()) {
    e.cancel()
    e.idx?.close()
  }
  live.delete(ctx)
}

/**
 * Each row's token count from `%_docsize`, as a lookup by rowid: an array when the rowids are dense
 * enough (a Map of a million entries is ~50 MB more at the build's peak), else a Map. Yields every
 * STEP_ROWS rows, as the build does.
 */
function* readDocLengths(db: Database.Database, table: string, nRow: number): Generator<null, { docLen: (rid: number) => number; maxId: number }> {
  const maxId = Number(
    db
      .prepare(`SELECT max(id) FROM ${quoteIdent(`${table}_docsize`)}`)
      .pluck()
      .get() ?? 0,
  )
  const dense = maxId >= 0 && maxId <= 4 * nRow + 1024 ? new Int32Array(maxId + 1) : null
  const sparse = dense ? null : new Map<number, number>()
  let nRead = 0
  for (const [id, sz] of db
    .prepare(`SELECT id, sz FROM ${quoteIdent(`${table}_docsize`)}`)
    .raw(true)
    .iterate() as Iterable<[number, Uint8Array]>) {
    let d = 0
    for (const x of readVarints(sz)) d += x
    if (dense && Number(id) >= 0) dense[Number(id)] = d
    else sparse?.set(Number(id), d)
    if (++nRead % STEP_ROWS === 0) yield null
  }
  return { docLen: (rid) => (dense ? (rid >= 0 && rid < dense.length ? dense[rid] : 0) : (sparse!.get(rid) ?? 0)), maxId }
}

/**
 * Build a table's index in steps: yields the row count and whether the file is in WAL mode first (the
 * caller picks now, in slices, or not at all),
 * then null every STEP_ROWS rows read; returns the index (null: not applicable).
 */
function* buildSteps(file: string, table: string): Generator<{ rows: number; wal: boolean } | null, Bm25Index | null> {
  // A private read-only connection: temp tables (the vocab view, the tokenizer) need one without query_only.
  const db = openReadOnlyAgentDb(file, { fileMustExist: true })
  let built = false
  try {
    // One read transaction over the row count, the sizes and the postings: one snapshot of the index,
    // however many slices the build takes (the agent may write meanwhile).
    db.exec(`CREATE VIRTUAL TABLE temp.rs_vocab USING fts5vocab(main, ${quoteIdent(table)}, instance)`)
    db.exec('BEGIN')
    const totals = averagesOf(db, table)
    if (!totals) return null
    const nRow = totals[0]
    if (!nRow || nRow > MAX_ROWS) return null
    yield { rows: nRow, wal: String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal' }
    let nRead = 0
    let nTok = 0
    for (let i = 1; i < totals.length; i++) nTok += totals[i]
    const { docLen, maxId } = yield* readDocLengths(db, table, nRow)
    // fts5vocab `instance` yields (term, doc) in term order, then doc order: one term's postings are one
    // run of rows, a row's occurrences adjacent, so each list is built as it streams by (no per-term map)
    // into the pool (at most one posting per token: nTok of them).
    let poolRids = new Int32Array(Math.max(1024, nTok))
    let poolFreq = new Int32Array(poolRids.length)
    let used = 0
    const at = new Map<string, number>()
    const longLists: [string, number][] = []
    let rids = new Int32Array(1024)
    let freq = new Int32Array(1024)
    let cur: string | null = null
    let np = 0
    const flush = () => {
      if (cur === null) return
      if (used + np > poolRids.length) {
        // More postings than the averages record counted (it cannot be, but never write past the end).
        const r2 = new Int32Array(Math.max(used + np, poolRids.length * 2))
        r2.set(poolRids.subarray(0, used))
        poolRids = r2
        const f2 = new Int32Array(r2.length)
        f2.set(poolFreq.subarray(0, used))
        poolFreq = f2
      }
      poolRids.set(rids.subarray(0, np), used)
      poolFreq.set(freq.subarray(0, np), used)
      at.set(cur, used * RUN + np)
      used += np
      if (np >= bm25Settings.warmMinPostings) longLists.push([cur, np])
    }
    for (const [term, doc] of db.prepare(`SELECT term, doc FROM temp.rs_vocab`).raw(true).iterate() as Iterable<[string, number]>) {
      if (++nRead % STEP_ROWS === 0) yield null
      const d = Number(doc)
      if (term !== cur) {
        flush()
        cur = term
        np = 0
      } else if (rids[np - 1] === d) {
        freq[np - 1]++
        continue
      } else if (d < rids[np - 1]) throw new Error('fts5vocab rows out of doc order') // FTS5 answers instead
      if (np === rids.length) {
        const r2 = new Int32Array(np * 2)
        r2.set(rids)
        rids = r2
        const f2 = new Int32Array(np * 2)
        f2.set(freq)
        freq = f2
      }
      rids[np] = d
      freq[np++] = 1
    }
    flush()
    db.exec('COMMIT')
    // Rows repeat tokens: keep only the postings there are when that frees much.
    if (used < poolRids.length * 0.75) {
      poolRids = poolRids.slice(0, used)
      poolFreq = poolFreq.slice(0, used)
    }
    const extraLen = new Map<number, number>()
    const pool: Pool = {
      rids: poolRids,
      freq: poolFreq,
      at,
      extra: new Map(),
      extraCount: 0,
      docLen: (rid) => (rid <= maxId ? docLen(rid) : (extraLen.get(rid) ?? 0)),
      extraLen,
    }
    const out = indexOf(db, table, tokenizerOf(db, table), { pool, totals, maxRid: maxId }, { open: true })
    yield* warmLongLists(out, longLists)
    bm25Counts.builds++
    built = true
    return out
  } finally {
    // not built (not applicable, failed, or stopped mid-way): the connection goes now
    if (!built) db.close()
  }
}

/**
 * The longest lists' per-row factors and top-k bounds, made now (one list per step) instead of by the
 * first query that names their word (bm25Settings says which and how many).
 */
function* warmLongLists(idx: Bm25Index, lists: [string, number][]): Generator<null, void> {
  lists.sort((a, b) => b[1] - a[1])
  let budget = bm25Settings.warmMaxPostings
  for (const [term, n] of lists) {
    if (n > budget) break
    budget -= n
    yield null
    const p = idx.postings.get(term)
    if (!p) continue
    maxFactorOf(p)
    blockMaxOf(p)
    bm25Counts.warmed++
  }
}

/** Index of the first of the sorted `rids` that is ≥ `x` (binary search; `rids.length` when none is). */
function firstAtLeast(rids: Int32Array, x: number): number {
  let a = 0
  let b = rids.length
  while (a < b) {
    const m = (a + b) >> 1
    if (rids[m] < x) a = m + 1
    else b = m
  }
  return a
}

/**
 * bm25 (FTS5's sign) of each of `rids` for a query (`words` as rankBm25 takes them), NaN for a row
 * matching no word; null when a word is not exactly one token. Each row's phrases are summed in query
 * order, as rankBm25 and bm25() sum them: the same doubles.
 */
export function bm25OfRows(idx: Bm25Index, words: string[], rids: ArrayLike<number>): Float64Array | null {
  const terms = idx.tokenOf(words)
  for (const t of terms) if (t === null) return null
  const lists = terms.map((t) => idx.postings.get(t!))
  const idf = lists.map((p) => idx.idfOf(p?.rids.length ?? 0))
  const out = new Float64Array(rids.length)
  for (let t = 0; t < rids.length; t++) {
    const rid = rids[t]
    let score = 0
    let hit = false
    for (let i = 0; i < lists.length; i++) {
      const p = lists[i]
      if (!p) continue
      const a = firstAtLeast(p.rids, rid)
      if (a < p.rids.length && p.rids[a] === rid) {
        score += idf[i] * p.tf[a]
        hit = true
      }
    }
    out[t] = hit ? -1.0 * score : NaN
  }
  return out
}

/** Rows matching a query, in (bm25, rowid) order: parallel arrays of `n` entries. */
export interface RankedBm25 {
  /** matching rows (members only, when a membership map was given) */
  n: number
  /** the first min(n, `ordered`) in (bm25, rowid) order; the rest follow in no particular order */
  rids: Int32Array
  /** FTS5's sign: lower is better */
  bm25: Float64Array
  /** bm25 of each requested `also` rid, NaN when it does not match */
  also: Float64Array
}

export interface RankOptions {
  /** rows to keep, indexed by rid − lo (1 = keep); others are left out before ranking */
  member?: Uint8Array
  /** only this many leading rows need to be in order (default: all) */
  ordered?: number
  /** rids whose bm25 the caller needs whatever their rank */
  also?: ArrayLike<number>
}

/**
 * bm25 (FTS5's sign: lower is better) of every row in [lo, hi] matching any word, in
 * (bm25, rowid) order; null when a word is not exactly one token (the caller asks FTS5).
 * `words`: the query's words in query order, unique (ftsTokens), as FTS5 sees the phrases.
 * Parallel typed arrays, not an object per row, and only the `ordered` best sorted: an eval
 * ranks ~500 rows per case ×1,000 cases and keeps the best 100; sorting row objects with a
 * comparator was most of the lexical arm's time.
 */
export function rankBm25(idx: Bm25Index, words: string[], lo: number, hi: number, opts: RankOptions = {}): RankedBm25 | null {
  const terms = idx.tokenOf(words)
  const n = terms.length
  for (let i = 0; i < n; i++) if (terms[i] === null) return null
  const idf = new Float64Array(n)
  const lists = new Array<Postings | undefined>(n)
  for (let i = 0; i < n; i++) {
    lists[i] = idx.postings.get(terms[i]!)
    idf[i] = idx.idfOf(lists[i]?.rids.length ?? 0)
  }
  const member = opts.member
  // FTS5 sums the phrases in query order; a phrase absent from a row adds exactly 0, so adding each
  // phrase's postings in query order gives the same sum, bit for bit. (A row's sum depends on its
  // postings only: leaving non-members out changes no member's number.)
  const width = hi - lo + 1
  const dense = width <= 1 << 22
  const acc = dense ? scratch(width) : null
  const sparse = dense ? null : new Map<number, number>()
  const touched: number[] = []
  for (let i = 0; i < n; i++) {
    const p = lists[i]
    if (!p) continue
    const a = firstAtLeast(p.rids, lo)
    const w = idf[i]
    for (let j = a; j < p.rids.length && p.rids[j] <= hi; j++) {
      const rid: number = p.rids[j] // typed: TypeScript 7 infers it circularly through `sparse!.get(rid)` (TS7022)
      if (member && !member[rid - lo]) continue
      const term = w * p.tf[j]
      if (acc) {
        const k = rid - lo
        if (acc[k] === 0 && !seen(k)) touched.push(rid)
        acc[k] += term
      } else {
        const v = sparse!.get(rid)
        if (v === undefined) touched.push(rid)
        sparse!.set(rid, (v ?? 0) + term)
      }
    }
  }
  // The requested rows' numbers, read before the accumulators are cleared.
  const wanted = opts.also ?? []
  const also = new Float64Array(wanted.length)
  for (let t = 0; t < wanted.length; t++) {
    const rid = wanted[t]
    const k = rid - lo
    const hit = rid >= lo && rid <= hi && (!member || member[k] === 1) && (acc ? seenBuf[k] === 1 : sparse!.has(rid))
    also[t] = hit ? -1.0 * (acc ? acc[k] : sparse!.get(rid)!) : NaN
  }
  const m = touched.length
  const rids = new Int32Array(m)
  const bm25 = new Float64Array(m)
  for (let t = 0; t < m; t++) {
    const rid = touched[t]
    const score = acc ? acc[rid - lo] : sparse!.get(rid)!
    if (acc) acc[rid - lo] = 0
    rids[t] = rid
    bm25[t] = -1.0 * score
  }
  clearSeen()
  sortByBm25(bm25, rids, 0, m - 1, Math.min(m, opts.ordered ?? m))
  return { n: m, rids, bm25, also }
}

/** (a's bm25, rid) before (b's)? */
function before(s: Float64Array, r: Int32Array, a: number, b: number): boolean {
  return s[a] < s[b] || (s[a] === s[b] && r[a] < r[b])
}

/** Swap entries a and b of parallel (score, rid) arrays (also bm25Top.ts's heap). */
export function swap(s: Float64Array, r: Int32Array, a: number, b: number): void {
  const x = s[a]
  s[a] = s[b]
  s[b] = x
  const y = r[a]
  r[a] = r[b]
  r[b] = y
}

/**
 * Put the `k` smallest (bm25, rid) of [lo, hi] first, in order (the rest after them, unordered):
 * quicksort (median of three) that only descends into parts holding one of the first `k`
 * positions, down to insertion sort. The keys are distinct (one entry per rid), so no run of
 * equal keys can degrade the partitioning; the recursion takes the smaller side, the loop the larger.
 */
function sortByBm25(s: Float64Array, r: Int32Array, lo: number, hi: number, k: number): void {
  while (hi - lo > 16) {
    if (lo >= k) return
    const mid = (lo + hi) >> 1
    if (before(s, r, mid, lo)) swap(s, r, mid, lo)
    if (before(s, r, hi, lo)) swap(s, r, hi, lo)
    if (before(s, r, hi, mid)) swap(s, r, hi, mid)
    // median at lo + 1 as the pivot; lo ≤ pivot ≤ hi bound the scans
    swap(s, r, mid, lo + 1)
    const ps = s[lo + 1]
    const pr = r[lo + 1]
    let i = lo + 1
    let j = hi
    for (;;) {
      do i++
      while (s[i] < ps || (s[i] === ps && r[i] < pr))
      do j--
      while (ps < s[j] || (ps === s[j] && pr < r[j]))
      if (i >= j) break
      swap(s, r, i, j)
    }
    swap(s, r, lo + 1, j)
    // [lo, j) ≤ pivot (at j) ≤ (j, hi]: a side starting at or past k holds none of the first k.
    if (j - lo < hi - j) {
      sortByBm25(s, r, lo, j - 1, k)
      lo = j + 1
    } else {
      if (j + 1 < k) sortByBm25(s, r, j + 1, hi, k)
      hi = j - 1
    }
  }
  if (lo >= k) return
  for (let i = lo + 1; i <= hi; i++) {
    const xs = s[i]
    const xr = r[i]
    let j = i - 1
    while (j >= lo && (xs < s[j] || (xs === s[j] && xr < r[j]))) {
      s[j + 1] = s[j]
      r[j + 1] = r[j]
      j--
    }
    s[j + 1] = xs
    r[j + 1] = xr
  }
}

// Reused accumulators (one query at a time on this thread): scores by rid − lo, and a seen mark
// (a score can stay 0 when every IDF term underflows, so 0 alone does not mean "not seen").
let accBuf = new Float64Array(0)
let seenBuf = new Uint8Array(0)
const seenList: number[] = []
function scratch(width: number): Float64Array {
  if (accBuf.length < width) {
    accBuf = new Float64Array(width)
    seenBuf = new Uint8Array(width)
  }
  return accBuf
}
function seen(k: number): boolean {
  if (seenBuf[k]) return true
  seenBuf[k] = 1
  seenList.push(k)
  return false
}
function clearSeen(): void {
  for (const k of seenList) seenBuf[k] = 0
  seenList.length = 0
}
