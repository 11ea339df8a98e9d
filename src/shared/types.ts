/**
 * Domain types shared by main, preload and renderer. Pure types: no Node, no DOM.
 * Field names of the canonical DB are snake_case (docs/internals/design.md, a public format);
 * in memory and over the wire we use camelCase.
 */
import type { PartialRecallConfig } from './config'

export const ROLES = ['user', 'assistant', 'system', 'tool'] as const
export type Role = (typeof ROLES)[number]
export const KINDS = ['episodic', 'semantic', 'procedural', 'reflection'] as const
export type Kind = (typeof KINDS)[number]
export const TIERS = ['working', 'long_term', 'archived'] as const
export type Tier = (typeof TIERS)[number]

/** One row of `memories`, decoded. */
export interface Memory {
  id: string
  agentId: string | null
  userId: string | null
  sessionId: string | null
  role: Role | null
  kind: Kind | null
  tier: Tier | null
  content: string
  summary: string | null
  /** 0..1; null when the source has none. */
  salience: number | null
  /** epoch ms */
  createdAt: number
  /** epoch ms; null = never used */
  lastUsedAt: number | null
  useCount: number | null
  turn: number | null
  source: string | null
  /** Parsed JSON; null when absent. Malformed JSON is kept as null and counted. */
  metadata: unknown
  /** From the memory's session (`sessions.tenant_id`). */
  tenantId: string | null
}

/** One row of `sessions`, decoded, with a count of its memories. */
export interface Session {
  id: string
  agentId: string | null
  userId: string | null
  tenantId: string | null
  startedAt: number | null
  endedAt: number | null
  summary: string | null
  isArchived: boolean
  memoryCount: number
}

/** A bounded page of rows (Datasette-style count_limit). */
export interface Page<T> {
  rows: T[]
  offset: number
  limit: number
  /** Exact when `truncated` is false; otherwise a lower bound (= the count cap). */
  total: number
  truncated: boolean
  /** Wall time of the query in ms, measured in main. */
  tookMs: number
}

/** What a foreign row failed on; counted, never fatal. */
export interface MalformedCounts {
  /** memories whose metadata is not valid JSON */
  badMetadata: number
  /** vectors whose byte length / JSON length disagrees with `dim`, or that are not parseable */
  badVectorShape: number
  /** vectors containing NaN or Infinity */
  nonFiniteVector: number
  /** vectors whose dimension differs from the majority for their model */
  wrongDimension: number
  /** roles outside user/assistant/system/tool (shown as-is, filtered as null) */
  unknownRole: number
  unknownKind: number
  unknownTier: number
  /** memories whose created_at / last_used_at is present but unreadable (outside Date's ±8.64e15 ms, or not a time) */
  badTimestamp: number
}

/** The detected store layout: 'canonical', 'engram-v0.2' | 'engram-v0.5' | 'engram-v1', or a framework store's name. */
export type Layout = string

export interface EmbeddingModelFacts {
  model: string
  ownerType: 'memory' | 'session'
  /** the majority vector length (measured) */
  dim: number
  count: number
  /** rows of another length or unparseable: skipped on load */
  malformed: number
  /** of those, rows that are not a vector at all (odd byte count, bad JSON) */
  badShape: number
  /**
   * Vectors of this model backfilled by recallscope into the workspace DB (not in the
   * agent DB; `count` is the agent's). A valid agent vector wins over a backfilled one.
   */
  backfilled?: number
}

export interface DbFacts {
  path: string
  layout: Layout
  /** why this layout was detected (the tables and columns found); null when not recorded */
  detectedBecause: string | null
  readOnly: boolean
  workspacePath: string
  sizeBytes: number
  counts: { memories: number; sessions: number; embeddings: number; recallEvents: number; evalCases: number }
  byAgent: { key: string; count: number }[]
  byUser: { key: string; count: number }[]
  byKind: { key: string; count: number }[]
  byTier: { key: string; count: number }[]
  byRole: { key: string; count: number }[]
  models: EmbeddingModelFacts[]
  /** Min/max created_at over memories (epoch ms), null when empty. */
  timeRange: { min: number; max: number } | null
  /** Malformed rows seen so far (metadata is counted on read; vectors on load). */
  malformed: MalformedCounts
  hasFts: 'agent' | 'workspace' | 'none'
  /** Wall time to compute these facts. */
  tookMs: number
}

