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
 * that injects is re-ranked for real. The rows' scores the breakpoints come from are the
 * check's own columns (no re-rank of the pool), and the values are walked lazily,
 * nearest batch first (knobValues.ts): a search that stops after a few hundred values
 * never sorts, or bisects, the thousands further out. Same values tried in the same order
 * as a full re-rank per value over the fully sorted list (`fast: false`, the reference in
 * knobs.test.ts), so the same answer: a 5,000-row pool went from ~1 min to milliseconds.
 *
 * One search per kind of knob (linear weights, half-life roots, gates, integer knobs)
 * behind one entry point, sharing one Search (pools, rows, re-rank count); what does not
 * depend on the config (the rows sorted by admitting pool, the check, the half-life grid)
 * is a KnobContext that the single-knob search and the pair search (knobPairs.ts) share.
 */
import { inPool, rerank } from '../../shared/scoring'
import { createInjectChecker, type InjectChecker } from './injectCheck'
import { cannotInject, Floats, linearBreakpoints, rowsFromColumns, rowsFromRerank, type Grids, type Rows } from './knobRows'
import { halfLifeStream, halfLifeValues, nearestValues, sortedValues, type Distance, type ValueStream } from './knobValues'
import { KNOBS, type KnobChange, type KnobName, type KnobResult } from '../../shared/trace'
import type { CandidateRaw, EffectiveMode, FeatureName, RecallConfig } from '../../shared/types'

const NUDGE = 1e-7

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
  /** What every search for this target over these candidates shares (createKnobContext); made here when absent. */
  context?: KnobContext
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

/**
 * What every knob search for one target over one candidate list shares, whatever the config:
 * the rows by their smallest admitting pool, the exact check, the half-life grid.
 */
export interface KnobContext {
  readonly candidates: readonly CandidateRaw[]
  readonly mode: EffectiveMode
  readonly target: string
  /** the candidates an arm of the mode ranked, by the smallest pool that admits them (a pool of p is a prefix) */
  readonly byNeed: { c: CandidateRaw; need: number }[]
  /** the exact injected-or-not check; null with a blend group (every tried value is then re-ranked) */
  readonly checker: InjectChecker | null
  /** per recency source: byNeed's ages and their powers on the half-life grid, made when first needed */
  readonly grids: Grids
}

/** The shared part of every knob search for `target` over `candidates` under `mode`. */
export function createKnobContext(candidates: readonly CandidateRaw[], mode: EffectiveMode, target: string): KnobContext {
  const byNeed = candidates
    .map((c) => ({ c, need: poolNeeded(c, mode) }))
    .filter((x): x is { c: CandidateRaw; need: number } => x.need !== null)
    .sort((a, b) => a.need - b.need)
  return { candidates, mode, target, byNeed, checker: createInjectChecker(byNeed, mode, target), grids: {} }
}

/** What one search shares across its knobs: the config, the pool, its rows, the check and the count of re-ranks. */
interface Search {
  config: RecallConfig
  mode: EffectiveMode
  target: string
  ctx: KnobContext
  /** the exact check decides tried values, walked lazily; false: the reference (a re-rank per value, every list sorted) */
  fast: boolean
  /** the rows in the current pool (everything but candidatePool keeps it: re-rank only its rows, same answer) */
  pool: CandidateRaw[]
  maxEval: number
  /** a knob's walk stops at the first value whose normalized change is above this (the pair search's bound) */
  maxNormalized: number
  /** skip the walk of a knob that provably cannot inject the target (cannotInject; the pair search's inner searches) */
  shortcut: boolean
  /** injected ids under the config: read only to describe a found change (fast: re-ranked when first read) */
  baseline: string[] | null
  rows: Rows | null
  evaluations: number
  /** the config the check reads for the knob being walked (probeConfig) */
  probe: { knob: KnobName; config: RecallConfig } | null
}

export function searchKnobs(inp: KnobSearchInput): KnobSearch {
  const { s, knobs, best } = runSearch(inp, Infinity, false)
  return { knobs, best, baseline: baselineOf(s), evaluations: s.evaluations }
}

/**
 * One knob search for the pair search (knobPairs.ts): its best change and count only. A knob's walk
 * stops past `maxNormalized` (a second change that large cannot make a cheaper pair), and a knob
 * that provably cannot inject the target is not walked (cannotInject): the same best change.
 */
