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
import { effectiveMode, estimateTokensFromLength, isOrderMode, recencyOf, rerank } from '../../../shared/scoring'
import type { CandidateRaw, RecallConfig } from '../../../shared/types'
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

/**
 * What compiling a case reads that no (mode, pool) changes, for one static config (staticKey): computed once per
 * case and shared by every compiled set of a tune (21 sets of ~1,000 cases in a LoCoMo tune, each of them
 * re-reading, re-sorting and re-estimating the same few hundred candidates before). The candidates an arm ranked
 * (the only ones a score-ordered pool can hold), as flat arrays in rerank's order after the score: raw
 * similarity, then created age (newest/oldest), then id.
 */
export interface CaseStatics {
  judged: CompiledJudgment
  /** candidates rerank itself must score (Engram's blend, live-transcript dedupe): every set of this case falls back */
  blocked: boolean
  /** some similarity is NaN: no order to rely on, each set sorts its own pool as rerank would */
  unordered: boolean
  m: number
  ids: string[]
  /** similarity ?? 0 (rerank's similarity feature), and ?? NaN (its minSimilarity gate) */
  sim: Float64Array
  rawSim: Float64Array
  lex: Float64Array
  sal: Float64Array
  ageC: Float64Array
  ageL: Float64Array
  /** arm ranks, NaN where the arm did not rank it */
  dRank: Float64Array
  lRank: Float64Array
  tokens: Int32Array
  grade: Int8Array
}

/** A case's statics under `config` (its static knobs: tokenEstimator, tieBreak, scope). */
function caseStatics(g: GatheredCase, config: RecallConfig, k: number): CaseStatics {
  const cfg = caseConfig(config, g.case)
  const judged = compileJudgment(g.case, k)
  let blocked = (cfg.scope.excludeIds?.length ?? 0) > 0
  let unordered = false
  const ranked: CandidateRaw[] = []
  for (const c of g.candidates) {
    if (c.group === 'blend' || c.excluded) blocked = true
    if (c.denseRank !== null || c.lexicalRank !== null) ranked.push(c)
    if (Number.isNaN(c.similarity)) unordered = true
  }
  const newest = (cfg.tieBreak ?? 'newest') === 'newest'
  // Array.prototype.sort is stable: equal candidates (a repeated id) keep the candidates' order, as in rerank.
  ranked.sort((a, b) => {
    const sa = a.similarity ?? 0
    const sb = b.similarity ?? 0
    if (sa !== sb) return sb - sa
    if (a.ageCreatedMs !== b.ageCreatedMs) return newest ? a.ageCreatedMs - b.ageCreatedMs : b.ageCreatedMs - a.ageCreatedMs
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  })
  const m = ranked.length
  const [sim, rawSim, lex, sal, ageC, ageL, dRank, lRank] = float64Views(8, m)
  const st: CaseStatics = {
    judged,
    blocked,
    unordered,
    m,
    ids: ranked.map((c) => c.id),
    sim,
    rawSim,
    lex,
    sal,
    ageC,
    ageL,
    dRank,
    lRank,
    tokens: new Int32Array(m),
    grade: new Int8Array(m),
  }
  for (let r = 0; r < m; r++) {
    const c = ranked[r]
    st.sim[r] = c.similarity ?? 0
    st.rawSim[r] = c.similarity ?? NaN
    st.lex[r] = c.lexical
    st.sal[r] = c.salience
    st.ageC[r] = c.ageCreatedMs
    st.ageL[r] = c.ageLastUsedMs
    st.dRank[r] = c.denseRank ?? NaN
    st.lRank[r] = c.lexicalRank ?? NaN
    st.tokens[r] = estimateTokensFromLength(c.textLength, c.textBytes ?? c.textLength, cfg.tokenEstimator)
    st.grade[r] = judged.grades.get(c.id) ?? 0
  }
  return st
}

/** `count` arrays of `n` numbers over one buffer (one allocation: a tune compiles tens of thousands of cases). */
function float64Views(count: number, n: number): Float64Array[] {
  const buf = new Float64Array(count * n)
  return Array.from({ length: count }, (_, i) => buf.subarray(i * n, (i + 1) * n))
}

/** As float64Views, of 32-bit integers. */
function int32Views(count: number, n: number): Int32Array[] {
  const buf = new Int32Array(count * n)
  return Array.from({ length: count }, (_, i) => buf.subarray(i * n, (i + 1) * n))
}

/** Min-max of `v[0..n)` into `out[0..n)` (rerank's normalizeMinMax: a flat feature maps to 0.5); `out` may be `v`. */
function minMaxInto(v: Float64Array, out: Float64Array, n: number): void {
  let lo = Infinity
  let hi = -Infinity
  for (let i = 0; i < n; i++) {
    if (v[i] < lo) lo = v[i]
    if (v[i] > hi) hi = v[i]
  }
  const r = hi - lo
  for (let i = 0; i < n; i++) out[i] = r === 0 ? 0.5 : (v[i] - lo) / r
}

