/**
 * Auto-tune: search mode, fusion, candidate pool, weights (on the simplex),
 * recency half-life and age source, floor, minSimilarity, topK and token budget
 * on the TRAIN split, then report the chosen config's score on the held-out TEST
 * split beside its train score, so an overfit shows, ranked with baselines
 * (the start config, every preset's default, lexical-only BM25, dense-only
 * cosine) scored on the same held-out cases with bootstrap intervals.
 *
 * Speed: candidates are gathered once per case by the engine (replay.ts); each
 * config then re-scores compiled per-case feature arrays (`compileCase` /
 * `rankCompiled`), never the store. `rankCompiled` is an allocation-free copy of
 * scoring.ts `rerank` for the knobs tune moves, with the same arithmetic in the
 * same order, so it returns exactly what `rerank` would (tune.test.ts checks
 * this on random configs); cases it does not cover (order modes, Engram's user
 * blend, live-transcript dedupe) fall back to `rerank` itself.
 *
 * Compiled sets are per (mode, pool): mode and pool decide pool membership,
 * min-max ranges and RRF ranks. minSimilarity, the age source and the token
 * budget are gates / inputs rankCompiled applies per config.
 *
 * Search: the base config and every baseline the gather can serve (so the
 * tuner never starts below them on train), then random configs (mode and pool
 * uniform; Dirichlet(1) weights on a random face of the simplex of the
 * features that vary; half-life log-uniform on a grid; rrfK log-uniform;
 * floor / minSimilarity off or uniform; topK uniform; budget off or a step),
 * scored grouped by half-life, then coordinate refinement from the best (one
 * knob at a time: mode, pool step, weight mass between two features, floor,
 * minSimilarity, topK, budget step, rrfK, half-life, age source) with
 * shrinking steps and restarts. Ties go to the config that injects fewer tokens.
 * Cancellable through an AbortSignal; progress after every slice.
 *
 * Length: one file on purpose — the compiled scorer, the search and the report share
 * private state types and the exactness argument that ties them; split, each half
 * would need the other's internals.
 */
import {
  compileJudgment,
  metricKey,
  metricsFromGrades,
  parseMetricKey,
  LOWER_IS_BETTER,
  METRIC_IDS,
  seededRandom,
  bootstrapMeanCI,
  type CaseMetrics,
  type CompiledJudgment,
  type MetricId,
} from '../../shared/metrics'
import {
  TUNE_BUDGETS,
  TUNE_POOLS,
  type TuneBaseline,
  type TuneHeatmap,
  type TuneParams,
  type TuneReport,
  type TuneSpace,
  type TuneSplitInfo,
  type TuneTrial,
} from '../../shared/eval'
import { RecallscopeError } from '../../shared/result'
import { effectiveMode, estimateTokensFromLength, inPool, isOrderMode, recencyOf, rerank } from '../../shared/scoring'
import { FEATURE_NAMES, type FeatureName, type RecallConfig } from '../../shared/types'
import { caseConfig, canReuse, scoreGathered, type GatheredCase, type Scored } from './replay'
import type { CaseSplit } from './split'

// ---------------------------------------------------------------------------
// Compiled cases
// ---------------------------------------------------------------------------

/** One case's pool as flat arrays, for thousands of re-scorings. */
export interface CompiledCase {
  g: GatheredCase
  judged: CompiledJudgment
  /** pool members (minSimilarity is a gate in rankCompiled, as in rerank) */
  n: number
  /** their ids, index-aligned */
  ids: string[]
  /** feature values as rerank's `f` sees them (after min-max when the config normalises; recency is per config) */
  sim: Float64Array
  lex: Float64Array
  sal: Float64Array
  /** raw cosine for the minSimilarity gate (NaN = no vector: never passes) */
  rawSim: Float64Array
  /** ages for recency, from creation and from last use (config.recency.from picks) */
  ageC: Float64Array
  ageL: Float64Array
  /** recency under the last half-life / age source scored (a one-entry cache) */
  rec: Float64Array
  recHl: number
  recFromLast: boolean
  /** arm ranks within the pool, 0 = not in that arm's pool (RRF terms) */
  dRank: Int32Array
  lRank: Int32Array
  /** the order rerank falls back to on equal scores (similarity, then age, then id) */
  tie: Int32Array
  tokens: Int32Array
  grade: Int8Array
  hybrid: boolean
  /** rerank itself is used for this case (a path rankCompiled does not copy) */
  fallback: boolean
}

/** The parts of a config rankCompiled reads that tune never moves: they must match the compiled ones (mode and pool pick a compiled set). */
function staticKey(c: RecallConfig): string {
  return JSON.stringify([c.normalize, c.gateOrder, c.tokenEstimator, c.overflow, c.atLeastOne, c.tieBreak ?? 'newest', c.scope])
}

