/**
 * A logged recall event made runnable again: its full config (completed from
 * its preset when the log holds a partial one), its query vector (logged, or
 * re-embedded with the embedder that makes the logged model's vectors), and the
 * optional extra columns an agent may log beside the canonical ones (see
 * src/shared/trace.ts: `query_vector`, `context`).
 */
import fs from 'node:fs'
import { armTexts } from '../../shared/cue'
import { mergeConfig, partialConfigSchema, recallConfigSchema } from '../../shared/config'
import { DEFAULT_PRESET, getPreset, presetNames } from '../../shared/presets'
import { renderResults } from '../../shared/render'
import { describeIssues, RecallscopeError } from '../../shared/result'
import type { TraceEventDetail } from '../../shared/trace'
import { estimateTokens } from '../../shared/scoring'
import type { CandidateRaw, EventDecision, RecallConfig, RecallEvent, RecallTrace, TraceResult, UnitInfo } from '../../shared/types'
import { createEmbedder, parseEmbedderSpec, type EmbedderOptions } from '../embed/index'
import { HASHING_MODEL } from '../embed/hashing'
import { prepareVector, runRecallSync, type PreparedVector } from '../recall/engine'
import { unitOfMemory, unitOfSession } from '../recall/units'
import { defaultEmbedderSpec } from '../recall/request'
import { normalizeQuery } from '../recall/dense'
import type { EventExtras, MemorySource } from '../store/source'
import { eventLogOf } from '../events/eventLog'
import { MAX_DATE_MS } from '../store/decode'

export type { EventExtras } from '../store/source'

/** An event from the store's event log (its recall_events, its agent records, added logs), or NOT_FOUND. */
export async function requireEvent(store: MemorySource, eventId: string): Promise<RecallEvent> {
  const event = await eventLogOf(store).requireEvent(eventId)
  // an `at` outside Date's range is unreadable (the timeline skips and counts it): a replay or
  // why-not needs the event's moment, so it is a typed refusal rather than a throw from Date
  if (!Number.isFinite(event.at) || Math.abs(event.at) > MAX_DATE_MS)
    throw new RecallscopeError(
      'BAD_INPUT',
      `Event ${eventId} has an unreadable time (stored: ${event.unreadableAt ?? String(event.at)}; not a time a date can hold): it cannot be replayed`,
      {
        eventId,
        at: event.unreadableAt ?? String(event.at),
      },
    )
  return event
}

/**
 * What the agent did next: the event's own (an event source read it from the agent's records),
 * else the canonical log's optional `decision` column; null when neither has one.
 */
export function eventDecision(event: RecallEvent, extras: EventExtras): EventDecision | null {
  return event.decision ?? extras.decision ?? null
}

/** Event sources read from files or posts beside the store (their ids are not the store's). */
const LOG_FILE_KINDS = new Set<NonNullable<RecallEvent['origin']>['kind']>(['claude-code', 'otlp', 'otlp-live'])

/** What each kind of event source is, for the replay's notes. */
const SOURCE_LABEL: Record<NonNullable<RecallEvent['origin']>['kind'], string> = {
  recall_events: 'the recall_events table',
  letta: 'Letta messages',
  langgraph: 'LangGraph checkpoints',
  'openai-agents': 'an OpenAI Agents SDK session',
  openmemory: 'OpenMemory access logs',
  'claude-code': 'a Claude Code transcript',
  otlp: 'an OTLP trace file',
  'otlp-live': 'a live OTLP trace',
}

export interface ResolvedConfig {
  config: RecallConfig
  source: TraceEventDetail['configSource']
  notes: string[]
}

