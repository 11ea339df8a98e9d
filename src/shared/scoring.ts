/**
 * The scoring math: candidates the engine gathered → features → weighted
 * contributions → composite → deterministic order → gates → results + dropped.
 *
 * Pure and allocation-light: the engine calls it once per recall, the renderer
 * calls it on every slider move with the trace's cached `candidates`, so a
 * weight, half-life, floor, topK, budget, fusion or candidatePool change never
 * waits on IPC (only a query, scope, model or unit change needs a round trip;
 * see `canRerankLocally`). 1,000 candidates re-rank in well under 2 ms
 * (`benchRerank`).
 *
 * Pipeline (docs/internals/design.md "Recall engine", steps 3–5):
 *  1. pool      — a candidate is in the pool when an arm of the effective mode
 *                 ranked it within `candidatePool` (hybrid: either arm).
 *  2. features  — similarity (cosine; null → 0), lexical (bm25 normalised by the
 *                 engine), recency = 0.5 ** (age / halfLife), salience; optional
 *                 per-query min-max normalisation (Generative Agents).
 *  3. composite — Σ wᵢ·featureᵢ. Hybrid + RRF: similarity / lexical contribute
 *                 through their arm-rank terms (k+1)/(k+rank) instead.
 *  4. order     — by composite (ties: similarity, then newest/oldest, then id), or
 *                 by the arm's own order in recency / session / keyword modes.
 *  5. gates     — minSimilarity → floor/topK in `gateOrder` → (Engram blend) →
 *                 token budget → dedupe against the live transcript.
 */
import type { CandidateRaw, EffectiveMode, Features, GateName, RecallConfig, RecallTrace, TraceDropped, TraceResult } from './types'

const HOUR_MS = 3_600_000

export interface Reranked {
  /** injected, in rank order */
  results: TraceResult[]
  /** every other pool member, by scoreRank, with the gate that removed it */
  dropped: TraceDropped[]
  /** ids that would get last_used_at = now (refreshOnRecall; memory units only) */
  refreshed: string[]
  /** sum of the injected results' token estimates */
  injectedTokens: number
  /** pool size */
  pool: number
}

/**
 * Which mode can actually run, given what the engine could measure.
 * Seeds: 002 falls back to keywords when the embedder is down; 004 returns an
 * empty result (never an error); hybrid keeps its lexical arm (seed 003 degradation).
 */
export function effectiveMode(config: RecallConfig, can: { dense: boolean; lexical: boolean }): EffectiveMode {
  switch (config.mode) {
    case 'session':
      return 'session'
    case 'recency':
      return 'recency'
    case 'dense':
      return can.dense ? 'dense' : config.keywordFallback ? 'keyword' : 'none'
    case 'lexical':
      return can.lexical ? 'lexical' : 'none'
    case 'hybrid':
      if (can.dense && can.lexical) return 'hybrid'
      if (can.dense) return 'dense'
      if (can.lexical) return 'lexical'
      return config.keywordFallback ? 'keyword' : 'none'
  }
}

/** Modes whose results follow an arm's own order rather than the composite score. */
export function isOrderMode(mode: EffectiveMode): boolean {
  return mode === 'recency' || mode === 'session' || mode === 'keyword'
}

/** Token estimate of one text length. ceil4 = ceil(len/4); neo = (bytes+3)/4 integer division (seed 004, Go's len() is bytes). */
export function estimateTokensFromLength(chars: number, bytes: number, estimator: RecallConfig['tokenEstimator']): number {
  return estimator === 'neo' ? Math.floor((bytes + 3) / 4) : Math.ceil(chars / 4)
}

