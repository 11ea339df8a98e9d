/**
 * The SQLite memory source: an agent DB (read-only unless write mode) seen
 * through a detected SQL layout (layouts.ts; Engram and the framework stores
 * bring their own), plus its workspace. The query modules beside this file
 * hold the SQL; this class keeps the connections and caches and lists the
 * MemorySource methods.
 *
 * Length: the class is the MemorySource method list (one delegating line each);
 * the SQL lives in the query modules beside it.
 */
import path from 'node:path'
import Database from 'better-sqlite3'
import type { EventFilter, Facets, MemoryRow, RecallAges, VectorInfo } from '../../../shared/contract'
import { RecallscopeError } from '../../../shared/result'
import type { DbFacts, EmbeddingModelFacts, MalformedCounts, Memory, Page, RecallEvent, RecallScope, Session } from '../../../shared/types'
import { emptyMalformed } from '../decode'
import type { TextMatches } from '../textMatch'
import type {
  AgentRecords,
  EventExtras,
  EventPageQuery,
  EventRef,
  EventTimelineStats,
  LexicalPass,
  LexicalRequest,
  MemoryFilter,
  MemoryPageQuery,
  MemorySource,
  OwnEventsOrigin,
  ScopeRows,
  SessionPageQuery,
  SourceCapabilities,
  VectorSnapshots,
} from '../source'
import type { VectorIndex } from '../vectors/vectorIndex'
import { openWorkspaceDb, Workspace } from '../workspace/workspace'
import * as browse from './browse'
import * as cand from './candidates'
import fs from 'node:fs'
import { assertWorkspaceTarget, registerOpenDb } from '../../safety/fileIdentity'
import { assertSqliteFile, chunks, defaultWorkspacePath, openSqlite, prep, readTables, type ConnectOptions } from './connection'
import { probeIntegrity, typedDbError } from './dbErrors'
import { makeSnapshot, needsSnapshot } from './readOnlySnapshot'
import { loadSqliteVecIfDeclared } from '../sqliteVec'
import type { FtsTable, Memo, SqliteCtx } from './context'
import { closeBm25Indexes } from './bm25'
import * as events from './events'
import { contentSignature, facts, facets, quickCounts } from './facts'
import { syncWorkspaceFts, toFtsQuery } from './fts'
import type { Adapter, SqlLayout } from './layouts'
import { SqliteVectors, type VectorOptions } from './vectors'

export interface SqliteOpenOptions extends ConnectOptions, VectorOptions {
  /** The agent DB. */
  path: string
  /** Workspace DB path. @default `<path>.recallscope`, or under `fallbackDir` when that is not writable */
  workspacePath?: string
  /** Where workspaces go when the agent DB's folder is read-only. @default ~/.recallscope/workspaces */
  fallbackDir?: string
  /** Model name for vectors whose layout does not record one (Engram). @default the layout's */
  engramModel?: string
  /** Cap on row counts for paging (Datasette's count_limit). @default 100000 */
  countCap?: number
}

/**
 * The detected layout reads rows by rowid (paging, the FTS index, vector snapshots): a `memories`
 * (or sessions / embeddings) VIEW has none, and every read would fail with "no such column". A
 * typed UNKNOWN_LAYOUT at open, naming the table, instead of INTERNAL on the first read.
 */
function assertRowids(db: Database.Database, sql: SqlLayout, abs: string): void {
  for (const [what, q] of [
    ['memories', sql.memories],
    ['sessions', sql.sessions],
  ] as const) {
    try {
      db.prepare(`SELECT _rid FROM (${q}) LIMIT 0`)
    } catch (e) {
      if (!/rowid/i.test((e as Error).message)) throw e
      throw new RecallscopeError(
        'UNKNOWN_LAYOUT',
        `${path.basename(abs)}: its ${what} has no rowid (a VIEW or a WITHOUT ROWID table), which recallscope reads rows by; open it with a column mapping instead`,
        { table: what, reason: 'no rowid' },
      )
    }
  }
}

