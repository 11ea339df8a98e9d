/**
 * The memory-unit gatherer: every arm run over the scope's groups (the scope, and Engram's blend group),
 * then the features the arms did not measure, then one raw candidate per draft
 * (docs/internals/design.md "Recall engine"). Each phase is one function over a MemoryGather; the order
 * of the phases is the order of the store calls and of the timings.
 */
import { effectiveMode, isOrderMode } from '../../shared/scoring'
import type { CandidateRaw, EffectiveMode, Memory, UnitInfo } from '../../shared/types'
import type { MemoryFilter, ScopeRows } from '../store/source'
import { denseArm, type DenseArmResult } from './dense'
import { armOff, denseDraftsOf, draftOf, type Draft, type GatherInput, type Gathered, type PushedModel } from './draft'
import { blendFilter, engramKeywords, scopeFilter } from './scope'
import { textBytesOf, unitOfMemory } from './units'

/** Scopes up to this many rows give the lexical arm a `_rid` range (store lexicalPass). */
const LEXICAL_RANGE_CAP = 5000

/** Matches one lexical pass reads (ranks beyond the arm's depth only serve as bm25 lookups). */
const LEXICAL_READ = 1000

function ridRange(rids: number[]): [number, number] {
  let lo = Infinity
  let hi = -Infinity
  for (const r of rids) {
    if (r < lo) lo = r
    if (r > hi) hi = r
  }
  return [lo, hi]
}

/** The dense arm of one group, in the store (push-down): same shape as denseArm's answer. */
function pushedDense(push: PushedModel, qn: Float64Array, filter: MemoryFilter, n: number, missingZero: boolean) {
  const r = push.dense.denseSearch({ vector: qn, model: push.model, ownerType: 'memory', filter, limit: n, missingZero })
  return { hits: r.hits, scope: null, scored: null, exhausted: r.exhausted, inScope: r.inScope, inScopeCapped: r.inScopeCapped, method: r.method }
}

/** One scope group: the scope itself (group undefined) or Engram's blend of user memories. */
interface ScopeGroup {
  filter: MemoryFilter
  group: 'blend' | undefined
}

/** What the phases of one memory gather share. */
interface MemoryGather {
  input: GatherInput
  groups: ScopeGroup[]
  /** the blend group's filter, or null */
  blend: MemoryFilter | null
  drafts: Map<string, Draft>
  arms: Gathered['arms']
  inScope: number
  inScopeCapped: boolean
  inScopeKnown: boolean
  denseCount: number
  lexicalCount: number
  /** in-scope rows per group when the scope is small (from the dense arm, or listed for the lexical arm) */
  scopes: Map<string, ScopeRows>
  /** every listed row's similarity per group, when the dense arm computed them all (denseArm's `scored`) */
  scored: Map<string, NonNullable<DenseArmResult['scored']>>
  bigScopes: Set<string>
  /** bm25 of rows the lexical pass returned beyond the ranks (or of another group's drafts) */
  knownBm25: Map<string, number>
  /** false when a lexical pass stopped at its limit: a row it did not return may still match */
  allBm25Known: boolean
  denseMs: number
  lexicalMs: number
}

/** Where a gather's time went, ms summed over its recalls (an eval's `timings`). */
export interface GatherPhaseMs {
  /** listing and counting scopes in the store */
  scopeMs: number
  /** the dense arm (without its scope reads) */
  denseMs: number
  /** the lexical arm, and the bm25 of candidates it did not rank */
  lexicalMs: number
  /** recency / order arms, reading the candidates' rows, their missing similarities, building the candidates */
  featuresMs: number
}

export const zeroPhaseMs = (): GatherPhaseMs => ({ scopeMs: 0, denseMs: 0, lexicalMs: 0, featuresMs: 0 })

/** The memory gatherer: arms, then the missing features, then the candidates (see the file's comment). */
export function gatherMemories(input: GatherInput): Gathered {
  return gatherMemoriesBatch([input], zeroPhaseMs())[0]
}