export function compileCase(g: GatheredCase, config: RecallConfig, k: number): CompiledCase {
  const cfg = caseConfig(config, g.case)
  const mode = effectiveMode(cfg, { dense: g.arms.dense.ran, lexical: g.arms.lexical.ran })
  const judged = compileJudgment(g.case, k)
  const p = cfg.candidatePool
  // Only score-ordered modes compile; the others fall back to rerank below.
  const scored = mode === 'dense' || mode === 'lexical' || mode === 'hybrid'
  const pool = scored ? g.candidates.filter((c) => inPool(c, mode, p)) : []
  const fallback =
    isOrderMode(mode) || mode === 'none' || g.candidates.some((c) => c.group === 'blend' || c.excluded) || (cfg.scope.excludeIds?.length ?? 0) > 0
  // rerank normalises over the whole pool (before minSimilarity): do the same for the static features.
  const norm = cfg.normalize === 'minmax'
  const mm = (vals: number[]) => {
    if (!norm) return vals
    let lo = Infinity
    let hi = -Infinity
    for (const v of vals) {
      if (v < lo) lo = v
      if (v > hi) hi = v
    }
    const r = hi - lo
    return vals.map((v) => (r === 0 ? 0.5 : (v - lo) / r))
  }
  const simAll = mm(pool.map((c) => c.similarity ?? 0))
  const lexAll = mm(pool.map((c) => c.lexical))
  const salAll = mm(pool.map((c) => c.salience))
  const n = pool.length
  const keep = pool.map((_, i) => i)
  const cc: CompiledCase = {
    g,
    judged,
    n,
    ids: pool.map((c) => c.id),
    sim: new Float64Array(n),
    lex: new Float64Array(n),
    sal: new Float64Array(n),
    rawSim: new Float64Array(n),
    ageC: new Float64Array(n),
    ageL: new Float64Array(n),
    rec: new Float64Array(n),
    recHl: NaN,
    recFromLast: false,
    dRank: new Int32Array(n),
    lRank: new Int32Array(n),
    tie: new Int32Array(n),
    tokens: new Int32Array(n),
    grade: new Int8Array(n),
    hybrid: mode === 'hybrid',
    fallback,
  }
  keep.forEach((pi, j) => {
    const c = pool[pi]
    cc.sim[j] = simAll[pi]
    cc.lex[j] = lexAll[pi]
    cc.sal[j] = salAll[pi]
    cc.rawSim[j] = c.similarity ?? NaN
    cc.ageC[j] = c.ageCreatedMs
    cc.ageL[j] = c.ageLastUsedMs
    cc.dRank[j] = c.denseRank !== null && c.denseRank <= p ? c.denseRank : 0
    cc.lRank[j] = c.lexicalRank !== null && c.lexicalRank <= p ? c.lexicalRank : 0
    cc.tokens[j] = estimateTokensFromLength(c.textLength, c.textBytes ?? c.textLength, cfg.tokenEstimator)
    cc.grade[j] = judged.grades.get(c.id) ?? 0
  })
  // rerank's comparator after the score: similarity (as normalised), then created age (newest/oldest), then id.
  const newest = (cfg.tieBreak ?? 'newest') === 'newest'
  const idx = keep.map((_, j) => j)
  idx.sort((a, b) => {
    if (cc.sim[a] !== cc.sim[b]) return cc.sim[b] - cc.sim[a]
    const ca = pool[keep[a]]
    const cb = pool[keep[b]]
    if (ca.ageCreatedMs !== cb.ageCreatedMs) return newest ? ca.ageCreatedMs - cb.ageCreatedMs : cb.ageCreatedMs - ca.ageCreatedMs
    return ca.id < cb.id ? -1 : ca.id > cb.id ? 1 : 0
  })
  idx.forEach((j, r) => (cc.tie[j] = r))
  return cc
}

/** Scratch buffers reused across calls (one tune at a time per buffer set). */
export class Scratch {
  score = new Float64Array(64)
  rec = new Float64Array(64)
  sel = new Int32Array(64)
  outIdx = new Int32Array(64)
  outGrades = new Int8Array(64)
  outTokens = new Int32Array(64)
  ensure(n: number): void {
    if (this.score.length >= n) return
    const m = Math.max(n, this.score.length * 2)
    this.score = new Float64Array(m)
    this.rec = new Float64Array(m)
    this.sel = new Int32Array(m)
    this.outIdx = new Int32Array(m)
    this.outGrades = new Int8Array(m)
    this.outTokens = new Int32Array(m)
  }
}

/**
 * The injected order under a config, as indexes into the compiled arrays:
 * writes s.outIdx / outGrades / outTokens, returns the count. Mirrors rerank:
 * score (same arithmetic), order (score desc, then the static tie order),
 * floor / topK in gateOrder, then the token budget.
 */