export class SqliteSource implements MemorySource, VectorSnapshots, SqliteCtx {
  readonly path: string
  readonly workspacePath: string
  readonly readOnly: boolean
  readonly sql: SqlLayout
  readonly db: Database.Database
  readonly ws: Database.Database
  readonly workspace: Workspace
  readonly malformed: MalformedCounts = emptyMalformed()
  readonly countCap: number
  readonly fileBacked: boolean
  private readonly vec: SqliteVectors
  private wsAttached = false
  private memoState: Memo = { version: null, memories: new Map(), scopes: new Map() }
  private closed = false
  /** The private copy actually read when the DB's folder is read-only (readOnlySnapshot.ts); null when read in place. */
  snapshotPath: string | null = null
  /** Unregisters this store's files from safety/fileIdentity's open-DB list (on close). */
  private releaseOpen: (() => void)[] = []

  /**
   * Wrap open connections. `db` is the agent connection (or an in-memory DB a
   * non-SQLite store was read into); the workspace is opened and migrated here.
   */
  constructor(
    opts: { path: string; workspacePath: string; write?: boolean; countCap?: number; fileBacked?: boolean } & VectorOptions,
    db: Database.Database,
    ws: Database.Database,
    sql: SqlLayout,
  ) {
    this.path = opts.path
    this.fileBacked = opts.fileBacked ?? true
    this.workspacePath = opts.workspacePath
    this.readOnly = !opts.write
    this.countCap = opts.countCap ?? 100_000
    this.db = db
    this.ws = ws
    this.sql = sql
    this.workspace = new Workspace(opts.workspacePath, ws)
    this.vec = new SqliteVectors(this, this.workspace, opts)
  }

  /** Open a SQLite file with the first layout that recognises it. */
  static open(opts: SqliteOpenOptions, layouts: readonly Adapter[]): SqliteSource {
    if (typeof opts.path !== 'string' || opts.path.trim() === '') throw new RecallscopeError('BAD_INPUT', 'A database path is required')
    const abs = path.resolve(opts.path)
    assertSqliteFile(abs)
    const wsPath = opts.workspacePath ? path.resolve(opts.workspacePath) : defaultWorkspacePath(abs, opts.fallbackDir)
    // Links, /proc aliases and side files of the agent DB: refused before anything is opened.
    assertWorkspaceTarget(wsPath, abs)
    // Read-only folder + WAL without -shm (or a -journal): read a private copy.
    const readPath =
      !opts.write && needsSnapshot(abs) ? makeSnapshot(abs, opts.fallbackDir ? path.dirname(opts.fallbackDir) : undefined, opts.nativeBinding) : abs
    const db = openSqlite(readPath, opts)
    let sql: SqlLayout | null
    try {
      loadSqliteVecIfDeclared(db) // vec0 tables cannot even be listed without the module
      sql = detectLayout(db, layouts)
      if (!sql) {
        const tables = [...readTables(db).keys()]
        throw new RecallscopeError(
          'UNKNOWN_LAYOUT',
          `${path.basename(abs)} is SQLite but not a memory store recallscope knows (tables: ${tables.join(', ') || 'none'}; looked for: ${layouts.map((a) => a.lookedFor ?? a.name).join('; ')})`,
          { tables, lookedFor: layouts.map((a) => a.lookedFor ?? a.name) },
        )
      }
      if (sql.defaultModel && opts.engramModel) sql.defaultModel = opts.engramModel
      assertRowids(db, sql, abs)
    } catch (e) {
      // A damaged page can fail the layout probe with a generic message ("vtable constructor
      // failed"): say "malformed" when the integrity check agrees (issue 10, MEDIUM 5).
      let typed: unknown = e instanceof RecallscopeError ? e : typedDbError(e, abs)
      if (!(typed instanceof RecallscopeError)) {
        try {
          probeIntegrity(db, readPath)
        } catch (c) {
          typed = c instanceof RecallscopeError && c.code === 'DB_CORRUPT' ? new RecallscopeError('DB_CORRUPT', c.message.replace(readPath, abs)) : typed
        }
      }
      db.close()
      if (typed instanceof RecallscopeError) throw typed
      throw new RecallscopeError('NOT_SQLITE', `Cannot read ${abs}: ${(e as Error).message}`)
    }
    let ws: Database.Database
    const wsExisted = fs.existsSync(wsPath)
    try {
      ws = openWorkspaceDb(wsPath, opts.nativeBinding)
    } catch (e) {
      db.close()
      throw e
    }
    const source = new SqliteSource({ ...opts, path: abs, workspacePath: wsPath }, db, ws, sql)
    try {
      source.attachWorkspace()
    } catch (e) {
      // a failed open leaves nothing behind: the workspace it just created goes with it
      db.close()
      ws.close()
      if (!wsExisted) for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(wsPath + suffix, { force: true })
      throw e
    }
    source.snapshotPath = readPath === abs ? null : readPath
    source.releaseOpen = [registerOpenDb(abs, 'agent DB'), registerOpenDb(wsPath, 'workspace DB')]
    return source
  }