/**
 * Memory gathers of many recalls (an eval's cases) phase by phase: the dense arm of every recall,
 * then every lexical arm, then the features. Each recall's phases see only its own state and the
 * store (through the shared reads), in the order one gather runs them, so each answer is what
 * `gatherMemories` gives it alone; a phase's scope listings, rows and scratch stay warm across
 * the batch. `ms` accumulates the phases' time (scope reads counted apart from the arms).
 */
export function gatherMemoriesBatch(inputs: readonly GatherInput[], ms: GatherPhaseMs): Gathered[] {
  if (inputs.length === 0) return []
  const reads = inputs[0].reads
  const states = inputs.map(startMemoryGather)
  const scopeStart = reads.scopeMs
  // Each phase's own time: its wall time minus the scope reads made inside it.
  const phase = (run: (st: MemoryGather, i: number) => number): number => {
    const t0 = performance.now()
    const s0 = reads.scopeMs
    let inner = 0
    for (let i = 0; i < states.length; i++) inner += run(states[i], i)
    return performance.now() - t0 - (reads.scopeMs - s0) - inner
  }
  ms.denseMs += phase((st) => {
    const t0 = performance.now()
    runDenseArm(st)
    st.denseMs = performance.now() - t0
    return 0
  })
  ms.lexicalMs += phase((st) => {
    const t0 = performance.now()
    runLexicalArm(st)
    st.lexicalMs = performance.now() - t0
    return 0
  })
  // The features; the bm25 of candidates the lexical arm did not rank counts as lexical.
  let missingMs = 0
  const out = new Array<Gathered>(states.length)
  ms.featuresMs += phase((st, i) => {
    const { input } = st
    const mode = effectiveMode(input.cfg, { dense: st.arms.dense.ran, lexical: st.arms.lexical.ran })
    runOrderArm(st, mode)
    countInScope(st)
    const mems = input.reads.memories(st.drafts.keys())
    measureSimilarities(st)
    const m = measureMissingBm25(st)
    st.lexicalMs += m
    missingMs += m
    const { candidates, units } = buildMemoryCandidates(st, mems)
    const { arms, inScope, inScopeCapped, denseCount, lexicalCount, denseMs, lexicalMs } = st
    out[i] = { candidates, units, mode, arms, inScope, inScopeCapped, denseCount, lexicalCount, denseMs, lexicalMs }
    return m
  })
  ms.lexicalMs += missingMs
  ms.scopeMs += reads.scopeMs - scopeStart
  return out
}

/** The groups of the scope and an empty gather over them. */
function startMemoryGather(input: GatherInput): MemoryGather {
  const { cfg, now, denseReason } = input
  const groups: ScopeGroup[] = [{ filter: scopeFilter(cfg.scope, now), group: undefined }]
  const blend = blendFilter(cfg.scope, now)
  if (blend) groups.push({ filter: blend, group: 'blend' })
  return {
    input,
    groups,
    blend,
    drafts: new Map(),
    arms: { dense: armOff(denseReason), lexical: armOff(), recency: armOff('not recency mode'), order: armOff('not session or keyword mode') },
    inScope: 0,
    inScopeCapped: false,
    inScopeKnown: false,
    denseCount: 0,
    lexicalCount: 0,
    scopes: new Map(),
    scored: new Map(),
    bigScopes: new Set(),
    knownBm25: new Map(),
    allBm25Known: true,
    denseMs: 0,
    lexicalMs: 0,
  }
}

/** Dense arm: each group's nearest vectors (in memory, or pushed down to the store); a small scope's rows are kept for the lexical arm. */
function runDenseArm(st: MemoryGather): void {
  const { reads, cfg, idx, push, qn, depth } = st.input
  if (!(idx || push) || !qn) return
  const arms = st.arms
  arms.dense = { ran: true, fetched: 0, exhausted: true, reason: null }
  for (const { filter, group } of st.groups) {
    const r = push ? pushedDense(push, qn, filter, depth, cfg.missingVector === 'zero') : denseArm(reads, idx!, qn, filter, depth, cfg.missingVector === 'zero')
    if ('method' in r) arms.dense.pushdown = r.method
    if (r.scope) st.scopes.set(group ?? '', r.scope)
    else st.bigScopes.add(group ?? '')
    if (r.scored) st.scored.set(group ?? '', r.scored)
    r.hits.forEach((h, i) => {
      const d = draftOf(st.drafts, h.id, group)
      if (!d) return
      d.similarity = h.similarity
      d.denseRank = i + 1
    })
    arms.dense.fetched = Math.max(arms.dense.fetched, r.hits.length)
    arms.dense.exhausted &&= r.exhausted
    st.denseCount += r.hits.length
    if (group === undefined) {
      st.inScope = r.inScope
      st.inScopeCapped = r.inScopeCapped
      st.inScopeKnown = true
    }
  }
}

