/**
 * The recall log over time: a histogram of events by preset under the same
 * filters as `events.page` (agent, user, session, injected memory, text, time),
 * plus the filters' values for pickers: the store's own log (two aggregate queries,
 * no row transfer) merged with the events read from its other sources (events/eventLog.ts).
 */
import type { EventFilter } from '../../shared/contract'
import type { TraceTimeline } from '../../shared/trace'
import type { MemorySource } from '../store/source'
import { eventLogOf } from '../events/eventLog'

export interface TimelineQuery extends EventFilter {
  /** @default 60 */
  bins?: number
}

const NICE_MS = [
  60_000,
  300_000,
  900_000,
  1_800_000,
  3_600_000,
  3 * 3_600_000,
  6 * 3_600_000,
  12 * 3_600_000,
  86_400_000,
  2 * 86_400_000,
  7 * 86_400_000,
  14 * 86_400_000,
  30 * 86_400_000,
]

export async function eventTimeline(store: MemorySource, q: TimelineQuery = {}): Promise<TraceTimeline> {
  const t0 = performance.now()
  const empty: TraceTimeline = { total: 0, truncated: false, range: null, binMs: 86_400_000, bins: [], agents: [], users: [], presets: [], tookMs: 0 }
  const { bins: wantBins, ...filter } = q
  const stats = await eventLogOf(store).eventTimeline(filter)
  const { agents, users, presets } = stats
  const { badTimestamps } = stats
  if (!stats.total || !stats.range) return { ...empty, agents, users, presets, badTimestamps, tookMs: performance.now() - t0 }
  const bins = Math.max(1, Math.min(500, wantBins ?? 60))
  const span = Math.max(1, stats.range.max - stats.range.min)
  const binMs = NICE_MS.find((w) => w * bins >= span) ?? Math.ceil(span / bins / 86_400_000) * 86_400_000
  const start = Math.floor(stats.range.min / binMs) * binMs
  const nb = Math.floor((stats.range.max - start) / binMs) + 1
  const out = Array.from({ length: nb }, (_, i) => {
    const byPreset: Record<string, number> = {}
    return { start: start + i * binMs, count: 0, byPreset }
  })
  for (const r of stats.counts(binMs, start)) {
    const bin = out[r.bin]
    if (!bin) continue
    bin.count += r.count
    bin.byPreset[r.preset] = (bin.byPreset[r.preset] ?? 0) + r.count
  }
  return { total: stats.total, truncated: false, range: stats.range, binMs, bins: out, agents, users, presets, badTimestamps, tookMs: performance.now() - t0 }
}
