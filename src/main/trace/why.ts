/**
 * "Why was memory X (not) recalled?" — for a logged event (its config, its `at`,
 * its query vector) or an ad-hoc query. The answer walks the engine's pipeline:
 * did it exist yet → scope (which filter, and the edit that lets it in) → the
 * arms (its dense and lexical ranks, measured even beyond the pool by re-running
 * the engine deep enough to rank it) → its features and contributions → the gate
 * that dropped it → the smallest single knob change that injects it
 * (knobs.ts), each change applied and re-run through the real engine.
 */
import { armTexts } from '../../shared/cue'
import { RecallscopeError } from '../../shared/result'
import type { KnobChange, KnobPair, KnobResult, WhyNot, WhyStatus } from '../../shared/trace'
import { KNOBS } from '../../shared/trace'
import type { CandidateRaw, Cue, Memory, RecallConfig, RecallTrace, Session } from '../../shared/types'
import { createEmbedder } from '../embed/index'
import { fetchDepth, prepareVector, runRecallSync, type PreparedVector } from '../recall/engine'
import { rerank } from '../../shared/scoring'
import { normalizeQuery } from '../recall/dense'
import { buildConfig, defaultEmbedderSpec } from '../recall/request'
import { blendFilter, scopeFilter } from '../recall/scope'
import type { MemorySource } from '../store/source'
import { loggedReplay, requireEvent, type PrepareOptions } from './event'
import { fmt, gateOf, lookup, type Lookup } from './explain'
import { createKnobContext, poolNeeded, searchKnobs, setKnob } from './knobs'
import { searchKnobPairs } from './knobPairs'
import { checkMemoryScope, checkSessionScope, type ScopeCheck } from './scope'

export interface WhyRequest extends PrepareOptions {
  memoryId: string
  /** A logged event: its query, config, `at` and query vector. */
  eventId?: string
  /** Ad hoc: the query (and cue), preset / partial config, `now` (required), embedder or explicit vector. */
  query?: string
  cue?: Cue | null
  preset?: string
  config?: unknown
  now?: number
  queryVector?: ArrayLike<number> | null
  /**
   * Re-run the real engine with changes applied: the smallest until one is confirmed (`best`),
   * every change (`all`), or none (`none`, the re-rank's answer only). @default 'best'
   */
  verify?: 'best' | 'all' | 'none'
}

interface Setup {
  query: { text: string; cue: Cue | null }
  config: RecallConfig
  now: number
  prepared: PreparedVector
  preset: string | null
  eventId: string | null
  /** the event-time trace, when it was already computed (cached) */
  trace?: RecallTrace
  notes?: string[]
}

async function setup(store: MemorySource, req: WhyRequest): Promise<Setup> {
  if (req.eventId) {
    const event = await requireEvent(store, req.eventId)
    const { run, trace } = await loggedReplay(store, event, req)
    return { query: run.query, config: run.config, now: run.now, prepared: run.prepared, preset: event.preset, eventId: event.id, trace }
  }
  if (req.now === undefined || !Number.isFinite(req.now)) throw new RecallscopeError('BAD_INPUT', 'an ad-hoc why-not needs `now` (epoch ms)')
  const text = req.query ?? ''
  if (text.trim() === '' && !req.cue) throw new RecallscopeError('BAD_INPUT', 'give an eventId, or a query (or cue)')
  const { config, preset } = buildConfig({ preset: req.preset, config: req.config })
  const cue = req.cue ?? null
  const notes: string[] = []
  let prepared: PreparedVector
  if (req.queryVector) prepared = { vector: req.queryVector, embedder: { name: 'vector', model: null, available: true }, reason: null, embedMs: 0 }
  else {
    const owner = config.unit === 'session' ? 'session' : 'memory'
    const embedder = createEmbedder(req.embedder ?? defaultEmbedderSpec(store, owner), req.embedderOptions ?? {})
    if (config.model && embedder.model && embedder.model !== config.model) {
      notes.push(
        `config.model ${config.model} replaced by the embedder's ${embedder.model} (the dense arm searches the vectors of the model that embeds the query)`,
      )
      config.model = embedder.model
    }
    prepared = await prepareVector(store, armTexts(text, cue, config.cueUse).dense, { embedder })
  }
  return { query: { text, cue }, config, now: req.now, prepared, preset: req.preset ?? preset, eventId: null, notes }
}

