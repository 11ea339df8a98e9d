/**
 * Auto-tune: search mode, fusion, candidate pool, weights (on the simplex),
 * recency half-life and age source, floor, minSimilarity, topK and token budget
 * on the TRAIN split, then report the chosen config's score on the held-out TEST
 * split beside its train score, so an overfit shows, ranked with baselines
 * scored on the same held-out cases with bootstrap intervals.
 *
 * The parts: compiled.ts (the exact, allocation-free re-scorer over gathered
 * cases), space.ts (the goal, the knobs' ranges and what the gather serves),
 * search.ts (seeds, random configs, coordinate refinement), report.ts (held-out
 * scores, baselines, recommendation, heatmap).
 */
import type { TuneReport, TuneSplitInfo } from '../../../shared/eval'
import { RecallscopeError } from '../../../shared/result'
import type { RecallConfig } from '../../../shared/types'
import { canReuse, type GatheredCase } from '../replay'
import { CompiledEvaluator } from './compiled'
import { buildReport } from './report'
import { KnobSearch } from './search'
import { activeWeightDims, parseGoal, reachOf, type TuneOptions } from './space'

export { compileCase, idsCompiled, Scratch } from './compiled'
export { applyParams, type BaselineInput, type TuneOptions } from './space'

/** The train and test cases (BAD_INPUT without train cases; INTERNAL when a case was gathered for another config). */
function splitCases(gathered: readonly GatheredCase[], base: RecallConfig, opts: TuneOptions) {
  for (const g of gathered) if (!canReuse(g, base)) throw new RecallscopeError('INTERNAL', `case ${g.case.id} was not gathered for this config`)
  const sideOf = (g: GatheredCase) => opts.split?.side.get(g.case.id) ?? g.case.split
  const train = gathered.filter((g) => sideOf(g) === 'train')
  const test = gathered.filter((g) => sideOf(g) === 'test')
  if (train.length === 0)
    throw new RecallscopeError('BAD_INPUT', 'No train cases: tune searches on the train split and reports the test split (mark some cases train)')
  const splitInfo: TuneSplitInfo = opts.split?.info ?? { rule: 'case', by: null, train: train.length, test: test.length, trainGroups: [], testGroups: [] }
  return { train, test, splitInfo }
}

/**
 * Tune over gathered cases (from `gatherCases` with `base`; the gather must be
 * able to serve every config in the space: same scope/arms, pool ≤ fetched —
 * knobs it cannot serve are pinned and listed in the report).
 */
export async function tune(gathered: readonly GatheredCase[], base: RecallConfig, opts: TuneOptions = {}): Promise<TuneReport> {
  const t0 = performance.now()
  const goal = parseGoal(opts, base)
  const { train, test, splitInfo } = splitCases(gathered, base, opts)
  const reach = reachOf(gathered, base, goal.space)
  const ev = new CompiledEvaluator(base, train, test, goal.k, goal.metricId, goal.tokenBudget)
  const weightDims = activeWeightDims(ev, base, reach)
  const search = new KnobSearch(base, goal, reach, weightDims, ev, opts)
  const tSearch = performance.now()
  await search.run(gathered, opts.baselines ?? [])
  const searchMs = performance.now() - tSearch
  opts.onProgress?.(
    search.trials.length,
    goal.budget,
    search.cancelled ? 'cancelled: reporting the best so far' : 'scoring the held-out split and the baselines',
  )
  return buildReport({ gathered, base, train, test, goal, reach, weightDims, ev, search, opts, splitInfo, searchMs, t0 })
}