/**
 * Lexical arm (always, when the utterance has words: its bm25 is a feature in every mode).
 * One pass per group, which also returns the bm25 of the group's dense hits (or reads deep enough
 * that it usually holds them), so they need no second pass.
 */
function runLexicalArm(st: MemoryGather): void {
  const { reads, texts, cfg } = st.input
  const arms = st.arms
  if (!reads.hasLexicalTerms(texts.lexical)) {
    arms.lexical.reason = texts.lexical.trim() === '' ? 'empty query' : 'the query has no words to match'
    return
  }
  arms.lexical = { ran: true, fetched: 0, exhausted: true, reason: null }
  // Whether a recency / order arm will add rows after this pass (the mode is already decided:
  // the dense arm has run and the lexical arm runs). Without one, every candidate is
  // a lexical hit or a dense hit, so a listed scope's pass reads depth + 1 matches (enough for
  // the ranks and `exhausted`) and the dense hits' bm25 comes back with it (alsoIds); with one,
  // it reads LEXICAL_READ so those rows' bm25 is usually known without a second pass.
  const orderArm = isOrderMode(effectiveMode(cfg, { dense: arms.dense.ran, lexical: true }))
  for (const g of st.groups) runLexicalPass(st, g, orderArm)
}

/** The lexical arm's pass over one group: ranks its hits, keeps the rest as bm25 lookups, settles its dense hits' bm25. */
function runLexicalPass(st: MemoryGather, { filter, group }: ScopeGroup, orderArm: boolean): void {
  const { reads, texts, depth } = st.input
  let sc = st.scopes.get(group ?? '')
  if (!sc && !st.bigScopes.has(group ?? '')) {
    const listed = reads.scopeRows(filter, LEXICAL_RANGE_CAP + 1)
    if (listed.ids.length <= LEXICAL_RANGE_CAP) st.scopes.set(group ?? '', (sc = listed))
  }
  // (Only for a listing of the lexical arm's size: the dense arm lists any scope under missingVector
  // 'zero', and FTS5 may have to read such a range to its end to find every asked row.)
  const short = sc !== undefined && sc.ids.length <= LEXICAL_RANGE_CAP && !orderArm
  const read = short ? depth + 1 : Math.max(depth, LEXICAL_READ)
  // A big scope's pass also returns the bm25 of this group's dense hits (store lexicalPass): no second pass.
  const dense = sc && !short ? [] : denseDraftsOf(st.drafts, group)
  const pass =
    sc && sc.ids.length === 0
      ? null
      : reads.lexicalPass({
          text: texts.lexical,
          filter,
          limit: read,
          ridRange: sc ? ridRange(sc.rids) : null,
          alsoIds: dense.map((d) => d.id),
          listed: sc ?? undefined,
        })
  const hits = pass?.hits ?? []
  if (hits.length >= read) st.allBm25Known = false
  const ranked = Math.min(depth, hits.length)
  for (let i = 0; i < hits.length; i++) {
    const h = hits[i]
    const d = i < ranked ? draftOf(st.drafts, h.id, group) : null
    // Ranked rows of another group's drafts, and matches past the ranks, serve as bm25 lookups.
    if (!d) st.knownBm25.set(h.id, h.bm25)
    else {
      d.bm25 = h.bm25
      d.lexicalRank = i + 1
    }
  }
  if (pass?.alsoKnown) {
    // Every asked row's bm25 is now settled: its number, or no match.
    for (const d of dense) {
      d.bm25Settled = true
      const b = d.lexicalRank === null ? pass.also.get(d.id) : undefined
      if (b !== undefined) d.bm25 = b
    }
  }
  const lexical = st.arms.lexical
  lexical.fetched = Math.max(lexical.fetched, ranked)
  lexical.exhausted &&= hits.length <= depth
  st.lexicalCount += ranked
}

