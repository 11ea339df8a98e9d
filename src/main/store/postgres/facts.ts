/**
 * The Postgres source's facts: counts per agent/user/kind/tier/role, time range, malformed rows (the Library's summary).
 * Functions over PgCtx (context.ts); PgSource delegates to them.
 */
import type { Facets } from '../../../shared/contract'
import { RecallscopeError } from '../../../shared/result'
import type { DbFacts, MalformedCounts } from '../../../shared/types'
import { ident } from './layouts'
import { type PgCtx } from './context'

function tally(ctx: PgCtx, col: string): { key: string; count: number }[] {
  return ctx
    .q<{ k: string | null; n: string }>(`SELECT m.${col} AS k, count(*) AS n FROM (${ctx.sql.memories}) m GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 500`)
    .map((r) => ({ key: r.k === null ? '(none)' : String(r.k), count: Number(r.n) }))
    .sort((x, y) => y.count - x.count || x.key.localeCompare(y.key))
}

export function facts(ctx: PgCtx): DbFacts {
  const t0 = performance.now()
  const byAgent = tally(ctx, 'agent_id')
  const byUser = tally(ctx, 'user_id')
  const byKind = tally(ctx, 'kind')
  const byTier = tally(ctx, 'tier')
  const byRole = tally(ctx, 'role')
  const tr = ctx.q<{ mn: number | null; mx: number | null; n: string }>(
    `SELECT min(m.created_at) AS mn, max(m.created_at) AS mx, count(*) AS n FROM (${ctx.sql.memories}) m`,
  )[0]
  let badMetadata = 0
  try {
    // pg_input_is_valid: Postgres 16+; older servers report 0 here (decoding still tolerates bad JSON).
    badMetadata = Number(
      ctx.q<{ n: string }>(`SELECT count(*) AS n FROM (${ctx.sql.memories}) m WHERE m.metadata IS NOT NULL AND NOT pg_input_is_valid(m.metadata, 'jsonb')`)[0]
        .n,
    )
  } catch (e) {
    if (!(e instanceof RecallscopeError) || e.code === 'DB_UNREACHABLE' || e.code === 'DB_TIMEOUT') throw e
  }
  const known = (list: { key: string; count: number }[], ok: readonly string[]) =>
    list.filter((x) => x.key !== '(none)' && !ok.includes(x.key)).reduce((n, x) => n + x.count, 0)
  const models = ctx.vectorModels()
  const malformed: MalformedCounts = {
    ...ctx.malformed,
    badMetadata,
    unknownRole: known(byRole, ['user', 'assistant', 'system', 'tool']),
    unknownKind: known(byKind, ['episodic', 'semantic', 'procedural', 'reflection']),
    unknownTier: known(byTier, ['working', 'long_term', 'archived']),
    badVectorShape: models.reduce((n, m) => n + m.badShape, 0),
    wrongDimension: models.reduce((n, m) => n + m.malformed - m.badShape, 0),
  }
  const sessions = Number(ctx.q<{ n: string }>(`SELECT count(*) AS n FROM (${ctx.sql.sessions}) s`)[0].n)
  const recallEvents = ctx.sql.recallEvents ? Number(ctx.q<{ n: string }>(`SELECT count(*) AS n FROM (${ctx.sql.recallEvents}) r`)[0].n) : 0
  const size = ctx.q<{ b: string | null }>(`SELECT pg_total_relation_size(to_regclass($1)) AS b`, [`${ident(ctx.sql.schema)}.${ident(ctx.sql.memoryTable)}`])[0]
  return {
    path: ctx.path,
    layout: ctx.sql.layout,
    detectedBecause: `${ctx.sql.detectedBecause}; Postgres ${ctx.serverVersion}, pgvector ${ctx.pgvector ?? 'not installed'}${ctx.pushdownReady ? ', dense search pushed down' : ''}${ctx.annIndex ? `, ${ctx.annIndex.method} index ${ctx.annIndex.name}` : ''}`,
    readOnly: true,
    workspacePath: ctx.workspace.path,
    sizeBytes: Number(size?.b ?? 0),
    counts: { memories: Number(tr.n), sessions, embeddings: models.reduce((n, m) => n + m.count, 0), recallEvents, evalCases: ctx.workspace.countCases() },
    byAgent,
    byUser,
    byKind,
    byTier,
    byRole,
    models,
    timeRange: tr.mn !== null && tr.mx !== null && Number(tr.n) > 0 ? { min: Number(tr.mn), max: Number(tr.mx) } : null,
    malformed,
    hasFts: 'agent',
    tookMs: performance.now() - t0,
  }
}

/** Distinct values from bounded queries (500 each). */
export function facets(ctx: PgCtx): Facets {
  const keys = (c: string) =>
    ctx.q<{ k: string }>(`SELECT DISTINCT m.${c} AS k FROM (${ctx.sql.memories}) m WHERE m.${c} IS NOT NULL ORDER BY 1 LIMIT 500`).map((r) => String(r.k))
  const tr = ctx.q<{ mn: number | null; mx: number | null }>(`SELECT min(m.created_at) AS mn, max(m.created_at) AS mx FROM (${ctx.sql.memories}) m`)[0]
  return {
    agents: keys('agent_id'),
    users: keys('user_id'),
    kinds: keys('kind'),
    tiers: keys('tier'),
    roles: keys('role'),
    timeRange: tr.mn !== null && tr.mx !== null ? { min: Number(tr.mn), max: Number(tr.mx) } : null,
  }
}

export function counts(ctx: PgCtx): { memories: number; sessions: number } {
  const r = ctx.q<{ m: string; s: string }>(
    `SELECT (SELECT count(*) FROM (${ctx.sql.memories}) m) AS m, (SELECT count(*) FROM (${ctx.sql.sessions}) s) AS s`,
  )[0]
  return { memories: Number(r.m), sessions: Number(r.s) }
}
