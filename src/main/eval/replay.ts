/**
 * Replay eval cases: gather each case's candidates ONCE with the recall engine
 * (`gatherRecallBatch`: a live recall's arms over a batch of cases, without rendering; query
 * vectors batched through the workspace cache), keep them, and re-score them with the shared `rerank` for
 * any config that only moves scoring knobs (weights, half-life, floor, topK,
 * budget, fusion, a pool no deeper than fetched — scoring.ts `canRerankLocally`).
 * A run of the engine per case happens only when a config changes what is
 * gathered (scope, mode arms, model, unit, cue use).
 *
 * Per case, the engine runs with the case's scope fields (agent / user /
 * session / tenant) over the config's scope, and at the case's `now` (else the
 * caller's `now`): a replay sees the store as it was at that moment.
 */
import { armTexts } from '../../shared/cue'
import { bootstrapMeanCI, caseMetrics, compileJudgment, keyed, LOWER_IS_BETTER, METRIC_IDS, metricKey, summarize, type CaseMetrics } from '../../shared/metrics'
import type { CaseResult, EvalCaseRow, RunCounts } from '../../shared/eval'
import { RecallscopeError } from '../../shared/result'
import { canRerankLocally, effectiveMode, rerank } from '../../shared/scoring'
import type { ArmInfo, CandidateRaw, EffectiveMode, EmbedderInfo, RecallConfig } from '../../shared/types'
import type { Embedder } from '../embed/types'
import { gatherRecallBatch, prepareVectors } from '../recall/engine'
import type { GatherPhaseMs } from '../recall/gatherMemories'
import { PassReads } from '../recall/passReads'
import type { MemorySource } from '../store/source'

/** Budget-aware recall's B when neither the caller nor the config sets one: seed 001's SemanticContextMaxTokens. */
const DEFAULT_EVAL_BUDGET = 2000

/** What one case's engine run left for re-scoring. */
export interface GatheredCase {
  case: EvalCaseRow
  /** the `now` it was gathered (and is scored) at */
  now: number
  /** the config it was gathered with, the case's scope applied */
  config: RecallConfig
  candidates: CandidateRaw[]
  arms: { dense: ArmInfo; lexical: ArmInfo; recency: ArmInfo; order: ArmInfo }
  mode: EffectiveMode
  degraded: boolean
  /** what embedded the query */
  embedder: EmbedderInfo
  /** identity of the case content + embedder, to tell a stale cache entry */
  key: string
}

export interface GatherOptions {
  /** embeds each case's dense text (workspace query cache first); null = dense arm off */
  embedder: Embedder | null
  /** `now` for cases that carry none (epoch ms; read at the boundary) */
  now: number
  /** ranked candidates fetched per arm (≥ candidatePool). @default the engine's fetchDepth */
  depth?: number
  signal?: AbortSignal
  /** cases gathered so far (`message` while the query vectors are embedded) */
  onProgress?: (done: number, total: number, message?: string) => void
  /** reuse earlier gathers (per open store); entries that cannot serve `config` are redone */
  cache?: GatherCache
  /** where the gather's time goes, accumulated (ms) */
  ms?: GatherMs
}

/** Where a gather's time went (ms, summed over its cases), and how many cases the engine gathered (the rest came from the cache). */
export interface GatherMs extends GatherPhaseMs {
  /** the query vectors: workspace cache and embedder (batched) */
  queryVectorsMs: number
  /** per-case bookkeeping outside the phases: configs, keys, results */
  otherMs: number
  gathered: number
}

export const zeroGatherMs = (): GatherMs => ({ queryVectorsMs: 0, scopeMs: 0, denseMs: 0, lexicalMs: 0, featuresMs: 0, otherMs: 0, gathered: 0 })

/**
 * Cached gathers of one open store, by case id, and whole case lists gathered under one config (a tune's
 * baselines, by the caller's key). Kept by the App; dropped with the store.
 */
export class GatherCache {
  private readonly byCase = new Map<string, GatheredCase>()
  private readonly lists = new Map<string, readonly GatheredCase[]>()
  constructor(readonly store: MemorySource) {}
  get(id: string): GatheredCase | undefined {
    return this.byCase.get(id)
  }
  set(g: GatheredCase): void {
    this.byCase.set(g.case.id, g)
  }
  /**
   * A list gathered under `key` earlier, if it still stands for `cases` (the same cases in the same order, each
   * with the same query, scope, `now` and embedder): with the cases as they are now, as `gatherCases` serves a
   * cached case.
   */
  getList(key: string, cases: readonly EvalCaseRow[], now: number, embedder: Embedder | null): GatheredCase[] | undefined {
    const gs = this.lists.get(key)
    if (!gs || gs.length !== cases.length) return undefined
    for (let i = 0; i < gs.length; i++) {
      const c = cases[i]
      if (gs[i].case.id !== c.id || gs[i].key !== caseKey(c, c.now ?? now, embedder)) return undefined
    }
    return gs.map((g, i) => (g.case === cases[i] ? g : { ...g, case: cases[i] }))
  }
  setList(key: string, gs: readonly GatheredCase[]): void {
    this.lists.set(key, gs)
  }
  clear(): void {
    this.byCase.clear()
    this.lists.clear()
  }
  get size(): number {
    return this.byCase.size
  }
}

