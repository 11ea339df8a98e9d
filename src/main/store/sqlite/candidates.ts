/**
 * The recall engine's passes over a SQLite store: scope listings and counts, the
 * lexical arm (FTS5 bm25, exact strategies below), Engram's keyword fallback,
 * sessions for session-unit recall, and the age histogram behind the UI's decay
 * curve. The engine reaches them through the MemorySource interface.
 *
 * Time travel: a recall at `now` sees only rows created at or before `now`
 * (they are left out of every arm, not gated, so nothing from the future can
 * leak into a trace); a last_used_at later than `now` is unknown at that moment
 * and counts as never used.
 */
import type { RecallAges } from '../../../shared/contract'
import type { RecallScope, Session } from '../../../shared/types'
import { ageBinMs, ageBins } from '../ageBins'
import { decodeSession } from '../decode'
import type { LexicalPass, LexicalRequest, MemoryFilter, ScopeRows } from '../source'
import { prep } from './connection'
import { memSqlFor, type FtsTable, type SqliteCtx } from './context'
import { bm25IndexFor, bm25OfRows, onBm25Built, rankBm25, type Bm25Index } from './bm25'
import { topBm25 } from './bm25Top'
import { ftsTokens, toFtsQuery } from './fts'
import { memoryWhere } from './where'

/** Ids and row keys (`_rid`) of a scope, at most `cap` (cap + 1 rows tell "more"). */
export function scopeRows(ctx: SqliteCtx, filter: MemoryFilter, cap: number): ScopeRows {
  // Eval and replay ask for the same scope once per case: memoised until the DB changes.
  const f = settledFilter(ctx, filter)
  return scopeMemoised(ctx, `rows|${cap}|${JSON.stringify(f)}`, () => scopeRowsUncached(ctx, f, cap))
}

/** `compute()`'s answer kept under `key` until the DB changes (the per-version scope memo, emptied past 500 entries). */
function scopeMemoised<T>(ctx: SqliteCtx, key: string, compute: () => T): T {
  const memo = ctx.memo().scopes
  const hit = memo.get(key) as T | undefined
  if (hit !== undefined) return hit
  const out = compute()
  if (memo.size > 500) memo.clear()
  memo.set(key, out)
  return out
}

function scopeRowsUncached(ctx: SqliteCtx, f: MemoryFilter, cap: number): ScopeRows {
  const where = memoryWhere(f, ctx.embeddingOwners)
  const rows = prep(ctx.db, `SELECT m.id, m._rid FROM (${memSqlFor(ctx, f)}) m WHERE ${where.sql} LIMIT ${Math.max(0, Math.floor(cap))}`)
    .raw(true)
    .all(where.params) as [unknown, number][]
  const ids = new Array<string>(rows.length)
  const rids = new Array<number>(rows.length)
  for (let i = 0; i < rows.length; i++) {
    ids[i] = String(rows[i][0])
    rids[i] = Number(rows[i][1])
  }
  return { ids, rids }
}

/**
 * bm25 over the raw utterance within a filter, best first (FTS5: lower = better;
 * ties: lower `_rid` first). See lexicalPass for how.
 */
function lexicalArm(ctx: SqliteCtx, text: string, f: MemoryFilter, limit: number, ridRange?: [number, number] | null): { id: string; bm25: number }[] {
  return lexicalPass(ctx, { text, filter: f, limit, ridRange: ridRange ?? null }).hits
}

/** FTS5's first read of a listed range when the bm25 of some rows is also wanted. */
const ALSO_READ = 1000

/** Prefix reads grow ×4 until enough in-scope rows survive; past this multiple of `limit`, one join pass is cheaper. */
const PREFIX_MAX_FACTOR = 32

/**
 * bm25 over the raw utterance within a filter, plus the bm25 of `alsoIds` (the
 * dense arm's hits, so the engine needs no second pass over every match).
 *
 * FTS5 spends its time computing bm25 for every match (600k rows for a query
 * with "the" in a 1M DB); joining each of them to `memories` for the scope
 * doubled that. So, when `_rid` is the memories rowid (canonical layout):
 *  1. FTS alone: `ORDER BY bm25, rowid LIMIT n` (SQLite keeps an n-row heap);
 *     rows of `alsoIds` sort first through `rowid IN (…) DESC`, so one pass
 *     gives both;
 *  2. look those n rowids up in `memories` with the scope filter (rowid probes);
 *  3. fewer than `limit` survive and FTS had more → n ×4 and again (the big
 *     join below once n would pass PREFIX_MAX_FACTOR × limit).
 * Exact: the scoped answer is the global (bm25, rowid) order with out-of-scope
 * rows removed, and a prefix of the global order, filtered, is a prefix of the
 * filtered order. Step 1's non-`also` rows are the global order minus the
 * `also` rows; merging those back gives the global prefix up to the last row read.
 * `ridRange` (a small scope's min/max `_rid`) lets FTS5 read only that stretch of
 * its doclists; the range holds every in-scope row, so the answer is the same.
 */