/** The recency arm (recency mode) or the order arm (session mode: turn order; keyword mode: Engram's fallback). */
function runOrderArm(st: MemoryGather, mode: EffectiveMode): void {
  const { reads, texts, depth } = st.input
  const arms = st.arms
  if (mode === 'recency') {
    arms.recency = { ran: true, fetched: 0, exhausted: true, reason: null }
    for (const { filter, group } of st.groups) {
      const rows = reads.memoriesWhere(filter, { limit: depth, order: 'created_desc' })
      rows.forEach((m, i) => {
        const d = draftOf(st.drafts, m.id, group)
        if (d) d.recencyRank = i + 1
      })
      arms.recency.fetched = Math.max(arms.recency.fetched, rows.length)
      arms.recency.exhausted &&= rows.length < depth
    }
  } else if (mode === 'session' || mode === 'keyword') {
    arms.order = { ran: true, fetched: 0, exhausted: true, reason: null }
    const keywords = engramKeywords(texts.lexical)
    for (const { filter, group } of st.groups) {
      // seed 000 GetBySessionAsync: the session's messages in order; seed 002 keyword fallback: newest first.
      const ids =
        mode === 'session' ? reads.memoriesWhere(filter, { limit: depth, order: 'turn' }).map((m) => m.id) : reads.keywordSearch(filter, keywords, depth)
      ids.forEach((id, i) => {
        const d = draftOf(st.drafts, id, group)
        if (d) d.orderKey = i + 1
      })
      arms.order.fetched = Math.max(arms.order.fetched, ids.length)
      arms.order.exhausted &&= ids.length < depth
    }
  }
}

/** Rows in scope, when the dense arm did not count them (a listed scope's length, else the store's count), plus the blend group's. */
function countInScope(st: MemoryGather): void {
  const { reads } = st.input
  if (!st.inScopeKnown) {
    const listed = st.scopes.get('')
    const c = listed ? { count: listed.ids.length, capped: false } : reads.countScope(st.groups[0].filter)
    st.inScope = c.count
    st.inScopeCapped = c.capped
  }
  if (st.blend) st.inScope += reads.countScope(st.blend).count
}

/**
 * The similarity of the drafts the dense arm did not find: from the arm's own numbers when it
 * scored every row of the draft's scope (a listed scope), else from their stored vectors.
 */
function measureSimilarities(st: MemoryGather): void {
  const { idx, push, qn } = st.input
  const drafts = st.drafts
  if (idx && qn) {
    // Rows to score from their stored vectors: together at the end (a compact index reads them back in one batch).
    const rest: Draft[] = []
    const rows: number[] = []
    for (const d of drafts.values()) {
      if (d.denseRank !== null) continue
      const g = d.group ?? ''
      const scored = st.scored.get(g)
      const at = scored ? positionsOf(st.scopes.get(g)!).get(d.id) : undefined
      if (at !== undefined) d.similarity = scored!.rows[at] >= 0 ? scored!.sim[at] : null
      else {
        const row = idx.rowOf.get(d.id)
        if (row === undefined) d.similarity = null
        else {
          rest.push(d)
          rows.push(row)
        }
      }
    }
    const sims = idx.dots(rows, qn)
    rest.forEach((d, i) => (d.similarity = sims[i]))
  } else if (push && qn) {
    const need = [...drafts.values()].filter((d) => d.denseRank === null).map((d) => d.id)
    const sims = push.dense.similarities(need, qn, push.model, 'memory')
    for (const id of need) drafts.get(id)!.similarity = sims.get(id) ?? null
  }
}

/** Each listing's positions by id (per listing object: the store and the reads hand out the same one per scope). */
const positionsMemo = new WeakMap<ScopeRows, Map<string, number>>()
function positionsOf(scope: ScopeRows): Map<string, number> {
  let p = positionsMemo.get(scope)
  if (!p) {
    p = new Map()
    for (let i = 0; i < scope.ids.length; i++) p.set(scope.ids[i], i)
    positionsMemo.set(scope, p)
  }
  return p
}

