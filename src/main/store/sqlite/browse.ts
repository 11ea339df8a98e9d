/**
 * Browsing a SQLite store: sessions and memories, paged and bounded (Datasette's
 * count_limit), rows by id (memoised per DB version), and the filtered listings
 * a recall's scope needs.
 */
import type { MemoryRow } from '../../../shared/contract'
import type { Memory, Page, Session } from '../../../shared/types'
import { decodeMemory, decodeSession, cellText } from '../decode'
import type { MemoryFilter, MemoryPageQuery, SessionPageQuery } from '../source'
import { chunks, clampLimit, likeEscape, prep } from './connection'
import { memSqlFor, type SqliteCtx } from './context'
import { toFtsQuery } from './fts'
import { toMemoryRows } from '../memoryRows'
import { memoryOrder, memoryWhere } from './where'

const memoryCount = (ctx: SqliteCtx) => `(SELECT count(*) FROM (${ctx.sql.memoriesLite}) m WHERE m.session_id = s.id) AS memory_count`

export function sessionsPage(ctx: SqliteCtx, q: SessionPageQuery = {}): Page<Session> {
  const t0 = performance.now()
  const parts: string[] = []
  const params: Record<string, unknown> = {}
  if (q.agentId !== undefined) {
    parts.push('s.agent_id = @agentId')
    params.agentId = q.agentId
  }
  if (q.userId !== undefined) {
    parts.push('s.user_id = @userId')
    params.userId = q.userId
  }
  if (q.tenantId !== undefined) {
    parts.push('s.tenant_id = @tenantId')
    params.tenantId = q.tenantId
  }
  if (!q.includeArchived && q.includeArchived !== undefined) parts.push('coalesce(s.is_archived, 0) = 0')
  if (q.search) {
    parts.push(`(s.summary LIKE @search ESCAPE '\\' OR s.id LIKE @search ESCAPE '\\')`)
    params.search = `%${likeEscape(q.search)}%`
  }
  const where = parts.length ? `WHERE ${parts.join(' AND ')}` : ''
  const limit = clampLimit(q.limit)
  const offset = Math.max(0, q.offset ?? 0)
  const dir = q.dir === 'asc' ? 'ASC' : 'DESC'
  const order =
    q.sort === 'memory_count'
      ? `memory_count ${dir}, s._rid ${dir}`
      : // DESC puts NULLs last already, so the started_at index serves the default sort (and the count subquery runs per page row only).
        `s.started_at ${dir}${dir === 'ASC' ? ' NULLS LAST' : ''}, s._rid ${dir}`
  const rows = ctx.db
    .prepare(`SELECT s.*, ${memoryCount(ctx)} FROM (${ctx.sql.sessions}) s ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`)
    .all(params) as Record<string, unknown>[]
  const { total, truncated } = ctx.cappedCount(`FROM (${ctx.sql.sessions}) s ${where}`, params)
  return { rows: rows.map(decodeSession), offset, limit, total, truncated, tookMs: performance.now() - t0 }
}

export function getSession(ctx: SqliteCtx, id: string): Session | null {
  const row = ctx.db.prepare(`SELECT s.*, ${memoryCount(ctx)} FROM (${ctx.sql.sessions}) s WHERE s.id = ?`).get(id) as Record<string, unknown> | undefined
  return row ? decodeSession(row) : null
}

/** Sessions by id (for session-unit recall). */
export function getSessions(ctx: SqliteCtx, ids: string[]): Map<string, Session> {
  const out = new Map<string, Session>()
  for (const chunk of chunks(ids, 500)) {
    const rows = ctx.db
      .prepare(`SELECT s.*, 0 AS memory_count FROM (${ctx.sql.sessions}) s WHERE s.id IN (${chunk.map(() => '?').join(',')})`)
      .all(...chunk) as Record<string, unknown>[]
    for (const r of rows) {
      const s = decodeSession(r)
      out.set(s.id, s)
    }
  }
  return out
}

