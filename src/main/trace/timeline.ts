/**
 * The recall log over time: a histogram of events by preset under the same
 * filters as `events.page` (agent, user, session, injected memory, text, time),
 * plus the filters' values for pickers. Two aggregate queries, no row transfer.
 */
import type { TraceTimeline } from '../../shared/trace'
import type { Store } from '../store/open'
import { likeEscape } from '../store/open'

export interface TimelineQuery {
  agentId?: string
  userId?: string
  sessionId?: string
  memoryId?: string
  search?: string
  after?: number
  before?: number
  /** @default 60 */
  bins?: number
}

const NICE_MS = [60_000, 300_000, 900_000, 1_800_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000, 2 * 86_400_000, 7 * 86_400_000, 14 * 86_400_000, 30 * 86_400_000]

/** A recall event time the timeline can bin: a number within Date's range (±8.64e15 ms). */
const VALID_AT = `typeof(r.at) IN ('integer', 'real') AND r.at BETWEEN -8640000000000000 AND 8640000000000000`

export function eventTimeline(store: Store, q: TimelineQuery = {}): TraceTimeline {
  const t0 = performance.now()
  const src = store.source.recallEvents
  const empty: TraceTimeline = { total: 0, truncated: false, range: null, binMs: 86_400_000, bins: [], agents: [], users: [], presets: [], tookMs: 0 }
  if (!src) return empty
  const parts: string[] = []
  const params: Record<string, unknown> = {}
  if (q.agentId !== undefined) (parts.push('r.agent_id = @agentId'), (params.agentId = q.agentId))
  if (q.userId !== undefined) (parts.push('r.user_id = @userId'), (params.userId = q.userId))
  if (q.sessionId !== undefined) (parts.push('r.session_id = @sessionId'), (params.sessionId = q.sessionId))
  if (q.after !== undefined) (parts.push('r.at >= @after'), (params.after = q.after))
  if (q.before !== undefined) (parts.push('r.at <= @before'), (params.before = q.before))
  if (q.memoryId !== undefined) {
    // LIKE is the cheap prefilter; json_each confirms the id is a result (not a substring of another).
    parts.push(`r.results LIKE @memLike ESCAPE '\\' AND json_valid(r.results) AND EXISTS (SELECT 1 FROM json_each(r.results) j WHERE coalesce(json_extract(j.value, '$.id'), j.value) = @memId)`)
    params.memLike = `%"${likeEscape(q.memoryId)}"%`
    params.memId = q.memoryId
  }
  if (q.search) (parts.push(`(r.query LIKE @search ESCAPE '\\' OR r.cue LIKE @search ESCAPE '\\')`), (params.search = `%${likeEscape(q.search)}%`))
  // Rows whose `at` is not a usable epoch-ms number are skipped and counted (issue 10), not binned.
  const badWhere = `WHERE ${[...parts, `NOT (${VALID_AT})`].join(' AND ')}`
  parts.push(VALID_AT)
  const where = parts.length ? `WHERE ${parts.join(' AND ')}` : ''
  const db = store.db
  const badTimestamps = db.prepare(`SELECT count(*) FROM (${src}) r ${badWhere}`).pluck().get(params) as number
  const stats = db.prepare(`SELECT count(*) AS n, min(r.at) AS mn, max(r.at) AS mx FROM (${src}) r ${where}`).get(params) as { n: number; mn: number | null; mx: number | null }
  const facet = (col: string) =>
    (db.prepare(`SELECT DISTINCT ${col} AS v FROM (${src}) r WHERE ${col} IS NOT NULL ORDER BY 1 LIMIT 500`).pluck().all() as unknown[]).map(String)
  const agents = facet('r.agent_id')
  const users = facet('r.user_id')
  const presets = facet('r.preset')
  if (!stats.n || stats.mn === null || stats.mx === null) return { ...empty, agents, users, presets, badTimestamps, tookMs: performance.now() - t0 }
  const bins = Math.max(1, Math.min(500, q.bins ?? 60))
  const span = Math.max(1, stats.mx - stats.mn)
  const binMs = NICE_MS.find((w) => w * bins >= span) ?? Math.ceil(span / bins / 86_400_000) * 86_400_000
  const start = Math.floor(stats.mn / binMs) * binMs
  const rows = db
    .prepare(`SELECT CAST((r.at - @start) / @w AS INTEGER) AS b, coalesce(r.preset, '(none)') AS p, count(*) AS n FROM (${src}) r ${where} GROUP BY 1, 2 ORDER BY 1`)
    .all({ ...params, start, w: binMs }) as { b: number; p: string; n: number }[]
  const nb = Math.floor((stats.mx - start) / binMs) + 1
  const out = Array.from({ length: nb }, (_, i) => ({ start: start + i * binMs, count: 0, byPreset: {} as Record<string, number> }))
  for (const r of rows) {
    const bin = out[r.b]
    if (!bin) continue
    bin.count += r.n
    bin.byPreset[r.p] = (bin.byPreset[r.p] ?? 0) + r.n
  }
  return { total: stats.n, truncated: false, range: { min: stats.mn, max: stats.mx }, binMs, bins: out, agents, users, presets, badTimestamps, tookMs: performance.now() - t0 }
}
