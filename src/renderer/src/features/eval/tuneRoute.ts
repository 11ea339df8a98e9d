/**
 * The Tune tab's own search settings in the URL (#/eval?tab=tune&tuneMetric=ndcg&tuneK=20&tuneTrials=500&tuneSeed=7&tuneOff=floor,topK),
 * beside the config under test (evalRoute.ts): a copied Tune link or a reload opens the same objective, k,
 * number of configs, seed and searched knobs. Defaults are left out; a bad value is ignored for its
 * default, never thrown.
 */
import { LOWER_IS_BETTER, METRIC_IDS, type MetricId } from '../../../../shared/metrics'
import type { RouteParams } from '../../lib/router'

/** The knobs the tuner can search, with the label the form shows. */
export const KNOBS = [
  ['mode', 'mode'],
  ['fusion', 'fusion'],
  ['pool', 'pool'],
  ['weights', 'weights (simplex)'],
  ['halfLife', 'half-life'],
  ['ageSource', 'age source'],
  ['floor', 'floor'],
  ['minSimilarity', 'minSimilarity'],
  ['topK', 'topK'],
  ['tokenBudget', 'token budget'],
] as const

export type KnobId = (typeof KNOBS)[number][0]

/** The objectives the tuner can maximise (a metric where lower is better is not one). */
export const TUNE_METRICS: readonly MetricId[] = METRIC_IDS.filter((m) => !LOWER_IS_BETTER.has(m))

export interface TuneForm {
  metric: MetricId
  k: number
  /** configs to try */
  trials: number
  seed: number
  /** the knobs searched; an unticked knob stays at the start config's value */
  space: Record<KnobId, boolean>
}

/** The form's bounds, as its inputs have them. */
export const TUNE_BOUNDS = { k: [1, 200], trials: [1, 100_000], seed: [0, 2 ** 31 - 1] } as const

/** The form a fresh Tune tab shows, k following the config under test's k. */
export function defaultTuneForm(k: number): TuneForm {
  return {
    metric: 'recall',
    k: clampInt(k, TUNE_BOUNDS.k) ?? 10,
    trials: 1000,
    seed: 1,
    space: Object.fromEntries(KNOBS.map(([key]) => [key, true])) as Record<KnobId, boolean>,
  }
}

function clampInt(v: number, [lo, hi]: readonly [number, number]): number | null {
  return Number.isInteger(v) && v >= lo && v <= hi ? v : null
}

/** A whole number in bounds from a URL value, else null. */
function readInt(s: string | undefined, bounds: readonly [number, number]): number | null {
  return s === undefined || !/^\d+$/.test(s) ? null : clampInt(Number(s), bounds)
}

/** The URL parameters for the form; each value equal to the default (for the config's k) is left out. */
export function encodeTune(f: TuneForm, evalK: number): RouteParams {
  const d = defaultTuneForm(evalK)
  const off = KNOBS.filter(([key]) => !f.space[key]).map(([key]) => key)
  return {
    tuneMetric: f.metric === d.metric ? undefined : f.metric,
    tuneK: f.k === d.k ? undefined : String(f.k),
    tuneTrials: f.trials === d.trials ? undefined : String(f.trials),
    tuneSeed: f.seed === d.seed ? undefined : String(f.seed),
    tuneOff: off.length ? off.join(',') : undefined,
  }
}

/** The form from the URL, each field checked on its own; an unknown knob name in tuneOff is skipped. */
export function decodeTune(params: RouteParams, evalK: number): TuneForm {
  const d = defaultTuneForm(evalK)
  const off = new Set((params.tuneOff ?? '').split(','))
  return {
    metric: TUNE_METRICS.find((m) => m === params.tuneMetric) ?? d.metric,
    k: readInt(params.tuneK, TUNE_BOUNDS.k) ?? d.k,
    trials: readInt(params.tuneTrials, TUNE_BOUNDS.trials) ?? d.trials,
    seed: readInt(params.tuneSeed, TUNE_BOUNDS.seed) ?? d.seed,
    space: Object.fromEntries(KNOBS.map(([key]) => [key, !off.has(key)])) as Record<KnobId, boolean>,
  }
}
