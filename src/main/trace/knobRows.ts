/**
 * The knob search's view of the pool (knobs.ts): the rows' scores, features and slopes as
 * columns — from the exact check's own numbers or, for the reference, from a re-rank — the
 * weights' breakpoints computed from them, and the test that rules a knob out before its walk.
 */
import { isOrderMode, rerank } from '../../shared/scoring'
import { KNOBS, type KnobName } from '../../shared/trace'
import type { CandidateRaw, EffectiveMode, FeatureName, RecallConfig } from '../../shared/types'
import type { PoolColumns } from './injectCheck'
import { HalfLifeGrid } from './knobValues'

const HOUR = 3_600_000

/** Half-life grids by recency source (their rows: every candidate an arm ranked, by admitting pool). */
export type Grids = Partial<Record<'last_used' | 'created', HalfLifeGrid>>

/**
 * The pool's rows under the search's config, as columns: what every breakpoint is computed from.
 * From the check's columns (fast) or from a re-rank of the pool (the reference); the row order
 * differs, the numbers do not, and every value list is sorted before it is walked.
 */
export interface Rows {
  n: number
  /** the target's row, −1 when the pool does not admit it */
  target: number
  score: Float64Array
  feat: Record<FeatureName, Float64Array>
  /** hybrid + RRF: the arms' rank terms, the weights' slopes for similarity and lexical */
  fusedDense: Float64Array | null
  fusedLexical: Float64Array | null
  /** raw similarity, NaN when null */
  simRaw: Float64Array
  /** the rows' ages by the recency source on the half-life grid (its rows 0..n−1 are these rows) */
  grid: (fromLast: boolean) => HalfLifeGrid
}

/** Ages in hours (max(0, age), by source) of the given candidates. */
function ageHoursOf(cands: readonly CandidateRaw[], fromLast: boolean): Float64Array {
  const out = new Float64Array(cands.length)
  for (let i = 0; i < cands.length; i++) out[i] = Math.max(0, fromLast ? cands[i].ageLastUsedMs : cands[i].ageCreatedMs) / HOUR
  return out
}

/** Rows from the check's columns: the byNeed prefix (the half-life grids, over every byNeed row, are kept in `grids`). */
export function rowsFromColumns(col: PoolColumns, byNeed: readonly { c: CandidateRaw }[], grids: Grids): Rows {
  const m = col.m
  return {
    n: m,
    target: col.target,
    score: col.score,
    feat: { similarity: col.similarity, lexical: col.lexical, recency: col.recency, salience: col.salience },
    fusedDense: col.fusedDense,
    fusedLexical: col.fusedLexical,
    simRaw: col.simRaw,
    grid: (fromLast) => {
      const key = fromLast ? 'last_used' : 'created'
      return (grids[key] ??= new HalfLifeGrid(
        ageHoursOf(
          byNeed.map((x) => x.c),
          fromLast,
        ),
      ))
    },
  }
}

/** Rows from a re-rank of the pool (the reference path). */
export function rowsFromRerank(pool: CandidateRaw[], config: RecallConfig, mode: EffectiveMode, target: string): Rows {
  const r = rerank(pool, config, mode)
  const list = [...r.results, ...r.dropped]
  const n = list.length
  const byId = new Map(pool.map((c) => [c.id, c]))
  const cands = list.map((x) => byId.get(x.id)!)
  const col = (f: (i: number) => number) => Float64Array.from({ length: n }, (_, i) => f(i))
  const rrf = mode === 'hybrid' && config.fusion.method === 'rrf'
  return {
    n,
    target: list.findIndex((x) => x.id === target),
    score: col((i) => list[i].score),
    feat: {
      similarity: col((i) => list[i].features.similarity),
      lexical: col((i) => list[i].features.lexical),
      recency: col((i) => list[i].features.recency),
      salience: col((i) => list[i].features.salience),
    },
    fusedDense: rrf ? col((i) => list[i].fused?.dense ?? 0) : null,
    fusedLexical: rrf ? col((i) => list[i].fused?.lexical ?? 0) : null,
    simRaw: col((i) => cands[i].similarity ?? NaN),
    grid: (fromLast) => new HalfLifeGrid(ageHoursOf(cands, fromLast)),
  }
}

/** A growable list of doubles (the breakpoint lists run to tens of thousands per knob). */
export class Floats {
  a = new Float64Array(1024)
  n = 0
  push(x: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2)
      b.set(this.a)
      this.a = b
    }
    this.a[this.n++] = x
  }
  /** push x when lo ≤ x ≤ hi */
  pushIn(x: number, lo: number, hi: number): void {
    if (x >= lo && x <= hi) this.push(x)
  }
}

