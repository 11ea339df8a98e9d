/**
 * The tuner's search. The base config and every baseline the gather can serve
 * (so the tuner never starts below them on train), then random configs (mode and
 * pool uniform; Dirichlet(1) weights on a random face of the simplex of the
 * features that vary; half-life log-uniform on a grid; rrfK log-uniform;
 * floor / minSimilarity off or uniform; topK uniform; budget off or a step),
 * scored grouped by half-life, then coordinate refinement from the best (one
 * knob at a time: mode, pool step, weight mass between two features, floor,
 * minSimilarity, topK, budget step, rrfK, half-life, age source) with shrinking
 * steps and restarts. Ties go to the config that injects fewer tokens.
 * Cancellable through an AbortSignal; progress after every slice.
 */
import { seededRandom } from '../../../shared/metrics'
import type { TuneParams, TuneTrial } from '../../../shared/eval'
import type { FeatureName, RecallConfig } from '../../../shared/types'
import type { GatheredCase } from '../replay'
import { better, staticKey, type CompiledEvaluator, type Evaluated } from './compiled'
import {
  applyParams,
  FLOOR_MAX,
  HL_GRID,
  HL_MAX,
  HL_MIN,
  keyOf,
  MINSIM_MAX,
  paramsOf,
  r4,
  RRF_MAX,
  RRF_MIN,
  serves,
  tidyWeights,
  type BaselineInput,
  type TuneGoal,
  type TuneOptions,
  type TuneReach,
} from './space'

/** One search's state: every trial scored on train, the best so far, the curve; run() fills them. */
export class KnobSearch {
  readonly trials: TuneTrial[] = []
  readonly curve: { trial: number; best: number; value: number }[] = []
  cancelled = false
  private readonly seen = new Map<string, Evaluated>()
  private bestSoFar: { params: TuneParams; e: Evaluated } | null = null
  private lastYield = performance.now()
  private readonly rnd: () => number

  constructor(
    private readonly base: RecallConfig,
    private readonly goal: TuneGoal,
    private readonly reach: TuneReach,
    private readonly weightDims: readonly FeatureName[],
    private readonly ev: CompiledEvaluator,
    private readonly opts: Pick<TuneOptions, 'signal' | 'onProgress'>,
  ) {
    this.rnd = seededRandom(goal.seed)
  }

  /** The best parameters found (the base config's at least: it is scored first). */
  get best(): TuneParams {
    return this.bestSoFar!.params
  }

  /** Seeds (base, servable baselines), then random configs, then refinement with restarts, until the budget is spent or cancelled. */
  async run(gathered: readonly GatheredCase[], baselines: readonly BaselineInput[]): Promise<void> {
    await this.scoreSeeds(gathered, baselines)
    await this.scoreRandoms()
    await this.refine()
  }

  /** Baselines the gather serves (and whose fixed knobs match) start the search: the tuner never starts below them. */
  private async scoreSeeds(gathered: readonly GatheredCase[], baselines: readonly BaselineInput[]): Promise<void> {
    const { base } = this
    const sKey = staticKey(base)
    const servable = (b: BaselineInput) => !b.error && !b.gathered && staticKey(b.config) === sKey && serves(gathered, b.config)
    await this.tryParams(paramsOf(base), 'base')
    for (const b of baselines)
      if (servable(b) && this.reach.pools.includes(b.config.candidatePool) && this.reach.modes.includes(b.config.mode))
        await this.tryParams(paramsOf(b.config), 'baseline')
  }

  /** Half the remaining budget at random. */
  private async scoreRandoms(): Promise<void> {
    const nRandom = Math.max(0, Math.floor((this.goal.budget - this.trials.length) * 0.5))
    // Drawn first, scored grouped by age source and half-life: recency (Math.pow per row, most of a config's
    // cost) is then computed once per group and case (CompiledCase.rec), not once per config.
    const randoms = Array.from({ length: nRandom }, () => this.randomParams())
    const order = randoms
      .map((p, i) => ({ p, i }))
      .sort((a, b) => (a.p.ageFrom === b.p.ageFrom ? 0 : a.p.ageFrom === 'created' ? -1 : 1) || a.p.halfLifeHours - b.p.halfLifeHours || a.i - b.i)
    for (const { p } of order) if (!(await this.tryParams(p, 'random'))) break
  }

