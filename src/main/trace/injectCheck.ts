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
  if (byNeed.some((x) => x.c.group === 'blend')) return null
  const ti = byNeed.findIndex((x) => x.c.id === target)
  const n = byNeed.length
  const need = new Float64Array(n)
  const simRaw = new Float64Array(n) // NaN when null (fails every minSimilarity gate, like rerank's null check)
  const sim0 = new Float64Array(n)
  const lex0 = new Float64Array(n)
  const sal0 = new Float64Array(n)
  const ageC = new Float64Array(n)
  const ageU = new Float64Array(n)
  const order = new Float64Array(n)
  const dRank = new Float64Array(n) // Infinity when null
  const lRank = new Float64Array(n)
  const ids = new Array<string>(n)
  const excluded = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    const c = byNeed[i].c
    need[i] = byNeed[i].need
    simRaw[i] = c.similarity === null ? NaN : c.similarity
    sim0[i] = c.similarity ?? 0
    lex0[i] = c.lexical
    sal0[i] = c.salience
    ageC[i] = c.ageCreatedMs
    ageU[i] = c.ageLastUsedMs
    order[i] = mode === 'recency' ? (c.recencyRank ?? Infinity) : (c.orderKey ?? Infinity)
    dRank[i] = c.denseRank ?? Infinity
    lRank[i] = c.lexicalRank ?? Infinity
    ids[i] = c.id
    excluded[i] = c.excluded ? 1 : 0
  }
  const byOrder = isOrderMode(mode)
  // Working columns for the current (pool, half-life) and (…, weights); recomputed only when those change.
  const fs = new Float64Array(n)
  const fl = new Float64Array(n)
  const fr = new Float64Array(n)
  const fa = new Float64Array(n)
  const tS = new Float64Array(n) // similarity term (feature, or RRF dense term)
  const tL = new Float64Array(n)
  const score = new Float64Array(n)
  const tokens = new Float64Array(n)
  let featKey = ''
  let scoreKey = ''
  let tokKey = ''
  // Generation stamps: a row's features / score are valid when its stamp equals the current generation.
  const fStamp = new Int32Array(n)
  const sStamp = new Int32Array(n)
  let fGen = 0
  let sGen = 0
  let age = ageC
  let curHl = 0
  let curRrf = false
  let curP = 0
  let curK = 0
  let ws = 0
  let wl = 0
  let wr = 0
  let wa = 0
  const computeFeatures = (i: number) => {
    fs[i] = sim0[i]
    fl[i] = lex0[i]
    fr[i] = recencyOf(age[i], curHl)
    fa[i] = sal0[i]
    fStamp[i] = fGen
  }
  const computeTerms = (i: number) => {
    if (curRrf) {
      tS[i] = dRank[i] <= curP ? (curK + 1) / (curK + dRank[i]) : 0
      tL[i] = lRank[i] <= curP ? (curK + 1) / (curK + lRank[i]) : 0
    } else {
      tS[i] = fs[i]
      tL[i] = fl[i]
    }
  }
  /** Row i's features and score under the current generation (same expression as rerank: four products summed left to right). */
  const ensure = (i: number) => {
    if (sStamp[i] === sGen) return
    if (fStamp[i] !== fGen) {
      computeFeatures(i)
      computeTerms(i)
    }
    score[i] = ws * tS[i] + wl * tL[i] + wr * fr[i] + wa * fa[i]
    sStamp[i] = sGen
  }
  const minmax = (col: Float64Array, m: number) => {
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
  const poolSize = (p: number) => {
    let lo = 0
    let hi = n
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (need[mid] <= p) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  return (cfg: RecallConfig): boolean => {
    if (ti < 0) return false
    const p = cfg.candidatePool
    const m = poolSize(p)
    if (ti >= m) return false
    const hl = cfg.recency.halfLifeHours
    const fromLast = cfg.recency.from === 'last_used'
    const rrf = mode === 'hybrid' && cfg.fusion.method === 'rrf'
    // RRF terms depend on the pool value itself (an arm rank ≤ p), not only on which rows it admits.
    const fk = `${m}|${hl}|${fromLast}|${cfg.normalize}|${rrf ? `${p}|${cfg.fusion.rrfK}` : ''}`
    if (fk !== featKey) {
      featKey = fk
      fGen++
      sGen++
      age = fromLast ? ageU : ageC
      curHl = hl
      curRrf = rrf
      curP = p
      curK = cfg.fusion.rrfK
      // Min-max couples every row to the pool's extremes: compute the whole column; otherwise rows are computed
      // lazily (the loop below stops as soon as topK rows sort ahead, usually after a handful).
      if (cfg.normalize === 'minmax' && m > 0) {
        for (let i = 0; i < m; i++) computeFeatures(i)
        minmax(fs, m)
        minmax(fl, m)
        minmax(fr, m)
        minmax(fa, m)
        for (let i = 0; i < m; i++) computeTerms(i)
      }
    }
    const w = cfg.weights
    const sk = `${w.similarity}|${w.lexical}|${w.recency}|${w.salience}`
    if (sk !== scoreKey) {
      scoreKey = sk
      sGen++
      ws = w.similarity
      wl = w.lexical
      wr = w.recency
      wa = w.salience
    }
    ensure(ti)
    const minSim = cfg.minSimilarity
    if (minSim !== null && !(simRaw[ti] >= minSim)) return false
    const floor = cfg.floor
    if (floor !== null && score[ti] < floor) return false
    const floorFirst = cfg.gateOrder !== 'topk-then-floor'
    const newest = (cfg.tieBreak ?? 'newest') === 'newest'
    const st = score[ti]
    const ft = fs[ti]
    const ot = order[ti]
    const at = ageC[ti]
    const idt = ids[ti]
    /** rerank's comparator: does row j sort before the target? */
    const before = (j: number): boolean => {
      if (byOrder) {
        if (order[j] !== ot) return order[j] < ot
      } else {
        if (score[j] !== st) return score[j] > st
        if (fs[j] !== ft) return fs[j] > ft
      }
      if (ageC[j] !== at) return newest ? ageC[j] < at : ageC[j] > at
      return ids[j] < idt
    }
    const budget = cfg.tokenBudget
    const ahead: number[] = []
    let count = 0
    const topK = cfg.topK
    if (topK <= 0) return false
    for (let j = 0; j < m; j++) {
      if (j === ti) continue
      if (minSim !== null && !(simRaw[j] >= minSim)) continue
      ensure(j)
      if (floorFirst && floor !== null && score[j] < floor) continue
      if (!before(j)) continue
      if (++count >= topK) return false
      if (budget !== null) ahead.push(j)
    }
    if (budget !== null) {
      const est = cfg.tokenEstimator
      if (tokKey !== est) {
        for (let i = 0; i < n; i++) {
          const c = byNeed[i].c
          tokens[i] = estimateTokensFromLength(c.textLength, c.textBytes ?? c.textLength, est)
        }
        tokKey = est
      }
      // The budget walks the survivors in injected order: only the rows ahead of the target matter.
      let rows = ahead
      if (!floorFirst && floor !== null) rows = rows.filter((j) => score[j] >= floor)
      rows.sort((a, b) => {
        if (byOrder) {
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
      if (!(used + tokens[ti] <= budget || (cfg.atLeastOne && kept === 0))) return false
    }
    // Dedupe drops live-transcript rows after selection.
    if (excluded[ti]) return false
    const ex = cfg.scope.excludeIds
    if (ex && ex.includes(idt)) return false
    return true
  }
}
