/**
 * Auto-tune: search weights (on the simplex), recency half-life, floor, topK and
 * hybrid fusion on the TRAIN split, then report the chosen config's score on the
 * held-out TEST split beside its train score, so an overfit shows.
 *
 * Speed: candidates are gathered once per case by the engine (replay.ts); each
 * config then re-scores compiled per-case feature arrays (`compileCase` /
 * `rankCompiled`), never the store. `rankCompiled` is an allocation-free copy of
 * scoring.ts `rerank` for the knobs tune moves, with the same arithmetic in the
 * same order, so it returns exactly what `rerank` would (tune.test.ts checks
 * this on random configs); cases it does not cover (order modes, Engram's user
 * blend, live-transcript dedupe) fall back to `rerank` itself.
 *
 * Search: the base config, then random configs (Dirichlet(1) weights over the
 * features that vary, log-uniform half-life and rrfK, floor off or uniform,
 * uniform topK), then coordinate refinement from the best (moving weight mass
 * between two features, scaling half-life, nudging floor / topK / rrfK) with
 * shrinking steps and restarts. Ties go to the config that injects fewer tokens.
 * Cancellable through an AbortSignal; progress after every slice.
 */
import { compileJudgment, metricKey, metricsFromGrades, parseMetricKey, LOWER_IS_BETTER, METRIC_IDS, seededRandom, bootstrapMeanCI, type CaseMetrics, type CompiledJudgment, type MetricId } from '../../shared/metrics'
import type { TuneHeatmap, TuneParams, TuneReport, TuneSpace, TuneTrial } from '../../shared/eval'
import { RecallscopeError } from '../../shared/result'
import { effectiveMode, estimateTokensFromLength, inPool, isOrderMode, recencyOf, rerank } from '../../shared/scoring'
import { FEATURE_NAMES, type FeatureName, type RecallConfig } from '../../shared/types'
import { caseConfig, canReuse, scoreGathered, type GatheredCase } from './replay'

// ---------------------------------------------------------------------------
// Compiled cases
// ---------------------------------------------------------------------------

