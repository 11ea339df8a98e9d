/**
 * Two-knob fixes for why-not: when no single knob change injects a memory, move one
 * knob to a few values across its range and search the other knobs (knobs.ts) from
 * there; the cheapest pair by summed normalized change wins. The caller verifies it
 * with a real engine re-run (why.ts). docs/guide/trace-replay.md.
 */
import { rerank } from '../../shared/scoring'
import { KNOBS, type KnobChange, type KnobName, type KnobPair } from '../../shared/trace'
import type { CandidateRaw, EffectiveMode, RecallConfig } from '../../shared/types'
import { getKnob, normalizedChange, poolNeeded, searchKnobs, setKnob } from './knobs'

export interface PairSearchInput {
  candidates: readonly CandidateRaw[]
  config: RecallConfig
  mode: EffectiveMode
  target: string
  /** values tried per first knob, spread over its range. @default 6 */
  steps?: number
  /** re-ranks per inner single-knob search. @default 400 */
  maxEvaluations?: number
}

/** `steps` values spread over a knob's range (linear, or geometric for log knobs), rounded for integer knobs. */
export function spreadValues(k: KnobName, steps: number): number[] {
  const s = KNOBS.find((x) => x.knob === k)!
  const out: number[] = []
  for (let i = 0; i < steps; i++) {
    const t = steps === 1 ? 0.5 : i / (steps - 1)
    const v = s.scale === 'linear' ? s.lo + t * (s.hi - s.lo) : s.lo * Math.pow(s.hi / s.lo, t)
    out.push(s.integer ? Math.round(v) : Number(v.toFixed(4)))
  }
  return [...new Set(out)]
}

/** The cheapest pair of knob changes that injects `target` under the re-rank, or null. */
export function searchKnobPairs(inp: PairSearchInput): { pair: KnobPair | null; evaluations: number } {
  const { config, mode, target, candidates } = inp
  const steps = inp.steps ?? 6
  const names = KNOBS.map((k) => k.knob)
  let evaluations = 0
  let best: { a: KnobName; v: number; second: KnobChange; cost: number } | null = null
  for (const a of names) {
    const cur = getKnob(config, a)
    for (const v of spreadValues(a, steps)) {
      if (v === cur) continue
      const costA = normalizedChange(a, cur, v)
      // Nothing this pair can find beats the best so far: its first move alone costs more.
      if (best && costA >= best.cost) continue
      const moved = setKnob(config, a, v)
      const s = searchKnobs({ candidates, config: moved, mode, target, knobs: names.filter((n) => n !== a), maxEvaluations: inp.maxEvaluations ?? 400 })
      evaluations += s.evaluations
      if (!s.best) continue
      // Measured from the original config, not from the moved one.
      const cost = costA + normalizedChange(s.best.knob, getKnob(config, s.best.knob), s.best.to)
      if (!best || cost < best.cost) best = { a, v, second: s.best, cost }
    }
  }
  if (!best) return { pair: null, evaluations }
  const both = setKnob(setKnob(config, best.a, best.v), best.second.knob, best.second.to)
  const inPool = (c: RecallConfig) => candidates.filter((x) => (poolNeeded(x, mode) ?? Infinity) <= c.candidatePool)
  const before = rerank(inPool(config), config, mode).results.map((r) => r.id)
  const after = rerank(inPool(both), both, mode).results.map((r) => r.id)
  evaluations += 2
  const rank = after.indexOf(target) + 1
  const pushedOut = before.filter((id) => !after.includes(id))
  const pulledIn = after.filter((id) => !before.includes(id) && id !== target)
  const mk = (k: KnobName, to: number): KnobChange => {
    const from = getKnob(config, k)
    return { knob: k, from, to, delta: to - (from ?? 0), normalized: normalizedChange(k, from, to), rank, pushedOut, pulledIn, verified: null }
  }
  return { pair: { changes: [mk(best.a, best.v), mk(best.second.knob, best.second.to)], normalized: best.cost, rank, verified: null }, evaluations }
}
