/**
 * The Postgres memory source: a read-only window on an agent's Postgres (+
 * pgvector) store, through the blocking bridge (bridge.ts) so the engine's
 * synchronous interface holds.
 *
 * Push-down (capabilities().pushdown when vectors are pgvector
 * `vector` or `real[]` with pgvector installed):
 *  - dense: `ORDER BY vec <=> $q LIMIT n` in the database over the scope's
 *    WHERE; exact by default (the distances are materialised first, so an
 *    HNSW/IVFFlat index cannot change the answer); with `?ann=hnsw|ivfflat` and
 *    such an index, the planner may use it (`SET hnsw.ef_search` /
 *    `ivfflat.probes`) and the trace names the method;
 *  - lexical: Postgres full text, `websearch_to_tsquery('english', …)` ranked by
 *    `ts_rank_cd`. The engine's convention is FTS5's bm25 (negative for a match,
 *    lower = better), so a pass returns bm25 = −ts_rank_cd: the engine's
 *    lexical feature −bm25 / max(−bm25) is then ts_rank_cd / max(ts_rank_cd);
 *  - similarity of lexical-only candidates: `1 − (vec <=> $q)` for those ids.
 * Only the candidate pool crosses the wire; recency, salience, gates and the
 * breakdown stay in the shared engine. Without pgvector (bytea vectors), the
 * dense arm falls back to the engine's scan over a VectorIndex loaded here.
 *
 * Backfilled vectors live in the local workspace, not on the server: for ids
 * the server has no vector of that model for (the server's always wins), the
 * in-scope ones are scanned here and merged with the pushed-down hits in the
 * database's order (similarity desc, id asc); the sets are disjoint, so the
 * merged top-n is exact. Layouts whose vectors are zero-padded to one length
 * (Letta's vector(4096)) read them back at the model's length and pad the query.
 *
 * Rows have no integer row key in Postgres: ties break by id, and the keys the
 * interface asks for (ScopeRows.rids, walkMemories) are ordinals of the id order.
 *
 * Layout (as the SQLite source's): this class opens the connection and is a thin
 * list of methods over the query modules beside it — facts.ts, browse.ts,
 * candidates.ts, vectors.ts, dense.ts, events.ts — which take it as a PgCtx
 * (context.ts); the bridge, URL and layouts live beside them too.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { EventFilter, Facets, MemoryRow, RecallAges, VectorInfo } from '../../../shared/contract'
import { RecallscopeError } from '../../../shared/result'
import type { DbFacts, EmbeddingModelFacts, MalformedCounts, Memory, Page, RecallEvent, RecallScope, Session } from '../../../shared/types'
import { emptyMalformed } from '../decode'
import type {
  DenseSearchRequest,
  DenseSearchResult,
  EventExtras,
  EventPageQuery,
  EventRef,
  EventTimelineStats,
  LexicalPass,
  LexicalRequest,
  MemoryFilter,
  MemoryPageQuery,
  MemorySource,
  ScopeRows,
  SessionPageQuery,
  SourceCapabilities,
  DensePushdown,
} from '../source'
import type { TextMatches } from '../textMatch'
import type { VectorIndex } from '../vectors/vectorIndex'
import { readSavedMapping, Workspace } from '../workspace/workspace'
import { PgBridge } from './bridge'
import { detectPgLayout, type PgColumn, type PgLayout } from './layouts'
import { detectLettaPgLayout } from './letta'
import { mappedPgLayout } from '../mapped/pg'
import type { Mapping } from '../../../shared/mapping'
import { identityHash, parsePgUrl, type ParsedPgUrl } from './url'
import type { AnnIndex, PgCtx } from './context'
import * as browse from './browse'
import * as candidates from './candidates'
import * as dense from './dense'
import * as events from './events'
import * as facts from './facts'
import * as vectors from './vectors'

export interface PgOpenOptions {
  /** postgres://user[:password]@host[:port]/db[?sslmode=…&schema=…&ann=hnsw&ef_search=…&probes=…]; PG* env vars fill the gaps */
  url: string
  /** Workspace file. @default ~/.recallscope/workspaces/<host-db-hash>.recallscope (or under `fallbackDir`) */
  workspacePath?: string
  fallbackDir?: string
  nativeBinding?: string
  /** @default 30000 (or ?statement_timeout_ms=) */
  statementTimeoutMs?: number
  /** @default 10000 */
  connectTimeoutMs?: number
  /** Cap on row counts for paging. @default 100000 */
  countCap?: number
  /** write mode is SQLite-only for now */
  write?: boolean
  /** Open one table by this column mapping (saved in the workspace; a schema of no known layout reopens with it). */
  mapping?: Mapping
}

