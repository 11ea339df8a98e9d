/**
 * The tune's report: the chosen config's score on the held-out TEST split beside
 * its train score (so an overfit shows), ranked with baselines (the start config,
 * every preset's default, lexical-only BM25, dense-only cosine) scored on the
 * same held-out cases with bootstrap intervals, the recommendation said plainly,
 * the weight heatmap and what was searched or pinned.
 */
import { bootstrapMeanCI } from '../../../shared/metrics'
import type { TuneBaseline, TuneHeatmap, TuneParams, TuneReport } from '../../../shared/eval'
import { FEATURE_NAMES, type FeatureName, type RecallConfig } from '../../../shared/types'
import { scoreGathered, type GatheredCase, type Scored } from '../replay'
import type { CompiledEvaluator } from './compiled'
import { rankTrials, type KnobSearch } from './search'
import { applyParams, FLOOR_MAX, HL_MAX, HL_MIN, MINSIM_MAX, type BaselineInput, type TuneGoal, type TuneOptions, type TuneReach } from './space'

/** What the report is built from: the tune's inputs, its search and how long each part took. */
export interface ReportInput {
  gathered: readonly GatheredCase[]
  base: RecallConfig
  train: readonly GatheredCase[]
  test: readonly GatheredCase[]
  goal: TuneGoal
  reach: TuneReach
  weightDims: readonly FeatureName[]
  ev: CompiledEvaluator
  search: KnobSearch
  opts: TuneOptions
  splitInfo: TuneReport['split']
  searchMs: number
  t0: number
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

/** Every case of a split scored by the engine's own rerank (null for an empty split). */
function scoreFull(gs: readonly GatheredCase[], cfg: RecallConfig, goal: TuneGoal): Scored | null {
  return gs.length ? scoreGathered(gs, cfg, { k: goal.k, budget: goal.tokenBudget }) : null
}

/** The report of a finished (or cancelled) search. */
export function buildReport(r: ReportInput): TuneReport {
  const { base, train, test, goal, search } = r
  const metric = goal.metric
  const bestP = search.best
  const bestCfg = applyParams(base, bestP)
  const bTrain = scoreFull(train, bestCfg, goal)!
  const bTest = scoreFull(test, bestCfg, goal)
  const baseTrain = scoreFull(train, base, goal)!
  const baseTest = scoreFull(test, base, goal)
  const tunedVals = bTest ? valuesById(bTest.perCase, metric) : new Map<string, number | null>()
  const ci = bootstrapMeanCI([...tunedVals.values()].filter((v): v is number => v !== null))
  const testCI = ci ? { lo: ci.lo, hi: ci.hi } : null
  const tunedTest = bTest?.metrics[metric] ?? null

  // Baselines on the same held-out cases, each paired with the tuned config case by case.
  const baselineRows = (r.opts.baselines ?? []).map((b) => scoreBaseline(b, r, tunedVals))
  const ranking = [
    { name: 'tuned', label: 'Tuned config', test: tunedTest, testCI },
    ...baselineRows.filter((b) => b.test !== null).map((b) => ({ name: b.name, label: b.label, test: b.test, testCI: b.testCI })),
  ].sort((a, b) => (b.test ?? -1) - (a.test ?? -1))
  const top = rankTrials(search.trials)
    .slice(0, 10)
    .map((t) => ({ ...t, test: test.length ? r.ev.evaluate('test', applyParams(base, t.params)).value : null }))
  const steps = r.opts.heatmapSteps ?? 12
  const heatmap =
    goal.space.weights && !search.cancelled && steps > 0 ? buildHeatmap(base, bestP, r.weightDims, steps, (cfg) => r.ev.evaluate('train', cfg).value) : null
  // Curve: at most 400 points (first, last and evenly between).
  const curve = search.curve
  const step = Math.max(1, Math.ceil(curve.length / 400))
  const totalMs = performance.now() - r.t0 + (r.opts.gatherMs ?? 0)
  const gatherMs = r.opts.gatherMs ?? 0
  const searchMs = r.searchMs
  const trials = search.trials.length
  return {
    metric,
    k: goal.k,
    trials,
    budget: goal.budget,
    cancelled: search.cancelled,
    seed: goal.seed,
    space: goal.space,
    split: { ...r.splitInfo, train: train.length, test: test.length },
    ...searchedAndPinned(goal, r.reach, r.weightDims),
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
      test: tunedTest,
      trainTokens: bTrain.metrics.tokens ?? 0,
      testTokens: bTest?.metrics.tokens ?? 0,
      trainMetrics: bTrain.metrics,
      testMetrics: bTest?.metrics ?? {},
      testCI,
    },
    top,
    curve: curve.filter((_, i) => i % step === 0 || i === curve.length - 1),
    heatmap,
    baselines: baselineRows,
    ranking,
    recommended: recommend(bestCfg, tunedTest, baselineRows, metric, test.length),
    embedder: r.gathered.find((g) => !g.degraded)?.embedder ?? r.gathered[0]?.embedder ?? { name: 'none', model: null, available: false },
    timings: { gatherMs, searchMs, totalMs, configsPerSec: searchMs > 0 ? (trials / searchMs) * 1000 : 0 },
  }
}

/** A baseline's row: its test score, paired with the tuned config's per-case values (bootstrap CI of the difference). */
function scoreBaseline(b: BaselineInput, r: ReportInput, tunedVals: ReadonlyMap<string, number | null>): TuneBaseline {
  const { train, test, goal } = r
  const metric = goal.metric
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
    if (b.gathered) {
      const testIds = new Set(test.map((g) => g.case.id))
      perTest = scoreFull(
        b.gathered.filter((g) => testIds.has(g.case.id)),
        b.config,
        goal,
      )
    } else {
      perTest = scoreFull(test, b.config, goal)
      row.train = scoreFull(train, b.config, goal)!.metrics[metric] ?? null
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
}

/** Which knobs were searched (and over what) and which were pinned. */
function searchedAndPinned(goal: TuneGoal, reach: TuneReach, weightDims: readonly FeatureName[]): Pick<TuneReport, 'searched' | 'pinned'> {
  const { space } = goal
  const { modes, pools, budgetsSorted } = reach
  const searched: Record<string, string> = {}
  const pinned: string[] = []
  const note = (knob: string, on: boolean, what: string) => (on ? (searched[knob] = what) : pinned.push(knob))
  note('mode', modes.length > 1, modes.join(' / '))
  note('fusion', space.fusion && reach.anyHybridArms, 'rrf (k 1–120, log) or weighted, in hybrid mode')
  note('pool', pools.length > 1, pools.join(', '))
  note('weights', space.weights, `simplex over ${weightDims.join(', ')}`)
  note('halfLife', space.halfLife, `${HL_MIN} h – ${HL_MAX} h, log-uniform`)
  note('ageSource', space.ageSource, 'last_used / created')
  note('floor', space.floor, `off or 0–${FLOOR_MAX}`)
  note('minSimilarity', space.minSimilarity, `off or 0–${MINSIM_MAX}`)
  note('topK', space.topK, `1–${space.maxTopK}`)
  note('tokenBudget', budgetsSorted.length > 1, budgetsSorted.map((b) => b ?? 'off').join(', '))
  return { pinned, searched }
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