export function memoriesPage(ctx: SqliteCtx, q: MemoryPageQuery = {}): Page<MemoryRow> {
  const t0 = performance.now()
  const where = memoryWhere(q, ctx.embeddingOwners)
  const limit = clampLimit(q.limit)
  const offset = Math.max(0, q.offset ?? 0)
  const sort = q.sort ?? (q.search ? 'relevance' : 'created_at')
  const dir = q.dir ?? 'desc'
  let rows: Record<string, unknown>[]
  let count: { total: number; truncated: boolean }
  const ftsQ = q.search ? toFtsQuery(q.search) : null
  if (q.search && !ftsQ) {
    rows = []
    count = { total: 0, truncated: false }
  } else if (ftsQ) {
    const fts = ctx.ftsTable()
    const params = { ...where.params, ftsq: ftsQ }
    const from = (src: string) =>
      `FROM (${src}) m JOIN (SELECT rowid AS rid, bm25(${fts.name}) AS rank FROM ${fts.qualified} WHERE ${fts.name} MATCH @ftsq) r ON r.rid = m._rid WHERE ${where.sql}`
    rows = ctx.db
      .prepare(`SELECT m.*, r.rank AS rank ${from(ctx.sql.memories)} ORDER BY ${memoryOrder(sort, dir, true)} LIMIT ${limit} OFFSET ${offset}`)
      .all(params) as Record<string, unknown>[]
    count = ctx.cappedCount(from(memSqlFor(ctx, q)), params)
  } else {
    const lite = `FROM (${memSqlFor(ctx, q)}) m WHERE ${where.sql}`
    const order = memoryOrder(sort, dir, false)
    // Deferred join: find the page's row keys on the lean source (an index walk, even deep
    // into the list), then read just those rows with their session's tenant.
    const keys = ctx.db.prepare(`SELECT m._rid ${lite} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`).pluck().all(where.params) as number[]
    const byRid = new Map<number, Record<string, unknown>>()
    if (keys.length)
      for (const r of ctx.db
        .prepare(`SELECT m.* FROM (${ctx.sql.memories}) m WHERE m._rid IN (SELECT value FROM json_each(?))`)
        .all(JSON.stringify(keys)) as Record<string, unknown>[])
        byRid.set(Number(r._rid), r)
    rows = keys.map((k) => byRid.get(k)).filter((r): r is Record<string, unknown> => r !== undefined)
    count = ctx.cappedCount(lite, where.params)
  }
  const embedded = idsWithEmbedding(
    ctx,
    rows.map((r) => String(r.id)),
  )
  return { rows: toMemoryRows(rows, embedded, q.search), offset, limit, ...count, tookMs: performance.now() - t0 }
}

/** Which of these ids have at least one stored vector (the agent's or a backfilled one). */
export function idsWithEmbedding(ctx: SqliteCtx, ids: string[]): Set<string> {
  const out = new Set<string>()
  if (ids.length === 0) return out
  const st = prep(
    ctx.db,
    ctx.embeddingOwners
      .map((src) => `SELECT owner_id FROM (${src}) WHERE owner_type = 'memory' AND owner_id IN (SELECT value FROM json_each(@ids))`)
      .join(' UNION '),
  ).pluck()
  for (const chunk of chunks(ids, 5000)) for (const id of st.all({ ids: JSON.stringify(chunk) }) as string[]) out.add(String(id))
  return out
}

export function getMemory(ctx: SqliteCtx, id: string): Memory | null {
  const row = ctx.db.prepare(`SELECT m.* FROM (${ctx.sql.memories}) m WHERE m.id = ?`).get(id) as Record<string, unknown> | undefined
  return row ? decodeMemory(row) : null
}

/** The raw `metadata` value of a memory (to show what could not be parsed). */
export function rawMetadata(ctx: SqliteCtx, id: string): unknown {
  return ctx.db.prepare(`SELECT metadata FROM (${ctx.sql.memories}) WHERE id = ?`).pluck().get(id)
}

/** A memory's `_rid` (storage order), or null. */
export function rowKey(ctx: SqliteCtx, id: string): number | null {
  const r = prep(ctx.db, `SELECT m._rid FROM (${ctx.sql.memoriesLite}) m WHERE m.id = ?`).pluck().get(id) as number | undefined
  return r === undefined ? null : Number(r)
}