/** One case's pool as flat arrays, for thousands of re-scorings. */
export interface CompiledCase {
  g: GatheredCase
  judged: CompiledJudgment
  /** pool members that pass minSimilarity (static in the tune space) */
  n: number
  /** feature values as rerank's `f` sees them (after min-max when the config normalises; recency is per config) */
  sim: Float64Array
  lex: Float64Array
  sal: Float64Array
  /** age for recency (from last use or creation, per config.recency.from) */
  age: Float64Array
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

/** The parts of a config rankCompiled reads that tune never moves: they must match the compiled ones. */
function staticKey(c: RecallConfig): string {
  return JSON.stringify([c.mode, c.candidatePool, c.normalize, c.minSimilarity, c.gateOrder, c.tokenBudget, c.tokenEstimator, c.overflow, c.atLeastOne, c.recency.from, c.tieBreak ?? 'newest', c.scope])
}

export function compileCase(g: GatheredCase, config: RecallConfig, k: number): CompiledCase {
  const cfg = caseConfig(config, g.case)
  const mode = effectiveMode(cfg, { dense: g.arms.dense.ran, lexical: g.arms.lexical.ran })
  const judged = compileJudgment(g.case, k)
  const p = cfg.candidatePool
  // Only score-ordered modes compile; the others fall back to rerank below.
  const scored = mode === 'dense' || mode === 'lexical' || mode === 'hybrid'
  const pool = scored ? g.candidates.filter((c) => inPool(c, mode, p)) : []
  const fallback = isOrderMode(mode) || mode === 'none' || g.candidates.some((c) => c.group === 'blend' || c.excluded) || (cfg.scope.excludeIds?.length ?? 0) > 0
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
  const minSim = cfg.minSimilarity
  const keep: number[] = []
  pool.forEach((c, i) => {
    if (!(minSim !== null && (c.similarity === null || c.similarity < minSim))) keep.push(i)
  })
  const n = keep.length
  const cc: CompiledCase = {
    g,
    judged,
    n,
    sim: new Float64Array(n),
    lex: new Float64Array(n),
    sal: new Float64Array(n),
    age: new Float64Array(n),
    dRank: new Int32Array(n),
    lRank: new Int32Array(n),
    tie: new Int32Array(n),
    tokens: new Int32Array(n),
    grade: new Int8Array(n),
    hybrid: mode === 'hybrid',
    fallback,
  }
  const fromLast = cfg.recency.from === 'last_used'
  keep.forEach((pi, j) => {
    const c = pool[pi]
    cc.sim[j] = simAll[pi]
    cc.lex[j] = lexAll[pi]
    cc.sal[j] = salAll[pi]
    cc.age[j] = fromLast ? c.ageLastUsedMs : c.ageCreatedMs
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
export function rankCompiled(cc: CompiledCase, cfg: RecallConfig, s: Scratch): number {
  const n = cc.n
  s.ensure(n)
  const w = cfg.weights
  const hl = cfg.recency.halfLifeHours
  const rrf = cc.hybrid && cfg.fusion.method === 'rrf'
  const K = cfg.fusion.rrfK
  const score = s.score
  const rec = s.rec
  for (let i = 0; i < n; i++) rec[i] = recencyOf(cc.age[i], hl)
  if (cfg.normalize === 'minmax' && n > 0) {
    // rerank normalises recency over the whole pool; compileCase keeps minSimilarity-dropped rows out,
    // so normalisation with minSimilarity set is left to the fallback (see compileFor).
    let lo = Infinity
    let hi = -Infinity
    for (let i = 0; i < n; i++) {
      if (rec[i] < lo) lo = rec[i]
      if (rec[i] > hi) hi = rec[i]
    }
    const r = hi - lo
    for (let i = 0; i < n; i++) rec[i] = r === 0 ? 0.5 : (rec[i] - lo) / r
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
    score[i] = w.similarity * simTerm + w.lexical * lexTerm + w.recency * rec[i] + w.salience * cc.sal[i]
  }
  const topK = cfg.topK
  const floor = cfg.floor
  const floorFirst = cfg.gateOrder === 'floor-then-topk'
  // Partial selection of the best `topK` (insertion into a sorted buffer): pools are small, topK smaller.
  const sel = s.sel
  let m = 0
  const tie = cc.tie
  for (let i = 0; i < n && topK > 0; i++) {
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
export function scoreCompiled(cc: CompiledCase, cfg: RecallConfig, s: Scratch, budget: number): CaseMetrics {
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
  const pool = poolIds(cc)
  const n = rankCompiled(cc, cfg, s)
  return Array.from(s.outIdx.subarray(0, n), (i) => pool[i])
}

const poolCache = new WeakMap<CompiledCase, string[]>()
function poolIds(cc: CompiledCase): string[] {
  let ids = poolCache.get(cc)
  if (ids) return ids
  // Same filter as compileCase, to map indexes back to ids.
  const cfg = caseConfig(cc.g.config, cc.g.case)
  const mode = effectiveMode(cfg, { dense: cc.g.arms.dense.ran, lexical: cc.g.arms.lexical.ran })
  const p = cfg.candidatePool
  const minSim = cfg.minSimilarity
  ids = cc.g.candidates
    .filter((c) =>
      mode === 'dense'
        ? c.denseRank !== null && c.denseRank <= p
        : mode === 'lexical'
          ? c.lexicalRank !== null && c.lexicalRank <= p
          : (c.denseRank !== null && c.denseRank <= p) || (c.lexicalRank !== null && c.lexicalRank <= p),
    )
    .filter((c) => !(minSim !== null && (c.similarity === null || c.similarity < minSim)))
    .map((c) => c.id)
  poolCache.set(cc, ids)
  return ids
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

export interface TuneOptions {
  /** objective, higher is better: recall@k, precision@k, ndcg@k, mrr, hit@k, abstention, budgetRecall, locomo@k. @default 'recall@10' */
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
  signal?: AbortSignal
  onProgress?: (done: number, total: number, message?: string) => void
  /** what gathered the cases (for the report) */
  gatherMs?: number
}

const HL_MIN = 1
const HL_MAX = 24 * 365
const FLOOR_MAX = 0.8
const RRF_MIN = 1
const RRF_MAX = 120

function paramsOf(c: RecallConfig): TuneParams {
  return { weights: { ...c.weights }, halfLifeHours: c.recency.halfLifeHours, floor: c.floor, topK: c.topK, fusion: { ...c.fusion } }
}

export function applyParams(base: RecallConfig, p: TuneParams): RecallConfig {
  return { ...base, weights: { ...p.weights }, recency: { ...base.recency, halfLifeHours: p.halfLifeHours }, floor: p.floor, topK: p.topK, fusion: { ...p.fusion } }
}

const r4 = (x: number) => Math.round(x * 1e4) / 1e4

function keyOf(p: TuneParams): string {
  const w = p.weights
  return [w.similarity, w.lexical, w.recency, w.salience, p.halfLifeHours, p.floor ?? 'x', p.topK, p.fusion.method, p.fusion.rrfK].map((v) => (typeof v === 'number' ? r4(v) : v)).join('|')
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

/**
 * Tune over gathered cases (from `gatherCases` with `base`; the gather must be
 * able to serve every config in the space: same scope/arms, pool ≤ fetched).
 */
export async function tune(gathered: readonly GatheredCase[], base: RecallConfig, opts: TuneOptions = {}): Promise<TuneReport> {
  const t0 = performance.now()
  const metricStr = opts.metric ?? 'recall@10'
  const parsed = parseMetricKey(metricStr, 10)
  if (!parsed) throw new RecallscopeError('BAD_INPUT', `Unknown metric '${metricStr}'. Metrics: ${METRIC_IDS.map((m) => metricKey(m, 10)).join(', ')}`)
  if (LOWER_IS_BETTER.has(parsed.id)) throw new RecallscopeError('BAD_INPUT', `tune maximises its metric: ${parsed.id} is lower-is-better; pick recall@k, ndcg@k, mrr, hit@k, precision@k, abstention, budgetRecall or locomo@k`)
  const k = parsed.k ?? 10
  const metricId: MetricId = parsed.id
  const metric = metricKey(metricId, k)
  const budget = Math.max(1, Math.floor(opts.budget ?? 1000))
  const seed = opts.seed ?? 1
  const tokenBudget = opts.tokenBudget ?? base.tokenBudget ?? 2000
  const space: TuneSpace = { weights: true, halfLife: true, floor: true, topK: true, fusion: true, maxTopK: Math.max(20, k), ...opts.space }
  if (space.maxTopK < 1) throw new RecallscopeError('BAD_INPUT', 'maxTopK must be ≥ 1')

  for (const g of gathered) if (!canReuse(g, base)) throw new RecallscopeError('INTERNAL', `case ${g.case.id} was not gathered for this config`)
  const train = gathered.filter((g) => g.case.split === 'train')
  const test = gathered.filter((g) => g.case.split === 'test')
  if (train.length === 0) throw new RecallscopeError('BAD_INPUT', 'No train cases: tune searches on the train split and reports the test split (mark some cases train)')

  const compile = (gs: readonly GatheredCase[]) =>
    gs.map((g) => {
      const cc = compileCase(g, base, k)
      // min-max with a minSimilarity gate normalises over rows compileCase leaves out: use rerank there.
      if (base.normalize === 'minmax' && base.minSimilarity !== null) cc.fallback = true
      return cc
    })
  const trainC = compile(train)
  const testC = compile(test)
  const scratch = new Scratch()
  const sKey = staticKey(base)

  const evalSet = (cs: readonly CompiledCase[], cfg: RecallConfig): Evaluated & { n: number; values: number[] | null } => {
    if (staticKey(cfg) !== sKey) throw new RecallscopeError('INTERNAL', 'tune changed a knob it does not compile')
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
    return { value: n ? sum / n : 0, tokens: cs.length ? tok / cs.length : 0, n, values: null }
  }

  // Features that vary in some pool: weight on a constant feature only shifts every score alike.
  const active = FEATURE_NAMES.filter((f) => {
    for (const cc of trainC) {
      if (cc.n < 2 && f !== 'recency') continue
      if (f === 'recency') {
        for (let i = 1; i < cc.n; i++) if (cc.age[i] !== cc.age[0]) return true
        continue
      }
      const arr = f === 'similarity' ? (cc.hybrid && base.fusion.method === 'rrf' ? null : cc.sim) : f === 'lexical' ? (cc.hybrid && base.fusion.method === 'rrf' ? null : cc.lex) : cc.sal
      if (arr === null) return true // RRF terms always vary by rank
      for (let i = 1; i < cc.n; i++) if (arr[i] !== arr[0]) return true
    }
    return false
  })
  const weightDims: FeatureName[] = active.length ? active : ['similarity']
  const anyHybrid = trainC.some((c) => c.hybrid)
  const rnd = seededRandom(seed)

  const trials: TuneTrial[] = []
  const seen = new Map<string, Evaluated>()
  let best: { params: TuneParams; e: Evaluated } | null = null
  const curve: { trial: number; best: number; value: number }[] = []
  let cancelled = false
  let lastYield = performance.now()
  const tSearch = performance.now()

  const clampParams = (p: TuneParams): TuneParams => ({
    weights: tidyWeights(p.weights),
    halfLifeHours: Math.min(HL_MAX, Math.max(HL_MIN, r4(p.halfLifeHours))),
    floor: p.floor === null ? null : r4(Math.min(FLOOR_MAX, Math.max(0, p.floor))),
    topK: Math.min(space.maxTopK, Math.max(1, Math.round(p.topK))),
    fusion: { method: p.fusion.method, rrfK: r4(Math.min(RRF_MAX, Math.max(RRF_MIN, p.fusion.rrfK))) },
  })

  const baseParams = paramsOf(base)
  /** Score one config (cached by its rounded parameters); returns false when the budget is spent or cancelled. */
  const tryParams = async (raw: TuneParams, phase: TuneTrial['phase']): Promise<boolean> => {
    if (trials.length >= budget || cancelled) return false
    const p = phase === 'base' ? raw : clampParams(raw)
    const key = keyOf(p)
    if (seen.has(key)) return true
    const e = evalSet(trainC, applyParams(base, p))
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

  const randomParams = (): TuneParams => {
    const w: Record<FeatureName, number> = { similarity: 0, lexical: 0, recency: 0, salience: 0 }
    if (space.weights) {
      // Dirichlet(1, …, 1) = normalised exponentials: uniform over the simplex.
      let s = 0
      for (const f of weightDims) s += w[f] = -Math.log(1 - rnd())
      for (const f of weightDims) w[f] /= s
    } else Object.assign(w, base.weights)
    return {
      weights: w,
      halfLifeHours: space.halfLife ? HL_MIN * Math.pow(HL_MAX / HL_MIN, rnd()) : base.recency.halfLifeHours,
      floor: space.floor ? (rnd() < 0.3 ? null : rnd() * FLOOR_MAX) : base.floor,
      topK: space.topK ? 1 + Math.floor(rnd() * space.maxTopK) : base.topK,
      fusion:
        space.fusion && anyHybrid
          ? { method: rnd() < 0.5 ? 'rrf' : 'weighted', rrfK: RRF_MIN * Math.pow(RRF_MAX / RRF_MIN, rnd()) }
          : { ...base.fusion },
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
    if (space.weights)
      for (const a of weightDims)
        for (const b of weightDims) {
          if (a === b) continue
          const d = Math.min(wSteps[L], p.weights[b])
          if (d <= 0) continue
          out.push({ ...p, weights: { ...p.weights, [a]: p.weights[a] + d, [b]: p.weights[b] - d } })
        }
    if (space.halfLife) for (const f of [hlF[L], 1 / hlF[L]]) out.push({ ...p, halfLifeHours: p.halfLifeHours * f })
    if (space.floor) {
      if (p.floor === null) out.push({ ...p, floor: 0.1 * (1 + rnd() * 3) })
      else {
        out.push({ ...p, floor: p.floor + flS[L] }, { ...p, floor: p.floor - flS[L] })
        if (L === 0) out.push({ ...p, floor: null })
      }
    }
    if (space.topK) out.push({ ...p, topK: p.topK + kS[L] }, { ...p, topK: p.topK - kS[L] })
    if (space.fusion && anyHybrid) {
      for (const f of [rrfF[L], 1 / rrfF[L]]) out.push({ ...p, fusion: { ...p.fusion, rrfK: p.fusion.rrfK * f } })
      if (L === 0) out.push({ ...p, fusion: { ...p.fusion, method: p.fusion.method === 'rrf' ? 'weighted' : 'rrf' } })
    }
    return out
  }

  await tryParams(baseParams, 'base')
  const nRandom = Math.max(0, Math.floor((budget - 1) * 0.5))
  for (let i = 0; i < nRandom; i++) if (!(await tryParams(randomParams(), 'random'))) break
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
  opts.onProgress?.(trials.length, budget, cancelled ? 'cancelled: reporting the best so far' : 'scoring the held-out split')

  const bestP = best!.params
  const bestCfg = applyParams(base, bestP)
  const full = (gs: readonly GatheredCase[], cfg: RecallConfig) => (gs.length ? scoreGathered(gs, cfg, { k, budget: tokenBudget }) : null)
  const bTrain = full(train, bestCfg)!
  const bTest = full(test, bestCfg)
  const baseTrain = full(train, base)!
  const baseTest = full(test, base)
  const testVals = bTest ? bTest.perCase.map((c) => c.metrics[metric]).filter((v): v is number => v !== null && v !== undefined) : []
  const ci = bootstrapMeanCI(testVals)

  const ranked = [...trials].sort((a, b) => (better({ value: a.train, tokens: a.tokens }, { value: b.train, tokens: b.tokens }) ? -1 : 1)).slice(0, 10)
  const top = ranked.map((t) => ({ ...t, test: testC.length ? evalSet(testC, applyParams(base, t.params)).value : null }))

  const heatmap = space.weights && !cancelled ? buildHeatmap(base, bestP, weightDims, opts.heatmapSteps ?? 12, (cfg) => evalSet(trainC, cfg).value) : null

  // Curve: at most 400 points (first, last and evenly between).
  const step = Math.max(1, Math.ceil(curve.length / 400))
  const curveOut = curve.filter((_, i) => i % step === 0 || i === curve.length - 1)
  const totalMs = performance.now() - t0 + (opts.gatherMs ?? 0)
  return {
    metric,
    k,
    trials: trials.length,
    budget,
    cancelled,
    seed,
    space,
    split: { train: train.length, test: test.length },
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
    embedder: gathered.find((g) => !g.degraded)?.embedder ?? gathered[0]?.embedder ?? { name: 'none', model: null, available: false },
    timings: { gatherMs: opts.gatherMs ?? 0, searchMs, totalMs, configsPerSec: searchMs > 0 ? (trials.length / searchMs) * 1000 : 0 },
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
