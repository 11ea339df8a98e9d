/**
 * The memory source: the one interface the engine, eval, trace, the API and the
 * CLI use to read an agent's memory store, whatever holds it (docs/internals/design.md
 * "Sources"). Each kind of store is one folder under `src/main/store/`
 * implementing it; nothing outside `src/main/store/` holds a database handle or
 * writes SQL (the architecture test enforces it).
 *
 * Shape (after LangGraph's BaseStore and mem0's vector-store base): small role interfaces
 * (SourceInfo, MemoryBrowse, RecallPasses, VectorStore, EventLog, MemoryWrite) composed into
 * MemorySource, plus `capabilities()`, so a caller asks what a source can do
 * instead of guessing (mem0's base has no flags; ours does). What only some sources
 * can do is an object or null there (`pushdown`, `snapshots`), so the type narrows
 * and nobody calls an optional method with `!`. A new source passes the conformance
 * suite (test/conformance/, docs/internals/adding-a-source.md).
 *
 * Synchronous on purpose: a recall is a pure function of (snapshot, query,
 * config, now), and eval / tune / replay / why-not run thousands of them in a
 * loop over the same candidates. Sources whose driver is asynchronous answer
 * these calls from a worker through a blocking bridge rather than making every
 * engine step async.
 *
 * Every source comes with a `Workspace` (ours, always a local SQLite file):
 * eval cases, runs, caches, backfilled vectors (store/workspace/).
 */
import type { RecallAges, EventFilter, Facets, MemoryRow, VectorInfo } from '../../shared/contract'
import type { DbFacts, EmbeddingModelFacts, EventDecision, EventOrigin, Memory, Page, RecallEvent, RecallScope, Session } from '../../shared/types'
import type { TextMatches } from './textMatch'
import type { AgentRecords } from './agentRecords'
import type { VectorIndex } from './vectors/vectorIndex'
import type { Workspace } from './workspace/workspace'

/** Filters over memories, shared by the browser (memories.page) and a recall's scope. */
export interface MemoryFilter {
  agentId?: string
  userId?: string
  sessionId?: string
  tenantId?: string
  kinds?: string[]
  tiers?: string[]
  roles?: string[]
  /** created_at >= after */
  after?: number
  /** created_at <= before */
  before?: number
  /** only memories with (true) / without (false) a stored vector */
  hasEmbedding?: boolean
  /** restrict to these ids */
  ids?: string[]
  /** exclude these ids */
  excludeIds?: string[]
  /** `session_id IS NULL` (Engram user facts) */
  noSession?: boolean
}

export const MEMORY_SORTS = ['created_at', 'last_used_at', 'salience', 'turn', 'use_count', 'relevance'] as const
export type MemorySort = (typeof MEMORY_SORTS)[number]

export interface MemoryPageQuery extends MemoryFilter {
  search?: string
  sort?: MemorySort
  dir?: 'asc' | 'desc'
  offset?: number
  limit?: number
}

export interface SessionPageQuery {
  agentId?: string
  userId?: string
  tenantId?: string
  search?: string
  includeArchived?: boolean
  sort?: 'started_at' | 'memory_count'
  dir?: 'asc' | 'desc'
  offset?: number
  limit?: number
}

/** One filter type for the recall log everywhere (contract `EventFilter`) plus paging. */
export interface EventPageQuery extends EventFilter {
  dir?: 'asc' | 'desc'
  offset?: number
  limit?: number
}

/** The scope's rows: ids and their row keys (`keys[i]` belongs to `ids[i]`; keys are stable integers, ascending = storage order). */
export interface ScopeRows {
  ids: string[]
  rids: number[]
}

/** One lexical pass (bm25; lower = better, FTS5's sign). */
export interface LexicalPass {
  /** the best `limit` in-scope matches, best first */
  hits: { id: string; bm25: number }[]
  /** bm25 of each requested `alsoIds` id (in-scope rows, e.g. dense hits) that matches; absent = no match */
  also: Map<string, number>
  /** every requested id was checked */
  alsoKnown: boolean
  /** which strategy ran (tests, timings): 'topk' is the prefix read by exact top-k over the JS BM25 index */
  path: 'range' | 'prefix' | 'join' | 'topk'
}

export interface LexicalRequest {
  text: string
  filter: MemoryFilter
  limit: number
  /** a small scope's min/max row key: lets the index read only that stretch */
  ridRange?: [number, number] | null
  /** ids (in scope) whose bm25 the caller also needs */
  alsoIds?: string[]
  /** the scope's rows when already listed (small scopes) */
  listed?: ScopeRows
  /**
   * One gather's identity (its PassReads): requests carrying the same object are answered from the
   * store as it was at the first of them when nothing changed since, without re-checking its version.
   */
  snapshot?: object
}

export interface EventRef {
  eventId: string
  at: number
  rank: number
  score: number
  query: string | null
}

