/**
 * The workspace: everything the workbench owns about one memory store — eval
 * cases and runs, the query-vector cache, backfilled vectors, cached summaries,
 * the FTS index when the store has none — in a local SQLite file beside it
 * (docs/internals/design.md "The workspace database"). Deleting it loses no agent data.
 *
 * One connection, owned here; callers use these methods (no SQL outside store/).
 */
import Database from 'better-sqlite3'
import type { CasesPage, EvalCaseRow, EvalRun, EvalRunSummary, SavedTuneReport, TuneReport, TuneReportSummary } from '../../../shared/eval'
import { mappingSchema, type Mapping } from '../../../shared/mapping'
import type { SavedConfig } from '../../../shared/savedConfigs'
import { parseJsonSafe } from '../../safety/json'
import { decodeVector, encodeVector } from '../decode'

import { migrate, prep, retryWhileBusy, runWriteTransaction } from '../sqlite/connection'
import { workspaceOpenError } from '../sqlite/dbErrors'
import { assertOwnedDbPath } from '../safeFiles'
import { WORKSPACE_MIGRATIONS } from '../sqlite/schema'
import { caseFacets, deleteCases, getCase, listCases, loadCases, writeCases, type CaseFilter } from './cases'
import { deleteRuns, getRun, listRuns, renameRun, saveRun, type NewRun } from './runs'
import { deleteTuneReports, getTuneReport, listTuneReports, saveTuneReport } from './tuneReports'
import { deleteConfigs, getConfig, listConfigs, saveConfig } from './savedConfigs'
import { clearLiveRecalls, countLiveRecalls, liveRecallPage, putLiveRecalls, undecidedLiveRecalls, type LiveRecallRow } from './liveRecalls'

export type { CaseFilter } from './cases'
export type { NewRun } from './runs'
export type { LiveRecallRow } from './liveRecalls'

const MAPPING_KEY = 'mapping:v1'

export class Workspace {
  /** Bumped on every write to ws_embeddings (PRAGMA data_version ignores our own commits). */
  private vectorWriteCount = 0

  constructor(
    /** the workspace file */
    readonly path: string,
    /** @internal the connection: for store/ modules only */
    readonly db: Database.Database,
  ) {}

  /** Open (creating when absent) and migrate a workspace file on its own (demo generator, importers). */
  static open(file: string, nativeBinding?: string): Workspace {
    return new Workspace(file, openWorkspaceDb(file, nativeBinding))
  }

  get vectorWrites(): number {
    return this.vectorWriteCount
  }

  // --- eval cases ---------------------------------------------------------
  loadCases(f: CaseFilter = {}): EvalCaseRow[] {
    return loadCases(this.db, f)
  }
  listCases(q: Parameters<typeof listCases>[1] = {}): CasesPage {
    return listCases(this.db, q)
  }
  caseFacets(): CasesPage['facets'] {
    return caseFacets(this.db)
  }
  getCase(id: string): EvalCaseRow {
    return getCase(this.db, id)
  }
  writeCases(rows: readonly EvalCaseRow[], noteAt: number): { added: number; updated: number } {
    return writeCases(this.db, rows, noteAt)
  }
  deleteCases(ids: string[]): number {
    return deleteCases(this.db, ids)
  }
  countCases(): number {
    return prep(this.db, `SELECT count(*) FROM eval_cases`).pluck().get() as number
  }

  // --- eval runs ----------------------------------------------------------
  saveRun(run: NewRun): EvalRun {
    return saveRun(this.db, run)
  }
  listRuns(opts: { limit?: number } = {}): EvalRunSummary[] {
    return listRuns(this.db, opts)
  }
  getRun(id: string): EvalRun {
    return getRun(this.db, id)
  }
  deleteRuns(ids: string[]): number {
    return deleteRuns(this.db, ids)
  }
  renameRun(id: string, name: string): EvalRunSummary {
    return renameRun(this.db, id, name)
  }

  /** Save a tune report (listed beside runs, reopened whole). */
  saveTuneReport(report: TuneReport, meta: { createdAt: number; name: string; source: string; id?: string }): SavedTuneReport {
    return saveTuneReport(this.db, report, meta)
  }
  listTuneReports(opts: { limit?: number } = {}): TuneReportSummary[] {
    return listTuneReports(this.db, opts)
  }
  getTuneReport(id: string): SavedTuneReport {
    return getTuneReport(this.db, id)
  }
  deleteTuneReports(ids: string[]): number {
    return deleteTuneReports(this.db, ids)
  }

  // --- named recall configs -----------------------------------------------
  saveConfig(entry: Parameters<typeof saveConfig>[1], now: number): SavedConfig {
    return saveConfig(this.db, entry, now)
  }
  listConfigs(limit = 500): { configs: SavedConfig[]; unreadable: string[] } {
    return listConfigs(this.db, limit)
  }
  getConfig(name: string): SavedConfig {
    return getConfig(this.db, name)
  }
  deleteConfigs(names: readonly string[]): number {
    return deleteConfigs(this.db, names)
  }

