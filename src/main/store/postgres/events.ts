/**
 * The Postgres source's recall log (canonical `recall_events`): pages, one event, events of a memory, the timeline.
 * Functions over PgCtx (context.ts); PgSource delegates to them.
 */
import type { EventFilter } from '../../../shared/contract'
import type { Page, RecallEvent } from '../../../shared/types'
import { toMs } from '../decode'
import type { EventExtras, EventPageQuery, EventRef, EventTimelineStats } from '../source'
import { decodeEvent } from '../sqlite/events'
import { eventWhere, Params } from './where'
import { clampLimit, type PgCtx } from './context'
import { cappedCount } from './browse'

export function eventsPage(ctx: PgCtx, q: EventPageQuery = {}): Page<RecallEvent> {
  const t0 = performance.now()
  const limit = clampLimit(q.limit)
  const offset = Math.max(0, q.offset ?? 0)
  const src = ctx.sql.recallEvents
  if (!src) return { rows: [], offset, limit, total: 0, truncated: false, tookMs: 0 }
  const ps = new Params()
  const w = eventWhere(q, ps)
  const dir = q.dir === 'asc' ? 'ASC' : 'DESC'
  const rows = ctx.q(`SELECT r.* FROM (${src}) r WHERE ${w} ORDER BY r.at ${dir}, r.id ${dir} LIMIT ${limit} OFFSET ${offset}`, ps.values)
  const count = cappedCount(ctx, `FROM (${src}) r WHERE ${w}`, ps.values)
  return { rows: rows.map(decodeEvent), offset, limit, ...count, tookMs: performance.now() - t0 }
}

export function getEvent(ctx: PgCtx, id: string): RecallEvent | null {
  if (!ctx.sql.recallEvents) return null
  const r = ctx.q(`SELECT r.* FROM (${ctx.sql.recallEvents}) r WHERE r.id = $1`, [id])[0]
  return r ? decodeEvent(r) : null
}

/** The canonical Postgres layout has no query_vector / context columns yet. */
export function eventExtras(): EventExtras {
  return { queryVector: null, queryVectorProblem: null, context: null }
}

export function eventsForMemory(ctx: PgCtx, memoryId: string, limit = 200): EventRef[] {
  return ctx.eventsPage({ memoryId, limit }).rows.map((e) => {
    const i = e.results.findIndex((r) => r.id === memoryId)
    return { eventId: e.id, at: e.at, rank: i + 1, score: e.results[i]?.score ?? 0, query: e.query }
  })
}

export function eventTimeline(ctx: PgCtx, f: EventFilter): EventTimelineStats {
  const src = ctx.sql.recallEvents
  if (!src) return { total: 0, range: null, agents: [], users: [], presets: [], badTimestamps: 0, counts: () => [] }
  const ps = new Params()
  const w = eventWhere(f, ps)
  const st = ctx.q<{ n: string; mn: unknown; mx: unknown }>(`SELECT count(*) AS n, min(r.at) AS mn, max(r.at) AS mx FROM (${src}) r WHERE ${w}`, ps.values)[0]
  const facet = (c: string) =>
    ctx.q<{ v: string }>(`SELECT DISTINCT ${c} AS v FROM (${src}) r WHERE ${c} IS NOT NULL ORDER BY 1 LIMIT 500`).map((r) => String(r.v))
  const mn = toMs(st.mn)
  const mx = toMs(st.mx)
  const total = Number(st.n)
  return {
    total,
    range: total && mn !== null && mx !== null ? { min: mn, max: mx } : null,
    agents: facet('r.agent_id'),
    users: facet('r.user_id'),
    presets: facet('r.preset'),
    badTimestamps: 0, // the canonical `at` is a bigint column in Postgres: nothing unreadable to skip
    counts: (binMs, start) => {
      const p2 = new Params()
      const w2 = eventWhere(f, p2)
      return ctx
        .q<{ b: number; p: string; n: string }>(
          `SELECT floor((r.at - ${p2.p(start)}::float8) / ${p2.p(binMs)}::float8)::int AS b, coalesce(r.preset, '(none)') AS p, count(*) AS n FROM (${src}) r WHERE ${w2} GROUP BY 1, 2 ORDER BY 1`,
          p2.values,
        )
        .map((r) => ({ bin: r.b, preset: r.p, count: Number(r.n) }))
    },
  }
}