/** One recall under a config at the request's time (optionally deeper than the default fetch). */
type RunRecall = (config: RecallConfig, depth?: number) => RecallTrace

export async function whyNot(store: MemorySource, req: WhyRequest): Promise<WhyNot> {
  const t0 = performance.now()
  const s = await setup(store, req)
  const setupMs = performance.now() - t0
  const cfg = s.config
  const run: RunRecall = (config, depth) => runRecallSync(store, s.query, config, s.now, { preset: s.preset, prepared: s.prepared, depth })
  const notes: string[] = [...(s.notes ?? [])]
  const { memory, session, unitId } = resolveUnit(store, req.memoryId, cfg, notes)
  const base: Omit<WhyNot, 'status' | 'summary' | 'scope'> = {
    memoryId: req.memoryId,
    // The memory itself (text and metadata): the answer reads without a second lookup.
    memory,
    unitId,
    eventId: s.eventId,
    query: s.query.text,
    cue: s.query.cue,
    now: s.now,
    config: cfg,
    candidate: null,
    scored: null,
    gate: null,
    injected: [],
    knobs: [],
    best: null,
    pair: null,
    verdict: '',
    notes,
    mode: cfg.mode,
    timings: { totalMs: 0, setupMs: 0, traceMs: 0, searchMs: 0, verifyMs: 0, evaluations: 0, depth: null },
  }
  const finish = (w: WhyNot): WhyNot => ((w.verdict = verdictOf(w)), (w.timings.totalMs = performance.now() - t0), w)
  if ((cfg.unit === 'memory' && !memory) || (cfg.unit === 'session' && !session))
    return finish({
      ...base,
      status: 'not-found',
      summary: notFoundSummary(store, req.memoryId, cfg, unitId),
      scope: { inScope: false, failures: [], viaBlend: false },
    })

  const scope = memory && cfg.unit === 'memory' ? checkMemoryScope(store, memory, cfg, s.now) : checkSessionScope(store, session!, cfg, s.now)
  if (!scope.inScope) return finish({ ...base, ...outOfScopeAnswer(scope, unitId, s.now, notes) })

  // The normal recall, then (when the arms did not reach it) one deep enough to rank it.
  const tt = performance.now()
  const { trace, injected, counted, deepDepth } = traceReaching(store, s, run, unitId, memory, notes)
  const traceMs = performance.now() - tt
  const L = lookup(trace)
  const mode = trace.mode ?? 'none'
  const c = L.cand.get(unitId)
  const g = gateOf(L, unitId)
  const pn = c ? poolNeeded(c, mode) : null
  const scored = scoredEntry(trace, L, unitId, c, pn, cfg, notes)
  const status = statusOfGate(g.gate)
  const candidate = candidateEntry(c, counted, g.gate !== 'pool', pn)
  if (status === 'excluded')
    notes.push(
      'it is in the live transcript (scope.excludeIds, or the same text): the agent drops it after selection — no scoring knob changes that; remove it from scope.excludeIds',
    )
  if (status === 'not-candidate' && !c) notes.push(absentReason(store, trace, unitId))

  // The knob search on the (deep) trace's candidates, then each change applied through the engine.
  const ts = performance.now()
  const context = status === 'injected' || status === 'excluded' || !c ? null : createKnobContext(trace.candidates, mode, unitId)
  const search = context ? searchKnobs({ candidates: trace.candidates, config: cfg, mode, target: unitId, context }) : null
  let searchMs = performance.now() - ts
  let tv = performance.now()
  const verify = req.verify ?? 'best'
  const best = search ? verifyChanges(search.knobs, run, cfg, unitId, injected, verify) : null
  let verifyMs = performance.now() - tv
  // No single knob: try pairs (one knob moved across its range, the others searched from there), then verify the best.
  let pair: KnobPair | null = null
  let pairEvaluations = 0
  if (context && !best && verify !== 'none') {
    const tp = performance.now()
    const ps = searchKnobPairs({ candidates: trace.candidates, config: cfg, mode, target: unitId, context })
    searchMs += performance.now() - tp
    pair = ps.pair
    pairEvaluations = ps.evaluations
    tv = performance.now()
    if (pair) verifyPair(pair, run, cfg, unitId, injected)
    verifyMs += performance.now() - tv
  }
  if (search && !best) notes.push(pair?.verified?.engine ? 'no single knob change injects it; a pair of changes does' : 'no single knob change injects it')

  const summary = summarize(status, unitId, g.text, best, scored)
  return finish({
    ...base,
    status,
    summary,
    scope,
    candidate,
    scored,
    gate: g.gate === null ? null : { name: g.gate, detail: g.gate === 'absent' ? (notes[notes.length - 1] ?? g.text) : g.text },
    injected,
    knobs: search?.knobs ?? [],
    best,
    pair,
    mode,
    timings: { totalMs: 0, setupMs, traceMs, searchMs, verifyMs, evaluations: (search?.evaluations ?? 0) + pairEvaluations, depth: deepDepth },
  })
}