/** Where, as one weight moves, the target's line crosses another row's line or any row's line crosses the floor. */
export function linearBreakpoints(rows: Rows, f: FeatureName, config: RecallConfig, mode: EffectiveMode): Floats {
  const rrf = mode === 'hybrid' && config.fusion.method === 'rrf'
  const w0 = config.weights[f]
  const slope = rrf && f === 'similarity' ? rows.fusedDense! : rrf && f === 'lexical' ? rows.fusedLexical! : rows.feat[f]
  const { n, score } = rows
  const t = rows.target
  const st = slope[t]
  const out = new Floats()
  for (let r = 0; r < n; r++) {
    if (r === t) continue
    const d = st - slope[r]
    if (d !== 0) out.push(w0 + (score[r] - score[t]) / d)
  }
  if (config.floor !== null) for (let r = 0; r < n; r++) if (slope[r] !== 0) out.push(w0 + (config.floor - score[r]) / slope[r])
  if ((config.overflow === 'skip' && config.tokenBudget !== null) || config.scope.blendUserId) {
    // Overflow `skip` budgets and Engram's blend depend on the order of the rows above the target too.
    if (n <= 200)
      for (let i = 0; i < n; i++)
        for (let j = i + 1; j < n; j++) {
          const d = slope[i] - slope[j]
          if (d !== 0) out.push(w0 + (score[j] - score[i]) / d)
        }
  }
  return out
}

/** Margin on a score difference: far above rounding (~1e-15 on scores of a few units), far below any gap a knob's walk could close unseen. */
const AHEAD = 1e-9

/**
 * Can no value of knob `k` inject the target? Then its walk would find nothing and is not run.
 * True when the target fails a gate of its own that the knob does not move (minSimilarity; the
 * floor when its score does not move either), or when as many rows as would have to make way
 * (topK; for topK itself the largest value its walk tries) stay ahead of it by more than
 * rounding over the knob's whole range and pass the gates whenever it does: every value the
 * walk would try then leaves it out (topK cuts before the budget and the dedupe, and a row
 * ahead of a target that clears the floor clears it too). Ahead over the whole range:
 *  - a weight: a score is linear in it, so ahead at both ends of the range is ahead throughout;
 *  - the half-life: score = rest + wr·0.5^(age/h), and 0.5^(age/h) ∈ [0, 1] rises with h for
 *    every row alike: a row no older than the target stays ahead when its rest is ahead, an older
 *    one when its rest is ahead by more than wr (not with min-max, whose features couple);
 *  - floor, topK, budget: the scores do not move; minSimilarity: rows at least as similar as the
 *    target pass whenever it does; candidatePool (scores independent of the pool): rows admitted
 *    whenever it is.
 * Rows ahead only in score-ordered modes (recency, session and keyword order by rank, not score).
 */
export function cannotInject(
  rows: Rows,
  config: RecallConfig,
  mode: EffectiveMode,
  k: KnobName,
  cur: number | null,
  /** the largest topK the topK walk tries */
  topKMax: number,
  byNeed: readonly { need: number }[],
): boolean {
  const { n, score, simRaw } = rows
  const t = rows.target
  const minSim = config.minSimilarity
  const rrf = mode === 'hybrid' && config.fusion.method === 'rrf'
  const fixedScores = k === 'minSimilarity' || k === 'topK' || k === 'tokenBudget' || (k === 'candidatePool' && config.normalize === 'none' && !rrf)
  if (k !== 'minSimilarity' && minSim !== null && !(simRaw[t] >= minSim)) return true
  if (fixedScores && config.floor !== null && score[t] < config.floor) return true
  if (isOrderMode(mode)) return false
  const need = k === 'topK' ? topKMax : config.topK
  const passes = (j: number) => minSim === null || simRaw[j] >= minSim
  let ahead: (j: number) => boolean
  if (k.startsWith('weights.')) {
    const f = k.slice(8) as FeatureName
    const slope = rrf && f === 'similarity' ? rows.fusedDense! : rrf && f === 'lexical' ? rows.fusedLexical! : rows.feat[f]
    const sp = KNOBS.find((x) => x.knob === k)!
    const w0 = config.weights[f]
    const lo = sp.lo - w0
    const hi = Math.max(sp.hi, cur ?? 0) - w0
    ahead = (j) => {
      const d = score[j] - score[t]
      const ds = slope[j] - slope[t]
      return d + lo * ds > AHEAD && d + hi * ds > AHEAD && passes(j)
    }
  } else if (k === 'recency.halfLifeHours') {
    if (config.normalize === 'minmax') return false
    const wr = config.weights.recency
    const grid = rows.grid(config.recency.from === 'last_used')
    const p0 = grid.at(config.recency.halfLifeHours)
    const age = grid.ageHours
    const restT = score[t] - wr * p0[t]
    ahead = (j) => score[j] - wr * p0[j] - restT - (age[j] <= age[t] ? 0 : wr) > AHEAD && passes(j)
  } else if (k === 'minSimilarity') ahead = (j) => score[j] - score[t] > AHEAD && simRaw[j] >= simRaw[t]
  else if (k === 'candidatePool') {
    if (!fixedScores) return false
    ahead = (j) => score[j] - score[t] > AHEAD && byNeed[j].need <= byNeed[t].need && passes(j)
  } else ahead = (j) => score[j] - score[t] > AHEAD && passes(j)
  let count = 0
  for (let j = 0; j < n; j++) if (j !== t && ahead(j) && ++count >= need) return true
  return need <= 0
}