  /**
   * A store read into an in-memory canonical DB (a materializer's output): read-only,
   * with its workspace beside the original path.
   */
  static fromMemory(opts: SqliteOpenOptions, db: Database.Database, sql: SqlLayout): SqliteSource {
    const abs = path.resolve(opts.path)
    const wsPath = opts.workspacePath ? path.resolve(opts.workspacePath) : defaultWorkspacePath(abs, opts.fallbackDir)
    let ws: Database.Database
    try {
      if (fs.statSync(abs).isFile()) assertWorkspaceTarget(wsPath, abs)
      ws = openWorkspaceDb(wsPath, opts.nativeBinding)
    } catch (e) {
      db.close()
      throw e
    }
    db.pragma('query_only = 1')
    const source = new SqliteSource({ ...opts, write: false, path: abs, workspacePath: wsPath, fileBacked: false }, db, ws, sql)
    source.attachWorkspace()
    source.releaseOpen = [registerOpenDb(wsPath, 'workspace DB')]
    return source
  }

  get layout(): string {
    return this.sql.layout
  }

  get detectedBecause(): string | null {
    return this.sql.detectedBecause ?? null
  }

  get isClosed(): boolean {
    return this.closed
  }

  close(): void {
    if (this.closed) return
    // A snapshot is written in the background after a load, never here: a close only stops that write.
    this.closed = true
    this.vec.closed = true
    this.vec.stopWrites()
    this.vec.reload() // frees the indexes (a compact one holds a file)
    closeBm25Indexes(this) // their private connections to the file
    this.db.close()
    this.ws.close()
    for (const release of this.releaseOpen) release()
  }

  /** SQLite's quick_check on small files: a damaged DB fails at open, as a typed DB_CORRUPT. */
  checkIntegrity(): void {
    if (this.fileBacked) probeIntegrity(this.db, this.path)
  }

  capabilities(): SourceCapabilities {
    // `fts` and `vectorModels` cost SQL and a content signature (file stats, a count over the
    // memories): computed when read, so the engine's per-recall `pushdown` check stays free
    // (an eval asks once per case; docs/internals/performance.md, the eval bench).
    const fts = () => (this.sql.agentFts ? 'agent' : this.wsFtsReady() ? 'workspace' : 'none')
    const models = () => this.vec.vectorModels().map((m) => ({ ownerType: m.ownerType, model: m.model, dim: m.dim }))
    return {
      get fts() {
        return fts()
      },
      get vectorModels() {
        return models()
      },
      pushdown: null,
      snapshots: this,
      recallEvents: this.sql.recallEvents !== null,
      readOnly: this.readOnly,
      supportsWrite: this.sql.layout === 'canonical' && this.fileBacked,
    }
  }

  // --- SqliteCtx ----------------------------------------------------------

  /** (owner_type, owner_id) of every stored vector: the agent's and the workspace's backfilled ones. */
  get embeddingOwners(): string[] {
    const ws = `SELECT owner_type, owner_id FROM ws.ws_embeddings`
    return this.sql.embeddings ? [this.sql.embeddings, ws] : [ws]
  }

  /**
   * Per-version memo of decoded rows and scope listings. Recalls in a loop (eval,
   * replay, tune) ask for the same rows again and again; any commit to the agent DB
   * (PRAGMA data_version, plus our own writes in write mode) empties it.
   */
  memo(): Memo {
    const dv = prep(this.db, 'PRAGMA data_version').pluck()
    const v = this.readOnly ? String(dv.get()) : `${dv.get() as number}:${prep(this.db, 'SELECT total_changes()').pluck().get() as number}`
    if (v !== this.memoState.version) this.memoState = { version: v, memories: new Map(), scopes: new Map() }
    return this.memoState
  }

  wsFtsReady(): boolean {
    return this.ws.prepare(`SELECT count(*) FROM ws_fts_state`).pluck().get() === 1
  }