/** Extra columns some logs carry (canonical `recall_events.query_vector`, `.context`, `.decision`). */
export interface EventExtras {
  /** `query_vector`: the agent's query vector (float32 BLOB or JSON array) */
  queryVector: Float32Array | null
  /** why a present `query_vector` was not usable */
  queryVectorProblem: string | null
  /** `context`: the block the agent injected */
  context: string | null
  /** `decision`: what the agent did next (JSON `{text | toolCall, at, via?}`); absent when the column is absent or unusable */
  decision?: EventDecision | null
}

export interface EventTimelineStats {
  total: number
  range: { min: number; max: number } | null
  agents: string[]
  users: string[]
  presets: string[]
  /** events whose `at` is not a usable time: skipped, counted */
  badTimestamps: number
  /** events per (bin, preset), bins of `binMs` from `range.min` */
  counts(binMs: number, start: number): { bin: number; preset: string; count: number }[]
}

/** How a pushed-down dense search ran (the trace shows it). */
export type DenseMethod =
  | { kind: 'exact' }
  | { kind: 'hnsw'; index?: string; efSearch: number; indexUsed: boolean }
  | { kind: 'ivfflat'; index?: string; probes: number; indexUsed: boolean }

export interface DenseSearchRequest {
  /** the query, unit length */
  vector: Float64Array
  model: string
  ownerType: 'memory' | 'session'
  filter: MemoryFilter
  limit: number
  /** in-scope rows without a vector rank at similarity 0 (seed 002) */
  missingZero: boolean
}

export interface DenseSearchResult {
  /** best first; ties by id */
  hits: { id: string; similarity: number | null }[]
  /** every in-scope row with a vector was returned */
  exhausted: boolean
  inScope: number
  inScopeCapped: boolean
  method: DenseMethod
}

/**
 * The dense arm run inside the store (pgvector). Present only on sources that can:
 * `capabilities().pushdown` is this object or null, so a caller that has it needs no `!`.
 */
export interface DensePushdown {
  /** The top-`limit` in-scope owners by cosine, computed in the store. */
  denseSearch(req: DenseSearchRequest): DenseSearchResult
  /** Cosine similarity of these owners' stored vectors of `model`; ids without one are absent. */
  similarities(ids: string[], vector: ArrayLike<number>, model: string, ownerType?: 'memory' | 'session'): Map<string, number>
}

/**
 * Vector snapshots: a source whose first load of a big index would hold the thread for seconds
 * lets a worker load it and save a snapshot (saveVectorSnapshots), which this thread then restores.
 */
export interface VectorSnapshots {
  /** Models whose first load in this thread would be slow and could be prepared elsewhere. */
  coldVectorModels(): { model: string; ownerType: 'memory' | 'session' }[]
  /** Restore big vector indexes from their snapshots without holding the thread (before a first use). */
  restoreVectors(): Promise<void>
  /** Write snapshots of the loaded vector indexes that qualify; returns the files written. */
  saveVectorSnapshots(): string[]
}

/** What a source can do; the engine and the UI ask instead of guessing. */
export interface SourceCapabilities {
  /** a full-text index exists in the store ('agent'), was built in the workspace ('workspace'), or neither yet */
  fts: 'agent' | 'workspace' | 'none'
  /** stored vectors per owner type and model (after the workspace's backfill) */
  vectorModels: { ownerType: 'memory' | 'session'; model: string; dim: number }[]
  /** the dense arm inside the store (e.g. pgvector); null: the engine scans a VectorIndex */
  pushdown: DensePushdown | null
  /** big vector indexes can be prepared in a worker and restored from a snapshot; null: loaded on first use */
  snapshots: VectorSnapshots | null
  /** the store logs what its agent recalled (recall events) */
  recallEvents: boolean
  /** opened read-only (the default) */
  readOnly: boolean
  /** write mode can refresh last_used_at / use_count (seed 003 refreshOnRecall) */
  supportsWrite: boolean
}

/** Identity and lifecycle: where the store is, how it was recognised, its workspace. */
export interface SourceInfo {
  /** where the store lives (absolute path, or a URL without its password) */
  readonly path: string
  /** the detected layout, e.g. 'canonical', 'engram-v1' */
  readonly layout: string
  /** why that layout was detected (the tables or files found) */
  readonly detectedBecause: string | null
  readonly readOnly: boolean
  /** the workbench's own file beside the store */
  readonly workspace: Workspace
  readonly isClosed: boolean
  /** the private copy read instead of the store when its folder is read-only (the UI says so); null when read in place */
  readonly snapshotPath: string | null
  /** Fail now, typed (DB_CORRUPT), when the store is damaged: opening is all-or-nothing. */
  checkIntegrity(): void
  capabilities(): SourceCapabilities
  close(): void
}