/** Which unit is ranked: the memory, or (session-unit recall, seed 000) its session. */
function resolveUnit(
  store: MemorySource,
  memoryId: string,
  cfg: RecallConfig,
  notes: string[],
): { memory: Memory | null; session: Session | null; unitId: string } {
  const memory: Memory | null = store.getMemory(memoryId)
  let session: Session | null = null
  let unitId = memoryId
  if (cfg.unit === 'session') {
    const sid = memory ? memory.sessionId : memoryId
    session = sid ? store.getSession(sid) : null
    if (memory && session) notes.push(`this recall ranks sessions: memory ${memory.id} belongs to session ${session.id}, which is what is explained`)
    if (session) unitId = session.id
  }
  return { memory, session, unitId }
}

/** What the summary says when the unit does not exist (or is of the other kind). */
function notFoundSummary(store: MemorySource, memoryId: string, cfg: RecallConfig, unitId: string): string {
  if (cfg.unit === 'session') return `No session ${unitId} (this recall ranks sessions)`
  return store.getSession(memoryId) ? `${memoryId} is a session; this recall ranks memories` : `No memory ${memoryId} in this DB`
}

/** The answer for a unit the scope leaves out (or that did not exist yet at `now`); each failure is also a note. */
function outOfScopeAnswer(scope: ScopeCheck, unitId: string, now: number, notes: string[]): Pick<WhyNot, 'status' | 'summary' | 'scope' | 'gate'> {
  const future = scope.failures.find((f) => f.field === 'now')
  for (const f of scope.failures) notes.push(`${f.field}: ${f.value}, the scope wants ${f.expected} → ${f.fix}`)
  return {
    status: future ? 'not-yet-created' : 'out-of-scope',
    summary: future
      ? `${unitId} did not exist yet at ${iso(now)} (${future.value})`
      : `${unitId} is out of scope: ${scope.failures.map((f) => `${f.field} is ${f.value}, not ${f.expected}`).join('; ')}`,
    scope,
    gate: { name: 'scope', detail: scope.failures.map((f) => `${f.field}: ${f.value} ∉ ${f.expected}`).join('; ') },
  }
}

/** The recall's trace (the event's, or a run), and a deeper one when no arm ranked the unit within the default depth. */
function traceReaching(
  store: MemorySource,
  s: Setup,
  run: RunRecall,
  unitId: string,
  memory: Memory | null,
  notes: string[],
): { trace: RecallTrace; injected: WhyNot['injected']; counted: Reach | null; deepDepth: number | null } {
  let deepDepth: number | null = null
  let trace = s.trace ?? run(s.config)
  const injected = trace.results.map((r) => ({ id: r.id, score: r.score }))
  let counted: Reach | null = null
  if (!trace.candidates.some((c) => c.id === unitId)) {
    counted = reach(store, trace, s, unitId, memory)
    if (counted.note) notes.push(counted.note)
    // Fetch deep enough only for the arms this mode pools by; the other arm's rank is reported as counted.
    if (counted.depth > fetchDepth(s.config.candidatePool)) trace = run(s.config, (deepDepth = counted.depth))
  }
  return { trace, injected, counted, deepDepth }
}

