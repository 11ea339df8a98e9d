/**
 * Recall-specific SQL over a Store: scope → MemoryFilter (with time travel),
 * Engram's keyword fallback, sessions for session-unit recall, and the age
 * histogram behind the UI's decay curve.
 *
 * Time travel: a recall at `now` sees only rows created at or before `now`
 * (they are left out of every arm, not gated, so nothing from the future can
 * leak into a trace); a last_used_at later than `now` is unknown at that moment
 * and counts as never used.
 */
import type Database from 'better-sqlite3'
import type { RecallAges } from '../../shared/contract'
import type { RecallScope, Session } from '../../shared/types'
import type { Store } from '../store/open'
import { memoryWhere, type MemoryFilter } from '../store/queries'
import { decodeSession } from '../store/decode'
import { toFtsQuery } from '../store/fts'

/**
 * The memories sub-select for a filter: without the sessions join (no per-row
 * tenant lookup) unless the filter needs the tenant.
 */
export function memSql(store: Store, f: MemoryFilter): string {
  return f.tenantId === undefined ? (store.source.memoriesLite ?? store.source.memories) : store.source.memories
}

const stmtCache = new WeakMap<Database.Database, Map<string, Database.Statement>>()

/** A prepared statement, reused across recalls (SQL text is the key; at most 256 per connection). */
export function prep(db: Database.Database, sql: string): Database.Statement {
  let m = stmtCache.get(db)
  if (!m) stmtCache.set(db, (m = new Map()))
  let st = m.get(sql)
  if (!st) {
    if (m.size >= 256) m.delete(m.keys().next().value!)
    st = db.prepare(sql)
    m.set(sql, st)
  }
  return st
}

/** Ids and row keys (`_rid`) of a scope, at most `cap` (cap + 1 rows tell "more"). */
export function scopeRows(store: Store, f: MemoryFilter, cap: number): { ids: string[]; rids: number[] } {
  // Eval and replay ask for the same scope once per case: memoised until the DB changes.
  const memo = store.memo().scopes
  const key = `rows|${cap}|${JSON.stringify(f)}`
  const hit = memo.get(key) as { ids: string[]; rids: number[] } | undefined
  if (hit) return hit
  if (memo.size > 500) memo.clear()
  const out = scopeRowsUncached(store, f, cap)
  memo.set(key, out)
  return out
}

function scopeRowsUncached(store: Store, f: MemoryFilter, cap: number): { ids: string[]; rids: number[] } {
  const where = memoryWhere(f, store.embeddingOwners)
  const rows = prep(store.db, `SELECT m.id, m._rid FROM (${memSql(store, f)}) m WHERE ${where.sql} LIMIT ${Math.max(0, Math.floor(cap))}`)
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
export function lexicalArm(store: Store, text: string, f: MemoryFilter, limit: number, ridRange?: [number, number] | null): { id: string; bm25: number }[] {
  return lexicalPass(store, text, f, limit, ridRange ?? null, []).hits
}

export interface LexicalPass {
  /** the best `limit` in-scope matches, best first */
  hits: { id: string; bm25: number }[]
  /** bm25 of each requested `alsoIds` id (in-scope rows, e.g. dense hits) that matches; absent = no match */
  also: Map<string, number>
  /** every requested id was checked */
  alsoKnown: boolean
  /** which strategy ran (tests, timings) */
  path: 'range' | 'prefix' | 'join'
}

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
export function lexicalPass(
  store: Store,
  text: string,
  f: MemoryFilter,
  limit: number,
  ridRange: [number, number] | null,
  alsoIds: string[],
  listed?: { ids: string[]; rids: number[] },
): LexicalPass {
  const q = toFtsQuery(text)
  const empty: LexicalPass = { hits: [], also: new Map(), alsoKnown: true, path: 'join' }
  if (!q || limit <= 0) return empty
  const fts = store.ftsTable()
  limit = Math.floor(limit)
  if (listed && ridRange && alsoIds.length === 0) return listedPass(store, fts, q, limit, ridRange, listed)
  if (!ridRange && store.source.layout === 'canonical' && !f.ids) return prefixPass(store, fts, q, f, limit, alsoIds)
  const hits = joinPass(store, fts, q, f, limit, ridRange)
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
      for (const h of joinPass(store, fts, q, { ids: chunk }, chunk.length, null)) also.set(h.id, h.bm25)
    }
  return { hits, also, alsoKnown: true, path: ridRange ? 'range' : 'join' }
}

type Fts = { name: string; qualified: string }

const ridMaps = new WeakMap<{ rids: number[] }, Map<number, string>>()

/**
 * A small scope whose rows are already listed (ids + `_rid`s): FTS alone over the
 * scope's `_rid` range, in (bm25, rowid) order, kept when the rowid is in the
 * list — no join to memories per match. Reads grow ×4 until `limit` in-scope rows
 * survive or the range runs out. Exact for the same reason as prefixPass: the
 * listed rows are exactly the scope, and a filtered prefix of the range's order
 * is a prefix of the scope's order.
 */