/** Facts and browsing: what the Sessions and Memories screens read. */
export interface MemoryBrowse {
  facts(): DbFacts
  facets(): Facets
  /** memories and sessions, exact (cheap: the smallest index) */
  counts(): { memories: number; sessions: number }
  sessionsPage(q?: SessionPageQuery): Page<Session>
  getSession(id: string): Session | null
  getSessions(ids: string[]): Map<string, Session>
  memoriesPage(q?: MemoryPageQuery): Page<MemoryRow>
  getMemory(id: string): Memory | null
  /** Memories by id; missing ids are absent. Callers must not mutate what they get. */
  getMemories(ids: string[]): Map<string, Memory>
  /** the raw metadata text of a memory (for showing what could not be parsed) */
  rawMetadata(id: string): unknown
  idsWithEmbedding(ids: string[]): Set<string>
  /** Memories matching a filter, capped; newest first unless `order` says otherwise. */
  memoriesWhere(f: MemoryFilter, opts?: { limit?: number; order?: 'created_desc' | 'created_asc' | 'turn' }): Memory[]
  idsWhere(f: MemoryFilter, cap?: number): string[]
  countWhere(f: MemoryFilter): { total: number; truncated: boolean }
  /** Rows of a filter in storage order, `after` a row key (backfill); `hasEmbedding` means the store's own vectors. */
  walkMemories(f: MemoryFilter, afterKey: number, limit: number): { key: number; id: string; content: string }[]
  /** Exact count of a walk's filter. */
  walkCount(f: MemoryFilter): number
  /** a memory's storage key (for tie-breaks that follow storage order); null when unknown */
  rowKey(id: string): number | null
  /**
   * Memories whose content equals one of `texts` (exact), and whose normalised content
   * (textMatch.ts normalizeMatchText) equals one of `normalized`: how a logged recall result
   * without a known id is tied to a memory (events/match.ts). One scan each, only when asked;
   * at most TEXT_LOOKUP_MAX texts per call.
   */
  memoryIdsByText(q: { texts: string[]; normalized: string[] }): TextMatches
}

/** The engine's candidate passes (scope, lexical, keyword, sessions, ages). */
export interface RecallPasses {
  scopeRows(f: MemoryFilter, cap: number): ScopeRows
  countScope(f: MemoryFilter, cap?: number): { count: number; capped: boolean }
  /** whether a text has anything the lexical index can match */
  hasLexicalTerms(text: string): boolean
  lexicalPass(req: LexicalRequest): LexicalPass
  /** Where a memory ranks among the in-scope lexical matches; null when it does not match (why-not). */
  lexicalRankOf(text: string, f: MemoryFilter, id: string): number | null
  /** seed 002 keyword fallback: ids whose content contains any keyword, newest first */
  keywordSearch(f: MemoryFilter, keywords: string[], limit: number): string[]
  sessionsForRecall(scope: RecallScope, now: number): Session[]
  sessionMessages(sessionIds: string[], now: number): Map<string, { role: string | null; content: string }[]>
  /** Ages of a filter's memories at `now` (the UI's decay curve). */
  ageHistogram(f: MemoryFilter, now: number, from: 'last_used' | 'created', maxBins?: number): RecallAges
}

/** Stored vectors: the engine's dense arm scans these (unless `capabilities().pushdown`). */
export interface VectorStore {
  storedModels(owner?: 'memory' | 'session'): string[]
  /** The vector index of one model (loaded on first use, refreshed cheaply after). */
  vectors(model: string, ownerType?: 'memory' | 'session'): VectorIndex
  vectorDataVersion(): string
  vectorModels(): EmbeddingModelFacts[]
  vectorInfo(ownerId: string, ownerType?: 'memory' | 'session'): VectorInfo[]
  /** Forget loaded vector indexes (the next use reloads). */
  reloadVectors(): void
}

/** A layout's own event log that is not a `recall_events` table: each event's origin and the source's label. */
export interface OwnEventsOrigin {
  origin: EventOrigin
  label: string
}

/** The store's own recall log (canonical `recall_events`); empty on stores that keep none. */
export interface EventLog {
  /**
   * The agent's own records that in-store event readers turn into recall events (Letta
   * messages, LangGraph checkpoints, Agents SDK session items): one entry per kind the
   * layout holds; absent or empty when none. Rows are read lazily, each call re-reads.
   */
  agentRecords?(): AgentRecords[]
  /**
   * What the store's own log (`eventsPage`) is when a layout maps another table onto it (OpenMemory's
   * `memory_access_logs`): its origin and a label; absent or null: a `recall_events` table.
   */
  ownEventsOrigin?(): OwnEventsOrigin | null
  eventsPage(q?: EventPageQuery): Page<RecallEvent>
  getEvent(id: string): RecallEvent | null
  eventExtras(id: string): EventExtras
  eventsForMemory(memoryId: string, limit?: number): EventRef[]
  eventTimeline(f: EventFilter): EventTimelineStats
}

/** Write mode (off unless the user asked for it). */
export interface MemoryWrite {
  /** seed 003 refreshOnRecall for real: READ_ONLY unless opened in write mode. */
  applyRefresh(ids: string[], now: number): { updated: number }
}

export type { AgentRecords } from './agentRecords'

/**
 * Every role together: what the engine, eval, trace and the API take. A function that needs
 * one role only may ask for it (e.g. `MemoryBrowse`), so a test can hand it a small fake.
 */
export interface MemorySource extends SourceInfo, MemoryBrowse, RecallPasses, VectorStore, EventLog, MemoryWrite {}