  /** The workspace, attached to the agent connection (read through it: FTS, backfilled vectors). */
  private attachWorkspace(): void {
    if (this.wsAttached) return
    this.db.prepare(`ATTACH DATABASE ? AS ws`).run(this.workspacePath)
    this.wsAttached = true
  }

  ftsTable(onProgress?: (done: number, total: number) => boolean | void): FtsTable {
    if (this.sql.agentFts) return { name: this.sql.agentFts, qualified: this.sql.agentFts }
    // The lean sub-select (no session join): the index needs only content and summary.
    syncWorkspaceFts(this.db, this.ws, this.sql.memoriesLite, `${this.sql.layout}:${this.path}${this.sql.ftsKey ? `:${this.sql.ftsKey}` : ''}`, onProgress)
    this.attachWorkspace()
    return { name: 'ws_fts', qualified: 'ws.ws_fts' }
  }

  cappedCount(fromWhere: string, params: Record<string, unknown>): { total: number; truncated: boolean } {
    // Unfiltered: an exact count(*) is cheap (SQLite counts the smallest index).
    if (fromWhere === `FROM (${this.sql.memoriesLite}) m WHERE 1`)
      return { total: this.db.prepare(`SELECT count(*) FROM (${this.sql.memoriesLite})`).pluck().get() as number, truncated: false }
    const cap = this.countCap
    const n = this.db
      .prepare(`SELECT count(*) FROM (SELECT 1 ${fromWhere} LIMIT ${cap + 1})`)
      .pluck()
      .get(params) as number
    return n > cap ? { total: cap, truncated: true } : { total: n, truncated: false }
  }

  cached<T>(key: string, compute: () => T): T {
    const sig = contentSignature(this)
    const row = this.workspace.getMeta(key)
    if (row) {
      try {
        const hit = JSON.parse(row) as { sig: string; value: T }
        if (hit.sig === sig) return hit.value
      } catch {
        /* corrupt cache entry: recompute */
      }
    }
    const value = compute()
    this.workspace.setMeta(key, JSON.stringify({ sig, value }))
    return value
  }

