/**
 * Recall playground state: the request (query/cue/now/embedder), the config being
 * edited, the last trace from main, and the view the user sees.
 *
 * A config edit re-ranks instantly from the trace's cached candidate features
 * with src/shared/scoring.ts (no round trip). Only an edit that can change the
 * candidate set (query, scope, model, unit, a deeper pool than fetched…) sends a
 * new `recall.run`, debounced.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import type { Cue, EffectiveMode, RecallConfig, RecallTrace, TraceDropped, TraceResult } from '../../../../shared/types'
import { canRerankLocally, rerank } from '../../../../shared/scoring'
import { renderResults } from '../../../../shared/render'
import { call } from '../../lib/api'
import { effectiveConfig, rankChanges, ranksOf, type RankChange } from './baseline'

export type { RankChange } from './baseline'

export interface RecallRequest {
  query: string
  useCue: boolean
  cue: Cue
  /** null = the real clock at each run */
  now: number | null
  embedder: string | null
  preset: string
}

/** The `recall.run` input for a request run with `config` (the cue only when it is on; `now` null = the real clock). */
export function recallRunInput(req: RecallRequest, config: RecallConfig) {
  return {
    query: req.query,
    cue: req.useCue ? req.cue : null,
    now: req.now ?? undefined,
    embedder: req.embedder ?? undefined,
    preset: req.preset,
    config,
  }
}

export interface RecallView {
  results: TraceResult[]
  dropped: TraceDropped[]
  context: string
  contextTokens: number
  injectedTokens: number
  refreshed: string[]
  /** true when this view came from a local re-rank (no round trip) */
  local: boolean
  /** ms spent re-ranking locally */
  rerankMs: number
  /** the mode this view was ranked in (a local re-rank can switch it; the trace keeps the mode it was run in) */
  mode: RecallTrace['mode']
}

export interface UseRecall {
  trace: RecallTrace | null
  view: RecallView | null
  /** id → change since the previous view (only ids injected before or now) */
  changes: Map<string, RankChange>
  loading: boolean
  error: string | null
  /** why the current config needs a new query (null when the view is up to date) */
  pendingReason: string | null
  /** the rank changes' memory: a view shown without a render (the drag fast path) is passed through it too */
  tracker: RankTracker
  run: () => void
}

/** Re-ranks run on idle after a trace arrives, to warm the re-rank's code up. */
const WARM_RUNS = 3

/** Re-ranks `trace`'s candidates WARM_RUNS times with its own config, one run per idle moment; returns a cancel. */
function warmRerank(trace: RecallTrace): () => void {
  const l = canRerankLocally(trace, trace.config)
  if (!l.ok) return () => undefined
  return whenIdleTimes(WARM_RUNS, () => {
    const r = rerank(trace.candidates, trace.config, l.mode)
    renderResults(r.results, { candidates: trace.candidates, units: trace.units, mode: l.mode }, trace.config)
  })
}

/** Runs `f` `times` times, each in an idle moment of its own (`whenIdle`); returns a cancel of the runs left. */
export function whenIdleTimes(times: number, f: () => void): () => void {
  let runs = 0
  let cancel = whenIdle(function run() {
    f()
    if (++runs < times) cancel = whenIdle(run)
  })
  return () => cancel()
}

/** Runs `f` when the page is idle (soon, where there is no idle callback); returns a cancel. */
function whenIdle(f: () => void): () => void {
  if (typeof requestIdleCallback === 'function') {
    const h = requestIdleCallback(f, { timeout: 1000 })
    return () => cancelIdleCallback(h)
  }
  const h = setTimeout(f, 50)
  return () => clearTimeout(h)
}

/**
 * The injected ranks of the last view seen and the changes that led to it. `changesFor` the same view twice
 * returns the same answer (a render may run twice); a view where nothing moved keeps the last real change's arrows.
 */
export class RankTracker {
  private view: RecallView | null = null
  private ranks: Map<string, number> | null = null
  private changes = new Map<string, RankChange>()

  changesFor(view: RecallView | null): Map<string, RankChange> {
    if (!view || view === this.view) return this.changes
    const now = ranksOf(view.results)
    if (this.ranks) {
      const ch = rankChanges(this.ranks, now)
      if ([...ch.values()].some((c) => c.before !== c.after)) this.changes = ch
    }
    this.view = view
    this.ranks = now
    return this.changes
  }

  /** What it holds now, to be put back by `restore` (after a view seen by mistake: one drawn over a drag's step). */
  save(): TrackerState {
    return { view: this.view, ranks: this.ranks, changes: this.changes }
  }

  restore(s: TrackerState): void {
    this.view = s.view
    this.ranks = s.ranks
    this.changes = s.changes
  }
}

export interface TrackerState {
  view: RecallView | null
  ranks: Map<string, number> | null
  changes: Map<string, RankChange>
}

/**
 * The view of `trace` under `effective` (re-ranked locally, or the trace's own when the config is the one it ran):
 * what the screen renders, and what the drag fast path shows without a render (the same function for both).
 */
