/**
 * The smallest single change that brings a memory into the injected set: each
 * knob searched alone over its range (src/shared/trace.ts KNOBS), every
 * candidate value checked with the real scoring (`rerank`) on the same
 * candidates. Pure: no store, no clock.
 *
 * Where the answer is exact:
 *  - weights: a composite is linear in one weight (score_j(w) = score_j + (w − w₀)·term_j,
 *    term = the feature, or the RRF rank term), so the target's fate can only change
 *    where its line crosses another row's line or a row's line crosses the floor.
 *    Those breakpoints are computed; each is tried exactly and nudged (±1e-7) to
 *    both sides, nearest first. (Overflow `skip` budgets and Engram's blend also
 *    depend on the order of the rows above the target: their pairwise crossings
 *    are added when the pool has ≤ 200 rows.)
 *  - half-life: recency 0.5^(age/h) is not linear in h; the crossings of the
 *    target with each row (and of each row with the floor) are found by a 64-point
 *    log-grid scan + bisection per pair, then tried like the weights'. With
 *    min-max normalisation the features couple, and a 240-point grid is scanned.
 *  - floor / minSimilarity: the rows' scores / similarities are the breakpoints.
 *  - topK, token budget, candidatePool: integers, scanned upward from the current
 *    value (budget over the running token totals of the injected order). The pool
 *    changes membership only at each row's smallest admitting pool; when scores do
 *    not depend on the pool (no min-max, no RRF) a pool above the target's own only
 *    adds competitors, so that one value (and smaller pools) are tried; otherwise
 *    the membership changes nearest first, at most 300.
 * A found value is then rounded to a readable one (3 decimals, else 4, away from
 * the current value) when that still injects the memory.
 *
 * Each tried value is decided by an exact O(n) injected-or-not check over the known
 * features (injectCheck.ts: the target's own gates, the rows that sort ahead of it,
 * the budget walk over those), which stops as soon as topK rows are ahead; only a value
 * that injects is re-ranked for real. Same values tried in the same order as a full
 * re-rank per value (`fast: false`, the reference in knobs.test.ts), so the same answer:
 * a 5,000-row pool went from ~1 min to well under a second.
 *
 * One search per kind of knob (linear weights, half-life roots, gates, integer knobs)
 * behind one entry point, sharing one Search (pools, base ranking, re-rank count).
 */
import { inPool, rerank } from '../../shared/scoring'
import { makeInjectCheck } from './injectCheck'
import { KNOBS, type KnobChange, type KnobName, type KnobResult } from '../../shared/trace'
import type { CandidateRaw, EffectiveMode, FeatureName, RecallConfig } from '../../shared/types'

const NUDGE = 1e-7
const HOUR = 3_600_000

export interface KnobSearchInput {
  candidates: readonly CandidateRaw[]
  config: RecallConfig
  mode: EffectiveMode
  target: string
  /** @default every knob in KNOBS */
  knobs?: readonly KnobName[]
  /** Re-ranks tried per knob, at most. @default 3000 */
  maxEvaluations?: number
  /**
   * Decide each tried value with the exact O(n) injected-or-not check (injectCheck.ts) and
   * re-rank only the value that injects. `false` re-ranks every tried value (the reference
   * the fast path is tested against). @default true
   */
  fast?: boolean
}

export interface KnobSearch {
  knobs: KnobResult[]
  /** smallest `normalized` change among the knobs that inject the target (not verified here) */
  best: KnobChange | null
  /** injected ids under the current config */
  baseline: string[]
  evaluations: number
}

export function getKnob(c: RecallConfig, k: KnobName): number | null {
  switch (k) {
    case 'weights.similarity':
    case 'weights.lexical':
    case 'weights.recency':
    case 'weights.salience':
      return c.weights[k.slice(8) as FeatureName]
    case 'recency.halfLifeHours':
      return c.recency.halfLifeHours
    case 'floor':
      return c.floor
    case 'minSimilarity':
      return c.minSimilarity
    case 'topK':
      return c.topK
    case 'tokenBudget':
      return c.tokenBudget
    case 'candidatePool':
      return c.candidatePool
  }
}