export function searchSecondKnob(inp: KnobSearchInput, maxNormalized: number): { best: KnobChange | null; evaluations: number } {
  const { s, best } = runSearch(inp, maxNormalized, true)
  return { best, evaluations: s.evaluations }
}

function runSearch(inp: KnobSearchInput, maxNormalized: number, shortcut: boolean): { s: Search; knobs: KnobResult[]; best: KnobChange | null } {
  const { config, mode, target } = inp
  const all = inp.candidates
  const ctx =
    inp.context && inp.context.candidates === all && inp.context.mode === mode && inp.context.target === target
      ? inp.context
      : createKnobContext(all, mode, target)
  const s: Search = {
    config,
    mode,
    target,
    ctx,
    fast: inp.fast !== false && ctx.checker !== null,
    pool: all.filter((c) => inPool(c, mode, config.candidatePool)),
    maxEval: inp.maxEvaluations ?? 3000,
    maxNormalized,
    shortcut,
    baseline: null,
    rows: null,
    evaluations: 0,
    probe: null,
  }
  let included: boolean
  if (s.fast) {
    s.evaluations++ // counted as the reference counts its base re-rank
    included = ctx.checker!.check(config)
  } else {
    const base = runOutcome(s, config)
    s.baseline = base.ids
    included = base.included
  }
  const knobs: KnobResult[] = []
  const names = inp.knobs ?? KNOBS.map((k) => k.knob)
  if (included) {
    for (const k of names) knobs.push({ knob: k, current: getKnob(config, k), change: null, reason: 'already injected', evaluations: 0 })
    return { s, knobs, best: null }
  }
  s.rows = s.fast ? rowsFromColumns(ctx.checker!.poolColumns(config), ctx.byNeed, ctx.grids) : rowsFromRerank(s.pool, config, mode, target)
  for (const k of names) knobs.push(searchKnob(s, k))
  let best: KnobChange | null = null
  for (const r of knobs) if (r.change && (!best || r.change.normalized < best.normalized)) best = r.change
  return { s, knobs, best }
}

/** The injected ids under the search's config (the fast path re-ranks for them only when asked). */
function baselineOf(s: Search): string[] {
  if (s.baseline === null) s.baseline = rerank(s.pool, s.config, s.mode).results.map((x) => x.id)
  return s.baseline
}

/** The rows a pool of `p` admits (byNeed is sorted by need: a binary search). */
function rowsUpTo(s: Search, p: number): CandidateRaw[] {
  const byNeed = s.ctx.byNeed
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
  const baseline = baselineOf(s)
  const was = new Set(baseline)
  return {
    knob: k,
    from,
    to,
    delta: to - (from ?? 0),
    normalized: normalizedChange(k, from, to),
    rank: o.rank,
    pushedOut: baseline.filter((id) => !now.has(id)),
    pulledIn: o.ids.filter((id) => !was.has(id) && id !== s.target),
    verified: null,
  }
}

/** One tried value: the exact check rejects it cheaply (null), else the real re-rank gives the outcome. */
function tryKnobValue(s: Search, k: KnobName, v: number): Outcome | null {
  if (s.fast) {
    s.evaluations++
    if (!s.ctx.checker!.check(probeConfig(s, k, v))) return null
    s.evaluations-- // counted once: the re-rank below
  }
  return runOutcome(s, setKnob(s.config, k, v), k === 'candidatePool' ? rowsUpTo(s, v) : s.pool)
}

/**
 * The config with knob `k` at `v`, for the check only: one copy per knob, its field overwritten
 * for each value (a fresh config per tried value was a tenth of a search's time). setKnob copies
 * the object holding the knob, so the search's own config is never written.
 */
function probeConfig(s: Search, k: KnobName, v: number): RecallConfig {
  const p = s.probe
  if (!p || p.knob !== k) {
    s.probe = { knob: k, config: setKnob(s.config, k, v) }
    return s.probe.config
  }
  const c = p.config
  switch (k) {
    case 'weights.similarity':
    case 'weights.lexical':
    case 'weights.recency':
    case 'weights.salience':
      c.weights[k.slice(8) as FeatureName] = v
      break
    case 'recency.halfLifeHours':
      c.recency.halfLifeHours = v
      break
    case 'floor':
      c.floor = v
      break
    case 'minSimilarity':
      c.minSimilarity = v
      break
    default:
      c[k] = v
  }
  return c
}