/** The config an event ran with: the logged full config, else a partial completed from its preset, else its preset. */
function resolveEventConfig(e: RecallEvent): ResolvedConfig {
  const known = e.preset !== null && presetNames().includes(e.preset)
  const presetName = known ? e.preset! : DEFAULT_PRESET
  const notes: string[] = []
  const base = getPreset(presetName).config
  if (e.config) {
    const full = recallConfigSchema.safeParse(e.config)
    if (full.success) return { config: full.data, source: 'logged', notes }
    const partial = partialConfigSchema.safeParse(e.config)
    if (partial.success) {
      const merged = recallConfigSchema.safeParse(mergeConfig(base, partial.data))
      if (merged.success) {
        notes.push(
          `the logged config is partial: missing fields taken from preset ${presetName}${known ? '' : ` (logged preset ${e.preset ?? 'none'} is unknown)`}`,
        )
        return { config: merged.data, source: 'partial', notes }
      }
    }
    const issue = describeIssues(full.error, '(config)')
    notes.push(`the logged config is not a valid RecallConfig (${issue}): replaying preset ${presetName} instead`)
  } else if (e.origin && LOG_FILE_KINDS.has(e.origin.kind))
    notes.push(
      `read from ${SOURCE_LABEL[e.origin.kind]}, which records no recall config: replaying preset ${presetName} over the whole store (the log's service, agent and session names are not the store's scope)`,
    )
  else if (e.origin && e.origin.kind !== 'recall_events')
    notes.push(
      `read from ${SOURCE_LABEL[e.origin.kind]}, which records no recall config: replaying ${known ? `the framework's preset ${presetName}` : `preset ${presetName} (recallscope has no preset for this framework)`}, scoped to the event's agent${getPreset(presetName).requires.includes('sessionId') ? ' and session' : ''}`,
    )
  else
    notes.push(
      `no config was logged: replaying preset ${presetName}, scoped to the event's agent${getPreset(presetName).requires.includes('sessionId') ? ' and session' : ''}`,
    )
  const config = structuredClone(base)
  // A log file's ids (an OTLP service.name, a Claude Code session) name the agent's world, not the store's
  // scope: scoping by them would put every memory out of scope. In-store events carry the store's own ids.
  if (e.origin && LOG_FILE_KINDS.has(e.origin.kind)) return { config, source: 'preset', notes }
  // A guess, and the notes say so: the event's own agent (and session when the preset needs one).
  if (e.agentId) config.scope.agentId = e.agentId
  if (getPreset(presetName).requires.includes('sessionId') && e.sessionId) config.scope.sessionId = e.sessionId
  if (getPreset(presetName).requires.includes('userId') && e.userId) config.scope.userId = e.userId
  return { config, source: 'preset', notes }
}

/**
 * The embedder spec that makes `model`'s vectors: hashing for hashing models;
 * the current setting when it makes that model; else Ollama (the default server
 * kind for a stored model, recall/request.ts defaultEmbedderSpec).
 */
export function embedderSpecForModel(
  store: MemorySource,
  model: string | null | undefined,
  current: string | null | undefined,
  owner: 'memory' | 'session',
): string {
  if (!model) return current ?? defaultEmbedderSpec(store, owner)
  if (model === HASHING_MODEL || model.startsWith('hashing')) return 'hashing'
  if (current) {
    try {
      if (parseEmbedderSpec(current).model === model) return current
    } catch {
      /* a bad saved spec: fall through to the default kind */
    }
  }
  return `ollama:${model}`
}

export interface EventRun {
  event: RecallEvent
  query: { text: string; cue: RecallEvent['cue'] }
  config: RecallConfig
  now: number
  prepared: PreparedVector
  vectorSource: 'logged' | 'embedder' | 'none'
  extras: EventExtras
  resolved: ResolvedConfig
}

export interface PrepareOptions {
  /** the current embedder setting (used when it makes the logged model's vectors) */
  embedder?: string | null
  embedderOptions?: EmbedderOptions
}

