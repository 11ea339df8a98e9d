/**
 * Live OTLP: one `POST /v1/traces` body (OTLP/HTTP JSON) → recalls kept in the workspace
 * (`live_recalls`), so they survive a restart; the agent's store is never written. Spans
 * are read exactly as in trace files (recalls.ts). Because an exporter sends spans in
 * batches as they end, a recall's decision may arrive in a later post: the LLM spans of
 * each post are offered to the stored recalls of their trace still waiting for one.
 */
import type { LiveReceipt } from '../../../shared/jobs'
import { parseJsonSafe } from '../../safety/json'
import type { LiveRecallRow, Workspace } from '../../store/workspace/workspace'
import { emptyStats, skip, type EventReader, type LoggedRecall, type ReadStats } from '../types'
import { isLlmSpan, pickDecisionSpan, spanDecision, spanRecall } from './recalls'
import { flattenSpans, type FlatSpan } from './spans'

/** The event-log source key of the live OTLP recalls (one source, re-read after each post). */
export const LIVE_SOURCE_KEY = 'otlp-live'

export type { LiveReceipt } from '../../../shared/jobs'

const row = (r: LoggedRecall, endAt: number, receivedAt: number): LiveRecallRow => ({
  key: r.key,
  traceId: r.origin.traceId ?? null,
  at: r.at,
  endAt,
  receivedAt,
  decided: r.decision !== null,
  recall: JSON.stringify(r),
})

/** Store the recalls of one OTLP JSON payload; returns what happened. Never throws on content. */
export function ingestOtlpPayload(ws: Workspace, payload: unknown, now: number): LiveReceipt {
  const stats = emptyStats()
  const spans: FlatSpan[] = [...flattenSpans(payload, stats, 'POST /v1/traces')]
  const llms = spans.filter(isLlmSpan)
  const times = (s: FlatSpan) => ({ traceId: s.traceId, spanId: s.spanId, start: s.start, end: s.end })
  const rows: LiveRecallRow[] = []
  for (const s of spans) {
    const r = spanRecall(s, 'otlp-live', null)
    if (r === null) continue
    if ('problem' in r) {
      skip(stats, 'POST /v1/traces', r.problem)
      continue
    }
    const d = pickDecisionSpan(times(s), llms.filter((l) => l.traceId === s.traceId).map(times))
    if (d) r.decision = spanDecision(llms.find((l) => l.spanId === d.spanId && l.traceId === d.traceId)!)
    rows.push(row(r, s.end, now))
  }
  // Recalls stored by earlier posts whose decision is in this one.
  let decided = 0
  if (llms.length) {
    const waiting = ws.undecidedLiveRecalls([...new Set(llms.map((l) => l.traceId))]).filter((w) => !rows.some((r) => r.key === w.key))
    for (const w of waiting) {
      const parsed = parseJsonSafe(w.recall)
      if (!parsed.ok) continue
      const recall = parsed.value as LoggedRecall
      const d = pickDecisionSpan(
        { traceId: w.traceId ?? '', spanId: recall.origin.spanId ?? '', start: w.at, end: w.endAt },
        llms.filter((l) => l.traceId === w.traceId).map(times),
      )
      if (!d) continue
      recall.decision = spanDecision(llms.find((l) => l.spanId === d.spanId && l.traceId === d.traceId)!)
      rows.push(row(recall, w.endAt, w.receivedAt))
      decided++
    }
  }
  if (rows.length) ws.putLiveRecalls(rows)
  return { spans: spans.length, recalls: rows.length - decided, decided, rejected: stats.skipped, problems: stats.problems }
}

/** The live recalls kept in a workspace, as an event reader (oldest first, read a page at a time). */
export function liveRecallReader(ws: Workspace): EventReader {
  return {
    kind: 'otlp-live',
    label: 'live OTLP (POST /v1/traces)',
    *read(stats: ReadStats) {
      for (let after = 0; ;) {
        const page = ws.liveRecallPage(after, 500)
        for (const p of page) {
          after = p.rowid
          const parsed = parseJsonSafe(p.recall)
          if (!parsed.ok || !parsed.value || typeof parsed.value !== 'object') {
            skip(stats, `live_recalls row ${p.rowid}`, 'stored recall is not JSON')
            continue
          }
          yield parsed.value as LoggedRecall
        }
        if (page.length < 500) return
      }
    },
  }
}
