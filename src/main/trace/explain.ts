/**
 * Reading a trace back: where an id stands in it (injected, dropped by which
 * gate, outside the pool, never gathered) in words with the numbers, and what a
 * logged score that differs from today's says about which input changed.
 *
 * What is detectable from a canonical log (docs/internals/design.md `recall_events` keeps the
 * query, the config and the injected ids with their scores — not the features):
 *  - deletion, created_at after the event, scope fields that no longer match: from the row;
 *  - last_used_at overwritten after the event: from the row (its old value is lost,
 *    so the replay measures age from created_at) and confirmed by the logged score;
 *  - a changed vector, salience or recency input: only through the score. One
 *    equation (logged score = Σ wᵢ·featureᵢ) cannot tell which of several inputs
 *    moved, so every input that could explain the difference ALONE is listed,
 *    unless the row itself shows which one changed;
 *  - edited content: only through its effects (similarity / bm25 / tokens), or
 *    directly when the event logged its context block (optional `context` column).
 */
import type { Cause, CauseCode } from '../../shared/trace'
import type { CandidateRaw, EffectiveMode, GateName, Memory, RecallConfig, RecallTrace, TraceDropped, TraceResult } from '../../shared/types'

export const SCORE_EPS = 1e-9
const HOUR = 3_600_000

export interface Lookup {
  trace: RecallTrace
  cand: Map<string, CandidateRaw>
  result: Map<string, TraceResult>
  dropped: Map<string, TraceDropped>
}

export function lookup(trace: RecallTrace): Lookup {
  return {
    trace,
    cand: new Map(trace.candidates.map((c) => [c.id, c])),
    result: new Map(trace.results.map((r) => [r.id, r])),
    dropped: new Map(trace.dropped.map((d) => [d.id, d])),
  }
}

export const fmt = (x: number | null | undefined, d = 3) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(d))
export const day = (ms: number | null | undefined) =>
  ms === null || ms === undefined || !Number.isFinite(ms) ? 'none' : new Date(ms).toISOString().slice(0, 16).replace('T', ' ')
/** Two times at a precision that shows they differ (minutes, else seconds, else milliseconds). */
export function dayPair(a: number, b: number): [string, string] {
  const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '')
  const n = Math.floor(a / 60_000) !== Math.floor(b / 60_000) ? 16 : Math.floor(a / 1000) !== Math.floor(b / 1000) ? 19 : 23
  return [iso(a).slice(0, n), iso(b).slice(0, n)]
}
export const cause = (code: CauseCode, text: string): Cause => ({ code, text })

/** Which arms decide pool membership in a mode. */
function poolRanks(c: CandidateRaw, mode: EffectiveMode | undefined): string {
  switch (mode) {
    case 'dense':
      return `dense rank ${c.denseRank ?? '—'}`
    case 'lexical':
      return `lexical rank ${c.lexicalRank ?? '—'}`
    case 'hybrid':
      return `dense rank ${c.denseRank ?? '—'}, lexical rank ${c.lexicalRank ?? '—'}`
    case 'recency':
      return `recency rank ${c.recencyRank ?? '—'}`
    default:
      return `order ${c.orderKey ?? '—'}`
  }
}

/** Where an id stands in a trace, with the numbers: null gate = injected. */
export function gateOf(L: Lookup, id: string): { gate: GateName | 'pool' | 'absent' | null; text: string } {
  const t = L.trace
  const cfg = t.config
  const r = L.result.get(id)
  if (r) return { gate: null, text: `injected at rank ${r.rank} (score ${fmt(r.score)})` }
  const d = L.dropped.get(id)
  const c = L.cand.get(id)
  if (d) {
    switch (d.gate) {
      case 'minSimilarity':
        return {
          gate: d.gate,
          text:
            c?.similarity === null || c?.similarity === undefined
              ? `no vector: cannot pass minSimilarity ${fmt(cfg.minSimilarity)}`
              : `similarity ${fmt(c.similarity)} < minSimilarity ${fmt(cfg.minSimilarity)}`,
        }
      case 'floor':
        return { gate: d.gate, text: `score ${fmt(d.score)} < floor ${fmt(cfg.floor)}` }
      case 'topK':
        return {
          gate: d.gate,
          text: `ranked #${d.scoreRank ?? '?'} by score (${fmt(d.score)}); topK ${cfg.topK}${cfg.gateOrder === 'topk-then-floor' ? ' (taken before the floor)' : ''}`,
        }
      case 'budget':
        return {
          gate: d.gate,
          text: `token budget ${cfg.tokenBudget}: ${t.injectedTokens ?? 0} tokens injected, its ${d.tokens} did not fit${cfg.overflow === 'stop' ? ' (stops at the first that does not fit)' : ''}`,
        }
      case 'dedupe':
        return {
          gate: d.gate,
          text:
            d.group === 'blend'
              ? 'same content as an injected session memory (Engram blend skips it)'
              : 'already in the live transcript (scope.excludeIds): dropped after selection',
        }
      case 'scope':
        return { gate: d.gate, text: 'out of scope' }
    }
  }
  if (c) return { gate: 'pool', text: `outside the candidate pool: ${poolRanks(c, t.mode)} > candidatePool ${cfg.candidatePool}` }
  return { gate: 'absent', text: 'not gathered by any arm of this recall' }
}