/** The unit's score, features and contributions: from the trace, else re-ranked as if the pool reached it. */
function scoredEntry(
  trace: RecallTrace,
  L: Lookup,
  unitId: string,
  c: CandidateRaw | undefined,
  pn: number | null,
  cfg: RecallConfig,
  notes: string[],
): WhyNot['scored'] {
  const entry = L.result.get(unitId) ?? L.dropped.get(unitId)
  if (entry)
    return {
      score: entry.score,
      scoreRank: entry.scoreRank ?? 0,
      features: entry.features,
      contributions: entry.contributions,
      tokens: entry.tokens,
      gate: L.dropped.get(unitId)?.gate ?? null,
      rank: L.result.get(unitId)?.rank ?? null,
    }
  if (!c || pn === null || pn > 100_000) return null
  // Scored as if the pool reached it: the (deep) trace holds every row an arm ranked up to `pn`,
  // so re-ranking its candidates with that pool is what the engine would do.
  const t2 = rerank(trace.candidates, { ...cfg, candidatePool: pn }, trace.mode ?? 'none')
  const e2 = t2.results.find((r) => r.id === unitId) ?? t2.dropped.find((d) => d.id === unitId)
  if (!e2) return null
  notes.push(`scored as if candidatePool were ${pn} (it is outside the pool of ${cfg.candidatePool})`)
  return { score: e2.score, scoreRank: e2.scoreRank ?? 0, features: e2.features, contributions: e2.contributions, tokens: e2.tokens, gate: null, rank: null }
}

/** The answer's status for the gate that decided the unit's fate. */
function statusOfGate(gate: ReturnType<typeof gateOf>['gate']): WhyStatus {
  if (gate === null) return 'injected'
  if (gate === 'dedupe') return 'excluded'
  if (gate === 'pool') return 'outside-pool'
  if (gate === 'absent') return 'not-candidate'
  return 'dropped'
}

/** The unit's arm ranks and features as a candidate (ranks counted beyond the trace when it is none). */
function candidateEntry(c: CandidateRaw | undefined, counted: Reach | null, inPool: boolean, pn: number | null): WhyNot['candidate'] {
  if (c)
    return {
      similarity: c.similarity,
      bm25: c.bm25,
      denseRank: c.denseRank ?? counted?.dense ?? null,
      lexicalRank: c.lexicalRank ?? counted?.lexical ?? null,
      recencyRank: c.recencyRank ?? null,
      inPool,
      poolNeeded: pn,
    }
  if (counted && (counted.dense !== null || counted.lexical !== null))
    return {
      similarity: null,
      bm25: null,
      denseRank: counted.dense,
      lexicalRank: counted.lexical,
      recencyRank: null,
      inPool: false,
      poolNeeded: counted.depth || null,
    }
  return null
}

/** Each found change re-run through the engine (smallest first; with 'best' until one is confirmed); returns the best. */
function verifyChanges(
  knobs: KnobResult[],
  run: RunRecall,
  cfg: RecallConfig,
  unitId: string,
  injected: WhyNot['injected'],
  verify: 'best' | 'all' | 'none',
): KnobChange | null {
  let best: KnobChange | null = null
  const baseIds = new Set(injected.map((r) => r.id))
  const check = (ch: KnobChange) => {
    const t = run(setKnob(cfg, ch.knob, ch.to))
    const i = t.results.findIndex((r) => r.id === unitId)
    const now = new Set(t.results.map((r) => r.id))
    ch.verified = { engine: i >= 0, pushedOut: [...baseIds].filter((id) => !now.has(id)), rank: i >= 0 ? i + 1 : null }
  }
  // Smallest first: with 'best', re-run until one change is confirmed (each run is a full recall).
  const changes = knobs
    .map((k) => k.change)
    .filter((x): x is KnobChange => !!x)
    .sort((a, b) => a.normalized - b.normalized)
  for (const ch of changes) {
    if (verify === 'all' || (verify === 'best' && !best)) check(ch)
    if (!best && (verify === 'none' || ch.verified?.engine)) best = ch
  }
  return best
}