  // --- live OTLP recalls ---------------------------------------------------
  /** Store recalls received over OTLP (replacing rows with the same key). */
  putLiveRecalls(rows: LiveRecallRow[]): number {
    return putLiveRecalls(this.db, rows)
  }
  /** Stored recalls of these traces still waiting for their decision. */
  undecidedLiveRecalls(traceIds: string[]): LiveRecallRow[] {
    return undecidedLiveRecalls(this.db, traceIds)
  }
  /** Stored live recalls in insertion order, a page at a time. */
  liveRecallPage(afterRowid: number, limit: number): { rowid: number; recall: string }[] {
    return liveRecallPage(this.db, afterRowid, limit)
  }
  countLiveRecalls(): number {
    return countLiveRecalls(this.db)
  }
  clearLiveRecalls(): number {
    return clearLiveRecalls(this.db)
  }

  // --- query-vector cache -------------------------------------------------
  /** A cached query vector, or null (a damaged row is dropped, never served). */
  cachedQueryVector(key: string, text: string): Float32Array | null {
    const row = prep(this.db, 'SELECT dim, vector FROM query_cache WHERE model = ? AND text = ?').get(key, text) as { dim: number; vector: Buffer } | undefined
    if (!row) return null
    const v = decodeVector(row.vector, row.dim)
    if (typeof v !== 'string') return v
    prep(this.db, 'DELETE FROM query_cache WHERE model = ? AND text = ?').run(key, text)
    return null
  }

  /** Cached vectors of many texts under one key, in one read: null where there is none (an unreadable one is dropped, as cachedQueryVector does). */
  cachedQueryVectors(key: string, texts: readonly string[]): (Float32Array | null)[] {
    const found = new Map<string, Float32Array>()
    const bad: string[] = []
    const st = prep(this.db, 'SELECT text, dim, vector FROM query_cache WHERE model = ? AND text IN (SELECT value FROM json_each(?))')
    for (let i = 0; i < texts.length; i += 5000) {
      for (const row of st.all(key, JSON.stringify(texts.slice(i, i + 5000))) as { text: string; dim: number; vector: Buffer }[]) {
        const v = decodeVector(row.vector, row.dim)
        if (typeof v !== 'string') found.set(row.text, v)
        else bad.push(row.text)
      }
    }
    for (const text of bad) prep(this.db, 'DELETE FROM query_cache WHERE model = ? AND text = ?').run(key, text)
    return texts.map((t) => found.get(t) ?? null)
  }

  /** Store many query vectors in one transaction; keeps at most `maxEntries` per key (oldest go first). */
  cacheQueryVectors(key: string, entries: readonly { text: string; vector: Float32Array }[], at: number, maxEntries: number): void {
    if (entries.length === 0) return
    runWriteTransaction(this.db, () => {
      for (const e of entries) this.insertQueryVector(key, e.text, e.vector, at)
      this.trimQueryCache(key, maxEntries)
    })
  }

  /** Store a query vector; keeps at most `maxEntries` per key (oldest go first). */
  cacheQueryVector(key: string, text: string, vector: Float32Array, at: number, maxEntries: number): void {
    this.insertQueryVector(key, text, vector, at)
    this.trimQueryCache(key, maxEntries)
  }

  private insertQueryVector(key: string, text: string, vector: Float32Array, at: number): void {
    prep(this.db, 'INSERT OR REPLACE INTO query_cache (model, text, dim, vector, created_at) VALUES (?, ?, ?, ?, ?)').run(
      key,
      text,
      vector.length,
      encodeVector(vector),
      at,
    )
  }

  private trimQueryCache(key: string, maxEntries: number): void {
    const n = prep(this.db, 'SELECT count(*) FROM query_cache WHERE model = ?').pluck().get(key) as number
    if (n > maxEntries)
      prep(this.db, 'DELETE FROM query_cache WHERE rowid IN (SELECT rowid FROM query_cache WHERE model = ? ORDER BY created_at ASC LIMIT ?)').run(
        key,
        n - maxEntries,
      )
  }

  /** Forget cached query vectors (all, or one cache key). Returns the rows removed. */
  clearQueryCache(key?: string): number {
    return key === undefined
      ? this.db.prepare('DELETE FROM query_cache').run().changes
      : this.db.prepare('DELETE FROM query_cache WHERE model = ?').run(key).changes
  }

