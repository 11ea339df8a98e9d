/**
 * What a tune searches: the objective and budget it was asked for, the knobs'
 * ranges, what the gather can serve (modes whose arms ran, pools no deeper than
 * fetched), the features whose weight can change an order, and the parameter
 * record a config is searched as.
 */
import { metricKey, parseMetricKey, LOWER_IS_BETTER, METRIC_IDS, type MetricId } from '../../../shared/metrics'
import { TUNE_BUDGETS, TUNE_POOLS, type TuneBaseline, type TuneParams, type TuneSpace } from '../../../shared/eval'
import { RecallscopeError } from '../../../shared/result'
import { effectiveMode } from '../../../shared/scoring'
import { FEATURE_NAMES, type FeatureName, type RecallConfig } from '../../../shared/types'
import { caseConfig, canReuse, type GatheredCase } from '../replay'
import type { CompiledEvaluator } from './compiled'
import type { CaseSplit } from '../split'

/** How a tune runs; every field has a default. */
export interface TuneOptions {
  /** objective, higher is better: recall@k, precision@k, ndcg@k, mrr, hit@k, abstention, budgetRecall, locomo@k, recallAny@k, recallAll@k. @default 'recall@10' */
  metric?: string
  /** configs to score. @default 1000 */
  budget?: number
  /** @default 1 */
  seed?: number
  space?: Partial<TuneSpace>
  /** budget-aware recall's B. @default config.tokenBudget ?? 2000 */
  tokenBudget?: number
  /** heatmap grid steps per edge. @default 12 */
  heatmapSteps?: number
  /** case id → side (split.ts); @default each case's own split field */
  split?: CaseSplit
  /** scored on the same held-out cases and ranked with the tuned config */
  baselines?: BaselineInput[]
  signal?: AbortSignal
  onProgress?: (done: number, total: number, message?: string) => void
  /** what gathered the cases (for the report) */
  gatherMs?: number
}

/** A baseline to score: from the tune's own gather when it can serve it, else from `gathered` (its own gather of the held-out cases). */
export interface BaselineInput {
  name: string
  label: string
  kind: TuneBaseline['kind']
  config: RecallConfig
  /** its own gather of (at least) the held-out cases; absent = the tune's gather must serve it */
  gathered?: readonly GatheredCase[]
  /** set when it could not be scored (kept in the report as n/a) */
  error?: string
  note?: string
}

export const HL_MIN = 1
export const HL_MAX = 24 * 365
/** half-life values random configs draw from (log-spaced from HL_MIN to HL_MAX); refinement moves continuously */
export const HL_GRID = 33
export const FLOOR_MAX = 0.8
export const MINSIM_MAX = 0.8
export const RRF_MIN = 1
export const RRF_MAX = 120
const SEARCH_MODES = ['dense', 'lexical', 'hybrid'] as const

/** The objective and limits a tune was asked for, checked. */
export interface TuneGoal {
  /** the metric's key, e.g. 'recall@10' */
  metric: string
  metricId: MetricId
  k: number
  /** configs to score */
  budget: number
  seed: number
  /** budget-aware recall's B */
  tokenBudget: number
  space: Required<TuneSpace>
}

/** The options' objective, budget and space, checked (BAD_INPUT for an unknown or lower-is-better metric, maxTopK < 1). */
export function parseGoal(opts: TuneOptions, base: RecallConfig): TuneGoal {
  const metricStr = opts.metric ?? 'recall@10'
  const parsed = parseMetricKey(metricStr, 10)
  if (!parsed) throw new RecallscopeError('BAD_INPUT', `Unknown metric '${metricStr}'. Metrics: ${METRIC_IDS.map((m) => metricKey(m, 10)).join(', ')}`)
  if (LOWER_IS_BETTER.has(parsed.id))
    throw new RecallscopeError(
      'BAD_INPUT',
      `tune maximises its metric: ${parsed.id} is lower-is-better; pick recall@k, ndcg@k, mrr, hit@k, precision@k, abstention, budgetRecall, locomo@k, recallAny@k or recallAll@k`,
    )
  const k = parsed.k ?? 10
  const metricId: MetricId = parsed.id
  const space: Required<TuneSpace> = {
    weights: true,
    halfLife: true,
    floor: true,
    topK: true,
    fusion: true,
    mode: true,
    pool: true,
    ageSource: true,
    minSimilarity: true,
    tokenBudget: true,
    ...Object.fromEntries(Object.entries(opts.space ?? {}).filter(([, v]) => v !== undefined)),
    maxTopK: opts.space?.maxTopK ?? Math.max(20, k),
  }
  if (space.maxTopK < 1) throw new RecallscopeError('BAD_INPUT', 'maxTopK must be ≥ 1')
  return {
    metric: metricKey(metricId, k),
    metricId,
    k,
    budget: Math.max(1, Math.floor(opts.budget ?? 1000)),
    seed: opts.seed ?? 1,
    tokenBudget: opts.tokenBudget ?? base.tokenBudget ?? 2000,
    space,
  }
}

/** The values the search may give the discrete knobs, limited to what the gather serves. */
export interface TuneReach {
  modes: RecallConfig['mode'][]
  pools: number[]
  /** null (off) first, then ascending */
  budgetsSorted: (number | null)[]
  anyHybridArms: boolean
}