function listedPass(store: Store, fts: Fts, q: string, limit: number, range: [number, number], listed: { ids: string[]; rids: number[] }): LexicalPass {
  let byRid = ridMaps.get(listed)
  if (!byRid) {
    byRid = new Map(listed.rids.map((r, i) => [r, listed.ids[i]]))
    ridMaps.set(listed, byRid)
  }
  const st = prep(
    store.db,
    `SELECT rowid, bm25(${fts.name}) AS b FROM ${fts.qualified} WHERE ${fts.name} MATCH @ftsq AND rowid BETWEEN @lo AND @hi ORDER BY b ASC, rowid ASC LIMIT @lim`,
  ).raw(true)
  for (let lim = Math.max(limit, 64); ; lim *= 4) {
    const rows = st.all({ ftsq: q, lo: range[0], hi: range[1], lim }) as [number, number][]
    const hits: { id: string; bm25: number }[] = []
    for (const [rid, b] of rows) {
      const id = byRid.get(Number(rid))
      if (id === undefined) continue
      hits.push({ id, bm25: b })
      if (hits.length >= limit) break
    }
    if (hits.length >= limit || rows.length < lim) return { hits, also: new Map(), alsoKnown: true, path: 'range' }
  }
}

/** The scoped top `limit` in one pass: every match joined to memories, filtered, sorted. */
function joinPass(store: Store, fts: Fts, q: string, f: MemoryFilter, limit: number, ridRange: [number, number] | null): { id: string; bm25: number }[] {
  const where = memoryWhere(f, store.embeddingOwners)
  const range = ridRange ? ` AND rowid BETWEEN @ridLo AND @ridHi` : ''
  const params: Record<string, unknown> = { ...where.params, ftsq: q }
  if (ridRange) [params.ridLo, params.ridHi] = ridRange
  const rows = prep(
    store.db,
    `SELECT m.id AS id, r.rank AS bm25 FROM (SELECT rowid AS rid, bm25(${fts.name}) AS rank FROM ${fts.qualified} WHERE ${fts.name} MATCH @ftsq${range}) r
     JOIN (${memSql(store, f)}) m ON m._rid = r.rid WHERE ${where.sql} ORDER BY r.rank ASC, m._rid ASC LIMIT ${limit}`,
  )
    .raw(true)
    .all(params) as [unknown, number][]
  return rows.map((r) => ({ id: String(r[0]), bm25: r[1] }))
}

function prefixPass(store: Store, fts: Fts, q: string, f: MemoryFilter, limit: number, alsoIds: string[]): LexicalPass {
  const where = memoryWhere(f, store.embeddingOwners)
  // The also ids' row keys (memories.id is indexed).
  const alsoRid = new Map<number, string>()
  if (alsoIds.length) {
    const rows = prep(store.db, `SELECT m._rid, m.id FROM (${store.source.memoriesLite}) m WHERE m.id IN (SELECT value FROM json_each(@ids))`)
      .raw(true)
      .all({ ids: JSON.stringify(alsoIds) }) as [number, unknown][]
    for (const [rid, id] of rows) alsoRid.set(Number(rid), String(id))
  }
  const alsoJson = JSON.stringify([...alsoRid.keys()])
  const top = prep(
    store.db,
    `SELECT rowid, bm25(${fts.name}) AS b, rowid IN (SELECT value FROM json_each(@also)) AS a FROM ${fts.qualified}
     WHERE ${fts.name} MATCH @ftsq ORDER BY a DESC, b ASC, rowid ASC LIMIT @lim`,
  ).raw(true)
  // CROSS JOIN: probe memories by rowid for each candidate (else SQLite may scan an index of the whole scope).
  const inScope = prep(
    store.db,
    `SELECT m._rid, m.id FROM json_each(@rids) j CROSS JOIN (${memSql(store, f)}) m ON m._rid = j.value WHERE ${where.sql}`,
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
    for (const [rid, id] of inScope.all({ ...where.params, rids: JSON.stringify(merged.map((x) => x[0])) }) as [number, unknown][]) ok.set(Number(rid), String(id))
    const hits: { id: string; bm25: number }[] = []
    for (const [rid, b] of merged) {
      const id = ok.get(rid)
      if (id === undefined) continue
      hits.push({ id, bm25: b })
      if (hits.length >= limit) break
    }
    if (hits.length >= limit || exhausted) return { hits, also, alsoKnown: true, path: 'prefix' }
    n *= 4
    if (n > PREFIX_MAX_FACTOR * limit) return { hits: joinPass(store, fts, q, f, limit, null), also, alsoKnown: true, path: 'join' }
  }
}