export function lexicalPass(ctx: SqliteCtx, req: LexicalRequest): LexicalPass {
  const q = toFtsQuery(req.text)
  if (!q || req.limit <= 0) return { hits: [], also: new Map(), alsoKnown: true, path: 'join' }
  const fts = ctx.ftsTable()
  const out = passOver(ctx, fts, q, req)
  // A big store's JS index still building (FTS5 answered): this query runs once more on it as the build ends.
  onBm25Built(ctx, fts, () => void passOver(ctx, fts, q, { ...req, snapshot: undefined }))
  return out
}

/** lexicalPass for a query `q` (toFtsQuery of the text) on the store's FTS table `fts`. */
function passOver(ctx: SqliteCtx, fts: Fts, q: string, req: LexicalRequest): LexicalPass {
  const { text, filter: f, listed } = req
  const ridRange = req.ridRange ?? null
  const alsoIds = req.alsoIds ?? []
  const limit = Math.floor(req.limit)
  if (listed && ridRange) return listedPass(ctx, fts, q, ftsTokens(text), limit, ridRange, listed, alsoIds, req.snapshot)
  if (!ridRange && ctx.sql.layout === 'canonical' && !f.ids) return prefixPass(ctx, fts, q, ftsTokens(text), f, limit, alsoIds)
  const hits = joinPass(ctx, fts, q, f, limit, ridRange)
  const also = new Map<string, number>()
  const ranked = new Map(hits.map((h) => [h.id, h.bm25]))
  const rest: string[] = []
  for (const id of alsoIds) {
    const b = ranked.get(id)
    if (b !== undefined) also.set(id, b)
    else rest.push(id)
  }
  // A pass that returned fewer than `limit` rows read every in-scope match: the other (in-scope) ids have none.
  if (hits.length >= limit)
    for (let i = 0; i < rest.length; i += 500) {
      const chunk = rest.slice(i, i + 500)
      for (const h of joinPass(ctx, fts, q, { ids: chunk }, chunk.length, null)) also.set(h.id, h.bm25)
    }
  return { hits, also, alsoKnown: true, path: ridRange ? 'range' : 'join' }
}

type Fts = FtsTable

/** Per listed scope (memoised per data version with it): rid → id, id → rid, and a membership map of one rid range. */
interface ListedIndex {
  byRid: Map<number, string>
  ridOf: Map<string, number>
  range: [number, number] | null
  member: Uint8Array | null
}
const listedIndexes = new WeakMap<ScopeRows, ListedIndex>()

function listedIndex(listed: ScopeRows, range: [number, number]): ListedIndex {
  let li = listedIndexes.get(listed)
  if (!li) {
    const byRid = new Map<number, string>()
    const ridOf = new Map<string, number>()
    for (let i = 0; i < listed.ids.length; i++) {
      byRid.set(listed.rids[i], listed.ids[i])
      ridOf.set(listed.ids[i], listed.rids[i])
    }
    listedIndexes.set(listed, (li = { byRid, ridOf, range: null, member: null }))
  }
  const [lo, hi] = range
  // A bitmap of the range (the engine passes the listing's own min/max): one byte a row of the span,
  // so only for a span not much wider than the scope; otherwise rows are checked in byRid.
  if ((!li.range || li.range[0] !== lo || li.range[1] !== hi) && hi - lo < Math.max(1 << 16, 64 * listed.rids.length)) {
    const member = new Uint8Array(hi - lo + 1)
    for (const r of listed.rids) if (r >= lo && r <= hi) member[r - lo] = 1
    li.range = [lo, hi]
    li.member = member
  }
  return li
}