/** What the gather can serve: modes whose arms ran, pools no deeper than fetched; the token budgets to step through. */
export function reachOf(gathered: readonly GatheredCase[], base: RecallConfig, space: Required<TuneSpace>): TuneReach {
  const modes: RecallConfig['mode'][] =
    space.mode && SEARCH_MODES.includes(base.mode as (typeof SEARCH_MODES)[number])
      ? SEARCH_MODES.filter((m) => serves(gathered, { ...base, mode: m }))
      : [base.mode]
  if (!modes.includes(base.mode)) modes.unshift(base.mode)
  const pools = space.pool
    ? [...new Set([...TUNE_POOLS, base.candidatePool])]
        .sort((a, b) => a - b)
        .filter((p) => p === base.candidatePool || modes.every((m) => serves(gathered, { ...base, mode: m, candidatePool: p })))
    : [base.candidatePool]
  const budgets: (number | null)[] = space.tokenBudget ? [...new Set<number | null>([null, ...TUNE_BUDGETS, base.tokenBudget])] : [base.tokenBudget]
  const budgetsSorted = [null, ...budgets.filter((b): b is number => b !== null).sort((a, b) => a - b)]
  return { modes, pools, budgetsSorted, anyHybridArms: modes.includes('hybrid') }
}

/**
 * Features that vary in some pool (the widest hybrid-or-base pool): weight on a
 * constant feature only shifts every score alike. ['similarity'] when none varies.
 */
export function activeWeightDims(ev: CompiledEvaluator, base: RecallConfig, reach: TuneReach): FeatureName[] {
  const probe = ev.setsFor({ ...base, mode: reach.anyHybridArms ? 'hybrid' : base.mode, candidatePool: reach.pools[reach.pools.length - 1] }).train
  const active = FEATURE_NAMES.filter((f) => {
    for (const cc of probe) {
      if (cc.n < 2) continue
      const arr = f === 'recency' ? cc.ageL : f === 'similarity' ? cc.sim : f === 'lexical' ? cc.lex : cc.sal
      for (let i = 1; i < cc.n; i++) if (arr[i] !== arr[0] || (f === 'recency' && cc.ageC[i] !== cc.ageC[0])) return true
      if (cc.hybrid && f !== 'salience' && f !== 'recency') return true // RRF terms vary by rank
    }
    return false
  })
  return active.length ? active : ['similarity']
}

/** The parameters tune moves, read off a config. */
export function paramsOf(c: RecallConfig): TuneParams {
  return {
    weights: { ...c.weights },
    halfLifeHours: c.recency.halfLifeHours,
    floor: c.floor,
    topK: c.topK,
    fusion: { ...c.fusion },
    mode: c.mode,
    candidatePool: c.candidatePool,
    ageFrom: c.recency.from,
    minSimilarity: c.minSimilarity,
    tokenBudget: c.tokenBudget,
  }
}

/** The config `base` becomes with a tune's parameters (absent optional parameters keep the base's). */
export function applyParams(base: RecallConfig, p: TuneParams): RecallConfig {
  return {
    ...base,
    mode: p.mode ?? base.mode,
    candidatePool: p.candidatePool ?? base.candidatePool,
    weights: { ...p.weights },
    recency: { halfLifeHours: p.halfLifeHours, from: p.ageFrom ?? base.recency.from },
    floor: p.floor,
    minSimilarity: p.minSimilarity === undefined ? base.minSimilarity : p.minSimilarity,
    topK: p.topK,
    tokenBudget: p.tokenBudget === undefined ? base.tokenBudget : p.tokenBudget,
    fusion: { ...p.fusion },
  }
}

export const r4 = (x: number) => Math.round(x * 1e4) / 1e4

/** A config's cache key: its parameters rounded to 4 decimals. */
export function keyOf(p: TuneParams): string {
  const w = p.weights
  return [
    w.similarity,
    w.lexical,
    w.recency,
    w.salience,
    p.halfLifeHours,
    p.floor ?? 'x',
    p.topK,
    p.fusion.method,
    p.fusion.rrfK,
    p.mode,
    p.candidatePool,
    p.ageFrom,
    p.minSimilarity ?? 'x',
    p.tokenBudget ?? 'x',
  ]
    .map((v) => (typeof v === 'number' ? r4(v) : v))
    .join('|')
}

/** Weights on the simplex, rounded to 4 decimals (a config a person can read), the rounding error on the largest. */
export function tidyWeights(w: Record<FeatureName, number>): Record<FeatureName, number> {
  const out = { ...w }
  let s = 0
  for (const f of FEATURE_NAMES) s += Math.max(0, out[f])
  for (const f of FEATURE_NAMES) out[f] = s > 0 ? r4(Math.max(0, out[f]) / s) : 0.25
  const big = FEATURE_NAMES.reduce((a, f) => (out[f] > out[a] ? f : a), FEATURE_NAMES[0])
  out[big] = r4(1 - FEATURE_NAMES.filter((f) => f !== big).reduce((a, f) => a + out[f], 0))
  return out
}

/** Would every gathered case serve this config (an engine run per case otherwise)? Mode 'none' (an arm that never ran) serves as "nothing". */
export function serves(gathered: readonly GatheredCase[], cfg: RecallConfig): boolean {
  for (const g of gathered) {
    if (canReuse(g, cfg)) continue
    const m = effectiveMode(caseConfig(cfg, g.case), { dense: g.arms.dense.ran, lexical: g.arms.lexical.ran })
    if (m !== 'none') return false
  }
  return true
}