/** A copy of the config with one knob set. */
export function setKnob(c: RecallConfig, k: KnobName, v: number): RecallConfig {
  switch (k) {
    case 'weights.similarity':
    case 'weights.lexical':
    case 'weights.recency':
    case 'weights.salience':
      return { ...c, weights: { ...c.weights, [k.slice(8)]: v } }
    case 'recency.halfLifeHours':
      return { ...c, recency: { ...c.recency, halfLifeHours: v } }
    case 'floor':
      return { ...c, floor: v }
    case 'minSimilarity':
      return { ...c, minSimilarity: v }
    case 'topK':
      return { ...c, topK: v }
    case 'tokenBudget':
      return { ...c, tokenBudget: v }
    case 'candidatePool':
      return { ...c, candidatePool: v }
  }
}

const spec = (k: KnobName) => KNOBS.find((x) => x.knob === k)!

/** A change on the knob's range: linear |Δ|/(hi−lo), log |ln(to/from)|/ln(hi/lo). From `null` (off) counts from the range's low end. */
export function normalizedChange(k: KnobName, from: number | null, to: number): number {
  const s = spec(k)
  if (s.scale === 'linear') return Math.abs(to - (from ?? s.lo)) / (s.hi - s.lo)
  const a = Math.max(from ?? s.lo, s.lo > 0 ? s.lo : 1e-9)
  const b = Math.max(to, s.lo > 0 ? s.lo : 1e-9)
  return Math.abs(Math.log(b / a)) / Math.log(s.hi / s.lo)
}

/** The smallest candidatePool that puts a candidate in the pool under a mode (null: no arm of the mode ranked it). */
export function poolNeeded(c: CandidateRaw, mode: EffectiveMode): number | null {
  const min = (...xs: (number | null | undefined)[]) => {
    const v = xs.filter((x): x is number => typeof x === 'number')
    return v.length ? Math.min(...v) : null
  }
  switch (mode) {
    case 'dense':
      return c.denseRank
    case 'lexical':
      return c.lexicalRank
    case 'hybrid':
      return min(c.denseRank, c.lexicalRank)
    case 'recency':
      return c.recencyRank
    case 'session':
    case 'keyword':
      return c.orderKey ?? null
    case 'none':
      return null
  }
}

interface Outcome {
  included: boolean
  rank: number
  ids: string[]
}

/** What one search shares across its knobs: the pools, the base ranking, the exact check and the count of re-ranks. */
interface Search {
  config: RecallConfig
  mode: EffectiveMode
  target: string
  all: readonly CandidateRaw[]
  /** the rows in the current pool (everything but candidatePool keeps it: re-rank only its rows, same answer) */
  pool: CandidateRaw[]
  /** for candidatePool: rows by the smallest pool that admits them, so a pool of p re-ranks only its members */
  byNeed: { c: CandidateRaw; need: number }[]
  check: ReturnType<typeof makeInjectCheck> | null
  maxEval: number
  baseline: string[]
  rows: Map<string, RowInfo>
  targetInPool: boolean
  evaluations: number
}

export function searchKnobs(inp: KnobSearchInput): KnobSearch {
  const { config, mode, target } = inp
  const all = inp.candidates
  const pool = all.filter((c) => inPool(c, mode, config.candidatePool))
  const byNeed = all
    .map((c) => ({ c, need: poolNeeded(c, mode) }))
    .filter((x): x is { c: CandidateRaw; need: number } => x.need !== null)
    .sort((a, b) => a.need - b.need)
  const check = inp.fast === false ? null : makeInjectCheck(byNeed, config, mode, target)
  const s: Search = {
    config,
    mode,
    target,
    all,
    pool,
    byNeed,
    check,
    maxEval: inp.maxEvaluations ?? 3000,
    baseline: [],
    rows: new Map(),
    targetInPool: false,
    evaluations: 0,
  }
  const base = runOutcome(s, config)
  s.baseline = base.ids
  const knobs: KnobResult[] = []
  const names = inp.knobs ?? KNOBS.map((k) => k.knob)
  if (base.included) {
    for (const k of names) knobs.push({ knob: k, current: getKnob(config, k), change: null, reason: 'already injected', evaluations: 0 })
    return { knobs, best: null, baseline: s.baseline, evaluations: s.evaluations }
  }
  const baseRows = rerank(pool, config, mode)
  for (const r of [...baseRows.results, ...baseRows.dropped]) s.rows.set(r.id, { score: r.score, f: r.features, fused: r.fused })
  s.targetInPool = s.rows.has(target)
  for (const k of names) knobs.push(searchKnob(s, k))
  let best: KnobChange | null = null
  for (const r of knobs) if (r.change && (!best || r.change.normalized < best.normalized)) best = r.change
  return { knobs, best, baseline: s.baseline, evaluations: s.evaluations }
}