function viewOf(trace: RecallTrace, effective: RecallConfig, mode: EffectiveMode, reuse = false, rerankAlways = false): RecallView {
  if (!rerankAlways && JSON.stringify(trace.config) === JSON.stringify(effective)) return viewFromTrace(trace)
  // The view shows how long the local re-rank took: timing this very computation is the point.
  const t0 = performance.now()
  const r = rerank(trace.candidates, effective, mode, { reuse })
  const rerankMs = performance.now() - t0
  const ctx = renderResults(r.results, { candidates: trace.candidates, units: trace.units, mode }, effective)
  return {
    results: r.results,
    dropped: r.dropped,
    context: ctx.text,
    contextTokens: ctx.tokens,
    injectedTokens: r.injectedTokens,
    refreshed: r.refreshed,
    local: true,
    rerankMs,
    mode,
  }
}

/**
 * The view of `trace` under `config` when it can be re-ranked locally (no new query needed), else null. `reuse`:
 * its results and dropped are written into those of the last such call (`rerank`'s option; the drag fast path's,
 * valid until its next step, never handed to React). `rerankAlways`: re-ranked even under the trace's own config.
 */
export function localView(trace: RecallTrace, config: RecallConfig, reuse = false, rerankAlways = false): RecallView | null {
  const effective = effectiveConfig(trace, config)
  const local = canRerankLocally(trace, effective)
  return local.ok ? viewOf(trace, effective, local.mode, reuse, rerankAlways) : null
}

function viewFromTrace(t: RecallTrace): RecallView {
  return {
    results: t.results,
    dropped: t.dropped,
    context: t.context,
    contextTokens: t.contextTokens,
    injectedTokens: t.injectedTokens ?? t.results.reduce((s, r) => s + r.tokens, 0),
    refreshed: t.refreshed,
    local: false,
    rerankMs: 0,
    mode: t.mode,
  }
}

export function useRecall(req: RecallRequest, config: RecallConfig, opts: { auto: boolean }): UseRecall {
  const [trace, setTrace] = useState<RecallTrace | null>(null)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [tick, setTick] = useState(0)
  const seq = useRef(0)
  /** request key + config of the last request sent */
  const lastSent = useRef<string | null>(null)
  /** the request key of the trace we hold (state, not a ref: the render reads it for pendingReason) */
  const [traceRequestKey, setTraceRequestKey] = useState<string | null>(null)
  /** the Run-button tick already acted on (a new tick forces a query) */
  const lastTick = useRef(0)

  const requestKey = JSON.stringify({ q: req.query, cue: req.useCue ? req.cue : null, now: req.now, e: req.embedder, p: req.preset })
  // The engine resolves an unset model to the embedder's; compare like with like.
  const effective = useMemo(() => (trace ? effectiveConfig(trace, config) : config), [trace, config])
  const local = useMemo(() => (trace ? canRerankLocally(trace, effective) : null), [trace, effective])
  const configKey = JSON.stringify(config)

  // The first slider steps after a query ran the re-rank's code cold (not yet optimised by the JS engine): 3–10×
  // the time of a warm step, and the worst steps of a drag (docs/internals/performance.md, "Recall sliders").
  // Re-ranked a few times with the trace's own config while the page is idle, the first drag step is a warm one.
  useEffect(() => (trace ? warmRerank(trace) : undefined), [trace])

  useEffect(() => {
    const manual = tick > 0 && lastTick.current !== tick
    lastTick.current = tick
    if (!opts.auto && !manual) return
    const sendKey = `${requestKey}|${configKey}`
    if (!manual) {
      if (sendKey === lastSent.current) return
      // Same request, and the new config re-ranks from cached features: no round trip.
      if (traceRequestKey === requestKey && local?.ok) return
    }
    const hasQuery = req.query.trim() !== '' || (req.useCue && Object.values(req.cue).some((v) => (Array.isArray(v) ? v.length : v)))
    if (!hasQuery && config.mode !== 'recency' && config.mode !== 'session') return
    const mine = ++seq.current
    const timer = setTimeout(
      () => {
        lastSent.current = sendKey
        setLoading(true)
        call('recall.run', recallRunInput(req, config)).then(
          (t) => {
            if (mine !== seq.current) return
            setTraceRequestKey(requestKey)
            setTrace(t)
            setError(null)
            setLoading(false)
          },
          (e: Error) => {
            if (mine !== seq.current) return
            setError(e.message)
            setLoading(false)
          },
        )
      },
      manual ? 0 : 300,
    )
    return () => clearTimeout(timer)
    // req and config enter through requestKey and configKey (their JSON), so a re-render that rebuilds an equal
    // request object does not send it again; the rule cannot see that the keys stand for them.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- see above: keyed by content, not identity
  }, [requestKey, configKey, tick, opts.auto, local?.ok])

  const view = useMemo<RecallView | null>(() => {
    if (!trace) return null
    if (!local || !local.ok) return viewFromTrace(trace)
    return viewOf(trace, effective, local.mode)
  }, [trace, effective, local])

  // Rank changes between consecutive views, worked out while rendering the new view: no effect (so no paint with
  // the previous view's arrows), and no state set while rendering (which rendered the whole screen twice a step).
  const [tracker] = useState(() => new RankTracker())
  const changes = tracker.changesFor(view)

  const pendingReason = !trace ? null : traceRequestKey !== requestKey ? 'query changed' : local && !local.ok ? local.reason : null
  const run = useCallback(() => setTick((t) => t + 1), [])
  return { trace, view, changes, tracker, loading, error, pendingReason, run }
}