/** Everything to re-run an event as logged: config, `now` = its `at`, the query vector. */
async function prepareLoggedRun(store: MemorySource, event: RecallEvent, opts: PrepareOptions = {}): Promise<EventRun> {
  const resolved = resolveEventConfig(event)
  const extras = eventLogOf(store).eventExtras(event.id)
  const config = resolved.config
  const query = { text: event.query ?? '', cue: event.cue }
  const owner = config.unit === 'session' ? 'session' : 'memory'
  let prepared: PreparedVector
  let vectorSource: EventRun['vectorSource']
  if (extras.queryVector) {
    prepared = { vector: extras.queryVector, embedder: { name: 'vector', model: null, available: true }, reason: null, embedMs: 0 }
    vectorSource = 'logged'
  } else {
    const spec = embedderSpecForModel(store, config.model, opts.embedder, owner)
    const embedder = createEmbedder(spec, opts.embedderOptions ?? {})
    // The logged model is what the dense arm searches; an embedder of another model would be refused by the engine.
    if (config.model && embedder.model && embedder.model !== config.model)
      throw new RecallscopeError('INTERNAL', `embedder ${spec} does not make ${config.model} vectors`)
    const texts = armTexts(query.text, query.cue, config.cueUse)
    prepared = await prepareVector(store, texts.dense, { embedder })
    vectorSource = prepared.vector ? 'embedder' : 'none'
  }
  return { event, query, config, now: event.at, prepared, vectorSource, extras, resolved }
}

/** Run the engine for a prepared event run (optionally another config / depth). */
function runEvent(
  store: MemorySource,
  run: Pick<EventRun, 'query' | 'config' | 'now' | 'prepared' | 'event'>,
  over: { config?: RecallConfig; now?: number; depth?: number } = {},
): RecallTrace {
  return runRecallSync(store, run.query, over.config ?? run.config, over.now ?? run.now, {
    preset: run.event.preset,
    prepared: run.prepared,
    depth: over.depth,
  })
}

/** Display info of ids (memories, or sessions for session-unit recalls); null = gone. */
export function unitsOf(store: MemorySource, ids: string[], unit: 'memory' | 'session', trace?: RecallTrace): Map<string, UnitInfo | null> {
  const out = new Map<string, UnitInfo | null>()
  const missing: string[] = []
  for (const id of ids) {
    const u = trace?.units[id]
    if (u) out.set(id, u)
    else missing.push(id)
  }
  if (missing.length === 0) return out
  if (unit === 'session') {
    const ss = store.getSessions(missing)
    for (const id of missing) {
      const s = ss.get(id)
      out.set(id, s ? unitOfSession(s, s.summary ?? '') : null)
    }
  } else {
    const ms = store.getMemories(missing)
    for (const id of missing) {
      const m = ms.get(id)
      out.set(id, m ? unitOfMemory(m) : null)
    }
  }
  return out
}

/**
 * The event's context block: the logged one when the event stored it, else the
 * logged results rendered with the logged template and today's memory text (the
 * similarity Engram prints comes from the replay).
 */
export function eventContext(
  event: RecallEvent,
  config: RecallConfig,
  extras: EventExtras,
  replay: RecallTrace,
  units: Map<string, UnitInfo | null>,
): TraceEventDetail['context'] {
  if (extras.context !== null)
    return { text: extras.context, tokens: extras.context === '' ? 0 : estimateTokens(extras.context, config.tokenEstimator), source: 'logged', note: null }
  const zero = { similarity: 0, lexical: 0, recency: 0, salience: 0 }
  const results: TraceResult[] = event.results.map((r, i) => ({ id: r.id, rank: i + 1, score: r.score, features: zero, contributions: zero, tokens: 0 }))
  const allUnits: Record<string, UnitInfo> = { ...replay.units }
  const candidates: CandidateRaw[] = [...replay.candidates]
  const have = new Set(candidates.map((c) => c.id))
  const lost: string[] = []
  for (const r of event.results) {
    if (have.has(r.id)) continue
    const u = units.get(r.id)
    if (!u) {
      lost.push(r.id)
      continue
    }
    // Not among today's candidates (out of scope now…): render its row anyway, without a similarity.
    allUnits[r.id] = u
    candidates.push({
      id: r.id,
      similarity: null,
      lexical: 0,
      bm25: null,
      ageLastUsedMs: 0,
      ageCreatedMs: 0,
      salience: 0,
      denseRank: null,
      lexicalRank: null,
      recencyRank: null,
      textLength: u.content.length,
    })
    have.add(r.id)
  }
  const r = renderResults(results, { candidates, units: allUnits, mode: replay.mode }, config)
  const parts = ['re-rendered from the logged results with today’s memory text (this log stores no context block)']
  if (lost.length)
    parts.push(`${lost.length} logged id${lost.length === 1 ? ' is' : 's are'} no longer in the DB and not shown: ${lost.slice(0, 5).join(', ')}`)
  return { text: r.text, tokens: r.tokens, source: 'rerendered', note: parts.join('; ') }
}