/** The rows a pool of `p` admits (byNeed is sorted by need: a binary search). */
function rowsUpTo(s: Search, p: number): CandidateRaw[] {
  const byNeed = s.byNeed
  let lo = 0
  let hi = byNeed.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (byNeed[mid].need <= p) lo = mid + 1
    else hi = mid
  }
  return byNeed.slice(0, lo).map((x) => x.c)
}

/** One real re-rank (counted): is the target injected, at which rank, and the injected ids. */
function runOutcome(s: Search, cfg: RecallConfig, cands: readonly CandidateRaw[] = s.pool): Outcome {
  s.evaluations++
  const r = rerank(cands, cfg, s.mode)
  const i = r.results.findIndex((x) => x.id === s.target)
  return { included: i >= 0, rank: i + 1, ids: r.results.map((x) => x.id) }
}

/** A found change with what it pushes out of and pulls into the injected set. */
function describeChange(s: Search, k: KnobName, from: number | null, to: number, o: Outcome): KnobChange {
  const now = new Set(o.ids)
  const was = new Set(s.baseline)
  return {
    knob: k,
    from,
    to,
    delta: to - (from ?? 0),
    normalized: normalizedChange(k, from, to),
    rank: o.rank,
    pushedOut: s.baseline.filter((id) => !now.has(id)),
    pulledIn: o.ids.filter((id) => !was.has(id) && id !== s.target),
    verified: null,
  }
}

/** One tried value: the exact check rejects it cheaply (null), else the real re-rank gives the outcome. */
function tryKnobValue(s: Search, k: KnobName, v: number): Outcome | null {
  const cfg = setKnob(s.config, k, v)
  if (s.check) {
    s.evaluations++
    if (!s.check(cfg)) return null
    s.evaluations-- // counted once: the re-rank below
  }
  return runOutcome(s, cfg, k === 'candidatePool' ? rowsUpTo(s, v) : s.pool)
}

/** Try values nearest-first; the first that injects the target wins, then a rounder value near it if that also injects. */
function tryValues(
  s: Search,
  k: KnobName,
  values: number[],
  cur: number | null,
  dist: (v: number) => number,
  round?: (v: number) => number[],
  cap = s.maxEval,
): KnobResult {
  const sp = spec(k)
  // Nearest first (ties: smaller value first); each value's distance computed once, not per comparison.
  const uniq = [...new Set(values.filter((v) => Number.isFinite(v) && v !== cur))]
    .map((v) => ({ v, d: dist(v) }))
    .sort((a, b) => a.d - b.d || a.v - b.v)
    .map((x) => x.v)
  let n = 0
  for (const v of uniq) {
    if (n >= cap) return { knob: k, current: cur, change: null, reason: `not found within ${cap} tries`, evaluations: n }
    n++
    const o = tryKnobValue(s, k, v)
    if (!o?.included) continue
    for (const nice of round?.(v) ?? []) {
      if (nice === v || !Number.isFinite(nice) || (sp.integer && !Number.isInteger(nice))) continue
      n++
      const o2 = tryKnobValue(s, k, nice)
      if (o2?.included) return { knob: k, current: cur, change: describeChange(s, k, cur, nice, o2), reason: null, evaluations: n }
    }
    return { knob: k, current: cur, change: describeChange(s, k, cur, v, o), reason: null, evaluations: n }
  }
  return { knob: k, current: cur, change: null, reason: null, evaluations: n }
}