/** The scope of the primary group as a MemoryFilter at `now`. */
export function scopeFilter(scope: RecallScope, now: number): MemoryFilter {
  return {
    agentId: scope.agentId,
    userId: scope.userId,
    sessionId: scope.sessionId,
    tenantId: scope.tenantId,
    tiers: scope.tiers,
    kinds: scope.kinds,
    roles: scope.roles,
    after: scope.after,
    before: scope.before === undefined ? now : Math.min(scope.before, now),
  }
}

/**
 * Engram's userId blend: that user's cross-session memories (user_id set,
 * session_id NULL). Engram's blendUserMemories calls recallUser(userId, query,
 * ceil(limit/2)) without the caller's tiers, role or dates, so neither do we:
 * working + long_term, same agent when the scope names one.
 */
export function blendFilter(scope: RecallScope, now: number): MemoryFilter | null {
  if (!scope.blendUserId) return null
  return { agentId: scope.agentId, userId: scope.blendUserId, noSession: true, tiers: ['working', 'long_term'], before: now }
}

/** How many rows a filter matches, counting at most `cap` (+1 tells "more"). */
export function countScope(store: Store, f: MemoryFilter, cap = 10_000): { count: number; capped: boolean } {
  const memo = store.memo().scopes
  const key = `count|${cap}|${JSON.stringify(f)}`
  const hit = memo.get(key) as { count: number; capped: boolean } | undefined
  if (hit) return hit
  const where = memoryWhere(f, store.embeddingOwners)
  const n = prep(store.db, `SELECT count(*) FROM (SELECT 1 FROM (${memSql(store, f)}) m WHERE ${where.sql} LIMIT ${cap + 1})`).pluck().get(where.params) as number
  const out = n > cap ? { count: cap, capped: true } : { count: n, capped: false }
  if (memo.size > 500) memo.clear()
  memo.set(key, out)
  return out
}

/** seed 002 keywords: `query.toLowerCase().split(/\s+/).filter(k => k.length > 2)`. */
export function engramKeywords(query: string): string[] {
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter((k) => k.length > 2)
}

/**
 * seed 002 keyword fallback: rows whose LOWER(content) LIKE '%kw%' for any
 * keyword, newest first. Like Engram, `%` and `_` in a keyword stay LIKE
 * wildcards; no keyword at all matches every row.
 */
export function keywordSearch(store: Store, f: MemoryFilter, keywords: string[], limit: number): string[] {
  const where = memoryWhere(f, store.embeddingOwners)
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
  return (
    store.db
      .prepare(`SELECT m.id FROM (${memSql(store, f)}) m WHERE ${where.sql}${kw} ORDER BY m.created_at DESC, m._rid DESC LIMIT ${Math.max(0, Math.floor(limit))}`)
      .pluck()
      .all(params) as unknown[]
  ).map(String)
}

/**
 * Sessions a session-unit recall may return at `now`: agent/user/tenant (and
 * session id) of the scope, archived only when the tiers include 'archived'
 * (seed 000: `!e.IsArchived`), started within after/before, and finished by
 * `now` — a session's summary (and its vector) exists once it has ended.
 * Newest first.
 */
export function sessionsForRecall(store: Store, scope: RecallScope, now: number): Session[] {
  const parts: string[] = []
  const params: Record<string, unknown> = { now }
  if (scope.agentId !== undefined) (parts.push('s.agent_id = @agentId'), (params.agentId = scope.agentId))
  if (scope.userId !== undefined) (parts.push('s.user_id = @userId'), (params.userId = scope.userId))
  if (scope.tenantId !== undefined) (parts.push('s.tenant_id = @tenantId'), (params.tenantId = scope.tenantId))
  if (scope.sessionId !== undefined) (parts.push('s.id = @sessionId'), (params.sessionId = scope.sessionId))
  if (!scope.tiers.includes('archived')) parts.push('coalesce(s.is_archived, 0) = 0')
  if (scope.after !== undefined) (parts.push('s.started_at >= @after'), (params.after = scope.after))
  if (scope.before !== undefined) (parts.push('s.started_at <= @before'), (params.before = scope.before))
  parts.push('coalesce(s.ended_at, s.started_at) <= @now')
  const rows = store.db
    .prepare(`SELECT s.*, 0 AS memory_count FROM (${store.source.sessions}) s WHERE ${parts.join(' AND ')} ORDER BY s.started_at DESC, s.id ASC LIMIT 100000`)
    .all(params) as Record<string, unknown>[]
  return rows.map(decodeSession)
}