/** The values in the search's order: lazily (fast) or fully sorted (the reference); the same order either way. */
function ordered(s: Search, values: ArrayLike<number>, count: number, cur: number | null, dist: Distance): ValueStream {
  return s.fast ? nearestValues(values, count, cur, dist) : sortedValues(values, count, cur, dist)
}

/** Walk values nearest-first; the first that injects the target wins, then a rounder value near it if that also injects. */
function tryValues(s: Search, k: KnobName, values: ValueStream, cur: number | null, round?: (v: number) => number[], cap = s.maxEval): KnobResult {
  const sp = spec(k)
  const bounded = s.maxNormalized < Infinity
  let n = 0
  for (let v = values.next(); v !== undefined; v = values.next()) {
    if (n >= cap) return { knob: k, current: cur, change: null, reason: `not found within ${cap} tries`, evaluations: n }
    // Farther values cost more (the walk is by distance): none from here on can be cheap enough.
    if (bounded && normalizedChange(k, cur, v) > s.maxNormalized) return { knob: k, current: cur, change: null, reason: 'no cheaper change', evaluations: n }
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

/** The largest value the topK walk tries: one above the current per value, at most the cap's worth, never past the pool. */
function topKMax(s: Search, cur: number | null): number {
  return Math.min(100_000, s.pool.length, (cur ?? 0) + s.maxEval)
}

/** One knob's search, by its kind (see the file's comment). */
function searchKnob(s: Search, k: KnobName): KnobResult {
  const cur = getKnob(s.config, k)
  if (k === 'candidatePool') return searchPool(s, cur)
  const rows = s.rows!
  if (rows.target < 0)
    return { knob: k, current: cur, change: null, reason: 'not in the candidate pool: only candidatePool (or scope) changes reach it', evaluations: 0 }
  if (s.shortcut && s.fast && cannotInject(rows, s.config, s.mode, k, cur, topKMax(s, cur), s.ctx.byNeed))
    return { knob: k, current: cur, change: null, reason: 'enough rows stay ahead of it over the whole range', evaluations: 0 }
  const sp = spec(k)
  const lin = (v: number) => Math.abs(v - (cur ?? sp.lo))
  if (k.startsWith('weights.')) return searchWeight(s, rows, k, cur, lin)
  if (k === 'recency.halfLifeHours') return searchHalfLife(s, rows, cur)
  if (k === 'floor') return searchFloor(s, rows, cur, lin)
  if (k === 'minSimilarity') return searchMinSimilarity(s, rows, cur, lin)
  if (k === 'topK') {
    const vals: number[] = []
    for (let v = (cur ?? 0) + 1; v <= Math.min(100_000, s.pool.length); v++) vals.push(v)
    const res = tryValues(s, k, ordered(s, vals, vals.length, cur, lin), cur)
    if (!res.change) res.reason = 'a larger topK does not inject it (another gate drops it)'
    return res
  }
  return searchTokenBudget(s, cur, lin)
}

/** candidatePool: membership changes only at a row's smallest admitting pool; a pool below the target's own cannot inject it. */
function searchPool(s: Search, cur: number | null): KnobResult {
  const { target, mode, config } = s
  if (s.shortcut && s.fast && s.rows!.target >= 0 && cannotInject(s.rows!, s.config, s.mode, 'candidatePool', cur, 0, s.ctx.byNeed))
    return { knob: 'candidatePool', current: cur, change: null, reason: 'enough rows stay ahead of it in every pool', evaluations: 0 }
  const all = s.ctx.candidates
  const tc = all.find((c) => c.id === target)
  const own = tc ? poolNeeded(tc, mode) : null
  const ranks = new Set<number>()
  const rrf = mode === 'hybrid' && config.fusion.method === 'rrf'
  if (config.normalize === 'none' && !rrf && own !== null) {
    // Scores do not depend on the pool here: a larger pool only adds competitors, so above the
    // target's own admitting pool nothing can help; below the current pool, fewer competitors can.
    ranks.add(own)
    for (const x of s.ctx.byNeed) if (x.need >= own && x.need < (cur ?? 0)) ranks.add(x.need)
  } else {
    // RRF (rank terms) and min-max (pool-relative features) couple every row to the pool: try the
    // pools where membership changes, nearest first, within the evaluation cap.
    for (const x of s.ctx.byNeed) if (x.need <= 100_000 && (own === null || x.need >= own)) ranks.add(x.need)
  }
  const vals = [...ranks]
  const res = tryValues(
    s,
    'candidatePool',
    ordered(s, vals, vals.length, cur, (v) => Math.abs(Math.log(v / (cur ?? 1)))),
    cur,
    undefined,
    300,
  )
  if (!res.change)
    res.reason = all.some((c) => c.id === target)
      ? 'no pool size injects it (other gates or competitors keep it out)'
      : 'no arm ranked it within the fetched depth'
  return res
}

/** A weight: the breakpoints of the target's line against every row's and the floor's, nudged to both sides. */
function searchWeight(s: Search, rows: Rows, k: KnobName, cur: number | null, lin: (v: number) => number): KnobResult {
  const sp = spec(k)
  const f = k.slice(8) as FeatureName
  const hi = Math.max(sp.hi, cur ?? 0)
  const raw = linearBreakpoints(rows, f, s.config, s.mode)
  const values = new Floats()
  for (let i = 0; i < raw.n; i++) {
    const v = raw.a[i]
    if (!(v >= sp.lo - NUDGE && v <= hi + NUDGE)) continue
    values.pushIn(v - NUDGE, sp.lo, hi)
    values.pushIn(v, sp.lo, hi)
    values.pushIn(v + NUDGE, sp.lo, hi)
  }
  values.push(sp.lo)
  values.push(hi)
  const res = tryValues(s, k, ordered(s, values.a, values.n, cur, lin), cur, roundAway(cur))
  if (!res.change) res.reason = `no ${f} weight in [${sp.lo}, ${hi}] injects it`
  return res
}

/** The recency half-life: the crossings found by scan and bisection (knobValues.ts), nearest on a log scale. */
function searchHalfLife(s: Search, rows: Rows, cur: number | null): KnobResult {
  const k: KnobName = 'recency.halfLifeHours'
  const config = s.config
  if (config.weights.recency === 0)
    return { knob: k, current: cur, change: null, reason: 'the recency weight is 0: the half-life has no effect', evaluations: 0 }
  const sp = spec(k)
  const h0 = config.recency.halfLifeHours
  const minmax = config.normalize === 'minmax'
  const hl = { n: rows.n, target: rows.target, score: rows.score, grid: rows.grid(config.recency.from === 'last_used') }
  const logd = (v: number) => Math.abs(Math.log(v / (cur as number)))
  let values: ValueStream
  if (s.fast) values = halfLifeStream(hl, config.weights.recency, h0, config.floor, minmax, cur as number)
  else {
    const all = halfLifeValues(hl, config.weights.recency, h0, config.floor, minmax)
    values = sortedValues(all, all.length, cur, logd)
  }
  const res = tryValues(s, k, values, cur, (v) => {
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
function searchFloor(s: Search, rows: Rows, cur: number | null, lin: (v: number) => number): KnobResult {
  if (cur === null) return { knob: 'floor', current: cur, change: null, reason: 'no floor is set (raising one cannot add a memory)', evaluations: 0 }
  const vals = new Floats()
  let min = spec('floor').lo
  for (let i = 0; i < rows.n; i++) {
    const sc = rows.score[i]
    vals.push(sc)
    vals.push(sc - NUDGE)
    vals.push(sc + NUDGE)
    min = Math.min(min, sc, sc - NUDGE, sc + NUDGE)
  }
  vals.push(min)
  const below = new Floats()
  for (let i = 0; i < vals.n; i++) if (vals.a[i] < cur) below.push(vals.a[i])
  const res = tryValues(s, 'floor', ordered(s, below.a, below.n, cur, lin), cur, roundAway(cur))
  if (!res.change) res.reason = 'lowering the floor does not inject it'
  return res
}

/** minSimilarity: the pool's similarities are the breakpoints. */
function searchMinSimilarity(s: Search, rows: Rows, cur: number | null, lin: (v: number) => number): KnobResult {
  const vals = new Floats()
  vals.push(-1)
  for (let i = 0; i < rows.n; i++) {
    const sim = rows.simRaw[i]
    if (Number.isNaN(sim)) continue
    vals.pushIn(sim, -1, 1)
    vals.pushIn(sim - NUDGE, -1, 1)
    vals.pushIn(sim + NUDGE, -1, 1)
  }
  const res = tryValues(s, 'minSimilarity', ordered(s, vals.a, vals.n, cur, lin), cur, roundAway(cur))
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
  const above = vals.filter((v) => v > cur)
  const res = tryValues(s, k, ordered(s, above, above.length, cur, lin), cur)
  if (!res.change) res.reason = 'no larger budget injects it'
  return res
}