/** UTF-8 byte length without allocating (works in the renderer, no Buffer). */
export function utf8Length(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** Token estimate of a text with the configured estimator. */
export function estimateTokens(text: string, estimator: RecallConfig['tokenEstimator']): number {
  return estimator === 'neo' ? Math.floor((utf8Length(text) + 3) / 4) : Math.ceil(text.length / 4)
}

/** recency = 0.5 ** (age / halfLife) (seed 003); negative ages (clock skew) count as 0. */
export function recencyOf(ageMs: number, halfLifeHours: number): number {
  return Math.pow(0.5, Math.max(0, ageMs) / (halfLifeHours * HOUR_MS))
}

/** Is a candidate in the wide net? An arm of the effective mode ranked it within the pool `p`. */
export function inPool(c: CandidateRaw, mode: EffectiveMode, p: number): boolean {
  switch (mode) {
    case 'dense':
      return c.denseRank !== null && c.denseRank <= p
    case 'lexical':
      return c.lexicalRank !== null && c.lexicalRank <= p
    case 'hybrid':
      return (c.denseRank !== null && c.denseRank <= p) || (c.lexicalRank !== null && c.lexicalRank <= p)
    case 'recency':
      return c.recencyRank !== null && c.recencyRank <= p
    case 'session':
    case 'keyword':
      return c.orderKey !== undefined && c.orderKey <= p
    case 'none':
      return false
  }
}

/** Internal working row (one per pool member). */
interface Row {
  c: CandidateRaw
  f: Features
  k: Features
  score: number
  order: number
  tokens: number
  gate: GateName | null
  scoreRank: number
  kept: boolean
  fused: { dense: number; lexical: number } | undefined
  /** a re-rank with `reuse`: this row's contributions and output, written again by each such call */
  kr: Features | undefined
  tr: TraceResult | undefined
  td: TraceDropped | undefined
}

/**
 * The rows of one candidate list under the knobs that shape them (pool, features, tokens, RRF terms), kept
 * between calls: a slider step re-ranks the same trace's candidates under new weights, floor or topK, which
 * change none of these. `primary` and `blend` keep the order of the last call, so the next sort starts from
 * a list that is nearly in order (a weight step moves few rows far). Ids are unique in a candidate list (the
 * comparator ends on the id), so the order sorted to does not depend on the order sorted from.
 */
interface RowCache {
  key: string
  rows: Row[]
  primary: Row[]
  blend: Row[]
  /** the output lists of the last re-rank with `reuse` */
  results: TraceResult[]
  dropped: TraceDropped[]
}

const rowCaches = new WeakMap<readonly CandidateRaw[], RowCache>()

/** What the rows depend on besides the candidates (everything but the weights, floor, topK, budget and gates). */
function rowKey(config: RecallConfig, mode: EffectiveMode): string {
  const rrf = mode === 'hybrid' && config.fusion.method === 'rrf'
  return `${mode}|${config.candidatePool}|${config.recency.halfLifeHours}|${config.recency.from}|${config.tokenEstimator}|${config.normalize}|${rrf ? config.fusion.rrfK : '-'}`
}

/** The candidates' rows for this config (built, or the last call's with their per-call state reset), split by group. */
function poolRows(candidates: readonly CandidateRaw[], config: RecallConfig, mode: EffectiveMode): RowCache {
  const key = rowKey(config, mode)
  const cached = rowCaches.get(candidates)
  if (cached && cached.key === key) {
    for (const r of cached.rows) {
      r.gate = null
      r.kept = false
    }
    return cached
  }
  const rows = buildRows(candidates, config, mode)
  if (config.normalize === 'minmax' && rows.length > 0) normalizeMinMax(rows)
  if (mode === 'hybrid' && config.fusion.method === 'rrf') fuseRows(rows, config)
  const primary: Row[] = []
  const blend: Row[] = []
  for (const r of rows) (r.c.group === 'blend' ? blend : primary).push(r)
  const fresh = { key, rows, primary, blend, results: [], dropped: [] }
  // Only a list whose ids are unique may be re-sorted from the last order (see RowCache).
  if (hasUniqueIds(candidates)) rowCaches.set(candidates, fresh)
  return fresh
}

const uniqueIds = new WeakMap<readonly CandidateRaw[], boolean>()

/** Are the list's ids unique? (Checked once per list: a knob sweep rebuilds its rows under many configs.) */
function hasUniqueIds(candidates: readonly CandidateRaw[]): boolean {
  let u = uniqueIds.get(candidates)
  if (u === undefined) uniqueIds.set(candidates, (u = new Set(candidates.map((c) => c.id)).size === candidates.length))
  return u
}

/** Options of `rerank`. */
export interface RerankOptions {
  /**
   * Write the output into the objects and lists of the last call with `reuse` on the same candidate list, instead
   * of new ones: a slider drag re-ranks every frame, and new objects per candidate (~10 allocations each, with
   * their numbers) made a minor GC every few steps. What such a call returns is valid until the next one on the
   * same list: for a caller that uses it before re-ranking again and hands nobody else a reference to it (the
   * Recall screen's drag fast path; a result React renders comes from a call without it, and no call with it
   * touches what a call without it returned).
   * @default false
   */
  reuse?: boolean
}

/**
 * Score, order and gate the candidates under a config.
 * @param mode what actually ran (trace.mode); decides the pool and whether order follows the score.
 */
export function rerank(candidates: readonly CandidateRaw[], config: RecallConfig, mode: EffectiveMode, opts: RerankOptions = {}): Reranked {
  // The renderer runs this on every slider move: each phase below allocates only what it returns
  // (the comparator is a module-level function, the groups are filled in place).
  const cache = poolRows(candidates, config, mode)
  const { rows, primary, blend } = cache
  const reuse = opts.reuse === true
  scoreRows(rows, config, reuse)

  const cmp = rowComparator(isOrderMode(mode), (config.tieBreak ?? 'newest') === 'newest')
  primary.sort(cmp)
  blend.sort(cmp)
  let sr = 0
  for (const r of primary) r.scoreRank = ++sr
  for (const r of blend) r.scoreRank = ++sr

  let selected = selectWithBlend(primary, blend, config)
  // Token budget over what survived, in injected order.
  if (config.tokenBudget !== null) selected = applyBudget(selected, config.tokenBudget, config)
  selected = applyDedupe(selected, config)

  const results = reuse ? cache.results : new Array<TraceResult>(selected.length)
  results.length = selected.length
  const injectedTokens = fillResults(selected, results, reuse)
  const dropped: TraceDropped[] = reuse ? cache.dropped : []
  dropped.length = 0
  pushDropped(primary, dropped, reuse)
  pushDropped(blend, dropped, reuse)
  const refreshed = config.refreshOnRecall ? results.map((r) => r.id) : []
  return { results, dropped, refreshed, injectedTokens, pool: rows.length }
}

/** One working row per pool member: raw features, order key and token estimate. */
function buildRows(candidates: readonly CandidateRaw[], config: RecallConfig, mode: EffectiveMode): Row[] {
  const p = config.candidatePool
  const hl = config.recency.halfLifeHours
  const fromLastUsed = config.recency.from === 'last_used'
  const est = config.tokenEstimator
  const rows: Row[] = []
  for (const c of candidates) {
    if (!inPool(c, mode, p)) continue
    const f: Features = {
      // A row without a vector ranks at similarity 0 (Engram, seed 002); elsewhere it never reaches the dense arm.
      similarity: c.similarity ?? 0,
      lexical: c.lexical,
      recency: recencyOf(fromLastUsed ? c.ageLastUsedMs : c.ageCreatedMs, hl),
      salience: c.salience,
    }
    const order = mode === 'recency' ? (c.recencyRank ?? Infinity) : (c.orderKey ?? Infinity)
    const tokens = estimateTokensFromLength(c.textLength, c.textBytes ?? c.textLength, est)
    rows.push({ c, f, k: f, score: 0, order, tokens, gate: null, scoreRank: 0, kept: false, fused: undefined, kr: undefined, tr: undefined, td: undefined })
  }
  return rows
}

/** Hybrid + RRF: each row's arm-rank terms, which stand in for its similarity and lexical features. */
function fuseRows(rows: Row[], config: RecallConfig): void {
  const p = config.candidatePool
  const rrfK = config.fusion.rrfK
  for (const r of rows) {
    // Reciprocal-rank fusion, scaled so an arm's rank 1 contributes 1 (classic 1/(k+rank) × (k+1)):
    // same order as classic RRF when only relevance is weighted, and the floor keeps its 0..1 meaning.
    const d = r.c.denseRank !== null && r.c.denseRank <= p ? (rrfK + 1) / (rrfK + r.c.denseRank) : 0
    const l = r.c.lexicalRank !== null && r.c.lexicalRank <= p ? (rrfK + 1) / (rrfK + r.c.lexicalRank) : 0
    r.fused = { dense: d, lexical: l }
  }
}

/** Each row's contributions (weight × feature, or × RRF term) and composite score (`reuse`: in the row's own object). */
function scoreRows(rows: Row[], config: RecallConfig, reuse: boolean): void {
  const w = config.weights
  for (const r of rows) {
    const f = r.f
    const simTerm = r.fused ? r.fused.dense : f.similarity
    const lexTerm = r.fused ? r.fused.lexical : f.lexical
    const sim = w.similarity * simTerm
    const lex = w.lexical * lexTerm
    const rec = w.recency * f.recency
    const sal = w.salience * f.salience
    let k = reuse ? r.kr : undefined
    if (k) {
      k.similarity = sim
      k.lexical = lex
      k.recency = rec
      k.salience = sal
    } else {
      k = { similarity: sim, lexical: lex, recency: rec, salience: sal }
      if (reuse) r.kr = k
    }
    r.k = k
    r.score = sim + lex + rec + sal
  }
}

/** Ties after score (or order): by creation age, then id. */
function compareTies(a: Row, b: Row, newest: boolean): number {
  const da = a.c.ageCreatedMs
  const db = b.c.ageCreatedMs
  // seed 002: stable sort over ORDER BY timestamp DESC (newest first); seed 004: over thread order (oldest first).
  if (da !== db) return newest ? da - db : db - da
  return a.c.id < b.c.id ? -1 : a.c.id > b.c.id ? 1 : 0
}

/** By score, then similarity (seed 003 sorts a similarity-ordered list by composite with a stable sort: ties keep similarity order). */
function compareByScore(a: Row, b: Row, newest: boolean): number {
  if (a.score !== b.score) return b.score - a.score
  if (a.f.similarity !== b.f.similarity) return b.f.similarity - a.f.similarity
  return compareTies(a, b, newest)
}

/** By the arm's order key (recency, session and keyword modes). */
function compareByOrder(a: Row, b: Row, newest: boolean): number {
  if (a.order !== b.order) return a.order - b.order
  return compareTies(a, b, newest)
}

const byScoreNewest = (a: Row, b: Row): number => compareByScore(a, b, true)
const byScoreOldest = (a: Row, b: Row): number => compareByScore(a, b, false)
const byOrderNewest = (a: Row, b: Row): number => compareByOrder(a, b, true)
const byOrderOldest = (a: Row, b: Row): number => compareByOrder(a, b, false)

/** The injected order's comparator (one of four module-level functions: nothing allocated per call). */
function rowComparator(byOrder: boolean, newest: boolean): (a: Row, b: Row) => number {
  if (byOrder) return newest ? byOrderNewest : byOrderOldest
  return newest ? byScoreNewest : byScoreOldest
}

/** The primary group's gates; with a blend group, Engram's blend appended after it and the list cut to topK. */
function selectWithBlend(primary: Row[], blend: Row[], config: RecallConfig): Row[] {
  const kept = selectGroup(primary, config)
  if (blend.length === 0) return kept
  // seed 002 (Engram recall + userId): up to ceil(limit/2) user memories, appended after the session
  // results, skipping content already there, then the whole list cut to `limit`.
  const blendKept = selectGroup(blend, { ...config, topK: Math.ceil(config.topK / 2) })
  const keptIds = new Set(kept.map((r) => r.c.id))
  const appended: Row[] = []
  for (const r of blendKept) {
    if (r.c.sameContentAs?.some((id) => keptIds.has(id))) r.gate = 'dedupe'
    else appended.push(r)
  }
  const selected = [...kept, ...appended]
  for (let i = config.topK; i < selected.length; i++) selected[i].gate = 'topK'
  return selected.slice(0, config.topK)
}

/** The token budget walked in injected order; marks the rows it drops and returns the rest. */
function applyBudget(selected: Row[], budget: number, config: RecallConfig): Row[] {
  let used = 0
  let n = 0
  let stopped = false
  for (const r of selected) {
    if (stopped) {
      r.gate = 'budget'
      continue
    }
    if (used + r.tokens <= budget || (config.atLeastOne && n === 0)) {
      // seed 004: "always returns ≥1 if any exist", even when that one alone exceeds the budget.
      used += r.tokens
      n++
    } else {
      r.gate = 'budget'
      // seed 004 stops at the first turn that no longer fits; `skip` keeps looking for smaller ones.
      if (config.overflow === 'stop') stopped = true
    }
  }
  return selected.filter((r) => r.gate === null)
}

/** seed 004: the agent drops hits already in the live transcript AFTER recall (topK and budget were spent on them). */
function applyDedupe(selected: Row[], config: RecallConfig): Row[] {
  const exclude = config.scope.excludeIds
  const excludeSet = exclude && exclude.length ? new Set(exclude) : null
  if (!excludeSet && !selected.some((r) => r.c.excluded)) return selected
  for (const r of selected) if (r.c.excluded || excludeSet?.has(r.c.id)) r.gate = 'dedupe'
  return selected.filter((r) => r.gate === null)
}

/** The injected rows as results (in `results`, already sized; `reuse`: each row's own object); returns their tokens. */
function fillResults(selected: Row[], results: TraceResult[], reuse: boolean): number {
  let injectedTokens = 0
  for (let i = 0; i < selected.length; i++) {
    const r = selected[i]
    r.kept = true
    injectedTokens += r.tokens
    let tr = reuse ? r.tr : undefined
    if (tr) {
      tr.rank = i + 1
      tr.score = r.score
      tr.contributions = r.k
      tr.scoreRank = r.scoreRank
    } else {
      tr = { id: r.c.id, rank: i + 1, score: r.score, features: r.f, contributions: r.k, tokens: r.tokens, scoreRank: r.scoreRank }
      if (r.c.group) tr.group = r.c.group
      if (r.fused) tr.fused = r.fused
      if (reuse) r.tr = tr
    }
    results[i] = tr
  }
  return injectedTokens
}

/** A group's rows that were not injected, with the gate that dropped them (topK when none marked one; `reuse`: each row's own object). */
function pushDropped(group: Row[], dropped: TraceDropped[], reuse: boolean): void {
  for (const r of group) {
    if (r.kept) continue
    let td = reuse ? r.td : undefined
    if (td) {
      td.score = r.score
      td.contributions = r.k
      td.gate = r.gate ?? 'topK'
      td.scoreRank = r.scoreRank
    } else {
      td = { id: r.c.id, score: r.score, features: r.f, contributions: r.k, gate: r.gate ?? 'topK', tokens: r.tokens, scoreRank: r.scoreRank }
      if (r.c.group) td.group = r.c.group
      if (r.fused) td.fused = r.fused
      if (reuse) r.td = td
    }
    dropped.push(td)
  }
}

/** minSimilarity, then floor and topK in the configured order; marks gates, returns the survivors in order. */
function selectGroup(rows: Row[], config: Pick<RecallConfig, 'minSimilarity' | 'floor' | 'topK' | 'gateOrder'>): Row[] {
  let live: Row[] = []
  const minSim = config.minSimilarity
  for (const r of rows) {
    // seed 001: a vector store's minScore is a cosine threshold; a row without a vector cannot pass it.
    if (minSim !== null && (r.c.similarity === null || r.c.similarity < minSim)) r.gate = 'minSimilarity'
    else live.push(r)
  }
  const floor = config.floor
  const applyFloor = () => {
    if (floor === null) return
    const next: Row[] = []
    // "below this, don't inject": a score equal to the floor survives (seed 000 `Score >= MinRecallScore`).
    for (const r of live) {
      if (r.score < floor) r.gate = 'floor'
      else next.push(r)
    }
    live = next
  }
  const applyTopK = () => {
    for (let i = config.topK; i < live.length; i++) live[i].gate = 'topK'
    live = live.slice(0, config.topK)
  }
  if (config.gateOrder === 'topk-then-floor') {
    // seed 000: OrderByDescending(Score).Take(topK).Where(Score >= MinRecallScore)
    applyTopK()
    applyFloor()
  } else {
    // seed 003: "Take top-k only after dropping everything below a minimum composite score."
    applyFloor()
    applyTopK()
  }
  return live
}

/** Rescale each feature to 0..1 over the pool (rows' feature objects are their own: mutated in place). */
function normalizeMinMax(rows: Row[]): void {
  for (const key of FEATURE_KEYS) {
    let min = Infinity
    let max = -Infinity
    for (const r of rows) {
      const v = r.f[key]
      if (v < min) min = v
      if (v > max) max = v
    }
    const range = max - min
    // Generative Agents' normalize_dict_floats: a flat feature maps to the middle of the target range.
    for (const r of rows) r.f[key] = range === 0 ? 0.5 : (r.f[key] - min) / range
  }
}

const FEATURE_KEYS = ['similarity', 'lexical', 'recency', 'salience'] as const

/**
 * Can the renderer re-rank the trace under `next` without a round trip? Yes when
 * only scoring knobs changed and every arm the new mode needs was fetched deep
 * enough for the new candidatePool.
 */
export function canRerankLocally(
  trace: Pick<RecallTrace, 'config' | 'arms' | 'mode'>,
  next: RecallConfig,
): { ok: true; mode: EffectiveMode } | { ok: false; reason: string } {
  const prev = trace.config
  if (!trace.arms || !trace.mode) return { ok: false, reason: 'trace has no arm info' }
  if (!sameScope(prev.scope, next.scope)) return { ok: false, reason: 'scope changed' }
  if ((prev.model ?? null) !== (next.model ?? null)) return { ok: false, reason: 'model changed' }
  if (prev.unit !== next.unit) return { ok: false, reason: 'unit changed' }
  if (prev.useSessionSummaries !== next.useSessionSummaries) return { ok: false, reason: 'unit text changed' }
  if (prev.cueUse.dense !== next.cueUse.dense || prev.cueUse.lexical !== next.cueUse.lexical) return { ok: false, reason: 'query text changed' }
  if ((prev.missingVector ?? 'skip') !== (next.missingVector ?? 'skip')) return { ok: false, reason: 'missingVector changed' }
  const arms = trace.arms
  const mode = effectiveMode(next, { dense: arms.dense.ran, lexical: arms.lexical.ran })
  const wasOrder = trace.mode === 'session' || trace.mode === 'keyword'
  if ((mode === 'session' || mode === 'keyword' || wasOrder) && mode !== trace.mode)
    return { ok: false, reason: `mode ${trace.mode} → ${mode} needs new candidates` }
  const deep = (a: { ran: boolean; fetched: number; exhausted: boolean }) => a.ran && (a.exhausted || a.fetched >= next.candidatePool)
  const need: [string, { ran: boolean; fetched: number; exhausted: boolean }][] = []
  if (mode === 'dense' || mode === 'hybrid') need.push(['dense', arms.dense])
  if (mode === 'lexical' || mode === 'hybrid') need.push(['lexical', arms.lexical])
  if (mode === 'recency') need.push(['recency', arms.recency])
  if (mode === 'session' || mode === 'keyword') need.push(['order', arms.order])
  for (const [name, a] of need) if (!deep(a)) return { ok: false, reason: `${name} arm fetched ${a.fetched} < candidatePool ${next.candidatePool}` }
  return { ok: true, mode }
}

/**
 * Two scopes select the same memories: key order and absent-vs-undefined don't
 * matter; list fields compare as sets (tiers ['working','long_term'] equals
 * ['long_term','working']).
 */
export function sameScope(a: RecallConfig['scope'], b: RecallConfig['scope']): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as (keyof RecallConfig['scope'])[])
  for (const k of keys) {
    const x = a[k]
    const y = b[k]
    if (Array.isArray(x) || Array.isArray(y)) {
      // An absent filter list means "any" and differs from [] ("none") — except exclusions, where [] excludes nothing.
      if (k !== 'excludeIds' && (x === undefined) !== (y === undefined)) return false
      const xs = new Set((x as string[] | undefined) ?? [])
      const ys = new Set((y as string[] | undefined) ?? [])
      if (xs.size !== ys.size || [...xs].some((v) => !ys.has(v))) return false
    } else if ((x ?? null) !== (y ?? null)) return false
  }
  return true
}