  // --- cached summaries ---------------------------------------------------
  getMeta(key: string): string | undefined {
    return prep(this.db, `SELECT value FROM meta WHERE key = ?`).pluck().get(key) as string | undefined
  }
  setMeta(key: string, value: string): void {
    prep(this.db, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`).run(key, value)
  }

  // --- the column mapping ------------------------------------------------
  /** The mapping this store was last opened with ("any table by mapping"), or null; a damaged entry reads as none. */
  getMapping(): Mapping | null {
    const raw = this.getMeta(MAPPING_KEY)
    if (raw === undefined) return null
    const parsed = parseJsonSafe(raw)
    const m = parsed.ok ? mappingSchema.safeParse(parsed.value) : null
    return m?.success ? m.data : null
  }
  /** Keep the mapping a store was opened with, so the next open (app or CLI) reuses it. */
  setMapping(m: Mapping): void {
    this.setMeta(MAPPING_KEY, JSON.stringify(m))
  }

  // --- backfilled vectors -------------------------------------------------
  /**
   * Store backfilled vectors of one model (the agent DB is never written). One
   * transaction per call; replaces earlier workspace vectors of the same ids.
   */
  putVectors(ownerType: 'memory' | 'session', model: string, rows: { id: string; vector: ArrayLike<number> }[], embedder: string | null, now: number): number {
    const ins = this.db.prepare(
      `INSERT OR REPLACE INTO ws_embeddings (owner_type, owner_id, model, dim, vector, embedder, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    )
    runWriteTransaction(this.db, () => {
      for (const r of rows) ins.run(ownerType, r.id, model, r.vector.length, encodeVector(r.vector), embedder, now)
    })
    this.vectorWriteCount++
    return rows.length
  }

  /** Delete backfilled vectors of a model (all models when omitted). Returns rows deleted. */
  clearVectors(model?: string): number {
    const r = model === undefined ? this.db.prepare(`DELETE FROM ws_embeddings`).run() : this.db.prepare(`DELETE FROM ws_embeddings WHERE model = ?`).run(model)
    this.vectorWriteCount++
    return r.changes
  }

  /** Backfilled vectors per (owner type, model, dim). */
  vectorModels(): { ownerType: 'memory' | 'session'; model: string; dim: number; count: number }[] {
    return (
      this.db.prepare(`SELECT owner_type AS ownerType, model, dim, count(*) AS count FROM ws_embeddings GROUP BY 1, 2, 3 ORDER BY 4 DESC`).all() as {
        ownerType: string
        model: string
        dim: number
        count: number
      }[]
    ).filter((r): r is { ownerType: 'memory' | 'session'; model: string; dim: number; count: number } => r.ownerType === 'memory' || r.ownerType === 'session')
  }

  /** Backfilled vectors of one owner (raw rows, decoded by the caller). */
  vectorRows(ownerType: 'memory' | 'session', ownerId: string): { model: string; dim: number | null; vector: unknown }[] {
    return this.db.prepare(`SELECT model, dim, vector FROM ws_embeddings WHERE owner_type = ? AND owner_id = ?`).all(ownerType, ownerId) as {
      model: string
      dim: number | null
      vector: unknown
    }[]
  }

  close(): void {
    this.db.close()
  }
}

/**
 * The mapping saved in an existing workspace file, read without migrating or writing it
 * (read-only connection): null when there is none or the file is not a workspace.
 */
export function readSavedMapping(wsPath: string, nativeBinding?: string): Mapping | null {
  let db: Database.Database | null = null
  try {
    db = new Database(wsPath, { readonly: true, fileMustExist: true, ...(nativeBinding ? { nativeBinding } : {}) })
    const hasMeta = db.prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).pluck().get() === 1
    const raw = hasMeta ? (db.prepare(`SELECT value FROM meta WHERE key = ?`).pluck().get(MAPPING_KEY) as string | undefined) : undefined
    if (typeof raw !== 'string') return null
    const parsed = parseJsonSafe(raw)
    const m = parsed.ok ? mappingSchema.safeParse(parsed.value) : null
    return m?.success ? m.data : null
  } catch {
    return null // not a workspace (or unreadable): nothing saved to offer
  } finally {
    db?.close()
  }
}

/** Open (creating when absent) and migrate a workspace DB. */
export function openWorkspaceDb(wsPath: string, nativeBinding?: string): Database.Database {
  let ws: Database.Database | null = null
  // never through a planted symlink or FIFO: the workspace is ours and is written (trust round 3)
  assertOwnedDbPath(wsPath, 'workspace')
  try {
    ws = new Database(wsPath, { timeout: 5000, ...(nativeBinding ? { nativeBinding } : {}) })
    // Switching to WAL is not covered by the busy timeout: another process creating the file too makes it
    // fail at once ("database is locked"), so it is retried like a write.
    const db = ws
    retryWhileBusy(db, () => db.pragma('journal_mode = WAL'))
    migrate(ws, WORKSPACE_MIGRATIONS)
    return ws
  } catch (e) {
    ws?.close()
    throw workspaceOpenError(e, wsPath) // typed: missing folder, read-only, damaged
  }
}