function rankCompiled(cc: CompiledCase, cfg: RecallConfig, s: Scratch): number {
  const n = cc.n
  s.ensure(n)
  const w = cfg.weights
  const hl = cfg.recency.halfLifeHours
  const rrf = cc.hybrid && cfg.fusion.method === 'rrf'
  const K = cfg.fusion.rrfK
  const score = s.score
  let rec: Float64Array = s.rec
  const fromLast = cfg.recency.from === 'last_used'
  // A zero recency weight multiplies recency to 0 whatever it is: skip the pow (the hot loop's cost).
  const useRec = w.recency !== 0
  if (useRec) {
    // Math.pow is most of a config's cost: keep the last half-life's values per case (refinement
    // moves one knob at a time, so most neighbours reuse them).
    if (cc.recHl !== hl || cc.recFromLast !== fromLast) {
      const age = fromLast ? cc.ageL : cc.ageC
      for (let i = 0; i < n; i++) cc.rec[i] = recencyOf(age[i], hl)
      cc.recHl = hl
      cc.recFromLast = fromLast
    }
    rec = cc.rec
    if (cfg.normalize === 'minmax' && n > 0) {
      // rerank normalises recency over the whole pool (minSimilarity gates later), as here.
      let lo = Infinity
      let hi = -Infinity
      for (let i = 0; i < n; i++) {
        if (rec[i] < lo) lo = rec[i]
        if (rec[i] > hi) hi = rec[i]
      }
      const r = hi - lo
      for (let i = 0; i < n; i++) s.rec[i] = r === 0 ? 0.5 : (rec[i] - lo) / r
      rec = s.rec
    }
  }
  for (let i = 0; i < n; i++) {
    let simTerm = cc.sim[i]
    let lexTerm = cc.lex[i]
    if (rrf) {
      const d = cc.dRank[i]
      const l = cc.lRank[i]
      simTerm = d > 0 ? (K + 1) / (K + d) : 0
      lexTerm = l > 0 ? (K + 1) / (K + l) : 0
    }
    score[i] = w.similarity * simTerm + w.lexical * lexTerm + w.recency * (useRec ? rec[i] : 0) + w.salience * cc.sal[i]
  }
  const topK = cfg.topK
  const floor = cfg.floor
  const floorFirst = cfg.gateOrder === 'floor-then-topk'
  // Partial selection of the best `topK` (insertion into a sorted buffer): pools are small, topK smaller.
  const sel = s.sel
  let m = 0
  const tie = cc.tie
  const minSim = cfg.minSimilarity
  const rawSim = cc.rawSim
  for (let i = 0; i < n && topK > 0; i++) {
    // minSimilarity first (rerank's selectGroup); NaN (no vector) never passes.
    if (minSim !== null && !(rawSim[i] >= minSim)) continue
    if (floorFirst && floor !== null && score[i] < floor) continue
    const si = score[i]
    const ti = tie[i]
    if (m === topK) {
      const last = sel[m - 1]
      if (si < score[last] || (si === score[last] && ti > tie[last])) continue
      m--
    }
    let j = m - 1
    while (j >= 0) {
      const o = sel[j]
      if (score[o] > si || (score[o] === si && tie[o] < ti)) break
      sel[j + 1] = o
      j--
    }
    sel[j + 1] = i
    m++
  }
  let out = 0
  const budget = cfg.tokenBudget
  let used = 0
  let stopped = false
  for (let r = 0; r < m; r++) {
    const i = sel[r]
    if (!floorFirst && floor !== null && score[i] < floor) continue
    if (budget !== null) {
      if (stopped) break
      const t = cc.tokens[i]
      if (used + t <= budget || (cfg.atLeastOne && out === 0)) used += t
      else {
        if (cfg.overflow === 'stop') stopped = true
        continue
      }
    }
    s.outIdx[out] = i
    s.outGrades[out] = cc.grade[i]
    s.outTokens[out] = cc.tokens[i]
    out++
  }
  return out
}

/** Metrics of a compiled case under a config (the fast path, or rerank for a fallback case). */
function scoreCompiled(cc: CompiledCase, cfg: RecallConfig, s: Scratch, budget: number): CaseMetrics {
  if (cc.fallback) {
    const c = caseConfig(cfg, cc.g.case)
    const rr = rerank(cc.g.candidates, c, effectiveMode(c, { dense: cc.g.arms.dense.ran, lexical: cc.g.arms.lexical.ran }))
    return metricsFromGrades(
      rr.results.map((r) => cc.judged.grades.get(r.id) ?? 0),
      rr.results.map((r) => r.tokens),
      cc.judged,
      budget,
    )
  }
  const n = rankCompiled(cc, cfg, s)
  return metricsFromGrades(s.outGrades, s.outTokens, cc.judged, budget, n)
}