/** Readable values near `v` (3 decimals, else 4), rounded away from the current value. */
function roundAway(cur: number | null): (v: number) => number[] {
  return (v) => {
    const out: number[] = []
    for (const d of [3, 4]) {
      const f = 10 ** d
      const up = cur === null || v > cur
      out.push(up ? Math.ceil(v * f - 1e-9) / f : Math.floor(v * f + 1e-9) / f)
    }
    return out
  }
}

/** One knob's search, by its kind (see the file's comment). */
function searchKnob(s: Search, k: KnobName): KnobResult {
  const cur = getKnob(s.config, k)
  if (k === 'candidatePool') return searchPool(s, cur)
  if (!s.targetInPool)
    return { knob: k, current: cur, change: null, reason: 'not in the candidate pool: only candidatePool (or scope) changes reach it', evaluations: 0 }
  const sp = spec(k)
  const lin = (v: number) => Math.abs(v - (cur ?? sp.lo))
  if (k.startsWith('weights.')) return searchWeight(s, k, cur, lin)
  if (k === 'recency.halfLifeHours') return searchHalfLife(s, cur)
  if (k === 'floor') return searchFloor(s, cur, lin)
  if (k === 'minSimilarity') return searchMinSimilarity(s, cur, lin)
  if (k === 'topK') {
    const vals: number[] = []
    for (let v = (cur ?? 0) + 1; v <= Math.min(100_000, s.pool.length); v++) vals.push(v)
    const res = tryValues(s, k, vals, cur, lin)
    if (!res.change) res.reason = 'a larger topK does not inject it (another gate drops it)'
    return res
  }
  return searchTokenBudget(s, cur, lin)
}

/** candidatePool: membership changes only at a row's smallest admitting pool; a pool below the target's own cannot inject it. */
function searchPool(s: Search, cur: number | null): KnobResult {
  const { all, target, mode, config } = s
  const tc = all.find((c) => c.id === target)
  const own = tc ? poolNeeded(tc, mode) : null
  const ranks = new Set<number>()
  const rrf = mode === 'hybrid' && config.fusion.method === 'rrf'
  if (config.normalize === 'none' && !rrf && own !== null) {
    // Scores do not depend on the pool here: a larger pool only adds competitors, so above the
    // target's own admitting pool nothing can help; below the current pool, fewer competitors can.
    ranks.add(own)
    for (const x of s.byNeed) if (x.need >= own && x.need < (cur ?? 0)) ranks.add(x.need)
  } else {
    // RRF (rank terms) and min-max (pool-relative features) couple every row to the pool: try the
    // pools where membership changes, nearest first, within the evaluation cap.
    for (const x of s.byNeed) if (x.need <= 100_000 && (own === null || x.need >= own)) ranks.add(x.need)
  }
  const res = tryValues(s, 'candidatePool', [...ranks], cur, (v) => Math.abs(Math.log(v / (cur ?? 1))), undefined, 300)
  if (!res.change)
    res.reason = all.some((c) => c.id === target)
      ? 'no pool size injects it (other gates or competitors keep it out)'
      : 'no arm ranked it within the fetched depth'
  return res
}

/** A weight: the breakpoints of the target's line against every row's and the floor's, nudged to both sides. */
function searchWeight(s: Search, k: KnobName, cur: number | null, lin: (v: number) => number): KnobResult {
  const sp = spec(k)
  const f = k.slice(8) as FeatureName
  const hi = Math.max(sp.hi, cur ?? 0)
  const values = linearBreakpoints(s.rows, s.target, f, s.config, s.mode)
    .filter((v) => v >= sp.lo - NUDGE && v <= hi + NUDGE)
    .flatMap((v) => [v - NUDGE, v, v + NUDGE])
    .filter((v) => v >= sp.lo && v <= hi)
  values.push(sp.lo, hi)
  const res = tryValues(s, k, values, cur, lin, roundAway(cur))
  if (!res.change) res.reason = `no ${f} weight in [${sp.lo}, ${hi}] injects it`
  return res
}