export class PgSource implements MemorySource, DensePushdown, PgCtx {
  readonly path: string
  readonly readOnly = true
  readonly workspace: Workspace
  readonly sql: PgLayout
  readonly bridge: PgBridge
  readonly countCap: number
  /** pgvector's version, null when the extension is not installed */
  readonly pgvector: string | null
  readonly serverVersion: string
  readonly annIndex: AnnIndex | null
  readonly url: ParsedPgUrl
  private closed = false
  readonly malformed: MalformedCounts = emptyMalformed()
  readonly memo = new Map<string, Memory>()
  readonly lexTerms = new Map<string, boolean>()
  readonly indexes = new Map<string, { idx: VectorIndex; wsWrites: number }>()
  /** per (owner type, model): the workspace's backfilled vectors of ids the server has no vector of that model for */
  readonly backfills = new Map<string, { idx: VectorIndex; wsWrites: number }>()
  /** the server's vector models (malformed counted), read once per reload */
  serverModelsCache: EmbeddingModelFacts[] | null = null
  modelsCache: { facts: EmbeddingModelFacts[]; wsWrites: number } | null = null
  /** the stored length of zero-padded vectors (layout.vectorPadded), read once */
  padLength: number | null = null
  /** whether the planner uses the ANN index for the dense query (EXPLAIN once, ANN mode only) */
  annIndexUsed: boolean | null = null
  /** keyset cursors: the last row of a page, keyed by the query without its offset */
  readonly cursors = new Map<string, { offset: number; key: [number, string] }>()
  /** walkMemories ordinals → the id at that ordinal (keyset continuation) */
  readonly walkKeys = new Map<string, Map<number, string>>()

  private constructor(
    url: ParsedPgUrl,
    bridge: PgBridge,
    sql: PgLayout,
    ws: Workspace,
    info: { pgvector: string | null; version: string; ann: AnnIndex | null },
    countCap: number,
  ) {
    this.url = url
    this.path = url.redacted
    this.bridge = bridge
    this.sql = sql
    this.workspace = ws
    this.pgvector = info.pgvector
    this.serverVersion = info.version
    this.annIndex = info.ann
    this.countCap = countCap
  }

