/**
 * "Is the target injected under this config?" answered exactly in O(n) without a
 * full re-rank: the candidates' features are known, so the target's fate is decided
 * by its own gates (minSimilarity, floor) and by how many surviving rows sort ahead
 * of it (topK), plus — when a token budget is set — the budget walk over just
 * those rows. No sort of the whole pool, no result objects.
 *
 * Every number is computed with the very same floating-point operations, in the
 * same order, as `rerank` (src/shared/scoring.ts), so the answer is identical to
 * `rerank(...).results.some(r => r.id === target)`; the knob search (knobs.ts)
 * uses it to reject values and runs the real re-rank only for a value that
 * injects. Not applicable (null) when a blend group is present (Engram's user
 * blend couples two rankings and a content dedupe): callers fall back to rerank.
 */
import { estimateTokensFromLength, isOrderMode, recencyOf } from '../../shared/scoring'
import type { CandidateRaw, EffectiveMode, RecallConfig } from '../../shared/types'

/** An exact injected-or-not oracle for one target over a fixed candidate list. */
export type InjectCheck = (cfg: RecallConfig) => boolean

/**
 * Build the oracle. `byNeed` are the candidates with their smallest admitting pool,
 * sorted ascending by it, so the pool `p` is always a prefix (rows with need ≤ p).
 */
export function makeInjectCheck(
  byNeed: readonly { c: CandidateRaw; need: number }[],
  base: RecallConfig,
  mode: EffectiveMode,
  target: string,
): InjectCheck | null {
  const checker = createInjectChecker(byNeed, mode, target)
  return checker && ((cfg) => checker.check(cfg))
}

/**
 * The oracle as an object: `check` as above, and `poolColumns`, the pool rows' numbers under a
 * config (the knob search computes its breakpoints from them instead of a full re-rank). Null
 * with a blend group, like makeInjectCheck. One checker serves any number of configs.
 */
export function createInjectChecker(byNeed: readonly { c: CandidateRaw; need: number }[], mode: EffectiveMode, target: string): InjectChecker | null {
  if (byNeed.some((x) => x.c.group === 'blend')) return null
  return new InjectChecker(byNeed, mode, target)
}

/**
 * The pool's rows (the `need`-sorted prefix a config's candidatePool admits) under one config:
 * copies, so later checks do not change them. Every number is the one `rerank` computes.
 */
export interface PoolColumns {
  /** pool size: rows 0..m−1 of the `need`-sorted list */
  m: number
  /** the target's row, or −1 when the pool does not admit it */
  target: number
  score: Float64Array
  /** features after any min-max normalisation */
  similarity: Float64Array
  lexical: Float64Array
  recency: Float64Array
  salience: Float64Array
  /** hybrid + RRF: the arms' rank terms (rerank's `fused`), else null */
  fusedDense: Float64Array | null
  fusedLexical: Float64Array | null
  /** the raw similarity, NaN when null */
  simRaw: Float64Array
}