/** The pair's changes applied together and re-run through the engine (its `verified`). */
function verifyPair(pair: KnobPair, run: RunRecall, cfg: RecallConfig, unitId: string, injected: WhyNot['injected']): void {
  const [a, b] = pair.changes
  const t = run(setKnob(setKnob(cfg, a.knob, a.to), b.knob, b.to))
  const i = t.results.findIndex((r) => r.id === unitId)
  const now = new Set(t.results.map((r) => r.id))
  pair.verified = { engine: i >= 0, pushedOut: injected.map((r) => r.id).filter((id) => !now.has(id)), rank: i >= 0 ? i + 1 : null }
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z')

function describe(ch: KnobChange): string {
  const label = KNOBS.find((k) => k.knob === ch.knob)?.label ?? ch.knob
  const from = ch.from === null ? 'off' : fmtKnob(ch.from)
  const out = ch.pushedOut.length ? `, pushing out ${ch.pushedOut.join(', ')}` : ', pushing nothing out'
  return `${label} ${from} → ${fmtKnob(ch.to)} injects it at rank ${ch.rank}${out}`
}

/** "from → to" of one knob, by its label. */
function move(ch: KnobChange): string {
  const label = KNOBS.find((k) => k.knob === ch.knob)?.label ?? ch.knob
  return `${label} ${ch.from === null ? 'off' : fmtKnob(ch.from)} → ${fmtKnob(ch.to)}`
}

/**
 * The verdict, one line: "<id> is not injected because <gate>; <fix>" (or where it is injected).
 * The fix is the smallest verified single change, else the verified pair, else what no knob can do.
 */
function verdictOf(w: WhyNot): string {
  const id = w.unitId
  if (w.status === 'not-found') return w.summary
  if (w.status === 'injected') return `${id} is injected at rank ${w.scored?.rank ?? '?'}.`
  if (w.status === 'not-yet-created') return `${id} is not injected because it did not exist yet at ${iso(w.now)}; replay at a later time.`
  if (w.status === 'out-of-scope') {
    const f = w.scope.failures[0]
    return `${id} is not injected because it is out of scope (${f ? `${f.field} is ${f.value}, not ${f.expected}` : 'scope'}); ${f?.fix ?? 'widen the scope'}.`
  }
  if (w.status === 'excluded') return `${id} is not injected because it is in the live transcript (dedupe); remove it from scope.excludeIds.`
  // The gate's detail can hold its own "; ": commas inside the parentheses keep the verdict's one "; " before the fix.
  const because = w.gate ? `of ${w.gate.name} (${w.gate.detail.replaceAll('; ', ', ')})` : w.status
  const ok = (v: { engine: boolean } | null) => v === null || v.engine
  let fix: string
  if (w.best && ok(w.best.verified)) fix = `${move(w.best)} injects it at rank ${w.best.verified?.rank ?? w.best.rank}`
  else if (w.pair?.verified?.engine)
    fix = `no single knob does it; ${move(w.pair.changes[0])} with ${move(w.pair.changes[1])} injects it at rank ${w.pair.verified.rank} (verified)`
  else if (w.status === 'not-candidate' && !w.candidate) fix = 'no scoring knob can reach it (see the notes)'
  else fix = 'no single knob change or pair of changes injects it'
  return `${id} is not injected because ${because}; ${fix}.`
}

export function fmtKnob(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(4)))
}

function summarize(status: WhyStatus, id: string, gateText: string, best: KnobChange | null, scored: WhyNot['scored']): string {
  const fix = best ? ` Smallest change: ${describe(best)}.` : ''
  switch (status) {
    case 'injected':
      return `${id} was ${gateText}.`
    case 'dropped':
      return `${id} was scored ${fmt(scored?.score)} and dropped: ${gateText}.${fix}`
    case 'outside-pool':
      return `${id} never reached scoring: ${gateText}.${fix}`
    case 'excluded':
      return `${id} was selected but dropped as part of the live transcript.`
    case 'not-candidate':
      return `${id} is in scope but no arm gathered it.${fix}`
    default:
      return `${id}: ${gateText}`
  }
}

/** In-scope arm ranks of a unit the normal recall did not gather, counted directly (not fetched). */
interface Reach {
  dense: number | null
  lexical: number | null
  recency: number | null
  /** arm depth that makes the engine rank it (the smallest pool admitting it in this mode) */
  depth: number
  note: string | null
}