/** The recency half-life: the crossings found by scan and bisection (halfLifeCandidates), nearest on a log scale. */
function searchHalfLife(s: Search, cur: number | null): KnobResult {
  const k: KnobName = 'recency.halfLifeHours'
  if (s.config.weights.recency === 0)
    return { knob: k, current: cur, change: null, reason: 'the recency weight is 0: the half-life has no effect', evaluations: 0 }
  const sp = spec(k)
  const values = halfLifeCandidates(s.pool, s.rows, s.target, s.config)
  const logd = (v: number) => Math.abs(Math.log(v / (cur as number)))
  const res = tryValues(s, k, values, cur, logd, (v) => {
    const up = v > (cur as number)
    return [
      v >= 100 ? (up ? Math.ceil(v) : Math.floor(v)) : up ? Math.ceil(v * 10) / 10 : Math.floor(v * 10) / 10,
      up ? Math.ceil(v * 100) / 100 : Math.floor(v * 100) / 100,
    ]
  })
  if (!res.change) res.reason = `no half-life in [${sp.lo}, ${sp.hi}] h injects it`
  return res
}

/** The floor: the rows' scores are the breakpoints; only lowering can let a memory in. */
function searchFloor(s: Search, cur: number | null, lin: (v: number) => number): KnobResult {
  if (cur === null) return { knob: 'floor', current: cur, change: null, reason: 'no floor is set (raising one cannot add a memory)', evaluations: 0 }
  const vals: number[] = []
  for (const r of s.rows.values()) vals.push(r.score, r.score - NUDGE, r.score + NUDGE)
  vals.push(Math.min(spec('floor').lo, ...vals))
  const res = tryValues(
    s,
    'floor',
    vals.filter((v) => v < cur),
    cur,
    lin,
    roundAway(cur),
  )
  if (!res.change) res.reason = 'lowering the floor does not inject it'
  return res
}

/** minSimilarity: the pool's similarities are the breakpoints. */
function searchMinSimilarity(s: Search, cur: number | null, lin: (v: number) => number): KnobResult {
  const vals: number[] = [-1]
  for (const c of s.pool) if (c.similarity !== null) vals.push(c.similarity, c.similarity - NUDGE, c.similarity + NUDGE)
  const res = tryValues(
    s,
    'minSimilarity',
    vals.filter((v) => v >= -1 && v <= 1),
    cur,
    lin,
    roundAway(cur),
  )
  if (!res.change) res.reason = cur === null ? 'no minSimilarity gate injects it' : 'no minSimilarity in [-1, 1] injects it'
  return res
}

/** The token budget: the running token totals of the unbudgeted injected order up to the target. */
function searchTokenBudget(s: Search, cur: number | null, lin: (v: number) => number): KnobResult {
  const k: KnobName = 'tokenBudget'
  if (cur === null) return { knob: k, current: cur, change: null, reason: 'no token budget is set', evaluations: 0 }
  const open = rerank(s.pool, { ...s.config, tokenBudget: null }, s.mode)
  s.evaluations++
  const at = open.results.findIndex((r) => r.id === s.target)
  if (at < 0) return { knob: k, current: cur, change: null, reason: 'the budget is not what drops it: another gate does', evaluations: 1 }
  const vals: number[] = []
  let sum = 0
  for (let i = 0; i <= at; i++) {
    sum += open.results[i].tokens
    if (sum > cur) vals.push(sum)
  }
  // skip overflow: a smaller earlier row may be skipped instead; also try the target's own size on top of the current budget
  vals.push(cur + open.results[at].tokens)
  const res = tryValues(
    s,
    k,
    vals.filter((v) => v > cur),
    cur,
    lin,
  )
  if (!res.change) res.reason = 'no larger budget injects it'
  return res
}

type RowInfo = { score: number; f: Record<FeatureName, number>; fused?: { dense: number; lexical: number } }