  /** Connect, detect the layout and open the workspace. Typed errors: BAD_INPUT, DB_UNREACHABLE, AUTH_FAILED, NOT_FOUND, UNKNOWN_LAYOUT, DB_TIMEOUT. */
  static open(opts: PgOpenOptions): PgSource {
    if (opts.write) throw new RecallscopeError('BAD_INPUT', 'Write mode is available for SQLite stores only; Postgres stores open read-only')
    const url = parsePgUrl(opts.url)
    const statementTimeoutMs = opts.statementTimeoutMs ?? url.options.statementTimeoutMs ?? 30_000
    const bridge = new PgBridge({
      connectionString: url.connectionString,
      statementTimeoutMs,
      connectTimeoutMs: opts.connectTimeoutMs ?? 10_000,
      max: 4,
      readOnly: true,
      applicationName: 'recallscope',
      secrets: url.secrets,
      label: url.redacted,
    })
    try {
      const head = bridge.query<{ schema: string; version: string; vec: string | null }>(
        `SELECT coalesce($1::text, current_schema()) AS schema, current_setting('server_version') AS version, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vec`,
        [url.options.schema ?? opts.mapping?.schema ?? null],
      )[0]
      const columns = bridge
        .query<{ t: string; c: string; d: string; u: string }>(
          `SELECT table_name AS t, column_name AS c, data_type AS d, udt_name AS u FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
          [head.schema],
        )
        .map((r): PgColumn => ({ table: r.t, column: r.c, dataType: r.d, udt: r.u }))
      const wsPath = opts.workspacePath ? path.resolve(opts.workspacePath) : defaultPgWorkspacePath(url.identity, opts.fallbackDir)
      const sql = pgLayoutFor(head.schema, columns, url.redacted, wsPath, opts)
      let ann: AnnIndex | null = null
      if (sql.vectorTable && head.vec) {
        const idx = bridge.query<{ name: string; method: string }>(
          `SELECT i.relname AS name, am.amname AS method FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
             JOIN pg_namespace n ON n.oid = t.relnamespace JOIN pg_am am ON am.oid = i.relam
           WHERE n.nspname = $1 AND t.relname = $2 AND am.amname IN ('hnsw', 'ivfflat') ORDER BY am.amname LIMIT 1`,
          [sql.schema, sql.vectorTable.table],
        )[0]
        if (idx) ann = { name: idx.name, method: idx.method as AnnIndex['method'] }
      }
      if (url.options.ann !== 'exact') {
        if (!head.vec) throw new RecallscopeError('BAD_INPUT', `ann=${url.options.ann}: the pgvector extension is not installed in this database`)
        if (!ann || ann.method !== url.options.ann)
          throw new RecallscopeError(
            'BAD_INPUT',
            `ann=${url.options.ann}: no ${url.options.ann} index on ${sql.schema}.${sql.vectorTable?.table ?? '(no vectors)'}${ann ? ` (there is ${ann.method} ${ann.name})` : ''}`,
          )
      }
      const ws = Workspace.open(wsPath, opts.nativeBinding)
      if (opts.mapping) ws.setMapping(opts.mapping)
      return new PgSource(url, bridge, sql, ws, { pgvector: head.vec, version: head.version, ann }, opts.countCap ?? 100_000)
    } catch (e) {
      bridge.close()
      throw e
    }
  }

  get layout(): string {
    return this.sql.layout
  }
  get detectedBecause(): string | null {
    return this.sql.detectedBecause ?? null
  }
  /** A server is read live: never a snapshot. */
  readonly snapshotPath: string | null = null
  /** Opening already ran queries on the server; damage there surfaces as typed errors per query. */
  checkIntegrity(): void {}
  get isClosed(): boolean {
    return this.closed
  }
  get workspacePath(): string {
    return this.workspace.path
  }
  get annEf(): number {
    return this.url.options.efSearch ?? 100
  }
  get annProbes(): number {
    return this.url.options.probes ?? 10
  }

  /** The method the dense arm uses: exact unless the URL chose an ANN index (checked at open). */
  get denseMethod(): 'exact' | 'hnsw' | 'ivfflat' {
    return this.url.options.ann
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    for (const { idx } of [...this.indexes.values(), ...this.backfills.values()]) idx.reset() // a compact one holds a file
    this.bridge.close()
    this.workspace.db.close()
  }

  q<R = Record<string, unknown>>(sql: string, params: unknown[] = []): R[] {
    return this.bridge.query<R>(sql, params)
  }

  /** Push-down needs pgvector's operators on the stored column. */
  get pushdownReady(): boolean {
    return this.sql.embeddings !== null && this.pgvector !== null && (this.sql.vectorStorage === 'vector' || this.sql.vectorStorage === 'array')
  }

  capabilities(): SourceCapabilities {
    return {
      fts: 'agent',
      vectorModels: this.vectorModels().map((m) => ({ ownerType: m.ownerType, model: m.model, dim: m.dim })),
      pushdown: this.pushdownReady ? this : null,
      snapshots: null,
      recallEvents: this.sql.recallEvents !== null,
      readOnly: true,
      supportsWrite: false,
    }
  }

  // --- facts and browsing -------------------------------------------------

  facts(): DbFacts {
    return facts.facts(this)
  }

  facets(): Facets {
    return facts.facets(this)
  }

  counts(): { memories: number; sessions: number } {
    return facts.counts(this)
  }

  sessionsPage(q: SessionPageQuery = {}): Page<Session> {
    return browse.sessionsPage(this, q)
  }

  getSession(id: string): Session | null {
    return browse.getSession(this, id)
  }

  getSessions(ids: string[]): Map<string, Session> {
    return browse.getSessions(this, ids)
  }

  memoriesPage(q: MemoryPageQuery = {}): Page<MemoryRow> {
    return browse.memoriesPage(this, q)
  }

  getMemory(id: string): Memory | null {
    return browse.getMemory(this, id)
  }

  getMemories(ids: string[]): Map<string, Memory> {
    return browse.getMemories(this, ids)
  }

  rawMetadata(id: string): unknown {
    return browse.rawMetadata(this, id)
  }

  idsWithEmbedding(ids: string[]): Set<string> {
    return browse.idsWithEmbedding(this, ids)
  }

  memoriesWhere(f: MemoryFilter, opts: { limit?: number; order?: 'created_desc' | 'created_asc' | 'turn' } = {}): Memory[] {
    return browse.memoriesWhere(this, f, opts)
  }

  idsWhere(f: MemoryFilter, cap = 5_000_000): string[] {
    return browse.idsWhere(this, f, cap)
  }

  countWhere(f: MemoryFilter): { total: number; truncated: boolean } {
    return browse.countWhere(this, f)
  }

  walkMemories(f: MemoryFilter, afterKey: number, limit: number): { key: number; id: string; content: string }[] {
    return browse.walkMemories(this, f, afterKey, limit)
  }

  walkCount(f: MemoryFilter): number {
    return browse.walkCount(this, f)
  }

  rowKey(): number | null {
    return null
  }

  memoryIdsByText(q: { texts: string[]; normalized: string[] }): TextMatches {
    return browse.memoryIdsByText(this, q)
  }

  // --- recall passes ------------------------------------------------------
  scopeRows(f: MemoryFilter, cap: number): ScopeRows {
    return candidates.scopeRows(this, f, cap)
  }

  countScope(f: MemoryFilter, cap = 10_000): { count: number; capped: boolean } {
    return candidates.countScope(this, f, cap)
  }

  hasLexicalTerms(text: string): boolean {
    return candidates.hasLexicalTerms(this, text)
  }

  lexicalPass(req: LexicalRequest): LexicalPass {
    return candidates.lexicalPass(this, req)
  }

  lexicalRankOf(text: string, f: MemoryFilter, id: string): number | null {
    return candidates.lexicalRankOf(this, text, f, id)
  }

  keywordSearch(f: MemoryFilter, keywords: string[], limit: number): string[] {
    return candidates.keywordSearch(this, f, keywords, limit)
  }

  sessionsForRecall(scope: RecallScope, now: number): Session[] {
    return candidates.sessionsForRecall(this, scope, now)
  }

  sessionMessages(sessionIds: string[], now: number): Map<string, { role: string | null; content: string }[]> {
    return candidates.sessionMessages(this, sessionIds, now)
  }

  ageHistogram(f: MemoryFilter, now: number, from: 'last_used' | 'created', maxBins = 40): RecallAges {
    return candidates.ageHistogram(this, f, now, from, maxBins)
  }

  // --- vectors ------------------------------------------------------------
  vectorModels(): EmbeddingModelFacts[] {
    return vectors.vectorModels(this)
  }

  /** The server's models per owner type with their majority dimension (one GROUP BY over the vectors), cached. */

  storedModels(owner: 'memory' | 'session' = 'memory'): string[] {
    return vectors.storedModels(this, owner)
  }

  vectors(model: string, ownerType: 'memory' | 'session' = 'memory'): VectorIndex {
    return vectors.vectors(this, model, ownerType)
  }

  denseSearch(req: DenseSearchRequest): DenseSearchResult {
    return dense.denseSearch(this, req)
  }

  similarities(ids: string[], vector: ArrayLike<number>, model: string, ownerType: 'memory' | 'session' = 'memory'): Map<string, number> {
    return dense.similarities(this, ids, vector, model, ownerType)
  }

  vectorDataVersion(): string {
    return vectors.vectorDataVersion(this)
  }

  vectorInfo(ownerId: string, ownerType: 'memory' | 'session' = 'memory'): VectorInfo[] {
    return vectors.vectorInfo(this, ownerId, ownerType)
  }

  reloadVectors(): void {
    return vectors.reloadVectors(this)
  }

  // --- recall log ---------------------------------------------------------
  eventsPage(q: EventPageQuery = {}): Page<RecallEvent> {
    return events.eventsPage(this, q)
  }

  getEvent(id: string): RecallEvent | null {
    return events.getEvent(this, id)
  }

  eventExtras(): EventExtras {
    return events.eventExtras()
  }

  eventsForMemory(memoryId: string, limit = 200): EventRef[] {
    return events.eventsForMemory(this, memoryId, limit)
  }

  eventTimeline(f: EventFilter): EventTimelineStats {
    return events.eventTimeline(this, f)
  }

  applyRefresh(): { updated: number } {
    throw new RecallscopeError('READ_ONLY', 'Postgres stores open read-only: write mode (last_used_at refresh) is available for SQLite stores only')
  }
}

/** The workspace of a URL store: the app's data folder, named by a hash of host:port/db (never the password). */
export function defaultPgWorkspacePath(identity: string, fallbackDir?: string): string {
  const dir = fallbackDir ?? path.join(os.homedir(), '.recallscope', 'workspaces')
  fs.mkdirSync(dir, { recursive: true })
  const safe = identity.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60)
  return path.join(dir, `${safe}-${identityHash(identity)}.recallscope`)
}

/** The mapping's layout when one is given; else the detected one, falling back to the mapping saved in the workspace. */
function pgLayoutFor(schema: string, columns: PgColumn[], label: string, wsPath: string, opts: PgOpenOptions): PgLayout {
  if (opts.mapping) return mappedPgLayout(schema, columns, opts.mapping, label)
  try {
    return detectLettaPgLayout(schema, columns) ?? detectPgLayout(schema, columns, label)
  } catch (e) {
    if (!(e instanceof RecallscopeError) || e.code !== 'UNKNOWN_LAYOUT' || !fs.existsSync(wsPath)) throw e
    const saved = readSavedMapping(wsPath, opts.nativeBinding)
    if (!saved) throw e
    return mappedPgLayout(schema, columns, saved, label)
  }
}