// ---------------------------------------------------------------------------
// Recall
// ---------------------------------------------------------------------------

export type GateName = 'scope' | 'dedupe' | 'minSimilarity' | 'floor' | 'topK' | 'budget'
export type TemplateName = RecallConfig['template']
export type PresetName =
  | 'portal-episodic'
  | 'portal-semantic'
  | 'engram'
  | 'fieldguide'
  | 'neo'
  | 'mem0'
  | 'langgraph-store'
  | 'openai-agents'
  | 'crewai'
  | 'mcp-memory-service'
  | 'agno'

export const FEATURE_NAMES = ['similarity', 'lexical', 'recency', 'salience'] as const
export type FeatureName = (typeof FEATURE_NAMES)[number]

import type { RecallConfig } from './config'

/** RecallConfig, its scope and weights: inferred from the one zod schema (config.ts), validated once at the edge. */
export type { RecallConfig, RecallScope, Weights } from './config'

/** Seed 003 cue: what the agent is trying to do right now. */
export interface Cue {
  goal?: string
  currentStep?: string
  openQuestions?: string[]
}

/**
 * What actually ran after degradation (scoring.ts `effectiveMode`): the config's mode, or
 * `keyword` (Engram fallback), `lexical` (hybrid without a query vector), `none` (nothing can run:
 * an empty result, never an error — seed 004).
 */
export type EffectiveMode = 'dense' | 'lexical' | 'hybrid' | 'recency' | 'session' | 'keyword' | 'none'

/**
 * What the engine measured for one candidate; enough to re-score without a round trip.
 * Arm ranks are kept for more candidates than the pool holds (see RecallTrace.arms), so the
 * renderer can also move `candidatePool`, switch dense/lexical/hybrid and change the fusion locally.
 */
export interface CandidateRaw {
  id: string
  /** cosine vs the query vector; null when the candidate has no usable vector or there is no query vector */
  similarity: number | null
  /** −bm25 / max(−bm25) over the query's matches in scope (0..1, the best lexical hit is 1); 0 when no lexical match */
  lexical: number
  /** raw bm25 (FTS5 sign: lower is better); null when not a lexical match */
  bm25: number | null
  /** now − last_used_at; created_at when never used or used after `now` (unknown at that moment), ms, ≥ 0 */
  ageLastUsedMs: number
  /** now − created_at, ms, ≥ 0 (rows created after `now` are out of scope) */
  ageCreatedMs: number
  /** 0..1; 0 when the source has none */
  salience: number
  /** 1-based rank in the dense arm, null if not in it */
  denseRank: number | null
  /** 1-based rank in the lexical arm, null if not in it */
  lexicalRank: number | null
  /** 1-based order in recency mode (newest first) */
  recencyRank: number | null
  /** UTF-16 length of the unit's text (ceil4 estimator) */
  textLength: number
  /** UTF-8 bytes of the unit's text (Go's len(), seed 004's `(len+3)/4`) */
  textBytes?: number
  /** reserved: the engine leaves out-of-scope rows out entirely (see engine.ts) */
  preGate?: 'scope' | 'dedupe'
  /** 1-based order in `session` (turn order) and `keyword` (newest first) modes */
  orderKey?: number
  /** Engram `userId` blend: a cross-session user memory, ranked in its own group and appended after the primary results */
  group?: 'blend'
  /** blend group: ids of primary candidates with identical content (Engram skips those) */
  sameContentAs?: string[]
  /** in the live transcript (scope.excludeIds, by id or identical text): dropped with gate `dedupe` after selection (seed 004) */
  excluded?: boolean
}

export interface Features {
  similarity: number
  lexical: number
  recency: number
  salience: number
}

export interface TraceResult {
  id: string
  rank: number
  score: number
  features: Features
  contributions: Features
  tokens: number
  /** 1-based rank by score (or order) before gates */
  scoreRank?: number
  group?: 'blend'
  fused?: { dense: number; lexical: number }
}