/**
 * A small scope whose rows are already listed (ids + `_rid`s): FTS alone over the
 * scope's `_rid` range, in (bm25, rowid) order, kept when the rowid is in the
 * list — no join to memories per match. Reads grow ×4 until `limit` in-scope rows
 * survive (and every `alsoIds` row is seen) or the range runs out. Exact for the same
 * reason as prefixPass: the listed rows are exactly the scope, and a filtered prefix
 * of the range's order is a prefix of the scope's order; a range read to its end has
 * every in-scope match, so an `alsoIds` row it did not return has none.
 */
function listedPass(
  ctx: SqliteCtx,
  fts: Fts,
  q: string,
  words: string[],
  limit: number,
  range: [number, number],
  listed: ScopeRows,
  alsoIds: string[],
  snapshot: object | undefined,
): LexicalPass {
  const li = listedIndex(listed, range)
  const { byRid } = li
  // The also ids' rows (only in-scope ones can match here).
  const alsoRids: number[] = []
  const alsoOf: string[] = []
  for (const id of alsoIds) {
    const r = li.ridOf.get(id)
    if (r !== undefined) {
      alsoRids.push(r)
      alsoOf.push(id)
    }
  }
  const also = new Map<string, number>()
  // A small index: FTS5's bm25 computed from its own numbers over the range's postings only (bm25.ts);
  // out-of-scope rows left out before ranking, and only the first `limit` put in order.
  const idx = bm25IndexFor(ctx, fts, snapshot)
  const member = li.range && li.range[0] === range[0] && li.range[1] === range[1] ? (li.member ?? undefined) : undefined
  // Without the bitmap, rows outside the scope stay in the ranking: all of it must be in order.
  const ranked = idx ? rankBm25(idx, words, range[0], range[1], { member, ordered: member ? limit : undefined, also: alsoRids }) : null
  if (ranked) {
    const hits: { id: string; bm25: number }[] = []
    for (let i = 0; i < ranked.n && hits.length < limit; i++) {
      const id = byRid.get(ranked.rids[i])
      if (id !== undefined) hits.push({ id, bm25: ranked.bm25[i] })
    }
    for (let t = 0; t < alsoOf.length; t++) if (!Number.isNaN(ranked.also[t])) also.set(alsoOf[t], ranked.also[t])
    return { hits, also, alsoKnown: true, path: 'range' }
  }
  const st = prep(
    ctx.db,
    `SELECT rowid, bm25(${fts.name}) AS b FROM ${fts.qualified} WHERE ${fts.name} MATCH @ftsq AND rowid BETWEEN @lo AND @hi ORDER BY b ASC, rowid ASC LIMIT @lim`,
  ).raw(true)
  const wanted = new Map(alsoRids.map((r, t) => [r, alsoOf[t]]))
  // Each statement walks the phrases' whole doclists for bm25's IDF: with also rows to find, start
  // with a read deep enough to usually see them all at once.
  for (let lim = Math.max(limit, wanted.size ? ALSO_READ : 64); ; lim *= 4) {
    const rows = st.all({ ftsq: q, lo: range[0], hi: range[1], lim }) as [number, number][]
    const hits: { id: string; bm25: number }[] = []
    also.clear()
    for (const [rid, b] of rows) {
      const a = wanted.get(Number(rid))
      if (a !== undefined) also.set(a, b)
      const id = byRid.get(Number(rid))
      if (id === undefined || hits.length >= limit) continue
      hits.push({ id, bm25: b })
    }
    if ((hits.length >= limit && also.size === wanted.size) || rows.length < lim) return { hits, also, alsoKnown: true, path: 'range' }
  }
}

/** The scoped top `limit` in one pass: every match joined to memories, filtered, sorted. */
function joinPass(ctx: SqliteCtx, fts: Fts, q: string, f: MemoryFilter, limit: number, ridRange: [number, number] | null): { id: string; bm25: number }[] {
  const where = memoryWhere(f, ctx.embeddingOwners)
  const range = ridRange ? ` AND rowid BETWEEN @ridLo AND @ridHi` : ''
  const params: Record<string, unknown> = { ...where.params, ftsq: q }
  if (ridRange) [params.ridLo, params.ridHi] = ridRange
  const rows = prep(
    ctx.db,
    `SELECT m.id AS id, r.rank AS bm25 FROM (SELECT rowid AS rid, bm25(${fts.name}) AS rank FROM ${fts.qualified} WHERE ${fts.name} MATCH @ftsq${range}) r
     JOIN (${memSqlFor(ctx, f)}) m ON m._rid = r.rid WHERE ${where.sql} ORDER BY r.rank ASC, m._rid ASC LIMIT ${limit}`,
  )
    .raw(true)
    .all(params) as [unknown, number][]
  return rows.map((r) => ({ id: String(r[0]), bm25: r[1] }))
}

