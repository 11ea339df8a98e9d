/**
 * The recall log of a SQLite store (canonical `recall_events`): pages, one
 * event, a memory's appearances, the optional extra columns, and the
 * aggregates behind the timeline — all under the one event filter (where.ts).
 */
import type { EventFilter } from '../../../shared/contract'
import type { EventDecision, Page, RecallEvent } from '../../../shared/types'
import { decodeVector, parseJson, toMs, cellText } from '../decode'
import type { EventExtras, EventPageQuery, EventRef, EventTimelineStats } from '../source'
import { normalizeMatchText, textLookup, type TextMatches } from '../textMatch'
import { clampLimit } from './connection'
import type { SqliteCtx } from './context'
import { eventWhere } from './where'

export function decodeEvent(r: Record<string, unknown>): RecallEvent {
  const cue = parseJson(r.cue)
  const cfg = parseJson(r.config)
  const res = parseJson(r.results)
  const results: { id: string; score: number }[] = []
  if (res.ok && Array.isArray(res.value)) {
    for (const x of res.value) {
      if (x && typeof x === 'object' && 'id' in x) results.push({ id: String((x as { id: unknown }).id), score: Number((x as { score?: unknown }).score ?? 0) })
      else if (typeof x === 'string') results.push({ id: x, score: 0 })
    }
  }
  // an unreadable time (NULL, text, outside a date's range) stays unreadable: NaN and flagged, never 0 (1970)
  const at = toMs(r.at)
  return {
    id: String(r.id),
    at: at ?? Number.NaN,
    ...(at === null ? { unreadableAt: r.at == null ? 'NULL' : cellText(r.at).slice(0, 100) } : {}),
    agentId: r.agent_id == null ? null : cellText(r.agent_id),
    userId: r.user_id == null ? null : cellText(r.user_id),
    sessionId: r.session_id == null ? null : cellText(r.session_id),
    turn: r.turn == null ? null : Number(r.turn),
    query: r.query == null ? null : cellText(r.query),
    cue: cue.ok && cue.value && typeof cue.value === 'object' ? cue.value : null,
    preset: r.preset == null ? null : cellText(r.preset),
    config: cfg.ok && cfg.value && typeof cfg.value === 'object' ? cfg.value : null,
    results,
  }
}

export function eventsPage(ctx: SqliteCtx, q: EventPageQuery = {}): Page<RecallEvent> {
  const t0 = performance.now()
  const limit = clampLimit(q.limit)
  const offset = Math.max(0, q.offset ?? 0)
  const src = ctx.sql.recallEvents
  if (!src) return { rows: [], offset, limit, total: 0, truncated: false, tookMs: 0 }
  const w = eventWhere(q)
  const dir = q.dir === 'asc' ? 'ASC' : 'DESC'
  const rows = ctx.db
    .prepare(`SELECT r.* FROM (${src}) r WHERE ${w.sql} ORDER BY r.at ${dir}, r.id ${dir} LIMIT ${limit} OFFSET ${offset}`)
    .all(w.params) as Record<string, unknown>[]
  const count = ctx.cappedCount(`FROM (${src}) r WHERE ${w.sql}`, w.params)
  return { rows: rows.map((r) => withOrigin(ctx, decodeEvent(r))), offset, limit, ...count, tookMs: performance.now() - t0 }
}

/** An event of a layout whose log is another table (OpenMemory's access log) carries that origin. */
function withOrigin(ctx: SqliteCtx, e: RecallEvent): RecallEvent {
  const o = ctx.sql.recallEventsOrigin
  return o ? { ...e, origin: { ...o.origin } } : e
}

export function getEvent(ctx: SqliteCtx, id: string): RecallEvent | null {
  const src = ctx.sql.recallEvents
  if (!src) return null
  const row = ctx.db.prepare(`SELECT r.* FROM (${src}) r WHERE r.id = ?`).get(id) as Record<string, unknown> | undefined
  return row ? withOrigin(ctx, decodeEvent(row)) : null
}

/** Events whose results include a memory, newest first (bounded). */
export function eventsForMemory(ctx: SqliteCtx, memoryId: string, limit = 200): EventRef[] {
  return eventsPage(ctx, { memoryId, limit }).rows.map((e) => {
    const i = e.results.findIndex((r) => r.id === memoryId)
    return { eventId: e.id, at: e.at, rank: i + 1, score: e.results[i]?.score ?? 0, query: e.query }
  })
}

const extraColumns = new WeakMap<SqliteCtx, Set<string>>()

function eventColumns(ctx: SqliteCtx): Set<string> {
  let cols = extraColumns.get(ctx)
  if (!cols) {
    cols = new Set()
    // Only the canonical layout has a real recall_events table; other layouts log nothing or map it.
    if (ctx.sql.layout === 'canonical' && ctx.sql.recallEvents)
      for (const r of ctx.db.prepare(`SELECT name FROM pragma_table_info('recall_events')`).all() as { name: string }[]) cols.add(r.name)
    extraColumns.set(ctx, cols)
  }
  return cols
}

/** The optional columns beyond docs/internals/design.md's `recall_events` (additive; absent in most logs). */
export function eventExtras(ctx: SqliteCtx, eventId: string): EventExtras {
  const cols = eventColumns(ctx)
  const out: EventExtras = { queryVector: null, queryVectorProblem: null, context: null }
  const want = ['query_vector', 'context', 'decision'].filter((c) => cols.has(c))
  if (want.length === 0) return out
  const row = ctx.db.prepare(`SELECT ${want.join(', ')} FROM recall_events WHERE id = ?`).get(eventId) as Record<string, unknown> | undefined
  if (!row) return out
  if (row.query_vector !== null && row.query_vector !== undefined) {
    const v = decodeVector(row.query_vector, null)
    if (typeof v === 'string') out.queryVectorProblem = `the logged query_vector is unusable (${v}): re-embedding instead`
    else out.queryVector = v
  }
  if (typeof row.context === 'string') out.context = row.context
  if (row.decision !== null && row.decision !== undefined) out.decision = decodeDecision(row.decision)
  return out
}