export interface TraceDropped {
  id: string
  score: number
  features: Features
  contributions: Features
  gate: GateName
  tokens: number
  scoreRank?: number
  group?: 'blend'
  fused?: { dense: number; lexical: number }
}

export interface EmbedderInfo {
  /** 'hashing' | 'ollama' | 'openai' | 'none' | 'vector' (explicit query vector) */
  name: string
  model: string | null
  available: boolean
}

/** A compact view of a memory or session unit for display next to a trace. */
export interface UnitInfo {
  id: string
  content: string
  kind: string | null
  role: string | null
  tier: string | null
  sessionId: string | null
  userId: string | null
  agentId: string | null
  createdAt: number | null
  lastUsedAt: number | null
  turn: number | null
  source: string | null
  salience: number | null
  /** parsed metadata (the Engram template prints it) */
  metadata?: unknown
}

/** One candidate arm of a trace: how far the renderer can move `candidatePool` locally. */
export interface ArmInfo {
  /** the arm ran (its ranks are in the candidates) */
  ran: boolean
  /** ranked candidates fetched (≥ candidatePool when the arm had that many) */
  fetched: number
  /** every match in scope was fetched (a larger pool would add nothing) */
  exhausted: boolean
  /** why it did not run, when it did not */
  reason: string | null
  /** the dense arm ran inside the database (Postgres + pgvector): exact, or which ANN index with its setting */
  pushdown?:
    | { kind: 'exact' }
    | { kind: 'hnsw'; index?: string; efSearch: number; indexUsed: boolean }
    | { kind: 'ivfflat'; index?: string; probes: number; indexUsed: boolean }
}

/** docs/internals/design.md "recall --json": the trace. Extra fields beyond the documented ones are additive. */
export interface RecallTrace {
  query: string
  cue: Cue | null
  now: number
  preset: string | null
  config: RecallConfig
  embedder: EmbedderInfo
  degraded: boolean
  degradedReason: string | null
  results: TraceResult[]
  dropped: TraceDropped[]
  context: string
  contextTokens: number
  /** Every candidate's raw measurements, for live re-scoring in the renderer. */
  candidates: CandidateRaw[]
  /** Display info for every id in candidates. */
  units: Record<string, UnitInfo>
  /** Ids that would get last_used_at = now (refreshOnRecall). */
  refreshed: string[]
  counts: {
    inScope: number
    /** inScope is a lower bound (counting stopped there) */
    inScopeCapped?: boolean
    dense: number
    lexical: number
    pool: number
  }
  timings: { totalMs: number; embedMs: number; denseMs: number; lexicalMs: number; scoreMs: number }
  /** What actually ran (after degradation). */
  mode?: EffectiveMode
  /** results are memories or sessions */
  unit?: 'memory' | 'session'
  /** The text each arm saw (seed 003: dense = cue, lexical = raw utterance). */
  texts?: { dense: string | null; lexical: string | null }
  /** Per arm: what was fetched (see scoring.ts canRerankLocally). `order` = session turn order / keyword matches. */
  arms?: { dense: ArmInfo; lexical: ArmInfo; recency: ArmInfo; order: ArmInfo }
  /** Total tokens of the injected results (per-unit estimates). */
  injectedTokens?: number
  /** When nothing was injected: which gate dropped everything, by how much, and the knob to move (explainEmpty.ts). */
  empty?: EmptyExplanation | null
}

// ---------------------------------------------------------------------------
// Recall events (what an agent logged)
// ---------------------------------------------------------------------------

export interface RecallEvent {
  id: string
  /** When it was logged (ms). NaN (null over HTTP) when the stored time is unreadable: see `unreadableAt`. */
  at: number
  /** The stored `at` as text when it is not a time a date can hold (NULL, text, 1e20): the event is shown without a time, never as 1970. */
  unreadableAt?: string
  agentId: string | null
  userId: string | null
  sessionId: string | null
  turn: number | null
  query: string | null
  cue: Cue | null
  preset: string | null
  /** Parsed config; null if missing or malformed. */
  config: Partial<RecallConfig> | null
  /** In returned order. `score` is the logged score (NaN when the log recorded none: show "—"). */
  results: { id: string; score: number; matchedBy?: MatchedBy }[]
  /** Where the event came from; absent = the store's own `recall_events` table. */
  origin?: EventOrigin
  /** Logged results that match no memory of the open store: listed, never dropped. */
  unmatched?: UnmatchedResult[]
  /** What the agent did next (its next message, tool call or LLM output). */
  decision?: EventDecision | null
}

