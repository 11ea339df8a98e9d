/**
 * The Postgres source's recall passes: scope listing and counts, the lexical arm (ts_rank_cd as bm25), keyword fallback, sessions, ages.
 * Functions over PgCtx (context.ts); PgSource delegates to them.
 */
import type { RecallAges } from '../../../shared/contract'
import type { RecallScope, Session } from '../../../shared/types'
import { ageBinMs, ageBins } from '../ageBins'
import { decodeSession } from '../decode'
import type { LexicalPass, LexicalRequest, MemoryFilter, ScopeRows } from '../source'
import { memoryWhere, Params } from './where'
import { docExpr, tsq, type PgCtx } from './context'

/** Ids of a scope (id order); the keys are ordinals (Postgres rows have no integer key). */
export function scopeRows(ctx: PgCtx, f: MemoryFilter, cap: number): ScopeRows {
  const ps = new Params()
  const ids = ctx.bridge
    .query<[string]>(
      `SELECT m.id FROM (${ctx.sql.memories}) m WHERE ${memoryWhere(f, ps, ctx.sql.embeddings)} ORDER BY m.id LIMIT ${Math.max(0, Math.floor(cap))}`,
      ps.values,
      { rowMode: 'array' },
    )
    .map((r) => String(r[0]))
  return { ids, rids: ids.map((_, i) => i) }
}

export function countScope(ctx: PgCtx, f: MemoryFilter, cap = 10_000): { count: number; capped: boolean } {
  const ps = new Params()
  const n = Number(
    ctx.q<{ n: string }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM (${ctx.sql.memories}) m WHERE ${memoryWhere(f, ps, ctx.sql.embeddings)} LIMIT ${cap + 1}) t`,
      ps.values,
    )[0].n,
  )
  return n > cap ? { count: cap, capped: true } : { count: n, capped: false }
}

/** Whether websearch_to_tsquery keeps any term (stop words alone give an empty query). Cached per text. */
export function hasLexicalTerms(ctx: PgCtx, text: string): boolean {
  if (text.trim() === '') return false
  let v = ctx.lexTerms.get(text)
  if (v === undefined) {
    v = ctx.q<{ n: number }>(`SELECT numnode(${tsq('$1')}) AS n`, [text])[0].n > 0
    if (ctx.lexTerms.size > 1000) ctx.lexTerms.clear()
    ctx.lexTerms.set(text, v)
  }
  return v
}

/** Full text in the database: bm25 = −ts_rank_cd (lower = better, as FTS5), ties by id. */
export function lexicalPass(ctx: PgCtx, req: LexicalRequest): LexicalPass {
  const ps = new Params()
  const t = ps.p(req.text)
  const where = memoryWhere(req.filter, ps, ctx.sql.embeddings)
  const also = req.alsoIds ?? []
  const alsoP = ps.p(also)
  const limit = ps.p(Math.max(0, Math.floor(req.limit)))
  // Plain SELECTs only (no CTE): the read-only proof checks every statement's first word.
  const hit = (extra: string) =>
    `SELECT m.id, ts_rank_cd(${docExpr('m')}, ${tsq(t)})::float8 AS r FROM (${ctx.sql.memories}) m WHERE ${docExpr('m')} @@ ${tsq(t)} AND ${where}${extra}`
  const rows = ctx.bridge.query<[string, number, boolean]>(
    `(SELECT h.id, h.r, false AS a FROM (${hit('')}) h ORDER BY h.r DESC, h.id ASC LIMIT ${limit})
     UNION ALL (SELECT h.id, h.r, true FROM (${hit(` AND m.id = ANY(${alsoP}::text[])`)}) h)`,
    ps.values,
    { rowMode: 'array' },
  )
  const hits: { id: string; bm25: number }[] = []
  const alsoMap = new Map<string, number>()
  for (const [id, r, a] of rows) {
    if (a) alsoMap.set(String(id), -Number(r))
    else hits.push({ id: String(id), bm25: -Number(r) })
  }
  return { hits, also: alsoMap, alsoKnown: true, path: 'join' }
}

export function lexicalRankOf(ctx: PgCtx, text: string, f: MemoryFilter, id: string): number | null {
  const ps = new Params()
  const t = ps.p(text)
  const where = memoryWhere(f, ps, ctx.sql.embeddings)
  const idp = ps.p(id)
  const hit = `SELECT m.id, ts_rank_cd(${docExpr('m')}, ${tsq(t)})::float8 AS r FROM (${ctx.sql.memories}) m WHERE ${docExpr('m')} @@ ${tsq(t)} AND ${where}`
  const r = ctx.q<{ rank: string | null }>(
    `SELECT (SELECT count(*) + 1 FROM (${hit}) h WHERE h.r > me.r OR (h.r = me.r AND h.id < me.id)) AS rank FROM (${hit}) me WHERE me.id = ${idp}`,
    ps.values,
  )[0]
  return r?.rank == null ? null : Number(r.rank)
}

export function keywordSearch(ctx: PgCtx, f: MemoryFilter, keywords: string[], limit: number): string[] {
  const ps = new Params()
  const where = memoryWhere(f, ps, ctx.sql.embeddings)
  const kw = keywords.length ? ` AND (${keywords.map((k) => `lower(m.content) LIKE ${ps.p(`%${k}%`)}`).join(' OR ')})` : ''
  return ctx.bridge
    .query<[string]>(
      `SELECT m.id FROM (${ctx.sql.memories}) m WHERE ${where}${kw} ORDER BY m.created_at DESC, m.id DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
      ps.values,
      { rowMode: 'array' },
    )
    .map((r) => String(r[0]))
}

