/**
 * Two-knob fixes for why-not: when no single knob change injects a memory, move one
 * knob to a few values across its range and search the other knobs (knobs.ts) from
 * there; the cheapest pair by summed normalized change wins (ties: the first move in
 * knob order). The caller verifies it with a real engine re-run (why.ts).
 * docs/guide/trace-replay.md.
 *
 * The moves are searched cheapest first: once a pair costs C, a move that alone costs
 * more than C is skipped, and each later second-knob walk stops at the first value whose
 * change would make the pair cost more than C (its values are walked nearest-first, so
 * nothing farther can be cheaper). The same pair as searching every move in knob order
 * (`fast: false`, the reference in knobPairs.test.ts), for a fraction of the searches.
 */
import { rerank } from '../../shared/scoring'
import { KNOBS, type KnobChange, type KnobName, type KnobPair } from '../../shared/trace'
import type { CandidateRaw, EffectiveMode, RecallConfig } from '../../shared/types'
import { createKnobContext, getKnob, normalizedChange, poolNeeded, searchKnobs, searchSecondKnob, setKnob, type KnobContext } from './knobs'

export interface PairSearchInput {
  candidates: readonly CandidateRaw[]
  config: RecallConfig
  mode: EffectiveMode
  target: string
  /** values tried per first knob, spread over its range. @default 6 */
  steps?: number
  /** re-ranks per inner single-knob search. @default 400 */
  maxEvaluations?: number
  /**
   * Search the moves cheapest first and stop early (see the file's comment). `false` searches
   * every move in knob order with the reference single-knob search (a re-rank per tried value). @default true
   */
  fast?: boolean
  /** The single-knob search's context for the same target and candidates (createKnobContext), reused. */
  context?: KnobContext
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

/** A first move: knob `a` set to `v`, its cost from the original config, its place in knob order (ties go to the earlier). */
export interface Move {
  a: KnobName
  v: number
  cost: number
  order: number
}

/** Slack on the bound a second walk stops at: far above rounding, far below any change worth reporting. */
const SLACK = 1e-9

/**
 * The cheapest pair over the moves: the least total cost (the move's plus its second change's),
 * ties to the earlier move in knob order. `second(m, max)` searches the move's second change; it
 * may leave out any change costing more than `max` (a walk bounded by the best pair so far).
 * `fast`: moves cheapest first, skipping those that cannot win; else every move in knob order.
 */
export function pickCheapest<T>(
  moves: readonly Move[],
  second: (m: Move, max: number) => { cost: number; change: T } | null,
  fast: boolean,
): { move: Move; change: T; cost: number } | null {
  const order = fast ? [...moves].sort((x, y) => x.cost - y.cost || x.order - y.order) : moves
  let best: { move: Move; change: T; cost: number } | null = null
  for (const m of order) {
    if (best) {
      // Nothing this move can find beats the best so far: its first change alone costs more (or as much, and it comes later).
      if (fast && m.cost > best.cost) break
      if (m.cost > best.cost || (m.cost === best.cost && m.order > best.move.order)) continue
    }
    const found = second(m, fast && best ? best.cost - m.cost + SLACK : Infinity)
    if (!found) continue
    const cost: number = m.cost + found.cost
    if (!best || cost < best.cost || (cost === best.cost && m.order < best.move.order)) best = { move: m, change: found.change, cost }
  }
  return best
}

/** The cheapest pair of knob changes that injects `target` under the re-rank, or null. */
export function searchKnobPairs(inp: PairSearchInput): { pair: KnobPair | null; evaluations: number } {
  const { config, mode, target, candidates } = inp
  const steps = inp.steps ?? 6
  const names = KNOBS.map((k) => k.knob)
  const fast = inp.fast !== false
  const context = fast ? (inp.context ?? createKnobContext(candidates, mode, target)) : undefined
  const moves: Move[] = []
  for (const a of names) {
    const cur = getKnob(config, a)
    for (const v of spreadValues(a, steps)) if (v !== cur) moves.push({ a, v, cost: normalizedChange(a, cur, v), order: moves.length })
  }
  let evaluations = 0
  const best = pickCheapest(
    moves,
    (m, max) => {
      const moved = setKnob(config, m.a, m.v)
      const inner = { candidates, config: moved, mode, target, knobs: names.filter((n) => n !== m.a), maxEvaluations: inp.maxEvaluations ?? 400 }
      const s = fast ? searchSecondKnob({ ...inner, context }, max) : searchKnobs({ ...inner, fast: false })
      evaluations += s.evaluations
      // Measured from the original config, not from the moved one.
      return s.best && { cost: normalizedChange(s.best.knob, getKnob(config, s.best.knob), s.best.to), change: s.best }
    },
    fast,
  )
  if (!best) return { pair: null, evaluations }
  const both = setKnob(setKnob(config, best.move.a, best.move.v), best.change.knob, best.change.to)
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
  return { pair: { changes: [mk(best.move.a, best.move.v), mk(best.change.knob, best.change.to)], normalized: best.cost, rank, verified: null }, evaluations }
}
