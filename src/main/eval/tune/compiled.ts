/**
 * The tuner's compiled scorer. Candidates are gathered once per case by the
 * engine (replay.ts); each config then re-scores compiled per-case feature
 * arrays (`compileCase` / `rankCompiled`), never the store. `rankCompiled` is an
 * allocation-free copy of scoring.ts `rerank` for the knobs tune moves, with the
 * same arithmetic in the same order, so it returns exactly what `rerank` would
 * (tune.test.ts checks this on random configs); cases it does not cover (order
 * modes, Engram's user blend, live-transcript dedupe) fall back to `rerank` itself.
 *
 * Compiled sets are per (mode, pool): mode and pool decide pool membership,
 * min-max ranges and RRF ranks. minSimilarity, the age source and the token
 * budget are gates / inputs rankCompiled applies per config.
 */
import { compileJudgment, metricsFromGrades, type CaseMetrics, type CompiledJudgment, type MetricId } from '../../../shared/metrics'
import { RecallscopeError } from '../../../shared/result'
import { effectiveMode, estimateTokensFromLength, inPool, isOrderMode, recencyOf, rerank } from '../../../shared/scoring'
import type { RecallConfig } from '../../../shared/types'
import { caseConfig, type GatheredCase } from '../replay'

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
export function staticKey(c: RecallConfig): string {
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
 * Recency values rankCompiled scores with (min-max normalised when the config
 * normalises), or null when the recency weight is 0.
 */
function recencyFor(cc: CompiledCase, cfg: RecallConfig, s: Scratch): Float64Array | null {
  // A zero recency weight multiplies recency to 0 whatever it is: skip the pow (the hot loop's cost).
  if (cfg.weights.recency === 0) return null
  const n = cc.n
  const hl = cfg.recency.halfLifeHours
  const fromLast = cfg.recency.from === 'last_used'
  // Math.pow is most of a config's cost: keep the last half-life's values per case (refinement
  // moves one knob at a time, so most neighbours reuse them).
  if (cc.recHl !== hl || cc.recFromLast !== fromLast) {
    const age = fromLast ? cc.ageL : cc.ageC
    for (let i = 0; i < n; i++) cc.rec[i] = recencyOf(age[i], hl)
    cc.recHl = hl
    cc.recFromLast = fromLast
  }
  const rec = cc.rec
  if (cfg.normalize !== 'minmax' || n === 0) return rec
  // rerank normalises recency over the whole pool (minSimilarity gates later), as here.
  let lo = Infinity
  let hi = -Infinity
  for (let i = 0; i < n; i++) {
    if (rec[i] < lo) lo = rec[i]
    if (rec[i] > hi) hi = rec[i]
  }
  const r = hi - lo
  for (let i = 0; i < n; i++) s.rec[i] = r === 0 ? 0.5 : (rec[i] - lo) / r
  return s.rec
}

/** Every pool member's score into s.score (rerank's arithmetic, in its order). */
function scoreInto(cc: CompiledCase, cfg: RecallConfig, s: Scratch): void {
  const w = cfg.weights
  const rrf = cc.hybrid && cfg.fusion.method === 'rrf'
  const K = cfg.fusion.rrfK
  const score = s.score
  const rec = recencyFor(cc, cfg, s)
  for (let i = 0; i < cc.n; i++) {
    let simTerm = cc.sim[i]
    let lexTerm = cc.lex[i]
    if (rrf) {
      const d = cc.dRank[i]
      const l = cc.lRank[i]
      simTerm = d > 0 ? (K + 1) / (K + d) : 0
      lexTerm = l > 0 ? (K + 1) / (K + l) : 0
    }
    score[i] = w.similarity * simTerm + w.lexical * lexTerm + w.recency * (rec ? rec[i] : 0) + w.salience * cc.sal[i]
  }
}

/**
 * The best `topK` by score (then the static tie order) into s.sel, after the
 * minSimilarity gate and, in floor-then-topk order, the floor; returns the count.
 */
function selectTop(cc: CompiledCase, cfg: RecallConfig, s: Scratch): number {
  const topK = cfg.topK
  const floor = cfg.floor
  const floorFirst = cfg.gateOrder === 'floor-then-topk'
  const score = s.score
  // Partial selection of the best `topK` (insertion into a sorted buffer): pools are small, topK smaller.
  const sel = s.sel
  let m = 0
  const tie = cc.tie
  const minSim = cfg.minSimilarity
  const rawSim = cc.rawSim
  for (let i = 0; i < cc.n && topK > 0; i++) {
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
  return m
}

/**
 * The injected order under a config, as indexes into the compiled arrays:
 * writes s.outIdx / outGrades / outTokens, returns the count. Mirrors rerank:
 * score (same arithmetic), order (score desc, then the static tie order),
 * floor / topK in gateOrder, then the token budget.
 */
function rankCompiled(cc: CompiledCase, cfg: RecallConfig, s: Scratch): number {
  s.ensure(cc.n)
  scoreInto(cc, cfg, s)
  const m = selectTop(cc, cfg, s)
  const score = s.score
  const floor = cfg.floor
  const floorFirst = cfg.gateOrder === 'floor-then-topk'
  let out = 0
  const budget = cfg.tokenBudget
  let used = 0
  let stopped = false
  for (let r = 0; r < m; r++) {
    const i = s.sel[r]
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

/** A config's objective and mean injected tokens over a split. */
export interface Evaluated {
  value: number
  tokens: number
}

/** Is a better than b? Higher objective, then fewer tokens. */
export function better(a: Evaluated, b: Evaluated): boolean {
  if (a.value !== b.value) return a.value > b.value + 1e-12
  return a.tokens < b.tokens - 1e-9
}

/** Scores configs on the train or test split over compiled sets, one per (mode, pool), compiled on first use. */
export class CompiledEvaluator {
  private readonly compiled = new Map<string, { train: CompiledCase[]; test: CompiledCase[] }>()
  private readonly scratch = new Scratch()
  private readonly sKey: string

  constructor(
    base: RecallConfig,
    private readonly train: readonly GatheredCase[],
    private readonly test: readonly GatheredCase[],
    private readonly k: number,
    private readonly metricId: MetricId,
    private readonly tokenBudget: number,
  ) {
    this.sKey = staticKey(base)
  }

  /** The compiled train and test sets for a config's (mode, pool). */
  setsFor(cfg: RecallConfig): { train: CompiledCase[]; test: CompiledCase[] } {
    const key = `${cfg.mode}|${cfg.candidatePool}`
    let c = this.compiled.get(key)
    if (!c) {
      const one = (gs: readonly GatheredCase[]) => gs.map((g) => compileCase(g, cfg, this.k))
      this.compiled.set(key, (c = { train: one(this.train), test: one(this.test) }))
    }
    return c
  }

  /** The objective's mean (cases where it applies) and the mean tokens of a config on one split. */
  evaluate(which: 'train' | 'test', cfg: RecallConfig): Evaluated {
    if (staticKey(cfg) !== this.sKey) throw new RecallscopeError('INTERNAL', 'tune changed a knob it does not compile')
    const cs = this.setsFor(cfg)[which]
    let sum = 0
    let n = 0
    let tok = 0
    for (const cc of cs) {
      const m = scoreCompiled(cc, cfg, this.scratch, this.tokenBudget)
      tok += m.tokens
      const v = m[this.metricId]
      if (v !== null) {
        sum += v
        n++
      }
    }
    return { value: n ? sum / n : 0, tokens: cs.length ? tok / cs.length : 0 }
  }
}
