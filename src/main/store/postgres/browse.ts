/**
 * The Postgres source's browsing: session and memory pages (keyset after the first page), rows by id, filters, the backfill walk.
 * Functions over PgCtx (context.ts); PgSource delegates to them.
 */
import type { MemoryRow } from '../../../shared/contract'
import type { Memory, Page, Session } from '../../../shared/types'
import { decodeMemory, decodeSession } from '../decode'
import type { MemoryFilter, MemoryPageQuery, SessionPageQuery } from '../source'
import { toMemoryRows } from '../memoryRows'
import { pgNormalizeExpr, textLookup, type TextMatches } from '../textMatch'
import { likeEscape, memoryOrder, memoryWhere, Params } from './where'
import { clampLimit, docExpr, tsq, type PgCtx } from './context'
import { backfilled } from './vectors'

/** count(*) capped at countCap (reads at most cap + 1 rows). */
export function cappedCount(ctx: PgCtx, fromWhere: string, params: unknown[]): { total: number; truncated: boolean } {
  const cap = ctx.countCap
  const n = Number(ctx.q<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 ${fromWhere} LIMIT ${cap + 1}) t`, params)[0].n)
  return n > cap ? { total: cap, truncated: true } : { total: n, truncated: false }
}

function sessionCols(ctx: PgCtx): string {
  return `s.*, (SELECT count(*) FROM (${ctx.sql.memories}) mc WHERE mc.session_id = s.id)::int AS memory_count`
}

export function sessionsPage(ctx: PgCtx, q: SessionPageQuery = {}): Page<Session> {
  const t0 = performance.now()
  const ps = new Params()
  const parts: string[] = []
  if (q.agentId !== undefined) parts.push(`s.agent_id = ${ps.p(q.agentId)}`)
  if (q.userId !== undefined) parts.push(`s.user_id = ${ps.p(q.userId)}`)
  if (q.tenantId !== undefined) parts.push(`s.tenant_id = ${ps.p(q.tenantId)}`)
  if (q.includeArchived === false) parts.push('coalesce(s.is_archived, 0) = 0')
  if (q.search) {
    const s = ps.p(`%${likeEscape(q.search)}%`)
    parts.push(`(s.summary ILIKE ${s} OR s.id ILIKE ${s})`)
  }
  const where = parts.length ? `WHERE ${parts.join(' AND ')}` : ''
  const limit = clampLimit(q.limit)
  const offset = Math.max(0, q.offset ?? 0)
  const dir = q.dir === 'asc' ? 'ASC' : 'DESC'
  const order = q.sort === 'memory_count' ? `memory_count ${dir}, s.id ${dir}` : `s.started_at ${dir} NULLS LAST, s.id ${dir}`
  const rows = ctx.q(`SELECT ${sessionCols(ctx)} FROM (${ctx.sql.sessions}) s ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`, ps.values)
  const count = cappedCount(ctx, `FROM (${ctx.sql.sessions}) s ${where}`, ps.values)
  return { rows: rows.map(decodeSession), offset, limit, ...count, tookMs: performance.now() - t0 }
}

export function getSession(ctx: PgCtx, id: string): Session | null {
  const r = ctx.q(`SELECT ${sessionCols(ctx)} FROM (${ctx.sql.sessions}) s WHERE s.id = $1`, [id])[0]
  return r ? decodeSession(r) : null
}

export function getSessions(ctx: PgCtx, ids: string[]): Map<string, Session> {
  const out = new Map<string, Session>()
  if (ids.length === 0) return out
  for (const r of ctx.q(`SELECT s.*, 0 AS memory_count FROM (${ctx.sql.sessions}) s WHERE s.id = ANY($1::text[])`, [ids])) {
    const s = decodeSession(r)
    out.set(s.id, s)
  }
  return out
}

/**
 * A page of memories. The default sort (created_at) pages by keyset when the
 * request continues the previous page (offset = last offset + limit): the
 * next page starts after the last row's (created_at, id), not at an OFFSET.
 */
export function memoriesPage(ctx: PgCtx, q: MemoryPageQuery = {}): Page<MemoryRow> {
  const t0 = performance.now()
  const ps = new Params()
  const where = memoryWhere(q, ps, ctx.sql.embeddings)
  const limit = clampLimit(q.limit)
  const offset = Math.max(0, q.offset ?? 0)
  const sort = q.sort ?? (q.search ? 'relevance' : 'created_at')
  const dir = q.dir ?? 'desc'
  let rows: Record<string, unknown>[]
  let count: { total: number; truncated: boolean }
  if (q.search) {
    const t = ps.p(q.search)
    const from = `FROM (SELECT m.*, ts_rank_cd(${docExpr('m')}, ${tsq(t)}) AS rank FROM (${ctx.sql.memories}) m WHERE ${docExpr('m')} @@ ${tsq(t)} AND ${where}) m`
    rows = ctx.q(`SELECT m.* ${from} ORDER BY ${memoryOrder(sort, dir, true)} LIMIT ${limit} OFFSET ${offset}`, ps.values)
    count = cappedCount(ctx, from, ps.values)
  } else if (sort === 'created_at') {
    const inf = dir === 'asc' ? `'Infinity'::float8` : `'-Infinity'::float8`
    const key = `coalesce(m.created_at, ${inf})`
    const d = dir === 'asc' ? 'ASC' : 'DESC'
    const sig = JSON.stringify({ ...q, offset: undefined })
    const cur = ctx.cursors.get(sig)
    let sqlWhere = where
    let off = offset
    if (offset > 0 && cur && cur.offset === offset) {
      const pk = ps.p(cur.key[0])
      const pid = ps.p(cur.key[1])
      sqlWhere = `${where} AND (${key}, m.id) ${dir === 'asc' ? '>' : '<'} (${pk}::float8, ${pid}::text)`
      off = 0
    }
    rows = ctx.q(`SELECT m.* FROM (${ctx.sql.memories}) m WHERE ${sqlWhere} ORDER BY ${key} ${d}, m.id ${d} LIMIT ${limit} OFFSET ${off}`, ps.values)
    const last = rows.at(-1)
    if (last) {
      if (ctx.cursors.size > 50) ctx.cursors.clear()
      const ca = last.created_at === null ? (dir === 'asc' ? Infinity : -Infinity) : Number(last.created_at)
      ctx.cursors.set(sig, { offset: offset + rows.length, key: [ca, String(last.id)] })
    }
    const cps = new Params()
    count = cappedCount(ctx, `FROM (${ctx.sql.memories}) m WHERE ${memoryWhere(q, cps, ctx.sql.embeddings)}`, cps.values)
  } else {
    rows = ctx.q(`SELECT m.* FROM (${ctx.sql.memories}) m WHERE ${where} ORDER BY ${memoryOrder(sort, dir, false)} LIMIT ${limit} OFFSET ${offset}`, ps.values)
    count = cappedCount(ctx, `FROM (${ctx.sql.memories}) m WHERE ${where}`, ps.values)
  }
  const embedded = ctx.idsWithEmbedding(rows.map((r) => String(r.id)))
  return { rows: toMemoryRows(rows, embedded, q.search), offset, limit, ...count, tookMs: performance.now() - t0 }
}

export function getMemory(ctx: PgCtx, id: string): Memory | null {
  return ctx.getMemories([id]).get(id) ?? null
}

export function getMemories(ctx: PgCtx, ids: string[]): Map<string, Memory> {
  const out = new Map<string, Memory>()
  const missing: string[] = []
  for (const id of new Set(ids)) {
    const hit = ctx.memo.get(id)
    if (hit) out.set(id, hit)
    else missing.push(id)
  }
  for (let i = 0; i < missing.length; i += 5000) {
    for (const r of ctx.q(`SELECT m.* FROM (${ctx.sql.memories}) m WHERE m.id = ANY($1::text[])`, [missing.slice(i, i + 5000)])) {
      const m = decodeMemory(r)
      out.set(m.id, m)
      ctx.memo.set(m.id, m)
    }
  }
  if (ctx.memo.size > 200_000) ctx.memo.clear()
  return out
}

export function rawMetadata(ctx: PgCtx, id: string): unknown {
  return ctx.q<{ metadata: unknown }>(`SELECT m.metadata FROM (${ctx.sql.memories}) m WHERE m.id = $1`, [id])[0]?.metadata ?? null
}

export function idsWithEmbedding(ctx: PgCtx, ids: string[]): Set<string> {
  const out = new Set<string>()
  if (ids.length === 0) return out
  // Backfilled ones (the workspace's) count too.
  for (const m of ctx.workspace.vectorModels()) {
    if (m.ownerType !== 'memory') continue
    const idx = backfilled(ctx, m.model, 'memory')
    for (const id of ids) if (idx.rowOf.has(id)) out.add(id)
  }
  if (!ctx.sql.embeddings) return out
  for (const r of ctx.q<{ id: string }>(
    `SELECT DISTINCT e.owner_id AS id FROM (${ctx.sql.embeddings}) e WHERE e.owner_type = 'memory' AND e.owner_id = ANY($1::text[])`,
    [ids],
  ))
    out.add(r.id)
  return out
}

export function memoriesWhere(ctx: PgCtx, f: MemoryFilter, opts: { limit?: number; order?: 'created_desc' | 'created_asc' | 'turn' } = {}): Memory[] {
  const ps = new Params()
  const where = memoryWhere(f, ps, ctx.sql.embeddings)
  const order =
    opts.order === 'created_asc'
      ? 'm.created_at ASC, m.id ASC'
      : opts.order === 'turn'
        ? 'm.turn ASC NULLS LAST, m.created_at ASC, m.id ASC'
        : 'm.created_at DESC, m.id DESC'
  const limit = opts.limit !== undefined ? `LIMIT ${Math.max(0, Math.floor(opts.limit))}` : ''
  return ctx.q(`SELECT m.* FROM (${ctx.sql.memories}) m WHERE ${where} ORDER BY ${order} ${limit}`, ps.values).map((r) => decodeMemory(r))
}

export function idsWhere(ctx: PgCtx, f: MemoryFilter, cap = 5_000_000): string[] {
  const ps = new Params()
  const where = memoryWhere(f, ps, ctx.sql.embeddings)
  return ctx.bridge
    .query<[string]>(`SELECT m.id FROM (${ctx.sql.memories}) m WHERE ${where} LIMIT ${Math.max(0, Math.floor(cap))}`, ps.values, { rowMode: 'array' })
    .map((r) => String(r[0]))
}

export function countWhere(ctx: PgCtx, f: MemoryFilter): { total: number; truncated: boolean } {
  const ps = new Params()
  return cappedCount(ctx, `FROM (${ctx.sql.memories}) m WHERE ${memoryWhere(f, ps, ctx.sql.embeddings)}`, ps.values)
}

/** Rows in id order after an ordinal key: keyset by the id remembered for that key (offset only for an unknown key). */
export function walkMemories(ctx: PgCtx, f: MemoryFilter, afterKey: number, limit: number): { key: number; id: string; content: string }[] {
  const sig = JSON.stringify(f)
  let keys = ctx.walkKeys.get(sig)
  if (!keys) ctx.walkKeys.set(sig, (keys = new Map<number, string>()))
  const ps = new Params()
  let where = memoryWhere(f, ps, ctx.sql.embeddings)
  const lastId = afterKey > 0 ? keys.get(afterKey) : undefined
  let offset = 0
  if (lastId !== undefined) where += ` AND m.id > ${ps.p(lastId)}`
  else if (afterKey > 0) offset = afterKey
  const rows = ctx.bridge.query<[string, string | null]>(
    `SELECT m.id, m.content FROM (${ctx.sql.memories}) m WHERE ${where} ORDER BY m.id LIMIT ${Math.max(1, Math.floor(limit))} OFFSET ${offset}`,
    ps.values,
    { rowMode: 'array' },
  )
  const out = rows.map(([id, content], i) => ({ key: Math.max(0, afterKey) + i + 1, id: String(id), content: content ?? '' }))
  const last = out.at(-1)
  if (last) keys.set(last.key, last.id)
  return out
}

export function walkCount(ctx: PgCtx, f: MemoryFilter): number {
  const ps = new Params()
  return Number(ctx.q<{ n: string }>(`SELECT count(*) AS n FROM (${ctx.sql.memories}) m WHERE ${memoryWhere(f, ps, ctx.sql.embeddings)}`, ps.values)[0].n)
}

/** Memories by exact and by normalised content (events/match.ts); one query each, only when asked. */
export function memoryIdsByText(ctx: PgCtx, q: { texts: string[]; normalized: string[] }): TextMatches {
  const { texts, norms, out, add } = textLookup(q)
  const norm = pgNormalizeExpr('m.content')
  const lookups: [keyof TextMatches, string[], string][] = [
    ['exact', texts, 'm.content'],
    ['normalized', norms, norm],
  ]
  for (const [kind, values, expr] of lookups)
    if (values.length)
      for (const [id, v] of ctx.bridge.query<[string, string]>(
        `SELECT m.id, ${expr} FROM (${ctx.sql.memories}) m WHERE ${expr} = ANY($1::text[]) ORDER BY m.id`,
        [values],
        { rowMode: 'array' },
      ))
        add(kind, v, id)
  return out
}