/**
 * Micro-benchmark for bench/: re-rank `n` synthetic candidates `iterations`
 * times under a hybrid + minmax + budget config (the heaviest path). Returns ms per call.
 */
export function benchRerank(config: RecallConfig, n = 1000, iterations = 200): { n: number; msPerCall: number; results: number } {
  let s = 12345
  const rnd = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296
  const cands: CandidateRaw[] = []
  for (let i = 0; i < n; i++) {
    cands.push({
      id: `m-${i}`,
      similarity: rnd() * 2 - 1,
      lexical: rnd() < 0.5 ? rnd() : 0,
      bm25: null,
      ageLastUsedMs: rnd() * 90 * 24 * HOUR_MS,
      ageCreatedMs: rnd() * 90 * 24 * HOUR_MS,
      salience: rnd(),
      denseRank: i + 1,
      lexicalRank: rnd() < 0.5 ? Math.floor(rnd() * n) + 1 : null,
      recencyRank: null,
      textLength: 40 + Math.floor(rnd() * 400),
    })
  }
  const cfg: RecallConfig = { ...config, mode: 'hybrid', candidatePool: n, normalize: 'minmax', tokenBudget: 2000 }
  let results = 0
  for (let i = 0; i < 30; i++) results = rerank(cands, cfg, 'hybrid').results.length // let the JIT settle
  const t0 = performance.now()
  for (let i = 0; i < iterations; i++) results = rerank(cands, cfg, 'hybrid').results.length
  return { n, msPerCall: (performance.now() - t0) / iterations, results }
}