/** Messages of sessions (created by `now`) in turn order, for UseSessionSummaries = false. */
export function sessionMessages(store: Store, sessionIds: string[], now: number): Map<string, { role: string | null; content: string }[]> {
  const out = new Map<string, { role: string | null; content: string }[]>()
  for (const id of sessionIds) out.set(id, [])
  if (sessionIds.length === 0) return out
  for (let i = 0; i < sessionIds.length; i += 500) {
    const chunk = sessionIds.slice(i, i + 500)
    const rows = store.db
      .prepare(
        `SELECT m.session_id AS s, m.role AS role, m.content AS content FROM (${store.source.memories}) m
         WHERE m.session_id IN (${chunk.map(() => '?').join(',')}) AND m.created_at <= ?
         ORDER BY m.session_id, m.turn IS NULL, m.turn ASC, m.created_at ASC, m._rid ASC`,
      )
      .all(...chunk, now) as { s: string; role: string | null; content: string | null }[]
    for (const r of rows) out.get(String(r.s))?.push({ role: r.role, content: r.content ?? '' })
  }
  return out
}

/** DESIGN: the UI's decay curve (contract `recall.ages`). */
export type AgeHistogram = RecallAges

const NICE_BINS_H = [1, 2, 3, 6, 12, 24, 48, 72, 168, 336, 720, 1440, 2160, 4320, 8760]

/**
 * Ages of the memories in a scope at `now` (from last use, falling back to
 * creation; or from creation), as a histogram with a readable bin width.
 */
export function ageHistogram(store: Store, scope: RecallScope, now: number, from: 'last_used' | 'created', maxBins = 40): AgeHistogram {
  const f = scopeFilter(scope, now)
  const where = memoryWhere(f, store.embeddingOwners)
  const t =
    from === 'last_used'
      ? `(CASE WHEN m.last_used_at IS NOT NULL AND m.last_used_at <= @hnow THEN m.last_used_at ELSE m.created_at END)`
      : `m.created_at`
  const params = { ...where.params, hnow: now }
  const db: Database.Database = store.db
  const stats = db
    .prepare(
      `SELECT count(*) AS n, max(@hnow - ${t}) AS mx,
         sum(CASE WHEN m.last_used_at IS NULL OR m.last_used_at > @hnow THEN 1 ELSE 0 END) AS never
       FROM (${store.source.memories}) m WHERE ${where.sql}`,
    )
    .get(params) as { n: number; mx: number | null; never: number | null }
  const maxAgeMs = Math.max(0, stats.mx ?? 0)
  const hours = maxAgeMs / 3_600_000 / Math.max(1, maxBins)
  const binH = NICE_BINS_H.find((h) => h >= hours) ?? Math.ceil(hours / 8760) * 8760
  const binMs = binH * 3_600_000
  const counts = db
    .prepare(`SELECT CAST((@hnow - ${t}) / @w AS INTEGER) AS b, count(*) AS n FROM (${store.source.memories}) m WHERE ${where.sql} GROUP BY b ORDER BY b`)
    .all({ ...params, w: binMs }) as { b: number; n: number }[]
  const nb = Math.max(1, Math.floor(maxAgeMs / binMs) + 1)
  const bins = Array.from({ length: nb }, (_, i) => ({ startMs: i * binMs, endMs: (i + 1) * binMs, count: 0 }))
  for (const c of counts) if (c.b >= 0 && c.b < nb) bins[c.b].count += c.n
  return { now, from, binMs, bins: stats.n === 0 ? [] : bins, total: stats.n, neverUsed: stats.never ?? 0, maxAgeMs }
}

const modelsCache = new WeakMap<Store, Map<string, { version: string; models: string[] }>>()

/**
 * Stored embedding models of an owner type, most vectors first, then models only
 * the workspace has (backfilled). The GROUP BY reads a whole index (~0.5 s at 1M
 * vectors), so the answer is kept until a commit may have changed it.
 */
export function storedModels(store: Store, owner: 'memory' | 'session' = 'memory'): string[] {
  let byOwner = modelsCache.get(store)
  if (!byOwner) modelsCache.set(store, (byOwner = new Map()))
  const version = store.vectorDataVersion()
  const hit = byOwner.get(owner)
  if (hit && hit.version === version) return [...hit.models]
  const out: string[] = []
  const e = store.source.embeddings
  if (e) {
    const dm = store.source.defaultModel
    const expr = dm ? `coalesce(e.model, @dm)` : 'e.model'
    for (const r of prep(store.db, `SELECT ${expr} AS m, count(*) AS n FROM (${e}) e WHERE e.owner_type = @owner GROUP BY 1 ORDER BY n DESC, 1`).all({ owner, dm: dm ?? '' }) as { m: string }[])
      out.push(String(r.m))
  }
  for (const m of prep(store.ws, `SELECT model FROM ws_embeddings WHERE owner_type = ? GROUP BY 1 ORDER BY count(*) DESC, 1`).pluck().all(owner) as string[])
    if (!out.includes(m)) out.push(m)
  byOwner.set(owner, { version, models: out })
  return [...out]
}