/**
 * One case's pool under a config's (mode, pool), as flat arrays. The members are listed in rerank's order after
 * the score (CaseStatics), so that order is their index (`tie`); min-max keeps it, unless it maps two different
 * similarities onto one value, where the pool is sorted again as rerank compares (normalised similarity first).
 */
export function compileCase(g: GatheredCase, config: RecallConfig, k: number, statics: CaseStatics = caseStatics(g, config, k)): CompiledCase {
  const mode = effectiveMode(config, { dense: g.arms.dense.ran, lexical: g.arms.lexical.ran })
  const p = config.candidatePool
  // Only score-ordered modes compile; the others fall back to rerank.
  const fallback = isOrderMode(mode) || mode === 'none' || statics.blocked
  const st = statics
  // inPool over the ranked candidates (NaN, no rank, is never ≤ p)
  const useD = mode === 'dense' || mode === 'hybrid'
  const useL = mode === 'lexical' || mode === 'hybrid'
  const members: number[] = []
  for (let r = 0; r < st.m; r++) if ((useD && st.dRank[r] <= p) || (useL && st.lRank[r] <= p)) members.push(r)
  const n = members.length
  const [sim, lex, sal, rawSim, ageC, ageL, rec] = float64Views(7, n)
  const [dRank, lRank, tie, tokens] = int32Views(4, n)
  const cc: CompiledCase = {
    g,
    judged: st.judged,
    n,
    ids: new Array<string>(n),
    sim,
    lex,
    sal,
    rawSim,
    ageC,
    ageL,
    rec,
    dRank,
    lRank,
    tie,
    tokens,
    recHl: NaN,
    recFromLast: false,
    grade: new Int8Array(n),
    hybrid: mode === 'hybrid',
    fallback,
  }
  for (let j = 0; j < n; j++) {
    const r = members[j]
    cc.ids[j] = st.ids[r]
    cc.sim[j] = st.sim[r]
    cc.lex[j] = st.lex[r]
    cc.sal[j] = st.sal[r]
    cc.rawSim[j] = st.rawSim[r]
    cc.ageC[j] = st.ageC[r]
    cc.ageL[j] = st.ageL[r]
    cc.dRank[j] = st.dRank[r] <= p ? st.dRank[r] : 0
    cc.lRank[j] = st.lRank[r] <= p ? st.lRank[r] : 0
    cc.tokens[j] = st.tokens[r]
    cc.grade[j] = st.grade[r]
    cc.tie[j] = j
  }
  // rerank normalises over the whole pool (before minSimilarity): do the same for the static features.
  let ordered = !st.unordered
  if (config.normalize === 'minmax') {
    minMaxInto(cc.sim, cc.sim, n)
    minMaxInto(cc.lex, cc.lex, n)
    minMaxInto(cc.sal, cc.sal, n)
    // Min-max never reverses an order, but it may round two similarities to one value (then age and id decide).
    for (let j = 1; j < n && ordered; j++) if (cc.sim[j] === cc.sim[j - 1] && st.sim[members[j]] !== st.sim[members[j - 1]]) ordered = false
  }
  if (!ordered) sortTies(cc, (config.tieBreak ?? 'newest') === 'newest')
  return cc
}

/** The tie order by rerank's comparator after the score: similarity (as normalised), then created age (newest/oldest), then id. */
function sortTies(cc: CompiledCase, newest: boolean): void {
  const idx = Array.from({ length: cc.n }, (_, j) => j)
  idx.sort((a, b) => {
    if (cc.sim[a] !== cc.sim[b]) return cc.sim[b] - cc.sim[a]
    if (cc.ageC[a] !== cc.ageC[b]) return newest ? cc.ageC[a] - cc.ageC[b] : cc.ageC[b] - cc.ageC[a]
    return cc.ids[a] < cc.ids[b] ? -1 : cc.ids[a] > cc.ids[b] ? 1 : 0
  })
  idx.forEach((j, r) => (cc.tie[j] = r))
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
  minMaxInto(rec, s.rec, n)
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
  /** each case's statics, shared by its compiled sets */
  private readonly statics = new Map<GatheredCase, CaseStatics>()
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
      const one = (gs: readonly GatheredCase[]) => gs.map((g) => compileCase(g, cfg, this.k, this.staticsOf(g, cfg)))
      this.compiled.set(key, (c = { train: one(this.train), test: one(this.test) }))
    }
    return c
  }

  private staticsOf(g: GatheredCase, cfg: RecallConfig): CaseStatics {
    let st = this.statics.get(g)
    if (!st) this.statics.set(g, (st = caseStatics(g, cfg, this.k)))
    return st
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