/**
 * The optional `decision` column: JSON `{"text": "…"}` or `{"toolCall": {"name", "arguments"}}`, with
 * `at` (epoch ms) and `via` optional; `arguments` may be an object (kept as its JSON). Anything else is
 * unusable and read as no decision (null), never an error: the rest of the event is still good.
 */
export function decodeDecision(cell: unknown): EventDecision | null {
  const j = parseJson(cell)
  if (!j.ok || !j.value || typeof j.value !== 'object' || Array.isArray(j.value)) return null
  const v = j.value as { text?: unknown; toolCall?: unknown; at?: unknown; via?: unknown }
  const text = typeof v.text === 'string' && v.text.trim() !== '' ? v.text : null
  let toolCall: EventDecision['toolCall'] = null
  const tc = v.toolCall as { name?: unknown; arguments?: unknown } | null | undefined
  if (tc && typeof tc === 'object' && typeof tc.name === 'string' && tc.name !== '') {
    const args = tc.arguments
    toolCall = { name: tc.name, arguments: typeof args === 'string' ? args : args === undefined || args === null ? '' : JSON.stringify(args) }
  }
  if (text === null && toolCall === null) return null
  const at = toMs(v.at)
  return { text, toolCall, at, via: typeof v.via === 'string' && v.via ? v.via : toolCall && !text ? 'tool call' : 'assistant message' }
}

/** A recall event time the timeline can bin: a number within Date's range (±8.64e15 ms). */
const VALID_AT = `typeof(r.at) IN ('integer', 'real') AND r.at BETWEEN -8640000000000000 AND 8640000000000000`

/**
 * Aggregates for the timeline under a filter: count, time range, facet values, and
 * per-bin counts on demand. Rows whose `at` is not a usable epoch-ms number are
 * skipped and counted (`badTimestamps`), never binned.
 */
export function eventTimeline(ctx: SqliteCtx, f: EventFilter): EventTimelineStats {
  const src = ctx.sql.recallEvents
  if (!src) return { total: 0, range: null, agents: [], users: [], presets: [], badTimestamps: 0, counts: () => [] }
  const filter = eventWhere(f)
  const w = { sql: `${filter.sql} AND ${VALID_AT}`, params: filter.params }
  const db = ctx.db
  const badTimestamps = db.prepare(`SELECT count(*) FROM (${src}) r WHERE ${filter.sql} AND NOT (${VALID_AT})`).pluck().get(filter.params) as number
  const stats = db.prepare(`SELECT count(*) AS n, min(r.at) AS mn, max(r.at) AS mx FROM (${src}) r WHERE ${w.sql}`).get(w.params) as {
    n: number
    mn: unknown
    mx: unknown
  }
  const facet = (col: string) =>
    db.prepare(`SELECT DISTINCT ${col} AS v FROM (${src}) r WHERE ${col} IS NOT NULL ORDER BY 1 LIMIT 500`).pluck().all().map(String)
  const mn = toMs(stats.mn)
  const mx = toMs(stats.mx)
  return {
    total: stats.n,
    range: stats.n && mn !== null && mx !== null ? { min: mn, max: mx } : null,
    agents: facet('r.agent_id'),
    users: facet('r.user_id'),
    presets: facet('r.preset'),
    badTimestamps,
    counts: (binMs, start) =>
      (
        db
          .prepare(
            `SELECT CAST((r.at - @start) / @w AS INTEGER) AS b, coalesce(r.preset, '(none)') AS p, count(*) AS n FROM (${src}) r WHERE ${w.sql} GROUP BY 1, 2 ORDER BY 1`,
          )
          .all({ ...w.params, start, w: binMs }) as { b: number; p: string; n: number }[]
      ).map((r) => ({ bin: r.b, preset: r.p, count: r.n })),
  }
}

const normRegistered = new WeakSet<object>()

/**
 * Memories by content (events/match.ts): exact equality, and equality after
 * normalizeMatchText (a function registered on the connection). Each is one
 * scan of the memories, run only when there are texts to look for.
 */
export function memoryIdsByText(ctx: SqliteCtx, q: { texts: string[]; normalized: string[] }): TextMatches {
  const { texts, norms, out, add } = textLookup(q)
  const src = ctx.sql.memoriesLite
  if (texts.length) {
    const rows = ctx.db
      .prepare(`SELECT m.id AS id, m.content AS content FROM (${src}) m WHERE m.content IN (SELECT value FROM json_each(?)) ORDER BY m._rid`)
      .all(JSON.stringify(texts)) as { id: unknown; content: unknown }[]
    for (const r of rows) add('exact', r.content, r.id)
  }
  if (norms.length) {
    if (!normRegistered.has(ctx.db)) {
      ctx.db.function('recallscope_norm', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? normalizeMatchText(s) : null))
      normRegistered.add(ctx.db)
    }
    const rows = ctx.db
      .prepare(
        `SELECT m.id AS id, recallscope_norm(m.content) AS n FROM (${src}) m WHERE recallscope_norm(m.content) IN (SELECT value FROM json_each(?)) ORDER BY m._rid`,
      )
      .all(JSON.stringify(norms)) as { id: unknown; n: unknown }[]
    for (const r of rows) add('normalized', r.n, r.id)
  }
  return out
}