/** The bm25 of the drafts the lexical arm did not rank: from its lookups, else a second pass over their ids. Returns its ms. */
function measureMissingBm25(st: MemoryGather): number {
  if (!st.arms.lexical.ran) return 0
  const { reads, texts } = st.input
  const t2 = performance.now()
  const missing: string[] = []
  for (const d of st.drafts.values()) {
    if (d.lexicalRank !== null) continue
    const b = st.knownBm25.get(d.id)
    if (b !== undefined) d.bm25 = b
    // When the pass read every match in scope, a row it did not return has no match.
    else if (!st.allBm25Known && !d.bm25Settled) missing.push(d.id)
  }
  for (let i = 0; i < missing.length; i += 500) {
    const chunk = missing.slice(i, i + 500)
    for (const h of reads.lexicalPass({ text: texts.lexical, filter: { ids: chunk }, limit: chunk.length }).hits) {
      const d = st.drafts.get(h.id)
      if (d) d.bm25 = h.bm25
    }
  }
  return performance.now() - t2
}

/** Rows by id (undefined: gone from the store). */
type MemoryRows = ReadonlyMap<string, Memory | undefined>

/** One raw candidate per draft still in the store: features normalised, excluded and same-content rows marked. */
function buildMemoryCandidates(st: MemoryGather, mems: MemoryRows): { candidates: CandidateRaw[]; units: Record<string, UnitInfo> } {
  const { reads, cfg, now, units: withUnits } = st.input
  let maxNeg = 0
  for (const d of st.drafts.values()) if (d.bm25 !== null && -d.bm25 > maxNeg) maxNeg = -d.bm25

  // Live-transcript dedupe (seed 004): by id, or by identical trimmed text like Neo's renderRecall.
  const excludeIds = cfg.scope.excludeIds ?? []
  const excludedTexts = new Set<string>()
  if (excludeIds.length) {
    const rows = reads.memories(excludeIds)
    for (const id of excludeIds) {
      const m = rows.get(id)
      if (m) excludedTexts.add(m.content.trim())
    }
  }
  const excludeSet = new Set(excludeIds)
  const primaryByContent = st.blend ? groupPrimaryByContent(st.drafts, mems) : new Map<string, string[]>()

  const candidates: CandidateRaw[] = []
  const units: Record<string, UnitInfo> = {}
  for (const d of st.drafts.values()) {
    const m = mems.get(d.id)
    if (!m) continue // deleted under us
    const lastUsed = m.lastUsedAt !== null && m.lastUsedAt <= now ? m.lastUsedAt : m.createdAt
    const c: CandidateRaw = {
      id: d.id,
      similarity: d.similarity,
      lexical: d.bm25 !== null && maxNeg > 0 ? -d.bm25 / maxNeg : 0,
      bm25: d.bm25,
      ageLastUsedMs: Math.max(0, now - lastUsed),
      ageCreatedMs: Math.max(0, now - m.createdAt),
      salience: m.salience ?? 0,
      denseRank: d.denseRank,
      lexicalRank: d.lexicalRank,
      recencyRank: d.recencyRank,
      textLength: m.content.length,
      // seed 004 budgets the trimmed turn text in bytes: (len(text) + 3) / 4
      textBytes: textBytesOf(m),
    }
    if (d.orderKey !== undefined) c.orderKey = d.orderKey
    if (d.group) {
      c.group = d.group
      const same = primaryByContent.get(m.content)
      if (same) c.sameContentAs = same
    }
    if (excludeSet.has(d.id) || (excludedTexts.size > 0 && excludedTexts.has(m.content.trim()))) c.excluded = true
    candidates.push(c)
    if (withUnits) units[d.id] = unitOfMemory(m)
  }
  return { candidates, units }
}

/** The primary group's draft ids by content: Engram's blend skips user memories whose content equals a session result's. */
function groupPrimaryByContent(drafts: Map<string, Draft>, mems: MemoryRows): Map<string, string[]> {
  const primaryByContent = new Map<string, string[]>()
  for (const d of drafts.values()) {
    if (d.group) continue
    const m = mems.get(d.id)
    if (!m) continue
    const list = primaryByContent.get(m.content)
    if (list) list.push(d.id)
    else primaryByContent.set(m.content, [d.id])
  }
  return primaryByContent
}