export interface Scored {
  score: number
  features: TraceResult['features']
  fused?: { dense: number; lexical: number }
}

export function scoredOf(L: Lookup, id: string): Scored | null {
  return L.result.get(id) ?? L.dropped.get(id) ?? null
}

export interface AttributeContext {
  config: RecallConfig
  mode: EffectiveMode | undefined
  /** when the logged recall ran */
  at: number
  memory: Memory | null
  /** the query vector was re-embedded by a non-deterministic model (similarities may shift for everyone) */
  reembedded: string | null
}

/**
 * A logged score that differs from the replay's (same config, same `now`): which
 * single input of this memory could have changed to explain it. Evidence in the
 * row (last_used_at overwritten after the event) wins over the arithmetic.
 */
export function attributeScoreDelta(logged: number, s: Scored, cand: CandidateRaw | undefined, a: AttributeContext): Cause[] {
  const delta = logged - s.score
  if (Math.abs(delta) <= SCORE_EPS) return []
  const cfg = a.config
  const head = `logged score ${fmt(logged)}, replayed ${fmt(s.score)} (Δ ${delta < 0 ? '+' : ''}${fmt(-delta)})`
  if (cfg.normalize === 'minmax')
    return [
      cause(
        'relative',
        `${head}; its features are min-max normalised over the pool, so a change to any candidate moves it (single inputs cannot be told apart)`,
      ),
    ]
  const rrf = a.mode === 'hybrid' && cfg.fusion.method === 'rrf'
  const w = cfg.weights
  const m = a.memory
  const hl = cfg.recency.halfLifeHours
  const fromLastUsed = cfg.recency.from === 'last_used'

  // The row's own evidence: a last use after the event overwrote the value the event saw.
  if (w.recency > 0 && fromLastUsed && m && m.lastUsedAt !== null && m.lastUsedAt > a.at) {
    const implied = s.features.recency + delta / w.recency
    if (implied > 0 && implied <= 1 + 1e-9)
      return [
        cause(
          'last-used-changed',
          `last_used_at changed since: now ${day(m.lastUsedAt)}, after the event (${day(a.at)}); its value at the event is lost, so the replay measures age from created_at (recency ${fmt(s.features.recency)}); the logged score implies recency ${fmt(implied)}, i.e. last used ≈ ${day(impliedTime(a.at, implied, hl))}`,
        ),
      ]
  }

  const options: Cause[] = []
  const plausible = (v: number, lo: number, hi: number) => v >= lo - 1e-9 && v <= hi + 1e-9
  if (w.similarity > 0) {
    if (rrf) {
      const term = (s.fused?.dense ?? 0) + delta / w.similarity
      if (term > 0 && term <= 1 + 1e-9)
        options.push(
          cause(
            'vector-changed',
            `its dense-arm rank changed: the logged score implies dense rank ≈ ${impliedRank(term, cfg.fusion.rrfK)}, today ${cand?.denseRank ?? 'none'} — its vector (or a competitor's) changed since`,
          ),
        )
    } else {
      const implied = s.features.similarity + delta / w.similarity
      if (plausible(implied, -1, 1))
        options.push(
          cause(
            'vector-changed',
            `similarity changed since the event: the logged score implies ${fmt(implied)}, ${s.features.similarity === 0 && cand?.similarity === null ? 'it has no stored vector today' : `its stored vector gives ${fmt(s.features.similarity)} today`} — re-embedded, or content edited and re-embedded${a.reembedded ? ` (or the query embedding changed: no logged query vector, re-embedded with ${a.reembedded})` : ''}`,
          ),
        )
    }
  }
  if (w.lexical > 0) {
    if (rrf) {
      const term = (s.fused?.lexical ?? 0) + delta / w.lexical
      if (term > 0 && term <= 1 + 1e-9)
        options.push(
          cause(
            'lexical-changed',
            `its lexical-arm rank changed: the logged score implies lexical rank ≈ ${impliedRank(term, cfg.fusion.rrfK)}, today ${cand?.lexicalRank ?? 'none'} — its content (or a competitor's) changed since`,
          ),
        )
    } else {
      const implied = s.features.lexical + delta / w.lexical
      if (plausible(implied, 0, 1))
        options.push(
          cause(
            'lexical-changed',
            `lexical match changed: the logged score implies ${fmt(implied)} (normalised bm25), today ${fmt(s.features.lexical)} — its content, or the best match in scope, changed since`,
          ),
        )
    }
  }
  if (w.recency > 0) {
    const implied = s.features.recency + delta / w.recency
    if (implied > 0 && implied <= 1 + 1e-9) {
      const field = fromLastUsed ? 'last_used_at (else created_at)' : 'created_at'
      const rowTime = m ? (fromLastUsed && m.lastUsedAt !== null && m.lastUsedAt <= a.at ? m.lastUsedAt : m.createdAt) : null
      options.push(
        cause(
          'recency-input-changed',
          `recency differs: the logged score implies ${fmt(implied)} (${field} ≈ ${day(impliedTime(a.at, implied, hl))}); the row gives ${fmt(s.features.recency)} (${day(rowTime)}) — ${fromLastUsed ? 'last_used_at or created_at' : 'created_at'} was rewritten since`,
        ),
      )
    }
  }
  if (w.salience > 0) {
    const implied = s.features.salience + delta / w.salience
    if (plausible(implied, 0, 1))
      options.push(cause('salience-changed', `salience changed since: today ${fmt(s.features.salience)}, the logged score implies ${fmt(implied)}`))
  }
  if (options.length === 0)
    return [
      cause(
        'unexplained',
        `${head}; no single input explains it: several changed (e.g. content and vector), or the config that ran differs from the one logged`,
      ),
    ]
  if (options.length === 1) return options
  return [cause('unexplained', `${head}; any ONE of these would explain it (the log keeps only the total):`), ...options]
}