/** Memories by id, one statement per 5,000 ids, memoised until the DB changes. Missing ids are absent. */
export function getMemories(ctx: SqliteCtx, ids: string[]): Map<string, Memory> {
  const out = new Map<string, Memory>()
  const cache = ctx.memo()
  // Recalls ask for rows already decoded (an eval: the same few hundred, case after case): no set of all ids.
  const miss = new Set<string>()
  for (const id of ids) {
    const hit = cache.memories.get(id)
    if (hit) out.set(id, hit)
    else miss.add(id)
  }
  if (miss.size === 0) return out
  const missing = [...miss]
  // One statement for any number of ids (a JSON list), prepared once.
  const st = prep(ctx.db, `SELECT m.* FROM (${ctx.sql.memories}) m WHERE m.id IN (SELECT value FROM json_each(?))`)
  for (const chunk of chunks(missing, 5000)) {
    for (const r of st.all(JSON.stringify(chunk)) as Record<string, unknown>[]) {
      const m = decodeMemory(r)
      out.set(m.id, m)
      cache.memories.set(m.id, m)
    }
  }
  if (cache.memories.size > 200_000) cache.memories.clear()
  return out
}

/** Memories matching a filter, unpaged but capped (recall scopes). Newest first by default. */
export function memoriesWhere(ctx: SqliteCtx, f: MemoryFilter, opts: { limit?: number; order?: 'created_desc' | 'created_asc' | 'turn' } = {}): Memory[] {
  const where = memoryWhere(f, ctx.embeddingOwners)
  const order =
    opts.order === 'created_asc'
      ? 'm.created_at ASC, m._rid ASC'
      : opts.order === 'turn'
        ? 'm.turn IS NULL, m.turn ASC, m.created_at ASC, m._rid ASC'
        : 'm.created_at DESC, m._rid DESC'
  const limit = opts.limit !== undefined ? `LIMIT ${Math.max(0, Math.floor(opts.limit))}` : ''
  const rows = ctx.db.prepare(`SELECT m.* FROM (${ctx.sql.memories}) m WHERE ${where.sql} ORDER BY ${order} ${limit}`).all(where.params) as Record<
    string,
    unknown
  >[]
  return rows.map((r) => decodeMemory(r))
}

/** Ids matching a filter (cheap: ids only), capped. */
export function idsWhere(ctx: SqliteCtx, f: MemoryFilter, cap = 5_000_000): string[] {
  const where = memoryWhere(f, ctx.embeddingOwners)
  return ctx.db
    .prepare(`SELECT m.id FROM (${memSqlFor(ctx, f)}) m WHERE ${where.sql} LIMIT ${cap}`)
    .pluck()
    .all(where.params)
    .map(String)
}

/** How many memories match a filter, capped. */
export function countWhere(ctx: SqliteCtx, f: MemoryFilter): { total: number; truncated: boolean } {
  const where = memoryWhere(f, ctx.embeddingOwners)
  return ctx.cappedCount(`FROM (${memSqlFor(ctx, f)}) m WHERE ${where.sql}`, where.params)
}

/**
 * Rows of a filter in `_rid` order after a key: long walks (backfill) page by key,
 * never by offset. `hasEmbedding` here means the agent's own vectors (a backfill
 * walks what the agent left without one).
 */
export function walkMemories(ctx: SqliteCtx, f: MemoryFilter, afterKey: number, limit: number): { key: number; id: string; content: string }[] {
  const where = memoryWhere(f, ctx.sql.embeddings)
  const rows = prep(
    ctx.db,
    `SELECT m._rid, m.id, m.content FROM (${memSqlFor(ctx, f)}) m WHERE ${where.sql} AND m._rid > @after ORDER BY m._rid LIMIT ${Math.max(1, Math.floor(limit))}`,
  )
    .raw(true)
    .all({ ...where.params, after: afterKey }) as [number, unknown, unknown][]
  return rows.map(([key, id, content]) => ({ key: Number(key), id: cellText(id), content: content == null ? '' : cellText(content) }))
}

/** Exact row count of a walk's filter (same meaning of `hasEmbedding` as walkMemories). */
export function walkCount(ctx: SqliteCtx, f: MemoryFilter): number {
  const where = memoryWhere(f, ctx.sql.embeddings)
  return prep(ctx.db, `SELECT count(*) FROM (${memSqlFor(ctx, f)}) m WHERE ${where.sql}`)
    .pluck()
    .get(where.params) as number
}