/**
 * How a logged result was tied to a memory of the open store: exact id (Letta passage id,
 * LangGraph `namespace/key`, MCP entity name, content hash, span document id), exact text,
 * or normalised text (whitespace, quotes, case folded).
 */
export type MatchedBy = 'id' | 'text' | 'normalized'

/** The kinds of event source (docs/internals/design.md "Event sources"). */
export type EventSourceKind = 'recall_events' | 'letta' | 'langgraph' | 'openai-agents' | 'openmemory' | 'claude-code' | 'otlp' | 'otlp-live'

export interface EventOrigin {
  kind: EventSourceKind
  /** the tool or span that did the search, e.g. `archival_memory_search`, `mcp__memory__search_nodes` */
  tool: string | null
  /** log file it was read from (absolute path), when a file */
  file?: string | null
  /** 1-based line of a JSONL file */
  line?: number | null
  /** message / call / span ids inside the source */
  messageId?: string | null
  callId?: string | null
  traceId?: string | null
  spanId?: string | null
}

export interface UnmatchedResult {
  rank: number
  /** the id the log gave, if any */
  loggedId: string | null
  /** the text the log gave, if any (clipped for display) */
  text: string | null
  score: number | null
}

/** How the results of one event source matched the open store's memories (counts of results). */
export interface MatchCounts {
  id: number
  text: number
  normalized: number
  unmatched: number
}

/** One source of recall events and what reading it gave (`events.sources`, `info`, the Decision-trace screen). */
export interface EventSourceInfo {
  /** stable within the store's event log: the persist key, `log:<file>`, `<kind>:<n>`, or `recall_events` */
  key: string
  /** 'unknown': a remembered log that can no longer be read (see `error`) */
  kind: EventSourceKind | 'unknown'
  /** what it reads, e.g. "Letta messages (archival_memory_search, conversation_search)" */
  label: string
  /** the log file, when the source is one */
  file: string | null
  /** events it holds now (for `recall_events`: the table's row count) */
  events: number
  /** recalls read, malformed records skipped, up to 20 examples of why */
  stats: { read: number; skipped: number; problems: { where: string; why: string }[] }
  matched: MatchCounts
  /** set when the whole source could not be read (the others still are) */
  error: string | null
  /** not read yet (it is read on the next query) */
  pending: boolean
}

export interface EventDecision {
  /** the assistant's next message or the LLM span's output text */
  text: string | null
  /** or the next tool call */
  toolCall: { name: string; arguments: string } | null
  at: number | null
  /** where it came from, e.g. 'assistant message', 'tool call', 'chat span' */
  via: string
}

// ---------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------

export interface EvalCase {
  id: string
  name: string
  query: string
  cue: Cue | null
  scope: { agentId?: string; userId?: string; sessionId?: string; tenantId?: string }
  now: number | null
  relevant: { id: string; grade: number }[]
  expectEmpty: boolean
  tags: string[]
  split: 'train' | 'test'
}

/** Why a recall injected nothing (explainEmpty.ts computes it). */
export interface EmptyExplanation {
  /** what stopped everything: a gate, no candidate in the pool, no arm that could run, nothing in scope */
  gate: GateName | 'pool' | 'arm'
  /** pool members dropped, by gate */
  byGate: Partial<Record<GateName, number>>
  /** pool size */
  candidates: number
  /** the best candidate's value on the deciding gate's measure (score for floor, cosine for minSimilarity, tokens for budget) */
  best: number | null
  /** the gate's setting */
  threshold: number | null
  /** one plain sentence: which gate, by how much, which knob */
  message: string
  /** a change that injects something (verified by re-scoring), or null when none is a knob away */
  suggestion: { patch: PartialRecallConfig; label: string; wouldInject: number } | null
}