/** Where, as one weight moves, the target's line crosses another row's line or any row's line crosses the floor. */
function linearBreakpoints(rows: Map<string, RowInfo>, target: string, f: FeatureName, config: RecallConfig, mode: EffectiveMode): number[] {
  const rrf = mode === 'hybrid' && config.fusion.method === 'rrf'
  const w0 = config.weights[f]
  const slope = (r: RowInfo) => (rrf && f === 'similarity' ? (r.fused?.dense ?? 0) : rrf && f === 'lexical' ? (r.fused?.lexical ?? 0) : r.f[f])
  const t = rows.get(target)!
  const st = slope(t)
  const out: number[] = []
  const list = [...rows.values()]
  for (const r of list) {
    if (r === t) continue
    const d = st - slope(r)
    if (d !== 0) out.push(w0 + (r.score - t.score) / d)
  }
  if (config.floor !== null) for (const r of list) if (slope(r) !== 0) out.push(w0 + (config.floor - r.score) / slope(r))
  if ((config.overflow === 'skip' && config.tokenBudget !== null) || config.scope.blendUserId) {
    if (list.length <= 200)
      for (let i = 0; i < list.length; i++)
        for (let j = i + 1; j < list.length; j++) {
          const d = slope(list[i]) - slope(list[j])
          if (d !== 0) out.push(w0 + (list[j].score - list[i].score) / d)
        }
  }
  return out
}

/** Half-lives where the target's score crosses another row's, or a row's crosses the floor (log-grid scan + bisection). */
function halfLifeCandidates(pool: readonly CandidateRaw[], rows: Map<string, RowInfo>, target: string, config: RecallConfig): number[] {
  const { lo, hi } = spec('recency.halfLifeHours')
  const lnLo = Math.log(lo)
  const lnHi = Math.log(hi)
  const out: number[] = []
  const h0 = config.recency.halfLifeHours
  if (config.normalize === 'minmax') {
    // Features couple through the normalisation: scan a fine grid instead.
    for (let i = 0; i <= 240; i++) out.push(Math.exp(lnLo + ((lnHi - lnLo) * i) / 240))
    return out
  }
  const fromLast = config.recency.from === 'last_used'
  const byId = new Map(pool.map((c) => [c.id, c]))
  const wr = config.weights.recency
  // score(h) = rest + wr · 0.5^(age/h)
  const fn = (id: string) => {
    const c = byId.get(id)!
    const r = rows.get(id)!
    const age = Math.max(0, fromLast ? c.ageLastUsedMs : c.ageCreatedMs) / HOUR
    const rest = r.score - wr * Math.pow(0.5, age / h0)
    return (h: number) => rest + wr * Math.pow(0.5, age / h)
  }
  const ft = fn(target)
  // The log grid, and the target's score on it, computed once (every pair scan reuses them).
  const N = 64
  const gridX: number[] = []
  const gridH: number[] = []
  for (let i = 0; i <= N; i++) {
    const x = i === 0 ? lnLo : lnLo + ((lnHi - lnLo) * i) / N
    gridX.push(x)
    gridH.push(Math.exp(x))
  }
  const ftGrid = gridH.map(ft)
  /** Sign changes of g over the grid (its values there given), each refined by bisection. */
  const roots = (g: (h: number) => number, gy: (i: number) => number) => {
    let prevX = lnLo
    let prevY = gy(0)
    for (let i = 1; i <= N; i++) {
      const x = gridX[i]
      const y = gy(i)
      if (prevY === 0) out.push(Math.exp(prevX))
      else if (Math.sign(y) !== Math.sign(prevY) && y !== 0) {
        let a = prevX
        let b = x
        let ya = prevY
        for (let k = 0; k < 50; k++) {
          const m = (a + b) / 2
          const ym = g(Math.exp(m))
          if (Math.sign(ym) === Math.sign(ya)) {
            a = m
            ya = ym
          } else b = m
        }
        out.push(Math.exp(a), Math.exp(b))
      }
      prevX = x
      prevY = y
    }
  }
  for (const id of rows.keys()) {
    const fo = fn(id)
    const foGrid = gridH.map(fo)
    if (id !== target)
      roots(
        (h) => ft(h) - fo(h),
        (i) => ftGrid[i] - foGrid[i],
      )
    if (config.floor !== null) {
      const floor = config.floor
      roots(
        (h) => fo(h) - floor,
        (i) => foGrid[i] - floor,
      )
    }
  }
  const withNudge: number[] = []
  for (const h of out) withNudge.push(h * (1 - 1e-6), h, h * (1 + 1e-6))
  withNudge.push(lo, hi)
  return withNudge.filter((h) => h >= lo && h <= hi)
}