  /** Coordinate refinement with restarts from the best trials so far. */
  private async refine(): Promise<void> {
    const budget = this.goal.budget
    let restart = 0
    while (this.trials.length < budget && !this.cancelled) {
      const ranked = rankTrials(this.trials)
      const start = restart === 0 ? this.best : ranked[Math.min(ranked.length - 1, restart % 5)].params
      const before = this.trials.length
      await this.climb(start)
      restart++
      // Nothing new was scored from this start: the neighbourhood is exhausted; spend the rest at random.
      if (this.trials.length === before) {
        const left = budget - this.trials.length
        for (let i = 0; i < left; i++) if (!(await this.tryParams(this.randomParams(), 'random'))) break
        if (this.trials.length === before) break
      }
    }
  }

  /** Hill-climb from `start`: take every better neighbour, shrink the step when none is. */
  private async climb(start: TuneParams): Promise<void> {
    let cur = start
    let curE = this.seen.get(keyOf(cur))!
    let lvl = 0
    while (lvl <= 4 && this.trials.length < this.goal.budget && !this.cancelled) {
      let improved = false
      for (const nb of this.neighbours(cur, lvl)) {
        const q = this.clampParams(nb)
        if (!(await this.tryParams(q, 'refine'))) break
        const e = this.seen.get(keyOf(q))!
        if (better(e, curE)) {
          cur = q
          curE = e
          improved = true
        }
      }
      if (!improved) lvl++
    }
  }

  /** Score one config (cached by its rounded parameters); returns false when the budget is spent or cancelled. */
  private async tryParams(raw: TuneParams, phase: TuneTrial['phase']): Promise<boolean> {
    const { trials, goal } = this
    if (trials.length >= goal.budget || this.cancelled) return false
    const p = phase === 'base' || phase === 'baseline' ? raw : this.clampParams(raw)
    const key = keyOf(p)
    if (this.seen.has(key)) return true
    const e = this.ev.evaluate('train', applyParams(this.base, p))
    this.seen.set(key, e)
    trials.push({ trial: trials.length, phase, params: p, train: e.value, tokens: e.tokens })
    if (!this.bestSoFar || better(e, this.bestSoFar.e)) this.bestSoFar = { params: p, e }
    const best = this.bestSoFar
    this.curve.push({ trial: trials.length - 1, best: best.e.value, value: e.value })
    if (performance.now() - this.lastYield > 15) {
      this.opts.onProgress?.(trials.length, goal.budget, `${trials.length} / ${goal.budget} configs · best ${goal.metric} ${best.e.value.toFixed(4)}`)
      await new Promise<void>((r) => setImmediate(r))
      this.lastYield = performance.now()
      if (this.opts.signal?.aborted) this.cancelled = true
    }
    return !this.cancelled
  }