function prefixPass(ctx: SqliteCtx, fts: Fts, q: string, words: string[], f: MemoryFilter, limit: number, alsoIds: string[]): LexicalPass {
  const where = memoryWhere(f, ctx.embeddingOwners)
  // The also ids' row keys (memories.id is indexed).
  const alsoRid = new Map<number, string>()
  if (alsoIds.length) {
    const rows = prep(ctx.db, `SELECT m._rid, m.id FROM (${ctx.sql.memoriesLite}) m WHERE m.id IN (SELECT value FROM json_each(@ids))`)
      .raw(true)
      .all({ ids: JSON.stringify(alsoIds) }) as [number, unknown][]
    for (const [rid, id] of rows) alsoRid.set(Number(rid), String(id))
  }
  // CROSS JOIN: probe memories by rowid for each candidate (else SQLite may scan an index of the whole scope).
  const inScope = prep(ctx.db, `SELECT m._rid, m.id FROM json_each(@rids) j CROSS JOIN (${memSqlFor(ctx, f)}) m ON m._rid = j.value WHERE ${where.sql}`).raw(
    true,
  )
  const idx = bm25IndexFor(ctx, fts)
  const viaIndex = idx
    ? indexPrefixPass(ctx, fts, idx, q, words, f, limit, alsoRid, (rids) => inScope.all({ ...where.params, rids: JSON.stringify(rids) }) as [number, unknown][])
    : null
  if (viaIndex) return viaIndex
  const alsoJson = JSON.stringify([...alsoRid.keys()])
  const top = prep(
    ctx.db,
    `SELECT rowid, bm25(${fts.name}) AS b, rowid IN (SELECT value FROM json_each(@also)) AS a FROM ${fts.qualified}
     WHERE ${fts.name} MATCH @ftsq ORDER BY a DESC, b ASC, rowid ASC LIMIT @lim`,
  ).raw(true)
  const also = new Map<string, number>()
  let n = Math.max(2 * limit, 64)
  for (let round = 0; ; round++) {
    const lim = n + (round === 0 ? alsoRid.size : 0)
    const rows = top.all({ ftsq: q, also: round === 0 ? alsoJson : '[]', lim }) as [number, number, number][]
    const exhausted = rows.length < lim
    const alsoRows: [number, number][] = []
    const main: [number, number][] = []
    for (const [rid, b, a] of rows) (a ? alsoRows : main).push([Number(rid), b])
    if (round === 0) for (const [rid, b] of alsoRows) also.set(alsoRid.get(rid)!, b)
    // The global (bm25, rowid) order up to the last row read: main rows plus the also rows that sort before it.
    const last = main.length ? main[main.length - 1] : null
    const before = (x: [number, number], y: [number, number]) => x[1] < y[1] || (x[1] === y[1] && x[0] < y[0])
    const merged = exhausted || !last ? [...main, ...alsoRows] : [...main, ...alsoRows.filter((x) => before(x, last))]
    merged.sort((x, y) => x[1] - y[1] || x[0] - y[0])
    const ok = new Map<number, string>()
    for (const [rid, id] of inScope.all({ ...where.params, rids: JSON.stringify(merged.map((x) => x[0])) }) as [number, unknown][])
      ok.set(Number(rid), String(id))
    const hits: { id: string; bm25: number }[] = []
    for (const [rid, b] of merged) {
      const id = ok.get(rid)
      if (id === undefined) continue
      hits.push({ id, bm25: b })
      if (hits.length >= limit) break
    }
    if (hits.length >= limit || exhausted) return { hits, also, alsoKnown: true, path: 'prefix' }
    n *= 4
    if (n > PREFIX_MAX_FACTOR * limit) return { hits: joinPass(ctx, fts, q, f, limit, null), also, alsoKnown: true, path: 'join' }
  }
}

/**
 * prefixPass over the JS postings: the global top `n` by exact top-k BM25 (bm25Top.ts: a word in every
 * row does not make it score every row), filtered to the scope, n ×4 until `limit` survive, as the FTS5
 * reads do; the also rows' bm25 row by row. Same rows, order and doubles as FTS5's bm25() (bm25.ts).
 * Null when a query word is not one token (FTS5 answers).
 */