/** Injected ids of a compiled case under a config (for tests and reports). */
export function idsCompiled(cc: CompiledCase, cfg: RecallConfig, s: Scratch): string[] {
  const n = rankCompiled(cc, cfg, s)
  return Array.from(s.outIdx.subarray(0, n), (i) => cc.ids[i])
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

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

const HL_MIN = 1
const HL_MAX = 24 * 365
/** half-life values random configs draw from (log-spaced from HL_MIN to HL_MAX); refinement moves continuously */
const HL_GRID = 33
const FLOOR_MAX = 0.8
const MINSIM_MAX = 0.8
const RRF_MIN = 1
const RRF_MAX = 120
const SEARCH_MODES = ['dense', 'lexical', 'hybrid'] as const

function paramsOf(c: RecallConfig): TuneParams {
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

const r4 = (x: number) => Math.round(x * 1e4) / 1e4

function keyOf(p: TuneParams): string {
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
function tidyWeights(w: Record<FeatureName, number>): Record<FeatureName, number> {
  const out = { ...w }
  let s = 0
  for (const f of FEATURE_NAMES) s += Math.max(0, out[f])
  for (const f of FEATURE_NAMES) out[f] = s > 0 ? r4(Math.max(0, out[f]) / s) : 0.25
  const big = FEATURE_NAMES.reduce((a, f) => (out[f] > out[a] ? f : a), FEATURE_NAMES[0])
  out[big] = r4(1 - FEATURE_NAMES.filter((f) => f !== big).reduce((a, f) => a + out[f], 0))
  return out
}

interface Evaluated {
  value: number
  tokens: number
}

/** Is a better than b? Higher objective, then fewer tokens. */
function better(a: Evaluated, b: Evaluated): boolean {
  if (a.value !== b.value) return a.value > b.value + 1e-12
  return a.tokens < b.tokens - 1e-9
}

/** Would every gathered case serve this config (an engine run per case otherwise)? Mode 'none' (an arm that never ran) serves as "nothing". */
function serves(gathered: readonly GatheredCase[], cfg: RecallConfig): boolean {
  for (const g of gathered) {
    if (canReuse(g, cfg)) continue
    const m = effectiveMode(caseConfig(cfg, g.case), { dense: g.arms.dense.ran, lexical: g.arms.lexical.ran })
    if (m !== 'none') return false
  }
  return true
}

/** Per-case values of a metric, by case id (null where it does not apply). */
function valuesById(perCase: readonly { id: string; metrics: Record<string, number | null> }[], metric: string): Map<string, number | null> {
  return new Map(perCase.map((c) => [c.id, c.metrics[metric] ?? null]))
}

/** Mean of a per-case metric over the cases where it applies. */
function meanOf(vals: Iterable<number | null>): number | null {
  let s = 0
  let n = 0
  for (const v of vals)
    if (v !== null) {
      s += v
      n++
    }
  return n ? s / n : null
}

/**
 * Tune over gathered cases (from `gatherCases` with `base`; the gather must be
 * able to serve every config in the space: same scope/arms, pool ≤ fetched —
 * knobs it cannot serve are pinned and listed in the report).
 */
export async function tune(gathered: readonly GatheredCase[], base: RecallConfig, opts: TuneOptions = {}): Promise<TuneReport> {
  const t0 = performance.now()
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
  const metric = metricKey(metricId, k)
  const budget = Math.max(1, Math.floor(opts.budget ?? 1000))
  const seed = opts.seed ?? 1
  const tokenBudget = opts.tokenBudget ?? base.tokenBudget ?? 2000
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

  for (const g of gathered) if (!canReuse(g, base)) throw new RecallscopeError('INTERNAL', `case ${g.case.id} was not gathered for this config`)
  const sideOf = (g: GatheredCase) => opts.split?.side.get(g.case.id) ?? g.case.split
  const train = gathered.filter((g) => sideOf(g) === 'train')
  const test = gathered.filter((g) => sideOf(g) === 'test')
  if (train.length === 0)
    throw new RecallscopeError('BAD_INPUT', 'No train cases: tune searches on the train split and reports the test split (mark some cases train)')
  const splitInfo: TuneSplitInfo = opts.split?.info ?? { rule: 'case', by: null, train: train.length, test: test.length, trainGroups: [], testGroups: [] }

  // What the gather can serve: modes whose arms ran, pools no deeper than fetched.
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
  const anyHybridArms = modes.includes('hybrid')

  const compiled = new Map<string, { train: CompiledCase[]; test: CompiledCase[] }>()
  const compiledFor = (cfg: RecallConfig) => {
    const key = `${cfg.mode}|${cfg.candidatePool}`
    let c = compiled.get(key)
    if (!c) {
      const one = (gs: readonly GatheredCase[]) => gs.map((g) => compileCase(g, cfg, k))
      compiled.set(key, (c = { train: one(train), test: one(test) }))
    }
    return c
  }
  const scratch = new Scratch()
  const sKey = staticKey(base)

  const evalSet = (which: 'train' | 'test', cfg: RecallConfig): Evaluated => {
    if (staticKey(cfg) !== sKey) throw new RecallscopeError('INTERNAL', 'tune changed a knob it does not compile')
    const cs = compiledFor(cfg)[which]
    let sum = 0
    let n = 0
    let tok = 0
    for (const cc of cs) {
      const m = scoreCompiled(cc, cfg, scratch, tokenBudget)
      tok += m.tokens
      const v = m[metricId]
      if (v !== null) {
        sum += v
        n++
      }
    }
    return { value: n ? sum / n : 0, tokens: cs.length ? tok / cs.length : 0 }
  }

  // Features that vary in some pool (the widest hybrid-or-base pool): weight on a constant feature only shifts every score alike.
  const probe = compiledFor({ ...base, mode: anyHybridArms ? 'hybrid' : base.mode, candidatePool: pools[pools.length - 1] }).train
  const active = FEATURE_NAMES.filter((f) => {
    for (const cc of probe) {
      if (cc.n < 2) continue
      const arr = f === 'recency' ? cc.ageL : f === 'similarity' ? cc.sim : f === 'lexical' ? cc.lex : cc.sal
      for (let i = 1; i < cc.n; i++) if (arr[i] !== arr[0] || (f === 'recency' && cc.ageC[i] !== cc.ageC[0])) return true
      if (cc.hybrid && f !== 'salience' && f !== 'recency') return true // RRF terms vary by rank
    }
    return false
  })
  const weightDims: FeatureName[] = active.length ? active : ['similarity']
  const rnd = seededRandom(seed)

  const trials: TuneTrial[] = []
  const seen = new Map<string, Evaluated>()
  let best: { params: TuneParams; e: Evaluated } | null = null
  const curve: { trial: number; best: number; value: number }[] = []
  let cancelled = false
  let lastYield = performance.now()
  const tSearch = performance.now()

  const nearest = <T extends number | null>(xs: readonly T[], v: T): T =>
    xs.includes(v) ? v : v === null ? xs[0] : xs.reduce((a, b) => (b !== null && a !== null && Math.abs(b - v) < Math.abs(a - v) ? b : a))
  const clampParams = (p: TuneParams): TuneParams => ({
    weights: tidyWeights(p.weights),
    halfLifeHours: Math.min(HL_MAX, Math.max(HL_MIN, r4(p.halfLifeHours))),
    floor: p.floor === null ? null : r4(Math.min(FLOOR_MAX, Math.max(0, p.floor))),
    topK: Math.min(space.maxTopK, Math.max(1, Math.round(p.topK))),
    fusion: { method: p.fusion.method, rrfK: r4(Math.min(RRF_MAX, Math.max(RRF_MIN, p.fusion.rrfK))) },
    mode: modes.includes(p.mode ?? base.mode) ? (p.mode ?? base.mode) : base.mode,
    candidatePool: nearest(pools, p.candidatePool ?? base.candidatePool),
    ageFrom: p.ageFrom ?? base.recency.from,
    minSimilarity:
      p.minSimilarity === null || p.minSimilarity === undefined ? (p.minSimilarity ?? base.minSimilarity) : r4(Math.min(1, Math.max(-1, p.minSimilarity))),
    tokenBudget: p.tokenBudget === undefined ? base.tokenBudget : p.tokenBudget === null ? null : Math.max(0, Math.round(p.tokenBudget)),
  })

  /** Score one config (cached by its rounded parameters); returns false when the budget is spent or cancelled. */
  const tryParams = async (raw: TuneParams, phase: TuneTrial['phase']): Promise<boolean> => {
    if (trials.length >= budget || cancelled) return false
    const p = phase === 'base' || phase === 'baseline' ? raw : clampParams(raw)
    const key = keyOf(p)
    if (seen.has(key)) return true
    const e = evalSet('train', applyParams(base, p))
    seen.set(key, e)
    trials.push({ trial: trials.length, phase, params: p, train: e.value, tokens: e.tokens })
    if (!best || better(e, best.e)) best = { params: p, e }
    curve.push({ trial: trials.length - 1, best: best.e.value, value: e.value })
    if (performance.now() - lastYield > 15) {
      opts.onProgress?.(trials.length, budget, `${trials.length} / ${budget} configs · best ${metric} ${best.e.value.toFixed(4)}`)
      await new Promise<void>((r) => setImmediate(r))
      lastYield = performance.now()
      if (opts.signal?.aborted) cancelled = true
    }
    return !cancelled
  }

  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
  const randomParams = (): TuneParams => {
    const w: Record<FeatureName, number> = { similarity: 0, lexical: 0, recency: 0, salience: 0 }
    if (space.weights) {
      // Dirichlet(1, …, 1) over a random non-empty subset of the varying features: uniform on a face of the
      // simplex. Faces matter: "lexical only" or "similarity + recency" are corners a full Dirichlet never hits.
      const dims = weightDims.filter(() => rnd() < 0.6)
      const use = dims.length ? dims : [pick(weightDims)]
      let s = 0
      for (const f of use) s += w[f] = -Math.log(1 - rnd())
      for (const f of use) w[f] /= s
    } else Object.assign(w, base.weights)
    return {
      weights: w,
      // Log-uniform on a grid of HL_GRID values: random configs that share a half-life share its recency values (see below).
      halfLifeHours: space.halfLife ? HL_MIN * Math.pow(HL_MAX / HL_MIN, Math.floor(rnd() * HL_GRID) / (HL_GRID - 1)) : base.recency.halfLifeHours,
      floor: space.floor ? (rnd() < 0.4 ? null : rnd() * FLOOR_MAX) : base.floor,
      topK: space.topK ? 1 + Math.floor(rnd() * space.maxTopK) : base.topK,
      fusion:
        space.fusion && anyHybridArms ? { method: rnd() < 0.5 ? 'rrf' : 'weighted', rrfK: RRF_MIN * Math.pow(RRF_MAX / RRF_MIN, rnd()) } : { ...base.fusion },
      mode: pick(modes),
      candidatePool: pick(pools),
      ageFrom: space.ageSource ? (rnd() < 0.5 ? 'last_used' : 'created') : base.recency.from,
      minSimilarity: space.minSimilarity ? (rnd() < 0.6 ? null : rnd() * MINSIM_MAX) : base.minSimilarity,
      tokenBudget: space.tokenBudget ? (rnd() < 0.5 ? null : pick(budgetsSorted)) : base.tokenBudget,
    }
  }

  /** Neighbours of p at step level `lvl` (0 = coarse). */
  const neighbours = (p: TuneParams, lvl: number): TuneParams[] => {
    const out: TuneParams[] = []
    const wSteps = [0.2, 0.1, 0.05, 0.02, 0.01]
    const hlF = [4, 2, 1.4, 1.15, 1.05]
    const flS = [0.1, 0.05, 0.02, 0.01, 0.005]
    const kS = [4, 2, 1, 1, 1]
    const rrfF = [2, 1.4, 1.2, 1.1, 1.05]
    const L = Math.min(lvl, 4)
    if (L === 0) for (const m of modes) if (m !== p.mode) out.push({ ...p, mode: m })
    const pi = pools.indexOf(p.candidatePool ?? base.candidatePool)
    if (pi > 0) out.push({ ...p, candidatePool: pools[pi - 1] })
    if (pi >= 0 && pi < pools.length - 1) out.push({ ...p, candidatePool: pools[pi + 1] })
    if (space.weights)
      for (const a of weightDims)
        for (const b of weightDims) {
          if (a === b) continue
          const d = Math.min(wSteps[L], p.weights[b])
          if (d <= 0) continue
          out.push({ ...p, weights: { ...p.weights, [a]: p.weights[a] + d, [b]: p.weights[b] - d } })
        }
    if (space.floor) {
      if (p.floor === null) out.push({ ...p, floor: 0.1 * (1 + rnd() * 3) })
      else {
        out.push({ ...p, floor: p.floor + flS[L] }, { ...p, floor: p.floor - flS[L] })
        if (L === 0) out.push({ ...p, floor: null })
      }
    }
    if (space.minSimilarity) {
      const ms = p.minSimilarity ?? null
      if (ms === null) {
        if (L === 0) out.push({ ...p, minSimilarity: 0.1 + rnd() * 0.3 })
      } else {
        out.push({ ...p, minSimilarity: ms + flS[L] }, { ...p, minSimilarity: ms - flS[L] })
        if (L === 0) out.push({ ...p, minSimilarity: null })
      }
    }
    if (space.topK) out.push({ ...p, topK: p.topK + kS[L] }, { ...p, topK: p.topK - kS[L] })
    if (space.tokenBudget) {
      const bi = budgetsSorted.indexOf(p.tokenBudget ?? null)
      if (bi > 0) out.push({ ...p, tokenBudget: budgetsSorted[bi - 1] })
      if (bi >= 0 && bi < budgetsSorted.length - 1) out.push({ ...p, tokenBudget: budgetsSorted[bi + 1] })
    }
    if (space.fusion && anyHybridArms && p.mode === 'hybrid') {
      if (p.fusion.method === 'rrf') for (const f of [rrfF[L], 1 / rrfF[L]]) out.push({ ...p, fusion: { ...p.fusion, rrfK: p.fusion.rrfK * f } })
      if (L === 0) out.push({ ...p, fusion: { ...p.fusion, method: p.fusion.method === 'rrf' ? 'weighted' : 'rrf' } })
    }
    // Recency moves last: every neighbour before them reuses the current half-life's recency values.
    if (space.halfLife && p.weights.recency > 0) for (const f of [hlF[L], 1 / hlF[L]]) out.push({ ...p, halfLifeHours: p.halfLifeHours * f })
    if (space.ageSource && p.weights.recency > 0 && L === 0) out.push({ ...p, ageFrom: p.ageFrom === 'created' ? 'last_used' : 'created' })
    return out
  }

  // Baselines the gather serves (and whose fixed knobs match) start the search: the tuner never starts below them.
  const baselines = opts.baselines ?? []
  const servable = (b: BaselineInput) => !b.error && !b.gathered && staticKey(b.config) === sKey && serves(gathered, b.config)
  await tryParams(paramsOf(base), 'base')
  for (const b of baselines)
    if (servable(b) && pools.includes(b.config.candidatePool) && modes.includes(b.config.mode)) await tryParams(paramsOf(b.config), 'baseline')
  const nRandom = Math.max(0, Math.floor((budget - trials.length) * 0.5))
  // Drawn first, scored grouped by age source and half-life: recency (Math.pow per row, most of a config's
  // cost) is then computed once per group and case (CompiledCase.rec), not once per config.
  const randoms = Array.from({ length: nRandom }, randomParams)
  const order = randoms
    .map((p, i) => ({ p, i }))
    .sort((a, b) => (a.p.ageFrom === b.p.ageFrom ? 0 : a.p.ageFrom === 'created' ? -1 : 1) || a.p.halfLifeHours - b.p.halfLifeHours || a.i - b.i)
  for (const { p } of order) if (!(await tryParams(p, 'random'))) break
  // Coordinate refinement with restarts from the best trials so far.
  let restart = 0
  while (trials.length < budget && !cancelled) {
    const ranked = [...trials].sort((a, b) => (better({ value: a.train, tokens: a.tokens }, { value: b.train, tokens: b.tokens }) ? -1 : 1))
    let cur = restart === 0 ? best!.params : ranked[Math.min(ranked.length - 1, restart % 5)].params
    let curE = seen.get(keyOf(cur))!
    let lvl = 0
    const before = trials.length
    while (lvl <= 4 && trials.length < budget && !cancelled) {
      let improved = false
      for (const nb of neighbours(cur, lvl)) {
        const q = clampParams(nb)
        if (!(await tryParams(q, 'refine'))) break
        const e = seen.get(keyOf(q))!
        if (better(e, curE)) {
          cur = q
          curE = e
          improved = true
        }
      }
      if (!improved) lvl++
    }
    restart++
    // Nothing new was scored from this start: the neighbourhood is exhausted; spend the rest at random.
    if (trials.length === before) {
      const left = budget - trials.length
      for (let i = 0; i < left; i++) if (!(await tryParams(randomParams(), 'random'))) break
      if (trials.length === before) break
    }
  }
  const searchMs = performance.now() - tSearch
  opts.onProgress?.(trials.length, budget, cancelled ? 'cancelled: reporting the best so far' : 'scoring the held-out split and the baselines')

  const bestP = best!.params
  const bestCfg = applyParams(base, bestP)
  const full = (gs: readonly GatheredCase[], cfg: RecallConfig) => (gs.length ? scoreGathered(gs, cfg, { k, budget: tokenBudget }) : null)
  const bTrain = full(train, bestCfg)!
  const bTest = full(test, bestCfg)
  const baseTrain = full(train, base)!
  const baseTest = full(test, base)
  const tunedVals = bTest ? valuesById(bTest.perCase, metric) : new Map<string, number | null>()
  const testVals = [...tunedVals.values()].filter((v): v is number => v !== null)
  const ci = bootstrapMeanCI(testVals)

  // Baselines on the same held-out cases, each paired with the tuned config case by case.
  const testIds = new Set(test.map((g) => g.case.id))
  const baselineRows: TuneBaseline[] = baselines.map((b) => {
    const row: TuneBaseline = {
      name: b.name,
      label: b.label,
      kind: b.kind,
      config: b.config,
      train: null,
      test: null,
      testCI: null,
      testTokens: null,
      delta: null,
      deltaCI: null,
      verdict: 'n/a',
      note: b.note ?? null,
    }
    if (b.error) {
      row.note = b.error
      return row
    }
    if (test.length === 0) {
      row.note = 'no held-out cases'
      return row
    }
    let perTest: Scored | null
    try {
      if (b.gathered)
        perTest = full(
          b.gathered.filter((g) => testIds.has(g.case.id)),
          b.config,
        )
      else {
        perTest = full(test, b.config)
        row.train = full(train, b.config)!.metrics[metric] ?? null
      }
    } catch (e) {
      row.note = `could not be scored: ${(e as Error).message}`
      return row
    }
    if (!perTest) return row
    const vals = valuesById(perTest.perCase, metric)
    row.test = meanOf(vals.values())
    row.testTokens = perTest.metrics.tokens ?? null
    const bci = bootstrapMeanCI([...vals.values()].filter((v): v is number => v !== null))
    row.testCI = bci ? { lo: bci.lo, hi: bci.hi } : null
    const diffs: number[] = []
    for (const [id, tv] of tunedVals) {
      const bv = vals.get(id)
      if (tv !== null && bv !== null && bv !== undefined) diffs.push(tv - bv)
    }
    const d = bootstrapMeanCI(diffs, { seed: 7 })
    if (d) {
      row.delta = d.mean
      row.deltaCI = { lo: d.lo, hi: d.hi }
      row.verdict = d.lo > 0 ? 'tuned-better' : d.hi < 0 ? 'baseline-better' : 'within-noise'
    }
    return row
  })
  const ranking = [
    { name: 'tuned', label: 'Tuned config', test: bTest?.metrics[metric] ?? null, testCI: ci ? { lo: ci.lo, hi: ci.hi } : null },
    ...baselineRows.filter((b) => b.test !== null).map((b) => ({ name: b.name, label: b.label, test: b.test, testCI: b.testCI })),
  ].sort((a, b) => (b.test ?? -1) - (a.test ?? -1))
  const recommended = recommend(bestCfg, bTest?.metrics[metric] ?? null, baselineRows, metric, test.length)

  const ranked = [...trials].sort((a, b) => (better({ value: a.train, tokens: a.tokens }, { value: b.train, tokens: b.tokens }) ? -1 : 1)).slice(0, 10)
  const top = ranked.map((t) => ({ ...t, test: test.length ? evalSet('test', applyParams(base, t.params)).value : null }))

  const heatmap =
    space.weights && !cancelled && (opts.heatmapSteps ?? 12) > 0
      ? buildHeatmap(base, bestP, weightDims, opts.heatmapSteps ?? 12, (cfg) => evalSet('train', cfg).value)
      : null

  // Curve: at most 400 points (first, last and evenly between).
  const step = Math.max(1, Math.ceil(curve.length / 400))
  const curveOut = curve.filter((_, i) => i % step === 0 || i === curve.length - 1)
  const totalMs = performance.now() - t0 + (opts.gatherMs ?? 0)
  const searched: Record<string, string> = {}
  const pinned: string[] = []
  const note = (knob: string, on: boolean, what: string) => (on ? (searched[knob] = what) : pinned.push(knob))
  note('mode', modes.length > 1, modes.join(' / '))
  note('fusion', space.fusion && anyHybridArms, 'rrf (k 1–120, log) or weighted, in hybrid mode')
  note('pool', pools.length > 1, pools.join(', '))
  note('weights', space.weights, `simplex over ${weightDims.join(', ')}`)
  note('halfLife', space.halfLife, `${HL_MIN} h – ${HL_MAX} h, log-uniform`)
  note('ageSource', space.ageSource, 'last_used / created')
  note('floor', space.floor, `off or 0–${FLOOR_MAX}`)
  note('minSimilarity', space.minSimilarity, `off or 0–${MINSIM_MAX}`)
  note('topK', space.topK, `1–${space.maxTopK}`)
  note('tokenBudget', budgetsSorted.length > 1, budgetsSorted.map((b) => b ?? 'off').join(', '))
  return {
    metric,
    k,
    trials: trials.length,
    budget,
    cancelled,
    seed,
    space,
    split: { ...splitInfo, train: train.length, test: test.length },
    pinned,
    searched,
    base: {
      config: base,
      train: baseTrain.metrics[metric] ?? null,
      test: baseTest?.metrics[metric] ?? null,
      trainTokens: baseTrain.metrics.tokens ?? 0,
      testTokens: baseTest?.metrics.tokens ?? 0,
    },
    best: {
      config: bestCfg,
      params: bestP,
      train: bTrain.metrics[metric] ?? null,
      test: bTest?.metrics[metric] ?? null,
      trainTokens: bTrain.metrics.tokens ?? 0,
      testTokens: bTest?.metrics.tokens ?? 0,
      trainMetrics: bTrain.metrics,
      testMetrics: bTest?.metrics ?? {},
      testCI: ci ? { lo: ci.lo, hi: ci.hi } : null,
    },
    top,
    curve: curveOut,
    heatmap,
    baselines: baselineRows,
    ranking,
    recommended,
    embedder: gathered.find((g) => !g.degraded)?.embedder ?? gathered[0]?.embedder ?? { name: 'none', model: null, available: false },
    timings: { gatherMs: opts.gatherMs ?? 0, searchMs, totalMs, configsPerSec: searchMs > 0 ? (trials.length / searchMs) * 1000 : 0 },
  }
}

const f3 = (x: number) => x.toFixed(3)
const ciText = (c: { lo: number; hi: number } | null) => (c ? ` (95% CI of the difference ${f3(c.lo)} to ${f3(c.hi)})` : '')

/**
 * What to ship, said plainly: the best on the held-out cases, ties to the tuned
 * config. A baseline above the tuned config, or within noise of it, is named.
 */
function recommend(
  tuned: RecallConfig,
  tunedTest: number | null,
  baselines: readonly TuneBaseline[],
  metric: string,
  nTest: number,
): TuneReport['recommended'] {
  const scored = baselines.filter((b) => b.test !== null)
  if (tunedTest === null || nTest === 0)
    return {
      name: 'tuned',
      label: 'Tuned config',
      config: tuned,
      message: 'No held-out cases: the tuned config is chosen on train alone and its score there is optimistic; nothing was compared with the baselines.',
    }
  const top = scored.reduce<TuneBaseline | null>((a, b) => (a === null || b.test! > a.test! ? b : a), null)
  if (top && top.test! > tunedTest + 1e-12)
    return {
      name: top.name,
      label: top.label,
      config: top.config,
      message:
        top.verdict === 'baseline-better'
          ? `Baseline "${top.label}" beats the tuned config on the ${nTest} held-out cases: ${metric} ${f3(top.test!)} vs ${f3(tunedTest)}${ciText(top.deltaCI)}. Use the baseline: it is the config offered here.`
          : `Baseline "${top.label}" scores at least as well as the tuned config on the ${nTest} held-out cases: ${metric} ${f3(top.test!)} vs ${f3(tunedTest)}, within noise${ciText(top.deltaCI)}. The tuning did not beat it: the simpler baseline is the config offered here.`,
    }
  const close = scored.filter((b) => b.verdict === 'within-noise').sort((a, b) => b.test! - a.test!)
  if (close.length)
    return {
      name: 'tuned',
      label: 'Tuned config',
      config: tuned,
      message: `The tuned config scores ${metric} ${f3(tunedTest)} on the ${nTest} held-out cases, but baseline "${close[0].label}" (${f3(close[0].test!)}) is within noise of it${ciText(close[0].deltaCI)}: either is a fair choice, and the baseline is simpler.`,
    }
  return {
    name: 'tuned',
    label: 'Tuned config',
    config: tuned,
    message: top
      ? `The tuned config beats every baseline on the ${nTest} held-out cases: ${metric} ${f3(tunedTest)} vs the best baseline "${top.label}" ${f3(top.test!)}${ciText(top.deltaCI)}.`
      : `The tuned config scores ${metric} ${f3(tunedTest)} on the ${nTest} held-out cases (no baseline could be scored).`,
  }
}

/**
 * The objective over a triangle of weights: three features on the corners, the
 * fourth held at the best config's weight, every other knob as in the best
 * config. The axes are the three features with the largest best weights among
 * those that vary (padded with the rest).
 */
function buildHeatmap(base: RecallConfig, best: TuneParams, dims: readonly FeatureName[], steps: number, score: (cfg: RecallConfig) => number): TuneHeatmap {
  const order = [...FEATURE_NAMES].sort((a, b) => {
    const ia = dims.includes(a) ? 0 : 1
    const ib = dims.includes(b) ? 0 : 1
    return ia - ib || best.weights[b] - best.weights[a] || FEATURE_NAMES.indexOf(a) - FEATURE_NAMES.indexOf(b)
  })
  const axes = [order[0], order[1], order[2]].sort((a, b) => FEATURE_NAMES.indexOf(a) - FEATURE_NAMES.indexOf(b)) as [FeatureName, FeatureName, FeatureName]
  const fixed = order[3]
  const fw = best.weights[fixed]
  const mass = 1 - fw
  const cells: TuneHeatmap['cells'] = []
  let min = Infinity
  let max = -Infinity
  for (let i = 0; i <= steps; i++)
    for (let j = 0; j <= steps - i; j++) {
      const l = steps - i - j
      const w: [number, number, number] = [(mass * i) / steps, (mass * j) / steps, (mass * l) / steps]
      const weights = { ...best.weights, [axes[0]]: w[0], [axes[1]]: w[1], [axes[2]]: w[2], [fixed]: fw }
      const v = score(applyParams(base, { ...best, weights }))
      cells.push({ w, value: v })
      if (v < min) min = v
      if (v > max) max = v
    }
  return { axes, fixed: { feature: fixed, weight: fw }, steps, cells, min, max }
}