  /** Parameters moved back into range, rounded, and onto the values the gather serves. */
  private clampParams(p: TuneParams): TuneParams {
    const { base, reach } = this
    return {
      weights: tidyWeights(p.weights),
      halfLifeHours: Math.min(HL_MAX, Math.max(HL_MIN, r4(p.halfLifeHours))),
      floor: p.floor === null ? null : r4(Math.min(FLOOR_MAX, Math.max(0, p.floor))),
      topK: Math.min(this.goal.space.maxTopK, Math.max(1, Math.round(p.topK))),
      fusion: { method: p.fusion.method, rrfK: r4(Math.min(RRF_MAX, Math.max(RRF_MIN, p.fusion.rrfK))) },
      mode: reach.modes.includes(p.mode ?? base.mode) ? (p.mode ?? base.mode) : base.mode,
      candidatePool: nearest(reach.pools, p.candidatePool ?? base.candidatePool),
      ageFrom: p.ageFrom ?? base.recency.from,
      minSimilarity:
        p.minSimilarity === null || p.minSimilarity === undefined ? (p.minSimilarity ?? base.minSimilarity) : r4(Math.min(1, Math.max(-1, p.minSimilarity))),
      tokenBudget: p.tokenBudget === undefined ? base.tokenBudget : p.tokenBudget === null ? null : Math.max(0, Math.round(p.tokenBudget)),
    }
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rnd() * xs.length)]
  }

  /** A random config of the space (the draws in a fixed order: the seed reproduces the search). */
  private randomParams(): TuneParams {
    const { base, rnd, reach } = this
    const space = this.goal.space
    const w = this.randomWeights()
    return {
      weights: w,
      // Log-uniform on a grid of HL_GRID values: random configs that share a half-life share its recency values (see above).
      halfLifeHours: space.halfLife ? HL_MIN * Math.pow(HL_MAX / HL_MIN, Math.floor(rnd() * HL_GRID) / (HL_GRID - 1)) : base.recency.halfLifeHours,
      floor: space.floor ? (rnd() < 0.4 ? null : rnd() * FLOOR_MAX) : base.floor,
      topK: space.topK ? 1 + Math.floor(rnd() * space.maxTopK) : base.topK,
      fusion:
        space.fusion && reach.anyHybridArms
          ? { method: rnd() < 0.5 ? 'rrf' : 'weighted', rrfK: RRF_MIN * Math.pow(RRF_MAX / RRF_MIN, rnd()) }
          : { ...base.fusion },
      mode: this.pick(reach.modes),
      candidatePool: this.pick(reach.pools),
      ageFrom: space.ageSource ? (rnd() < 0.5 ? 'last_used' : 'created') : base.recency.from,
      minSimilarity: space.minSimilarity ? (rnd() < 0.6 ? null : rnd() * MINSIM_MAX) : base.minSimilarity,
      tokenBudget: space.tokenBudget ? (rnd() < 0.5 ? null : this.pick(reach.budgetsSorted)) : base.tokenBudget,
    }
  }

  private randomWeights(): Record<FeatureName, number> {
    const w: Record<FeatureName, number> = { similarity: 0, lexical: 0, recency: 0, salience: 0 }
    if (!this.goal.space.weights) return Object.assign(w, this.base.weights)
    // Dirichlet(1, …, 1) over a random non-empty subset of the varying features: uniform on a face of the
    // simplex. Faces matter: "lexical only" or "similarity + recency" are corners a full Dirichlet never hits.
    const dims = this.weightDims.filter(() => this.rnd() < 0.6)
    const use = dims.length ? dims : [this.pick(this.weightDims)]
    let s = 0
    for (const f of use) s += w[f] = -Math.log(1 - this.rnd())
    for (const f of use) w[f] /= s
    return w
  }

  /** Neighbours of p at step level `lvl` (0 = coarse). */
  private neighbours(p: TuneParams, lvl: number): TuneParams[] {
    const L = Math.min(lvl, 4)
    return [...this.discreteNeighbours(p, L), ...this.gateNeighbours(p, L), ...this.fusionAndRecencyNeighbours(p, L)]
  }

  /** Mode, pool step and weight mass moved between two features. */
  private discreteNeighbours(p: TuneParams, L: number): TuneParams[] {
    const out: TuneParams[] = []
    const { base, reach } = this
    if (L === 0) for (const m of reach.modes) if (m !== p.mode) out.push({ ...p, mode: m })
    const pi = reach.pools.indexOf(p.candidatePool ?? base.candidatePool)
    if (pi > 0) out.push({ ...p, candidatePool: reach.pools[pi - 1] })
    if (pi >= 0 && pi < reach.pools.length - 1) out.push({ ...p, candidatePool: reach.pools[pi + 1] })
    if (this.goal.space.weights)
      for (const a of this.weightDims)
        for (const b of this.weightDims) {
          if (a === b) continue
          const d = Math.min(W_STEPS[L], p.weights[b])
          if (d <= 0) continue
          out.push({ ...p, weights: { ...p.weights, [a]: p.weights[a] + d, [b]: p.weights[b] - d } })
        }
    return out
  }

  /** Floor, minSimilarity, topK and token-budget steps. */
  private gateNeighbours(p: TuneParams, L: number): TuneParams[] {
    const out: TuneParams[] = []
    const space = this.goal.space
    if (space.floor) {
      if (p.floor === null) out.push({ ...p, floor: 0.1 * (1 + this.rnd() * 3) })
      else {
        out.push({ ...p, floor: p.floor + FLOOR_STEPS[L] }, { ...p, floor: p.floor - FLOOR_STEPS[L] })
        if (L === 0) out.push({ ...p, floor: null })
      }
    }
    if (space.minSimilarity) {
      const ms = p.minSimilarity ?? null
      if (ms === null) {
        if (L === 0) out.push({ ...p, minSimilarity: 0.1 + this.rnd() * 0.3 })
      } else {
        out.push({ ...p, minSimilarity: ms + FLOOR_STEPS[L] }, { ...p, minSimilarity: ms - FLOOR_STEPS[L] })
        if (L === 0) out.push({ ...p, minSimilarity: null })
      }
    }
    if (space.topK) out.push({ ...p, topK: p.topK + TOPK_STEPS[L] }, { ...p, topK: p.topK - TOPK_STEPS[L] })
    if (space.tokenBudget) {
      const bs = this.reach.budgetsSorted
      const bi = bs.indexOf(p.tokenBudget ?? null)
      if (bi > 0) out.push({ ...p, tokenBudget: bs[bi - 1] })
      if (bi >= 0 && bi < bs.length - 1) out.push({ ...p, tokenBudget: bs[bi + 1] })
    }
    return out
  }

  /** rrfK and fusion method (hybrid only), then half-life and age source. */
  private fusionAndRecencyNeighbours(p: TuneParams, L: number): TuneParams[] {
    const out: TuneParams[] = []
    const space = this.goal.space
    if (space.fusion && this.reach.anyHybridArms && p.mode === 'hybrid') {
      if (p.fusion.method === 'rrf') for (const f of [RRF_FACTORS[L], 1 / RRF_FACTORS[L]]) out.push({ ...p, fusion: { ...p.fusion, rrfK: p.fusion.rrfK * f } })
      if (L === 0) out.push({ ...p, fusion: { ...p.fusion, method: p.fusion.method === 'rrf' ? 'weighted' : 'rrf' } })
    }
    // Recency moves last: every neighbour before them reuses the current half-life's recency values.
    if (space.halfLife && p.weights.recency > 0) for (const f of [HL_FACTORS[L], 1 / HL_FACTORS[L]]) out.push({ ...p, halfLifeHours: p.halfLifeHours * f })
    if (space.ageSource && p.weights.recency > 0 && L === 0) out.push({ ...p, ageFrom: p.ageFrom === 'created' ? 'last_used' : 'created' })
    return out
  }
}

/** Refinement step sizes per level (0 = coarse … 4 = fine). */
const W_STEPS = [0.2, 0.1, 0.05, 0.02, 0.01]
const HL_FACTORS = [4, 2, 1.4, 1.15, 1.05]
const FLOOR_STEPS = [0.1, 0.05, 0.02, 0.01, 0.005]
const TOPK_STEPS = [4, 2, 1, 1, 1]
const RRF_FACTORS = [2, 1.4, 1.2, 1.1, 1.05]

/** The value of xs nearest v (v itself when listed; the first for null). */
function nearest<T extends number | null>(xs: readonly T[], v: T): T {
  return xs.includes(v) ? v : v === null ? xs[0] : xs.reduce((a, b) => (b !== null && a !== null && Math.abs(b - v) < Math.abs(a - v) ? b : a))
}

/** Trials best first (objective, then fewer tokens). */
export function rankTrials(trials: readonly TuneTrial[]): TuneTrial[] {
  return [...trials].sort((a, b) => (better({ value: a.train, tokens: a.tokens }, { value: b.train, tokens: b.tokens }) ? -1 : 1))
}