/** The rows a pool of `p` admits: the length of the prefix with need ≤ p (`need` is sorted ascending). */
function prefixUpTo(need: Float64Array, p: number): number {
  let lo = 0
  let hi = need.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (need[mid] <= p) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Min-max normalisation of the first `m` values of a column, in place (rerank's: a flat column is 0.5). */
function normalizeMinMax(col: Float64Array, m: number): void {
  let min = Infinity
  let max = -Infinity
  for (let i = 0; i < m; i++) {
    const v = col[i]
    if (v < min) min = v
    if (v > max) max = v
  }
  const range = max - min
  for (let i = 0; i < m; i++) col[i] = range === 0 ? 0.5 : (col[i] - min) / range
}

/**
 * The oracle's state: the candidates' features as columns, and working columns for the current
 * (pool, half-life) and (…, weights), recomputed only when those change. Generation stamps: a row's
 * features / score are valid when its stamp equals the current generation.
 */
export class InjectChecker {
  private readonly n: number
  private readonly ti: number
  private readonly byOrder: boolean
  private readonly need: Float64Array
  /** NaN when null (fails every minSimilarity gate, like rerank's null check) */
  private readonly simRaw: Float64Array
  private readonly sim0: Float64Array
  private readonly lex0: Float64Array
  private readonly sal0: Float64Array
  private readonly ageC: Float64Array
  private readonly ageU: Float64Array
  private readonly order: Float64Array
  /** Infinity when null */
  private readonly dRank: Float64Array
  private readonly lRank: Float64Array
  private readonly ids: string[]
  private readonly excluded: Uint8Array
  private readonly fs: Float64Array
  private readonly fl: Float64Array
  private readonly fr: Float64Array
  private readonly fa: Float64Array
  /** similarity term (feature, or RRF dense term) */
  private readonly tS: Float64Array
  private readonly tL: Float64Array
  private readonly score: Float64Array
  private readonly tokens: Float64Array
  private readonly fStamp: Int32Array
  private readonly sStamp: Int32Array
  /** the feature generation's inputs (pool rows, half-life, age source, normalisation, RRF pool and k); m = −1: none yet */
  private keyM = -1
  private keyHl = 0
  private keyFromLast = false
  private keyNorm = ''
  private keyRrf = false
  private keyP = 0
  private keyK = 0
  /** the score generation's weights (NaN: none yet) */
  private keyWs = NaN
  private keyWl = NaN
  private keyWr = NaN
  private keyWa = NaN
  private tokKey = ''
  private fGen = 0
  private sGen = 0
  private age: Float64Array
  private curHl = 0
  private curRrf = false
  private curP = 0
  private curK = 0
  private ws = 0
  private wl = 0
  private wr = 0
  private wa = 0

  constructor(
    private readonly byNeed: readonly { c: CandidateRaw; need: number }[],
    private readonly mode: EffectiveMode,
    target: string,
  ) {
    const n = (this.n = byNeed.length)
    this.ti = byNeed.findIndex((x) => x.c.id === target)
    this.byOrder = isOrderMode(mode)
    this.need = new Float64Array(n)
    this.simRaw = new Float64Array(n)
    this.sim0 = new Float64Array(n)
    this.lex0 = new Float64Array(n)
    this.sal0 = new Float64Array(n)
    this.ageC = new Float64Array(n)
    this.ageU = new Float64Array(n)
    this.order = new Float64Array(n)
    this.dRank = new Float64Array(n)
    this.lRank = new Float64Array(n)
    this.ids = new Array<string>(n)
    this.excluded = new Uint8Array(n)
    for (let i = 0; i < n; i++) {
      const c = byNeed[i].c
      this.need[i] = byNeed[i].need
      this.simRaw[i] = c.similarity === null ? NaN : c.similarity
      this.sim0[i] = c.similarity ?? 0
      this.lex0[i] = c.lexical
      this.sal0[i] = c.salience
      this.ageC[i] = c.ageCreatedMs
      this.ageU[i] = c.ageLastUsedMs
      this.order[i] = mode === 'recency' ? (c.recencyRank ?? Infinity) : (c.orderKey ?? Infinity)
      this.dRank[i] = c.denseRank ?? Infinity
      this.lRank[i] = c.lexicalRank ?? Infinity
      this.ids[i] = c.id
      this.excluded[i] = c.excluded ? 1 : 0
    }
    this.fs = new Float64Array(n)
    this.fl = new Float64Array(n)
    this.fr = new Float64Array(n)
    this.fa = new Float64Array(n)
    this.tS = new Float64Array(n)
    this.tL = new Float64Array(n)
    this.score = new Float64Array(n)
    this.tokens = new Float64Array(n)
    this.fStamp = new Int32Array(n)
    this.sStamp = new Int32Array(n)
    this.age = this.ageC
  }

  /** Is the target injected under `cfg`? Its own gates, then the rows ahead of it (topK), then the budget walk, then the dedupe. */
  check(cfg: RecallConfig): boolean {
    const ti = this.ti
    if (ti < 0) return false
    const p = cfg.candidatePool
    const m = prefixUpTo(this.need, p)
    if (ti >= m) return false
    this.useFeatures(cfg, m, p)
    this.useWeights(cfg)
    this.ensure(ti)
    const minSim = cfg.minSimilarity
    if (minSim !== null && !(this.simRaw[ti] >= minSim)) return false
    const floor = cfg.floor
    if (floor !== null && this.score[ti] < floor) return false
    const ahead = this.rowsAhead(cfg, m)
    if (ahead === null) return false
    if (cfg.tokenBudget !== null && !this.fitsBudget(cfg, ahead, cfg.tokenBudget)) return false
    // Dedupe drops live-transcript rows after selection.
    if (this.excluded[ti]) return false
    const ex = cfg.scope.excludeIds
    if (ex && ex.includes(this.ids[ti])) return false
    return true
  }

  /** The pool rows' numbers under `cfg` (see PoolColumns): computed as `check` computes them, then copied. */
  poolColumns(cfg: RecallConfig): PoolColumns {
    const p = cfg.candidatePool
    const m = prefixUpTo(this.need, p)
    this.useFeatures(cfg, m, p)
    this.useWeights(cfg)
    for (let i = 0; i < m; i++) this.ensure(i)
    const rrf = this.curRrf
    return {
      m,
      target: this.ti < m ? this.ti : -1,
      score: this.score.slice(0, m),
      similarity: this.fs.slice(0, m),
      lexical: this.fl.slice(0, m),
      recency: this.fr.slice(0, m),
      salience: this.fa.slice(0, m),
      fusedDense: rrf ? this.tS.slice(0, m) : null,
      fusedLexical: rrf ? this.tL.slice(0, m) : null,
      simRaw: this.simRaw.slice(0, m),
    }
  }

  /** The feature generation for (pool rows, half-life, age source, normalisation, RRF pool and k): a new one when any changed. */
  private useFeatures(cfg: RecallConfig, m: number, p: number): void {
    const hl = cfg.recency.halfLifeHours
    const fromLast = cfg.recency.from === 'last_used'
    const rrf = this.mode === 'hybrid' && cfg.fusion.method === 'rrf'
    // RRF terms depend on the pool value itself (an arm rank ≤ p), not only on which rows it admits.
    // Compared field by field (this runs for every tried value): any difference starts a new generation.
    const k = cfg.fusion.rrfK
    if (
      m === this.keyM &&
      hl === this.keyHl &&
      fromLast === this.keyFromLast &&
      cfg.normalize === this.keyNorm &&
      rrf === this.keyRrf &&
      (!rrf || (p === this.keyP && k === this.keyK))
    )
      return
    this.keyM = m
    this.keyHl = hl
    this.keyFromLast = fromLast
    this.keyNorm = cfg.normalize
    this.keyRrf = rrf
    this.keyP = p
    this.keyK = k
    this.fGen++
    this.sGen++
    this.age = fromLast ? this.ageU : this.ageC
    this.curHl = hl
    this.curRrf = rrf
    this.curP = p
    this.curK = cfg.fusion.rrfK
    // Min-max couples every row to the pool's extremes: compute the whole column; otherwise rows are computed
    // lazily (the loop in rowsAhead stops as soon as topK rows sort ahead, usually after a handful).
    if (cfg.normalize === 'minmax' && m > 0) {
      for (let i = 0; i < m; i++) this.computeFeatures(i)
      normalizeMinMax(this.fs, m)
      normalizeMinMax(this.fl, m)
      normalizeMinMax(this.fr, m)
      normalizeMinMax(this.fa, m)
      for (let i = 0; i < m; i++) this.computeTerms(i)
    }
  }

  /** The score generation for the weights: a new one when they changed. */
  private useWeights(cfg: RecallConfig): void {
    const w = cfg.weights
    if (w.similarity === this.keyWs && w.lexical === this.keyWl && w.recency === this.keyWr && w.salience === this.keyWa) return
    this.keyWs = w.similarity
    this.keyWl = w.lexical
    this.keyWr = w.recency
    this.keyWa = w.salience
    this.sGen++
    this.ws = w.similarity
    this.wl = w.lexical
    this.wr = w.recency
    this.wa = w.salience
  }

  private computeFeatures(i: number): void {
    this.fs[i] = this.sim0[i]
    this.fl[i] = this.lex0[i]
    this.fr[i] = recencyOf(this.age[i], this.curHl)
    this.fa[i] = this.sal0[i]
    this.fStamp[i] = this.fGen
  }

  private computeTerms(i: number): void {
    if (this.curRrf) {
      const k = this.curK
      this.tS[i] = this.dRank[i] <= this.curP ? (k + 1) / (k + this.dRank[i]) : 0
      this.tL[i] = this.lRank[i] <= this.curP ? (k + 1) / (k + this.lRank[i]) : 0
    } else {
      this.tS[i] = this.fs[i]
      this.tL[i] = this.fl[i]
    }
  }

  /** Row i's features and score under the current generation (same expression as rerank: four products summed left to right). */
  private ensure(i: number): void {
    if (this.sStamp[i] === this.sGen) return
    if (this.fStamp[i] !== this.fGen) {
      this.computeFeatures(i)
      this.computeTerms(i)
    }
    this.score[i] = this.ws * this.tS[i] + this.wl * this.tL[i] + this.wr * this.fr[i] + this.wa * this.fa[i]
    this.sStamp[i] = this.sGen
  }

  /** rerank's comparator: does row a sort before row b? */
  private sortsBefore(a: number, b: number, newest: boolean): boolean {
    const { order, score, fs, ageC, ids } = this
    if (this.byOrder) {
      if (order[a] !== order[b]) return order[a] < order[b]
    } else {
      if (score[a] !== score[b]) return score[a] > score[b]
      if (fs[a] !== fs[b]) return fs[a] > fs[b]
    }
    if (ageC[a] !== ageC[b]) return newest ? ageC[a] < ageC[b] : ageC[a] > ageC[b]
    return ids[a] < ids[b]
  }

  /**
   * The surviving rows that sort ahead of the target (collected only when a token budget is set), or null
   * when topK of them do (the target is out). Stops at the topK-th.
   */
  private rowsAhead(cfg: RecallConfig, m: number): number[] | null {
    const { ti, simRaw, score } = this
    const minSim = cfg.minSimilarity
    const floor = cfg.floor
    const floorFirst = cfg.gateOrder !== 'topk-then-floor'
    const newest = (cfg.tieBreak ?? 'newest') === 'newest'
    const collect = cfg.tokenBudget !== null
    const ahead: number[] = []
    let count = 0
    const topK = cfg.topK
    if (topK <= 0) return null
    for (let j = 0; j < m; j++) {
      if (j === ti) continue
      if (minSim !== null && !(simRaw[j] >= minSim)) continue
      this.ensure(j)
      if (floorFirst && floor !== null && score[j] < floor) continue
      if (!this.sortsBefore(j, ti, newest)) continue
      if (++count >= topK) return null
      if (collect) ahead.push(j)
    }
    return ahead
  }

  /** The budget walks the survivors in injected order: only the rows ahead of the target matter. Does the target still fit? */
  private fitsBudget(cfg: RecallConfig, ahead: number[], budget: number): boolean {
    const est = cfg.tokenEstimator
    const tokens = this.tokens
    if (this.tokKey !== est) {
      for (let i = 0; i < this.n; i++) {
        const c = this.byNeed[i].c
        tokens[i] = estimateTokensFromLength(c.textLength, c.textBytes ?? c.textLength, est)
      }
      this.tokKey = est
    }
    const floor = cfg.floor
    const newest = (cfg.tieBreak ?? 'newest') === 'newest'
    let rows = ahead
    if (cfg.gateOrder === 'topk-then-floor' && floor !== null) rows = rows.filter((j) => this.score[j] >= floor)
    const { order, score, fs, ageC, ids } = this
    rows.sort((a, b) => {
      if (this.byOrder) {
        if (order[a] !== order[b]) return order[a] - order[b]
      } else {
        if (score[a] !== score[b]) return score[b] - score[a]
        if (fs[a] !== fs[b]) return fs[b] - fs[a]
      }
      if (ageC[a] !== ageC[b]) return newest ? ageC[a] - ageC[b] : ageC[b] - ageC[a]
      return ids[a] < ids[b] ? -1 : 1
    })
    let used = 0
    let kept = 0
    for (const j of rows) {
      if (used + tokens[j] <= budget || (cfg.atLeastOne && kept === 0)) {
        used += tokens[j]
        kept++
      } else if (cfg.overflow === 'stop') return false
    }
    return used + tokens[this.ti] <= budget || (cfg.atLeastOne && kept === 0)
  }
}