/** The config a case runs with: its scope fields over the config's scope. */
export function caseConfig(config: RecallConfig, c: Pick<EvalCaseRow, 'scope'>): RecallConfig {
  const scope = { ...config.scope }
  for (const k of ['agentId', 'userId', 'sessionId', 'tenantId'] as const) {
    const v = c.scope[k]
    if (typeof v === 'string' && v !== '') scope[k] = v
  }
  return { ...config, scope }
}

function embedderKey(e: Embedder | null): string {
  return e ? `${e.name}:${e.cacheKey ?? e.model ?? ''}:${e.enabled}` : 'none'
}

function caseKey(c: EvalCaseRow, now: number, e: Embedder | null): string {
  return JSON.stringify([c.query, c.cue, c.scope, now, embedderKey(e)])
}

/** Could this gathered case be re-scored under `config` (no new engine run)? */
export function canReuse(g: GatheredCase, config: RecallConfig): boolean {
  return canRerankLocally({ config: g.config, arms: g.arms, mode: g.mode }, caseConfig(config, g.case)).ok
}

const yieldNow = () => new Promise<void>((r) => setImmediate(r))

function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) throw new RecallscopeError('CANCELLED', 'Cancelled')
}

/** Cases one batch gathers between two yields to the event loop (progress, cancel): ~10–30 ms of work. */
const BATCH_CASES = 128

/**
 * Gather every case's candidates under `config`: the query vectors first, batched (workspace
 * cache, then the embedder), then the engine over the cases in batches (`gatherRecallBatch`: each
 * arm one pass over the batch, the store read once per scope, row and model for the whole call).
 * The same candidates as one `gatherRecallSync` per case. Yields to the event loop between
 * batches so the UI stays responsive; cancellable. `opts.ms` accumulates where the time went.
 */
export async function gatherCases(store: MemorySource, cases: readonly EvalCaseRow[], config: RecallConfig, opts: GatherOptions): Promise<GatheredCase[]> {
  const out = new Array<GatheredCase>(cases.length)
  const ms = opts.ms ?? zeroGatherMs()
  const todo: { i: number; now: number; key: string; config: RecallConfig; dense: string }[] = []
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]
    const now = c.now ?? opts.now
    const key = caseKey(c, now, opts.embedder)
    const cached = opts.cache?.get(c.id)
    if (cached && cached.key === key && canReuse(cached, config)) {
      // The candidates depend on the query, scope and now (the key); the judgment, split and tags may
      // have been edited since: always score against the case as it is now.
      out[i] = cached.case === c ? cached : { ...cached, case: c }
      continue
    }
    const cfg = caseConfig(config, c)
    todo.push({ i, now, key, config: cfg, dense: armTexts(c.query, c.cue, cfg.cueUse).dense })
  }
  const tq = performance.now()
  const prepared = todo.length
    ? await prepareVectors(
        store,
        todo.map((t) => t.dense),
        { embedder: opts.embedder, signal: opts.signal, onBatch: (d, t) => opts.onProgress?.(0, cases.length, `embedding queries: ${d} / ${t}`) },
      )
    : []
  ms.queryVectorsMs += performance.now() - tq
  checkAbort(opts.signal)
  // One set of reads for the whole call: each scope listed, each row decoded, each index resolved once.
  const reads = new PassReads(store)
  for (let b = 0; b < todo.length; b += BATCH_CASES) {
    const batch = todo.slice(b, b + BATCH_CASES)
    const t0 = performance.now()
    const inner = ms.scopeMs + ms.denseMs + ms.lexicalMs + ms.featuresMs
    const rs = gatherRecallBatch(
      reads,
      batch.map((t, j) => ({ query: { text: cases[t.i].query, cue: cases[t.i].cue }, config: t.config, now: t.now, prepared: prepared[b + j] })),
      { depth: opts.depth, ms },
    )
    batch.forEach((t, j) => {
      const r = rs[j]
      const g: GatheredCase = {
        case: cases[t.i],
        now: t.now,
        config: r.config,
        candidates: r.candidates,
        arms: r.arms,
        mode: r.mode,
        degraded: r.degraded,
        embedder: r.embedder,
        key: t.key,
      }
      out[t.i] = g
      opts.cache?.set(g)
    })
    ms.otherMs += performance.now() - t0 - (ms.scopeMs + ms.denseMs + ms.lexicalMs + ms.featuresMs - inner)
    ms.gathered += batch.length
    if (b + BATCH_CASES < todo.length) {
      opts.onProgress?.(cases.length - todo.length + b + batch.length, cases.length)
      await yieldNow()
      checkAbort(opts.signal)
    }
  }
  opts.onProgress?.(cases.length, cases.length)
  return out
}