function impliedTime(at: number, recency: number, halfLifeHours: number): number {
  const ageMs = recency >= 1 ? 0 : halfLifeHours * HOUR * Math.log2(1 / recency)
  return at - ageMs
}

function impliedRank(term: number, k: number): string {
  // term = (k+1)/(k+rank)
  const r = (k + 1) / term - k
  return Number.isFinite(r) ? String(Math.max(1, Math.round(r))) : '—'
}

/**
 * The score a candidate would get if the pool reached it (its own features do
 * not depend on the pool; RRF uses its real arm ranks). null under min-max
 * normalisation, where features depend on the pool.
 */
export function scoreAsIfInPool(c: CandidateRaw, config: RecallConfig, mode: EffectiveMode | undefined): Scored | null {
  if (config.normalize === 'minmax') return null
  const hl = config.recency.halfLifeHours
  const age = config.recency.from === 'last_used' ? c.ageLastUsedMs : c.ageCreatedMs
  const features = { similarity: c.similarity ?? 0, lexical: c.lexical, recency: Math.pow(0.5, Math.max(0, age) / (hl * HOUR)), salience: c.salience }
  const w = config.weights
  let sim = features.similarity
  let lex = features.lexical
  let fused: Scored['fused']
  if (mode === 'hybrid' && config.fusion.method === 'rrf') {
    const k = config.fusion.rrfK
    fused = { dense: c.denseRank !== null ? (k + 1) / (k + c.denseRank) : 0, lexical: c.lexicalRank !== null ? (k + 1) / (k + c.lexicalRank) : 0 }
    sim = fused.dense
    lex = fused.lexical
  }
  return { score: w.similarity * sim + w.lexical * lex + w.recency * features.recency + w.salience * features.salience, features, fused }
}