function indexPrefixPass(
  ctx: SqliteCtx,
  fts: Fts,
  idx: Bm25Index,
  q: string,
  words: string[],
  f: MemoryFilter,
  limit: number,
  alsoRid: Map<number, string>,
  inScope: (rids: number[]) => [number, unknown][],
): LexicalPass | null {
  const alsoRids = [...alsoRid.keys()]
  const alsoBm25 = bm25OfRows(idx, words, alsoRids)
  if (!alsoBm25) return null
  const also = new Map<string, number>()
  alsoRids.forEach((rid, t) => {
    if (!Number.isNaN(alsoBm25[t])) also.set(alsoRid.get(rid)!, alsoBm25[t])
  })
  // Top-k costs grow with k (FTS5's LIMIT hardly does): start at `limit`, enough when the scope is the store.
  for (let n = limit; ; n *= 4) {
    // as the FTS5 reads: past this depth, one join pass (a narrow scope of a big store)
    if (n > limit && n > PREFIX_MAX_FACTOR * limit) return { hits: joinPass(ctx, fts, q, f, limit, null), also, alsoKnown: true, path: 'join' }
    const top = topBm25(idx, words, n, -2147483648, 2147483647)
    if (!top) return null
    const ok = new Map<number, string>()
    for (const [rid, id] of inScope(Array.from(top.rids))) ok.set(Number(rid), String(id))
    const hits: { id: string; bm25: number }[] = []
    for (let i = 0; i < top.rids.length && hits.length < limit; i++) {
      const id = ok.get(top.rids[i])
      if (id !== undefined) hits.push({ id, bm25: top.bm25[i] })
    }
    if (hits.length >= limit || top.rids.length < n) return { hits, also, alsoKnown: true, path: 'topk' }
  }
}

/**
 * The filter without its `before` when no row was created after it: the same rows, and the same memo
 * key for every recall at "now" (the app's recalls each have their own `now`, and without this every
 * one of them counted and listed its scope anew: 0.15–0.4 s at a million rows on a busy machine).
 * Exact: when max(created_at) is a number, every non-NULL created_at is a number (SQLite orders
 * numbers before text and blobs), all ≤ that max ≤ `before`, and NULLs pass `before` anyway (where.ts).
 * Only where max(created_at) is one index probe (the canonical layout's index on created_at): a
 * store without one keeps its `before` rather than pay a scan per data version.
 */
function settledFilter(ctx: SqliteCtx, f: MemoryFilter): MemoryFilter {
  if (f.before === undefined) return f
  const max = latestCreatedAt(ctx)
  if (max === null || f.before < max) return f
  const { before: _, ...rest } = f
  return rest
}