export function sessionsForRecall(ctx: PgCtx, scope: RecallScope, now: number): Session[] {
  const ps = new Params()
  const parts: string[] = []
  if (scope.agentId !== undefined) parts.push(`s.agent_id = ${ps.p(scope.agentId)}`)
  if (scope.userId !== undefined) parts.push(`s.user_id = ${ps.p(scope.userId)}`)
  if (scope.tenantId !== undefined) parts.push(`s.tenant_id = ${ps.p(scope.tenantId)}`)
  if (scope.sessionId !== undefined) parts.push(`s.id = ${ps.p(scope.sessionId)}`)
  if (!scope.tiers.includes('archived')) parts.push('coalesce(s.is_archived, 0) = 0')
  if (scope.after !== undefined) parts.push(`s.started_at >= ${ps.p(scope.after)}::float8`)
  if (scope.before !== undefined) parts.push(`s.started_at <= ${ps.p(scope.before)}::float8`)
  parts.push(`coalesce(s.ended_at, s.started_at) <= ${ps.p(now)}::float8`)
  return ctx
    .q(`SELECT s.*, 0 AS memory_count FROM (${ctx.sql.sessions}) s WHERE ${parts.join(' AND ')} ORDER BY s.started_at DESC, s.id ASC LIMIT 100000`, ps.values)
    .map(decodeSession)
}

export function sessionMessages(ctx: PgCtx, sessionIds: string[], now: number): Map<string, { role: string | null; content: string }[]> {
  const out = new Map<string, { role: string | null; content: string }[]>()
  for (const id of sessionIds) out.set(id, [])
  if (sessionIds.length === 0) return out
  const rows = ctx.q<{ s: string; role: string | null; content: string | null }>(
    `SELECT m.session_id AS s, m.role, m.content FROM (${ctx.sql.memories}) m WHERE m.session_id = ANY($1::text[]) AND (m.created_at <= $2::float8 OR m.created_at IS NULL)
     ORDER BY m.session_id, m.turn ASC NULLS LAST, m.created_at ASC, m.id ASC`,
    [sessionIds, now],
  )
  for (const r of rows) out.get(String(r.s))?.push({ role: r.role, content: r.content ?? '' })
  return out
}

export function ageHistogram(ctx: PgCtx, f: MemoryFilter, now: number, from: 'last_used' | 'created', maxBins = 40): RecallAges {
  const ps = new Params()
  const where = memoryWhere(f, ps, ctx.sql.embeddings)
  const hnow = ps.p(now)
  const t =
    from === 'last_used'
      ? `(CASE WHEN m.last_used_at IS NOT NULL AND m.last_used_at <= ${hnow}::float8 THEN m.last_used_at ELSE m.created_at END)`
      : 'm.created_at'
  const st = ctx.q<{ n: string; mx: number | null; never: string | null }>(
    `SELECT count(*) AS n, max(${hnow}::float8 - ${t}) AS mx, sum(CASE WHEN m.last_used_at IS NULL OR m.last_used_at > ${hnow}::float8 THEN 1 ELSE 0 END) AS never
     FROM (${ctx.sql.memories}) m WHERE ${where}`,
    ps.values,
  )[0]
  const maxAgeMs = Math.max(0, Number(st.mx ?? 0))
  const binMs = ageBinMs(maxAgeMs, maxBins)
  const w = ps.p(binMs)
  const counts = ctx.q<{ b: number | null; n: string }>(
    `SELECT floor((${hnow}::float8 - ${t}) / ${w}::float8)::int AS b, count(*) AS n FROM (${ctx.sql.memories}) m WHERE ${where} GROUP BY 1 ORDER BY 1`,
    ps.values,
  )
  const bins = ageBins(counts, maxAgeMs, binMs)
  const total = Number(st.n)
  return { now, from, binMs, bins: total === 0 ? [] : bins, total, neverUsed: Number(st.never ?? 0), maxAgeMs }
}