/** Injected ids and tokens of a gathered case under a config (re-scored with the shared rerank). */
export function scoreCase(g: GatheredCase, config: RecallConfig): { ids: string[]; tokens: number[] } {
  const cfg = caseConfig(config, g.case)
  const mode = effectiveMode(cfg, { dense: g.arms.dense.ran, lexical: g.arms.lexical.ran })
  const rr = rerank(g.candidates, cfg, mode)
  return { ids: rr.results.map((r) => r.id), tokens: rr.results.map((r) => r.tokens) }
}

export interface ScoreOptions {
  /** metric cutoff */
  k: number
  /** budget-aware recall's B */
  budget: number
}

export interface Scored {
  perCase: CaseResult[]
  metrics: Record<string, number | null>
  counts: RunCounts
  scoreMs: number
  /** of scoreMs: re-ranking each case (fusion, gates) */
  fusionMs: number
  /** of scoreMs: metrics per case and their means */
  metricsMs: number
}

/** Score gathered cases under a config: per-case results and macro means. */
export function scoreGathered(gathered: readonly GatheredCase[], config: RecallConfig, opts: ScoreOptions): Scored {
  const t0 = performance.now()
  const per: CaseMetrics[] = []
  const perCase: CaseResult[] = []
  let degraded = 0
  let fusionMs = 0
  for (const g of gathered) {
    if (!canReuse(g, config)) throw new RecallscopeError('INTERNAL', `case ${g.case.id} was gathered under a config that cannot serve this one`)
    const tf = performance.now()
    const r = scoreCase(g, config)
    fusionMs += performance.now() - tf
    const m = caseMetrics(compileJudgment(g.case, opts.k), r.ids, r.tokens, opts.k, opts.budget)
    per.push(m)
    if (g.degraded) degraded++
    const cr: CaseResult = {
      id: g.case.id,
      name: g.case.name,
      retrieved: r.ids,
      tokens: r.tokens,
      relevant: g.case.relevant,
      expectEmpty: g.case.expectEmpty,
      split: g.case.split,
      tags: g.case.tags,
      metrics: keyed(m, opts.k),
    }
    if (g.degraded) cr.degraded = true
    perCase.push(cr)
  }
  const s = summarize(per, opts.k)
  const scoreMs = performance.now() - t0
  return { perCase, metrics: s.metrics, counts: { ...s.counts, degraded }, scoreMs, fusionMs, metricsMs: scoreMs - fusionMs }
}

/** The token budget B for budget-aware recall: explicit, else the config's, else DEFAULT_EVAL_BUDGET. */
export function evalBudget(config: RecallConfig, explicit?: number | null): number {
  return explicit ?? config.tokenBudget ?? DEFAULT_EVAL_BUDGET
}

/** 95% bootstrap intervals of every 0..1 metric's mean over the cases where it applies. */
export function intervals(perCase: readonly CaseResult[], k: number): Record<string, { lo: number; hi: number } | null> {
  const out: Record<string, { lo: number; hi: number } | null> = {}
  for (const id of METRIC_IDS) {
    if (LOWER_IS_BETTER.has(id)) continue
    const key = metricKey(id, k)
    const xs: number[] = []
    for (const c of perCase) {
      const v = c.metrics[key]
      if (v !== null && v !== undefined) xs.push(v)
    }
    const ci = bootstrapMeanCI(xs)
    out[key] = ci ? { lo: ci.lo, hi: ci.hi } : null
  }
  return out
}

/** Recompute a stored case result's metrics at another k (runs keep their judgment snapshot). */
export function caseMetricsAt(
  c: Pick<CaseResult, 'relevant' | 'expectEmpty' | 'retrieved' | 'tokens'>,
  k: number,
  budget: number,
): Record<string, number | null> {
  return keyed(caseMetrics({ relevant: c.relevant, expectEmpty: c.expectEmpty }, c.retrieved, c.tokens, k, budget), k)
}