/**
 * Measure a memory the arms did not gather (deeper than they fetched): its cosine
 * against the trace's query vector, its bm25 for the trace's lexical text
 * (normalised like the engine: by the best match, which the lexical arm always
 * gathers), its ages at the trace's `now`, its salience. No arm ranks.
 */
export function measureCandidate(store: MemorySource, trace: RecallTrace, prepared: PreparedVector, id: string): CandidateRaw | null {
  if (trace.unit === 'session') return null
  const m = store.getMemory(id)
  if (!m) return null
  let similarity: number | null = null
  const qn = prepared.vector ? normalizeQuery(prepared.vector) : null
  if (qn && trace.embedder.model && trace.arms?.dense.ran) {
    const idx = store.vectors(trace.embedder.model, 'memory')
    const row = idx.rowOf.get(id)
    if (row !== undefined && idx.dim === qn.length) similarity = idx.dot(row, qn)
  }
  let bm25: number | null = null
  let lexical = 0
  if (trace.texts?.lexical) {
    const hit = store.lexicalPass({ text: trace.texts.lexical, filter: { ids: [id] }, limit: 1 }).hits[0]
    if (hit) {
      bm25 = hit.bm25
      let maxNeg = -hit.bm25
      for (const c of trace.candidates) if (c.bm25 !== null && -c.bm25 > maxNeg) maxNeg = -c.bm25
      lexical = maxNeg > 0 ? -hit.bm25 / maxNeg : 0
    }
  }
  const now = trace.now
  const lastUsed = m.lastUsedAt !== null && m.lastUsedAt <= now ? m.lastUsedAt : m.createdAt
  return {
    id,
    similarity,
    lexical,
    bm25,
    ageLastUsedMs: Math.max(0, now - lastUsed),
    ageCreatedMs: Math.max(0, now - m.createdAt),
    salience: m.salience ?? 0,
    denseRank: null,
    lexicalRank: null,
    recencyRank: null,
    textLength: m.content.length,
  }
}

/**
 * The event-time replay of an event, shared by trace.event / trace.replay /
 * trace.why / trace.drivers (the UI asks for all four of one event): cached per
 * store for a minute, keyed by the embedder and the agent DB's size and mtime
 * (an agent writing to the DB invalidates it). Traces are treated as immutable.
 */
const loggedCache = new WeakMap<MemorySource, Map<string, { until: number; value: { run: EventRun; trace: RecallTrace } }>>()
const CACHE_MS = 60_000
const CACHE_MAX = 16

function dbSignature(p: string): string {
  const st = (f: string) => {
    try {
      const x = fs.statSync(f)
      return `${x.size}:${x.mtimeMs}`
    } catch {
      return '-'
    }
  }
  return `${st(p)}|${st(`${p}-wal`)}`
}

export async function loggedReplay(store: MemorySource, event: RecallEvent, opts: PrepareOptions = {}): Promise<{ run: EventRun; trace: RecallTrace }> {
  let m = loggedCache.get(store)
  if (!m) loggedCache.set(store, (m = new Map<string, { until: number; value: { run: EventRun; trace: RecallTrace } }>()))
  const key = JSON.stringify([event.id, event.at, event.config, event.results, opts.embedder ?? null, opts.embedderOptions ?? null, dbSignature(store.path)])
  const clock = performance.now()
  const hit = m.get(key)
  if (hit && hit.until > clock) return hit.value
  const run = await prepareLoggedRun(store, event, opts)
  const value = { run, trace: runEvent(store, run) }
  m.delete(key)
  m.set(key, { until: clock + CACHE_MS, value })
  while (m.size > CACHE_MAX) m.delete(m.keys().next().value!)
  return value
}