/** max(created_at) of the agent's memories when it is a number read from an index (per data version), else null. */
function latestCreatedAt(ctx: SqliteCtx): number | null {
  const memo = ctx.memo().scopes
  const hit = memo.get(LATEST_KEY) as { max: number | null } | undefined
  if (hit) return hit.max
  const sql = `SELECT max(created_at) FROM (${ctx.sql.memoriesLite})`
  const plan = (prep(ctx.db, `EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join('\n')
  // "SEARCH … USING … INDEX": SQLite's min/max optimisation reads one end of an index.
  const indexed = /^SEARCH .* INDEX /m.test(plan) && !/^SCAN /m.test(plan)
  const v: unknown = indexed ? prep(ctx.db, sql).pluck().get() : null
  const max = typeof v === 'number' && Number.isFinite(v) ? v : null
  memo.set(LATEST_KEY, { max })
  return max
}
const LATEST_KEY = 'latestCreatedAt'

/** How many rows a filter matches, counting at most `cap` (+1 tells "more"). */
export function countScope(ctx: SqliteCtx, filter: MemoryFilter, cap = 10_000): { count: number; capped: boolean } {
  const f = settledFilter(ctx, filter)
  return scopeMemoised(ctx, `count|${cap}|${JSON.stringify(f)}`, () => {
    const where = memoryWhere(f, ctx.embeddingOwners)
    const n = prep(ctx.db, `SELECT count(*) FROM (SELECT 1 FROM (${memSqlFor(ctx, f)}) m WHERE ${where.sql} LIMIT ${cap + 1})`)
      .pluck()
      .get(where.params) as number
    return n > cap ? { count: cap, capped: true } : { count: n, capped: false }
  })
}

/**
 * seed 002 keyword fallback: rows whose LOWER(content) LIKE '%kw%' for any
 * keyword, newest first. Like Engram, `%` and `_` in a keyword stay LIKE
 * wildcards; no keyword at all matches every row.
 */
export function keywordSearch(ctx: SqliteCtx, f: MemoryFilter, keywords: string[], limit: number): string[] {
  const where = memoryWhere(f, ctx.embeddingOwners)
  const params: Record<string, unknown> = { ...where.params }
  let kw = ''
  if (keywords.length > 0) {
    kw = ` AND (${keywords
      .map((k, i) => {
        params[`kw${i}`] = `%${k}%`
        return `LOWER(m.content) LIKE @kw${i}`
      })
      .join(' OR ')})`
  }
  return ctx.db
    .prepare(
      `SELECT m.id FROM (${memSqlFor(ctx, f)}) m WHERE ${where.sql}${kw} ORDER BY m.created_at DESC, m._rid DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
    )
    .pluck()
    .all(params)
    .map(String)
}

/**
 * Sessions a session-unit recall may return at `now`: agent/user/tenant (and
 * session id) of the scope, archived only when the tiers include 'archived'
 * (seed 000: `!e.IsArchived`), started within after/before, and finished by
 * `now` — a session's summary (and its vector) exists once it has ended.
 * Newest first.
 */
export function sessionsForRecall(ctx: SqliteCtx, scope: RecallScope, now: number): Session[] {
  const parts: string[] = []
  const params: Record<string, unknown> = { now }
  if (scope.agentId !== undefined) {
    parts.push('s.agent_id = @agentId')
    params.agentId = scope.agentId
  }
  if (scope.userId !== undefined) {
    parts.push('s.user_id = @userId')
    params.userId = scope.userId
  }
  if (scope.tenantId !== undefined) {
    parts.push('s.tenant_id = @tenantId')
    params.tenantId = scope.tenantId
  }
  if (scope.sessionId !== undefined) {
    parts.push('s.id = @sessionId')
    params.sessionId = scope.sessionId
  }
  if (!scope.tiers.includes('archived')) parts.push('coalesce(s.is_archived, 0) = 0')
  if (scope.after !== undefined) {
    parts.push('s.started_at >= @after')
    params.after = scope.after
  }
  if (scope.before !== undefined) {
    parts.push('s.started_at <= @before')
    params.before = scope.before
  }
  parts.push('coalesce(s.ended_at, s.started_at) <= @now')
  const rows = ctx.db
    .prepare(`SELECT s.*, 0 AS memory_count FROM (${ctx.sql.sessions}) s WHERE ${parts.join(' AND ')} ORDER BY s.started_at DESC, s.id ASC LIMIT 100000`)
    .all(params) as Record<string, unknown>[]
  return rows.map(decodeSession)
}

/** Messages of sessions (created by `now`) in turn order, for UseSessionSummaries = false. */
export function sessionMessages(ctx: SqliteCtx, sessionIds: string[], now: number): Map<string, { role: string | null; content: string }[]> {
  const out = new Map<string, { role: string | null; content: string }[]>()
  for (const id of sessionIds) out.set(id, [])
  if (sessionIds.length === 0) return out
  for (let i = 0; i < sessionIds.length; i += 500) {
    const chunk = sessionIds.slice(i, i + 500)
    const rows = ctx.db
      .prepare(
        `SELECT m.session_id AS s, m.role AS role, m.content AS content FROM (${ctx.sql.memories}) m
         WHERE m.session_id IN (${chunk.map(() => '?').join(',')}) AND (m.created_at <= ? OR m.created_at IS NULL)
         ORDER BY m.session_id, m.turn IS NULL, m.turn ASC, m.created_at ASC, m._rid ASC`,
      )
      .all(...chunk, now) as { s: string; role: string | null; content: string | null }[]
    for (const r of rows) out.get(String(r.s))?.push({ role: r.role, content: r.content ?? '' })
  }
  return out
}

/**
 * Ages of the memories in a scope at `now` (from last use, falling back to
 * creation; or from creation), as a histogram with a readable bin width.
 */
export function ageHistogram(ctx: SqliteCtx, f: MemoryFilter, now: number, from: 'last_used' | 'created', maxBins = 40): RecallAges {
  // Two scans of the scope (~0.5 s at a million memories), asked again by each screen that shows the scope at
  // this time: memoised until the DB changes.
  const key = `ages|${from}|${maxBins}|${now}|${JSON.stringify(settledFilter(ctx, f))}`
  return scopeMemoised(ctx, key, () => ageHistogramUncached(ctx, f, now, from, maxBins))
}

function ageHistogramUncached(ctx: SqliteCtx, f: MemoryFilter, now: number, from: 'last_used' | 'created', maxBins: number): RecallAges {
  const where = memoryWhere(f, ctx.embeddingOwners)
  const t =
    from === 'last_used' ? `(CASE WHEN m.last_used_at IS NOT NULL AND m.last_used_at <= @hnow THEN m.last_used_at ELSE m.created_at END)` : `m.created_at`
  const params = { ...where.params, hnow: now }
  const db = ctx.db
  const stats = db
    .prepare(
      `SELECT count(*) AS n, max(@hnow - ${t}) AS mx,
         sum(CASE WHEN m.last_used_at IS NULL OR m.last_used_at > @hnow THEN 1 ELSE 0 END) AS never
       FROM (${ctx.sql.memories}) m WHERE ${where.sql}`,
    )
    .get(params) as { n: number; mx: number | null; never: number | null }
  const maxAgeMs = Math.max(0, stats.mx ?? 0)
  const binMs = ageBinMs(maxAgeMs, maxBins)
  const counts = db
    .prepare(`SELECT CAST((@hnow - ${t}) / @w AS INTEGER) AS b, count(*) AS n FROM (${ctx.sql.memories}) m WHERE ${where.sql} GROUP BY b ORDER BY b`)
    .all({ ...params, w: binMs }) as { b: number | null; n: number }[]
  const bins = ageBins(counts, maxAgeMs, binMs)
  return { now, from, binMs, bins: stats.n === 0 ? [] : bins, total: stats.n, neverUsed: stats.never ?? 0, maxAgeMs }
}

/**
 * Stored embedding models of an owner type in the agent DB, most vectors first.
 * The GROUP BY reads a whole index (~0.5 s at 1M vectors): the caller caches it.
 */
export function agentModels(ctx: SqliteCtx, owner: 'memory' | 'session'): string[] {
  const e = ctx.sql.embeddings
  if (!e) return []
  const dm = ctx.sql.defaultModel
  const expr = dm ? `coalesce(e.model, @dm)` : 'e.model'
  return (
    prep(ctx.db, `SELECT ${expr} AS m, count(*) AS n FROM (${e}) e WHERE e.owner_type = @owner GROUP BY 1 ORDER BY n DESC, 1`).all({ owner, dm: dm ?? '' }) as {
      m: string
    }[]
  ).map((r) => String(r.m))
}

/** The workspace's backfilled models of an owner type, most vectors first. */
export function workspaceModels(ctx: SqliteCtx, owner: 'memory' | 'session'): string[] {
  return prep(ctx.ws, `SELECT model FROM ws_embeddings WHERE owner_type = ? GROUP BY 1 ORDER BY count(*) DESC, 1`).pluck().all(owner) as string[]
}

/** Where a memory ranks among the in-scope lexical matches (bm25, then `_rid`); null when it does not match. */
export function lexicalRankOf(ctx: SqliteCtx, text: string, f: MemoryFilter, id: string): number | null {
  const hit = lexicalArm(ctx, text, { ids: [id] }, 1)[0]
  if (!hit) return null
  const fts = ctx.ftsTable()
  const where = memoryWhere(f, ctx.embeddingOwners)
  const rid = (prep(ctx.db, `SELECT m._rid FROM (${ctx.sql.memoriesLite}) m WHERE m.id = ?`).pluck().get(id) as number | undefined) ?? Number.MAX_SAFE_INTEGER
  const n = ctx.db
    .prepare(
      `SELECT count(*) FROM (SELECT rowid AS rid, bm25(${fts.name}) AS rank FROM ${fts.qualified} WHERE ${fts.name} MATCH @ftsq) r
       JOIN (${memSqlFor(ctx, f)}) m ON m._rid = r.rid WHERE ${where.sql} AND (r.rank < @b OR (r.rank = @b AND m._rid < @rid))`,
    )
    .pluck()
    .get({ ...where.params, ftsq: toFtsQuery(text), b: hit.bm25, rid }) as number
  return n + 1
}
