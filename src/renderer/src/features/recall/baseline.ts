/**
 * Rank markers (▲/▼/NEW/OUT): injected ranks now against a reference ranking — the
 * previous view, or a pinned baseline config ("Pin baseline"). The baseline is
 * ranked from the same trace's cached candidates when its config allows a local
 * re-rank, else by one `recall.run` of the same request under the baseline.
 */
import { useEffect, useMemo, useState } from 'react'
import type { Cue, RecallConfig, RecallTrace, TraceResult } from '../../../../shared/types'
import { canRerankLocally, rerank } from '../../../../shared/scoring'
import { call } from '../../lib/api'

/** One id's injected rank before and now. */
export interface RankChange {
  /** previous injected rank (null = was not injected) */
  before: number | null
  /** current injected rank (null = not injected now) */
  after: number | null
}

/** What the baseline's own query needs from the request. */
interface BaselineRequest {
  query: string
  useCue: boolean
  cue: Cue
  embedder: string | null
}

/** A pinned baseline: the config the markers compare with, and what to call it on screen. */
export interface Baseline {
  label: string
  config: RecallConfig
}

/** id → change from `before` to `now` for every id injected in either (an id in only one is NEW / OUT). */
export function rankChanges(before: ReadonlyMap<string, number>, now: ReadonlyMap<string, number>): Map<string, RankChange> {
  const ch = new Map<string, RankChange>()
  for (const [id, rank] of now) ch.set(id, { before: before.get(id) ?? null, after: rank })
  for (const [id, rank] of before) if (!now.has(id)) ch.set(id, { before: rank, after: null })
  return ch
}

/** Injected id → rank of a list of results. */
export function ranksOf(results: readonly TraceResult[]): Map<string, number> {
  return new Map(results.map((r) => [r.id, r.rank]))
}

/** The changes from a pinned baseline's ranks to `results` (none while those ranks are not known). */
export function changesFromPinned(pinned: ReadonlyMap<string, number> | null, results: readonly TraceResult[]): Map<string, RankChange> {
  return pinned ? rankChanges(pinned, ranksOf(results)) : new Map<string, RankChange>()
}

/** The engine resolves an unset model to the embedder's: `config` as the trace's engine would run it, like with like. */
export function effectiveConfig(trace: RecallTrace, config: RecallConfig): RecallConfig {
  return config.model === undefined && trace.config.model !== undefined ? { ...config, model: trace.config.model } : config
}

/** Injected id → rank of `config` over the trace's candidates, or null when a new query is needed. */
function rankLocally(trace: RecallTrace, config: RecallConfig): Map<string, number> | null {
  const effective = effectiveConfig(trace, config)
  const local = canRerankLocally(trace, effective)
  if (!local.ok) return null
  return ranksOf(rerank(trace.candidates, effective, local.mode).results)
}

/** The baseline's injected ranks for this request (null while none is pinned, or while its query runs). */
export function useBaselineRanks(
  req: BaselineRequest,
  trace: RecallTrace | null,
  baseline: Baseline | null,
): { ranks: Map<string, number> | null; error: string | null } {
  const local = useMemo(() => (trace && baseline ? rankLocally(trace, baseline.config) : null), [trace, baseline])
  const needsQuery = !!trace && !!baseline && local === null
  const [remote, setRemote] = useState<{ key: string; ranks: Map<string, number> | null; error: string | null } | null>(null)
  const key = needsQuery ? JSON.stringify({ q: req.query, cue: req.useCue ? req.cue : null, now: trace.now, e: req.embedder, c: baseline.config }) : ''
  useEffect(() => {
    if (!key || !trace || !baseline) return
    let live = true
    call('recall.run', {
      query: req.query,
      cue: req.useCue ? req.cue : null,
      // the trace's own moment, so recency is the same for both rankings
      now: trace.now,
      embedder: req.embedder ?? undefined,
      config: baseline.config,
    }).then(
      (t) => live && setRemote({ key, ranks: ranksOf(t.results), error: null }),
      (e: Error) => live && setRemote({ key, ranks: null, error: e.message }),
    )
    return () => {
      live = false
    }
    // keyed by content (the request, the trace's moment and the baseline config), see `key`
    // eslint-disable-next-line react-hooks/exhaustive-deps -- see above
  }, [key])
  if (!baseline || !trace) return { ranks: null, error: null }
  if (local) return { ranks: local, error: null }
  return remote?.key === key ? { ranks: remote.ranks, error: remote.error } : { ranks: null, error: null }
}