/** Scopes up to this many rows are listed to count exact in-scope ranks; larger ones use whole-index bounds. */
const LIST_CAP = 500_000

/**
 * Where the unit ranks in each arm within the scope at `now`: cosine rank among the
 * in-scope rows with vectors, bm25 rank among the in-scope matches, recency rank by
 * created_at — counted with one scope listing and one SQL count, so a memory ranked
 * 5,000th costs no 5,000-deep recall unless the mode's pool would need it.
 */
function reach(store: MemorySource, trace: RecallTrace, s: Setup, unitId: string, memory: Memory | null): Reach {
  const cap = 100_000
  const notes: string[] = []
  const owner = trace.unit === 'session' ? 'session' : 'memory'
  const cfg = s.config
  const group =
    memory && trace.config.scope.blendUserId && memory.userId === trace.config.scope.blendUserId && memory.sessionId === null
      ? blendFilter(cfg.scope, s.now)
      : null
  const filter = group ?? scopeFilter(cfg.scope, s.now)
  let dense: number | null = null
  let lexical: number | null = null
  let recency: number | null = null
  const vec = s.prepared.vector
  if (trace.arms?.dense.ran && vec && trace.embedder.model) {
    const idx = store.vectors(trace.embedder.model, owner)
    const row = idx.rowOf.get(unitId)
    const qn = normalizeQuery(vec)
    if (row !== undefined && qn) {
      const sim = idx.dot(row, qn)
      const ids = owner === 'memory' ? store.idsWhere(filter, LIST_CAP + 1) : null
      let n: number
      if (ids && ids.length <= LIST_CAP) {
        const rows: number[] = []
        for (const id of ids) {
          const r = idx.rowOf.get(id)
          if (r !== undefined) rows.push(r)
        }
        n = idx.countAbove(qn, sim, row, rows)
      } else n = idx.countAbove(qn, sim, row) // an upper bound: the whole index
      dense = n + 1
    } else if (row === undefined && cfg.missingVector !== 'zero') notes.push(`it has no stored ${trace.embedder.model} vector: the dense arm cannot find it`)
  }
  if (trace.arms?.lexical.ran && owner === 'memory') {
    const text = trace.texts?.lexical ?? s.query.text
    const rank = store.lexicalRankOf(text, filter, unitId)
    if (rank !== null) {
      lexical = rank
    } else notes.push('no lexical match: none of the query’s words are in it')
  }
  if (memory && owner === 'memory') recency = store.countWhere({ ...filter, after: memory.createdAt + 1 }).total + 1
  const m = trace.mode
  const need =
    m === 'dense'
      ? dense
      : m === 'lexical'
        ? lexical
        : m === 'hybrid'
          ? Math.min(dense ?? Infinity, lexical ?? Infinity)
          : m === 'recency'
            ? recency
            : m === 'session' || m === 'keyword'
              ? cap
              : null
  const depth = need === null || !Number.isFinite(need) ? 0 : need
  if (depth > cap) notes.push(`it ranks below ${cap.toLocaleString('en-US')} in this mode's arms (the largest candidatePool)`)
  return { dense, lexical, recency, depth: Math.min(cap, depth), note: notes.length ? notes.join('; ') : null }
}

function absentReason(store: MemorySource, trace: RecallTrace, id: string): string {
  const bits: string[] = []
  const owner = trace.unit === 'session' ? 'session' : 'memory'
  if (trace.arms?.dense.ran && trace.embedder.model && !store.vectors(trace.embedder.model, owner).rowOf.has(id))
    bits.push(`no stored ${trace.embedder.model} vector`)
  if (!trace.arms?.dense.ran) bits.push(`the dense arm did not run (${trace.arms?.dense.reason ?? trace.degradedReason ?? 'no query vector'})`)
  if (trace.arms?.lexical.ran) bits.push('no lexical match')
  else if (trace.mode === 'lexical' || trace.mode === 'hybrid') bits.push(`the lexical arm did not run (${trace.arms?.lexical.reason ?? '—'})`)
  return `no arm gathered it: ${bits.join('; ') || 'ranked deeper than any arm fetches'}`
}