  // --- facts and browsing -------------------------------------------------
  facts(): DbFacts {
    return facts(this, this.vec, this.workspace.countCases())
  }
  facets(): Facets {
    return facets(this)
  }
  counts(): { memories: number; sessions: number } {
    return quickCounts(this)
  }
  sessionsPage(q?: SessionPageQuery): Page<Session> {
    return browse.sessionsPage(this, q)
  }
  getSession(id: string): Session | null {
    return browse.getSession(this, id)
  }
  getSessions(ids: string[]): Map<string, Session> {
    return browse.getSessions(this, ids)
  }
  memoriesPage(q?: MemoryPageQuery): Page<MemoryRow> {
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
  memoriesWhere(f: MemoryFilter, opts?: { limit?: number; order?: 'created_desc' | 'created_asc' | 'turn' }): Memory[] {
    return browse.memoriesWhere(this, f, opts)
  }
  idsWhere(f: MemoryFilter, cap?: number): string[] {
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
  rowKey(id: string): number | null {
    return browse.rowKey(this, id)
  }
  memoryIdsByText(q: { texts: string[]; normalized: string[] }): TextMatches {
    return events.memoryIdsByText(this, q)
  }

  // --- recall passes ------------------------------------------------------
  scopeRows(f: MemoryFilter, cap: number): ScopeRows {
    return cand.scopeRows(this, f, cap)
  }
  countScope(f: MemoryFilter, cap?: number): { count: number; capped: boolean } {
    return cand.countScope(this, f, cap)
  }
  hasLexicalTerms(text: string): boolean {
    return toFtsQuery(text) !== null
  }
  lexicalPass(req: LexicalRequest): LexicalPass {
    return cand.lexicalPass(this, req)
  }
  lexicalRankOf(text: string, f: MemoryFilter, id: string): number | null {
    return cand.lexicalRankOf(this, text, f, id)
  }
  keywordSearch(f: MemoryFilter, keywords: string[], limit: number): string[] {
    return cand.keywordSearch(this, f, keywords, limit)
  }
  sessionsForRecall(scope: RecallScope, now: number): Session[] {
    return cand.sessionsForRecall(this, scope, now)
  }
  sessionMessages(sessionIds: string[], now: number): Map<string, { role: string | null; content: string }[]> {
    return cand.sessionMessages(this, sessionIds, now)
  }
  ageHistogram(f: MemoryFilter, now: number, from: 'last_used' | 'created', maxBins?: number): RecallAges {
    return cand.ageHistogram(this, f, now, from, maxBins)
  }
  storedModels(owner?: 'memory' | 'session'): string[] {
    return this.vec.storedModels(owner)
  }
  vectors(model: string, ownerType?: 'memory' | 'session'): VectorIndex {
    return this.vec.vectors(model, ownerType)
  }
  vectorDataVersion(): string {
    return this.vec.dataVersion()
  }
  vectorModels(): EmbeddingModelFacts[] {
    return this.vec.vectorModels()
  }
  vectorInfo(ownerId: string, ownerType?: 'memory' | 'session'): VectorInfo[] {
    return this.vec.vectorInfo(ownerId, ownerType)
  }
  reloadVectors(): void {
    this.vec.reload()
  }
  restoreVectors(): Promise<void> {
    return this.closed ? Promise.resolve() : this.vec.restoreAsync()
  }
  coldVectorModels(): { model: string; ownerType: 'memory' | 'session' }[] {
    return this.closed ? [] : this.vec.coldModels()
  }
  /** Write vector snapshots now (a load starts writing them in the background; close() stops that). */
  saveVectorSnapshots(): string[] {
    return this.closed ? [] : this.vec.saveSnapshots()
  }
  /** Resolves once the vector snapshots a load started writing in the background are written (or given up). */
  whenVectorSnapshotsWritten(): Promise<string[]> {
    return this.closed ? Promise.resolve([]) : this.vec.whenSnapshotsWritten()
  }

  // --- recall log ---------------------------------------------------------
  agentRecords(): AgentRecords[] {
    return this.sql.agentRecords ?? []
  }
  ownEventsOrigin(): OwnEventsOrigin | null {
    return this.sql.recallEventsOrigin ?? null
  }
  eventsPage(q?: EventPageQuery): Page<RecallEvent> {
    return events.eventsPage(this, q)
  }
  getEvent(id: string): RecallEvent | null {
    return events.getEvent(this, id)
  }
  eventExtras(id: string): EventExtras {
    return events.eventExtras(this, id)
  }
  eventsForMemory(memoryId: string, limit?: number): EventRef[] {
    return events.eventsForMemory(this, memoryId, limit)
  }
  eventTimeline(f: EventFilter): EventTimelineStats {
    return events.eventTimeline(this, f)
  }

  // --- write mode ---------------------------------------------------------
  /**
   * What refreshOnRecall means for real (seed 003: recalled memories get
   * `last_used_at = now`, and their use count goes up). READ_ONLY on a read-only
   * store; BAD_INPUT for a layout with no `last_used_at`.
   */
  applyRefresh(ids: string[], now: number): { updated: number } {
    if (this.readOnly) throw new RecallscopeError('READ_ONLY', 'The agent DB is open read-only: reopen it in write mode to write last_used_at')
    if (this.sql.layout !== 'canonical') throw new RecallscopeError('BAD_INPUT', `${this.sql.layout} files have no last_used_at column to refresh`)
    const cols = readTables(this.db).get('memories')
    if (!cols?.has('last_used_at')) throw new RecallscopeError('BAD_INPUT', 'This DB has no memories.last_used_at column to refresh')
    const useCount = cols.has('use_count') ? ', use_count = coalesce(use_count, 0) + 1' : ''
    const st = this.db.prepare(`UPDATE memories SET last_used_at = @now${useCount} WHERE id IN (SELECT value FROM json_each(@ids))`)
    let updated = 0
    this.db.transaction(() => {
      for (const chunk of chunks([...new Set(ids)], 5000)) updated += st.run({ now: Math.round(now), ids: JSON.stringify(chunk) }).changes
    })()
    return { updated }
  }
}

/** The first layout that recognises the file's tables, or null. */
export function detectLayout(db: Database.Database, layouts: readonly Adapter[]): SqlLayout | null {
  const tables = readTables(db)
  for (const a of layouts) {
    const sql = a.detect(db, tables)
    if (sql) return sql
  }
  return null
}
