/**
 * The SQLite source's vectors: one VectorIndex per (owner type, model), fed by
 * the agent DB's embeddings and the workspace's backfilled ones (a valid agent
 * vector wins; loading rules in vectors/vectorIndex.ts), snapshots beside the
 * workspace for big indexes, and the per-model facts the UI shows.
 */
import Database from 'better-sqlite3'
import { openReadOnlyAgentDb } from './readOnlyOpen'
import type { VectorInfo } from '../../../shared/contract'
import type { EmbeddingModelFacts } from '../../../shared/types'
import { decodeVector } from '../decode'
import { refreshVectorIndex, type RefreshOptions, type VectorSource } from '../vectors/load'
import { fileSignature, readSnapshot, readSnapshotAsync, snapshotMatches, snapshotPath, writeSnapshot, writeSnapshotAsync } from '../vectors/snapshot'
import { HELD_AGENT, HELD_WORKSPACE, VectorIndex, WS_KEY_OFFSET } from '../vectors/vectorIndex'
import type { Workspace } from '../workspace/workspace'
import { agentModels, workspaceModels } from './candidates'
import { loadSqliteVec } from '../sqliteVec'
import { prep, sqlString } from './connection'
import type { SqliteCtx } from './context'

/** The workspace's backfilled vectors in the canonical embeddings shape (`_rid` = rowid). */
const WS_EMBEDDINGS_SQL = `SELECT w.rowid AS _rid, w.owner_type AS owner_type, w.owner_id AS owner_id, w.model AS model, w.dim AS dim, w.vector AS vector FROM ws_embeddings w`

export interface VectorOptions {
  /** How vector indexes load (bulk threshold, chunking); tests use it to exercise every path. @default {} */
  vectorLoad?: RefreshOptions
  /**
   * Snapshot indexes of at least `minRows` beside the workspace; false: never. Below it a load takes
   * well under a second. @default { minRows: 20000 }
   */
  vectorCache?: false | { minRows?: number }
  nativeBinding?: string
  busyTimeoutMs?: number
}

type ModelFacts = { model: string; ownerType: 'memory' | 'session'; dim: number; count: number; malformed: number; badShape: number }

export class SqliteVectors {
  readonly indexes = new Map<string, VectorIndex>()
  private sourceList: VectorSource[] | null = null
  private readonly load: RefreshOptions
  private readonly cacheMinRows: number | null
  /** per index: the agent file's signature when its full load began, or when its snapshot was read */
  private readonly loadSignatures = new Map<VectorIndex, { signature: string; fromSnapshot: boolean }>()
  private readonly modelsCache = new Map<string, { version: string; models: string[] }>()
  private restoring: Promise<void> | null = null
  /** snapshots being written in the background after a full load (stopped by `stop`) */
  private readonly writing = new Map<VectorIndex, { stop: () => void; done: Promise<boolean> }>()
  /** set by the source's close: an async restore finishing after it drops its index */
  closed = false

  constructor(
    private readonly ctx: SqliteCtx,
    private readonly workspace: Workspace,
    private readonly opts: VectorOptions,
  ) {
    this.load = opts.vectorLoad ?? {}
    this.cacheMinRows = opts.vectorCache === false || !ctx.fileBacked ? null : (opts.vectorCache?.minRows ?? 20_000)
  }

  /**
   * The vector index of one model. Loaded on first use; every later call costs a
   * PRAGMA data_version read unless something was committed.
   */
  vectors(model: string, ownerType: 'memory' | 'session' = 'memory'): VectorIndex {
    const key = `${ownerType}\u0000${model}`
    let idx = this.indexes.get(key)
    const first = !idx
    if (!idx) {
      idx = this.newIndex(ownerType, model)
      this.indexes.set(key, idx)
    } else if (idx.stale) {
      // A row read back from the DB had changed in place: only a full load is exact again.
      this.writing.get(idx)?.stop()
      this.loadSignatures.delete(idx)
      idx.reset()
    }
    const useCache = this.cacheMinRows !== null && this.ctx.sql.embeddings !== null
    // Taken before any load starts: a snapshot is only written if the file still has it at close.
    const signature = useCache ? fileSignature(this.ctx.path) : null
    let restored = false
    if (first && signature !== null) {
      const t0 = performance.now()
      restored = readSnapshot(snapshotPath(this.ctx.workspacePath, ownerType, model), idx, signature)
      if (restored) this.markRestored(idx, signature, t0)
    }
    const fullBefore = idx.fullLoads
    const t1 = performance.now()
    const path = refreshVectorIndex(idx, this.sources(), this.load)
    if (idx.fullLoads !== fullBefore && signature !== null) {
      this.loadSignatures.set(idx, { signature, fromSnapshot: false })
      this.writeInBackground(idx)
    }
    if (restored && path !== 'full') idx.last = { path: 'cached', ms: idx.last.ms + (performance.now() - t1) }
    return idx
  }

  /**
   * An empty index whose compact rows are read back from the stored BLOBs by rowid (`_rid`, the
   * agent row's tie key; a workspace row's key is WS_KEY_OFFSET + its rowid), so a big load writes
   * no float32 rows file. Only where `_rid` is the table's rowid (one B-tree lookup a row); elsewhere
   * the rows go to a file as before.
   */
  private newIndex(ownerType: 'memory' | 'session', model: string): VectorIndex {
    const { ctx } = this
    const agentSql = ctx.sql.embeddings
    if (!agentSql || !rowidLookup(ctx.db, agentSql)) return new VectorIndex(ownerType, model, ctx.workspacePath)
    const agent = (rid: number): unknown => prep(ctx.db, `SELECT e.vector FROM (${agentSql}) e WHERE e._rid = ?`).pluck().get(rid)
    const ws = (rid: number): unknown => prep(ctx.ws, `SELECT vector FROM ws_embeddings WHERE rowid = ?`).pluck().get(rid)
    const read = (key: number): Uint8Array | null => {
      const v = key < WS_KEY_OFFSET ? agent(key) : ws(key - WS_KEY_OFFSET)
      return v instanceof Uint8Array ? v : null
    }
    // Many rows at once (a search's rescored rows): agent rows in one statement, by rowid lookups in rowid order.
    let agentMany: ((rids: number[]) => unknown[][]) | null | undefined
    const readMany = (keys: number[]): Map<number, Uint8Array> => {
      const out = new Map<number, Uint8Array>()
      agentMany ??= rowidListLookup(ctx.db, agentSql) ? (rids) => prep(ctx.db, rowidListSql(agentSql)).raw().all(JSON.stringify(rids)) as unknown[][] : null
      const agentKeys = agentMany ? keys.filter((k) => k < WS_KEY_OFFSET) : []
      for (let i = 0; i < agentKeys.length; i += MANY_ROWS)
        for (const [rid, v] of agentMany!(agentKeys.slice(i, i + MANY_ROWS))) if (v instanceof Uint8Array) out.set(Number(rid), v)
      for (const k of keys) {
        if (agentMany && k < WS_KEY_OFFSET) continue
        const v = read(k)
        if (v) out.set(k, v)
      }
      return out
    }
    return new VectorIndex(ownerType, model, ctx.workspacePath, read, readMany)
  }

  /**
   * Models whose first load here would be slow: big enough to snapshot, not loaded yet, and
   * without a snapshot for the file as it is now. The app has a worker load them and write
   * the snapshot first (App.readyStore), so this thread only restores it. Cheap: cached facts
   * and snapshot headers.
   */
  coldModels(): { model: string; ownerType: 'memory' | 'session' }[] {
    return this.unloadedBig()
      .filter((m) => !m.snapshot)
      .map((m) => ({ model: m.model, ownerType: m.ownerType }))
  }

  /**
   * Models big enough to snapshot that are not loaded here, each with its snapshot file and
   * whether that snapshot is for the agent file as it is now. Nothing is read when every big
   * model is loaded (every recall asks).
   */
  private unloadedBig(): { model: string; ownerType: 'memory' | 'session'; key: string; file: string; signature: string; snapshot: boolean }[] {
    const min = this.cacheMinRows
    if (min === null || !this.ctx.sql.embeddings) return []
    const big = this.vectorModels().filter((m) => m.count + (m.backfilled ?? 0) >= min && !this.indexes.has(`${m.ownerType}\u0000${m.model}`))
    if (big.length === 0) return []
    const signature = fileSignature(this.ctx.path)
    return big.map(({ model, ownerType }) => {
      const file = snapshotPath(this.ctx.workspacePath, ownerType, model)
      return { model, ownerType, key: `${ownerType}\u0000${model}`, file, signature, snapshot: snapshotMatches(file, signature, ownerType, model) }
    })
  }

  /** An index just filled from its snapshot: exact as a full load of the file, which has `signature`. */
  private markRestored(idx: VectorIndex, signature: string, t0: number): void {
    idx.pristine = true
    idx.last = { path: 'cached', ms: performance.now() - t0 }
    this.loadSignatures.set(idx, { signature, fromSnapshot: true })
  }

  /**
   * Restore every big model with a snapshot for the file as it is now, without holding the
   * thread (readSnapshotAsync): each index is registered only once complete, so a use meanwhile
   * loads its own as before. Concurrent calls share one run.
   */
  restoreAsync(): Promise<void> {
    this.restoring ??= (async () => {
      for (const m of this.unloadedBig().filter((x) => x.snapshot)) {
        const idx = this.newIndex(m.ownerType, m.model)
        const t0 = performance.now()
        if (!(await readSnapshotAsync(m.file, idx, m.signature))) continue
        if (this.indexes.has(m.key) || this.closed) {
          idx.reset() // loaded meanwhile, or the store closed: ours is not needed
          continue
        }
        this.markRestored(idx, m.signature, t0)
        this.indexes.set(m.key, idx)
      }
    })().finally(() => {
      this.restoring = null
    })
    return this.restoring
  }

  /**
   * Whether `idx` may be snapshotted now: exactly a full load of the agent file as it is now
   * (nothing committed since the load, file unchanged), big enough, not snapshotted yet.
   */
  private snapshotDue(idx: VectorIndex): { signature: string; fromSnapshot: boolean } | null {
    if (this.closed || this.cacheMinRows === null || !this.ctx.sql.embeddings) return null
    const agent = this.sources().find((s) => s.bit === HELD_AGENT)
    const load = this.loadSignatures.get(idx)
    if (!agent || !load || load.fromSnapshot || !idx.pristine || idx.count < this.cacheMinRows) return null
    if (this.indexes.get(`${idx.ownerType}\u0000${idx.model}`) !== idx) return null
    if (idx.sync[0].version !== agent.version() || fileSignature(this.ctx.path) !== load.signature) return null
    return load
  }

  /**
   * Start writing `idx`'s snapshot in the background (vectors/snapshot.ts, writeSnapshotAsync), right
   * after its full load: the write stops as soon as the index or the file changes, or the store closes,
   * and leaves nothing then. So a close has nothing to write (it only stops this).
   */
  private writeInBackground(idx: VectorIndex): void {
    const load = this.snapshotDue(idx)
    if (!load || this.writing.has(idx)) return
    let stopped = false
    const loads = idx.fullLoads
    const file = snapshotPath(this.ctx.workspacePath, idx.ownerType, idx.model)
    const done = writeSnapshotAsync(file, idx, load.signature, () => !stopped && idx.fullLoads === loads && this.snapshotDue(idx) === load)
      .then((ok) => {
        if (ok) load.fromSnapshot = true
        return ok
      })
      .finally(() => {
        if (this.writing.get(idx)?.done === done) this.writing.delete(idx)
      })
    this.writing.set(idx, { stop: () => (stopped = true), done })
  }

  /** Resolves once the snapshots being written in the background are written (or given up): the files written. */
  async whenSnapshotsWritten(): Promise<string[]> {
    const out: string[] = []
    for (const [idx, w] of [...this.writing]) if (await w.done) out.push(snapshotPath(this.ctx.workspacePath, idx.ownerType, idx.model))
    return out
  }

  /** Stop every background snapshot write (a close: nothing half-written stays). */
  stopWrites(): void {
    for (const w of this.writing.values()) w.stop()
    this.writing.clear()
  }

  /**
   * Write a snapshot of every index that is exactly a full load of the agent file as it
   * is now (vectors/snapshot.ts), now, on this thread (a background write of one is stopped
   * first). Returns the files written.
   */
  saveSnapshots(): string[] {
    const written: string[] = []
    for (const idx of this.indexes.values()) {
      const load = this.snapshotDue(idx)
      if (!load) continue
      this.writing.get(idx)?.stop()
      this.writing.delete(idx)
      const file = snapshotPath(this.ctx.workspacePath, idx.ownerType, idx.model)
      if (writeSnapshot(file, idx, load.signature)) {
        written.push(file)
        load.fromSnapshot = true
      }
    }
    return written
  }

  /** Forget every loaded index: the next use reloads (for an in-place UPDATE the cheap check cannot see). */
  reload(): void {
    this.stopWrites()
    for (const idx of this.indexes.values()) {
      idx.reset()
      this.loadSignatures.delete(idx)
    }
  }

  /** Changes whenever stored vectors may have changed (any source). Microseconds. */
  dataVersion(): string {
    return this.sources()
      .map((s) => s.version())
      .join('|')
  }

  /** Where vectors come from: the agent DB (when its layout has vectors), then the workspace. */
  private sources(): VectorSource[] {
    if (this.sourceList) return this.sourceList
    const { ctx } = this
    const list: VectorSource[] = []
    if (ctx.sql.embeddings) {
      list.push({
        bit: HELD_AGENT,
        db: ctx.db,
        embeddings: ctx.sql.embeddings,
        defaultModel: ctx.sql.defaultModel,
        // data_version moves on other connections' commits; in write mode our own count too. Prepared once
        // (db.pragma() compiles a statement per call, and an eval asks this once per case).
        version: () =>
          ctx.readOnly
            ? String(prep(ctx.db, 'PRAGMA data_version').pluck().get())
            : `${prep(ctx.db, 'PRAGMA data_version').pluck().get() as number}:${prep(ctx.db, 'SELECT total_changes()').pluck().get() as number}`,
        unique: ctx.sql.layout === 'canonical' && uniqueEmbeddingKey(ctx.db),
        openBulk: ctx.fileBacked ? (o) => this.openBulk(ctx.snapshotPath ?? ctx.path, o.mmap) : undefined,
        // A reader thread opens the file as openBulk does, so not where the layout needs its own setup.
        readerFile:
          ctx.fileBacked && !ctx.sql.needsSqliteVec && !ctx.sql.prepare
            ? {
                path: ctx.snapshotPath ?? ctx.path,
                timeoutMs: this.opts.busyTimeoutMs ?? 5000,
                ...(this.opts.nativeBinding ? { nativeBinding: this.opts.nativeBinding } : {}),
              }
            : undefined,
      })
    }
    list.push({
      bit: HELD_WORKSPACE,
      db: ctx.ws,
      embeddings: WS_EMBEDDINGS_SQL,
      defaultModel: null,
      version: () => `${prep(ctx.ws, 'PRAGMA data_version').pluck().get() as number}:${this.workspace.vectorWrites}`,
      unique: true,
      openBulk: (o) => this.openBulk(ctx.workspacePath, o.mmap),
    })
    return (this.sourceList = list)
  }

  /**
   * A short-lived read-only connection for one big first load, memory-mapped when `mmap` (about twice
   * as fast for a GB of BLOBs). It reads inside one transaction and is closed right after,
   * so no other process can truncate the file under the mapping while it is in use.
   */
  private openBulk(file: string, mmap: boolean): Database.Database {
    const db = openReadOnlyAgentDb(file, {
      fileMustExist: true,
      timeout: this.opts.busyTimeoutMs ?? 5000,
      ...(this.opts.nativeBinding ? { nativeBinding: this.opts.nativeBinding } : {}),
    })
    if (mmap) db.pragma('mmap_size = 2147418112')
    // Layouts that read sibling files (mem0's history DB) attach them on this connection too.
    if (file === (this.ctx.snapshotPath ?? this.ctx.path)) {
      if (this.ctx.sql.needsSqliteVec) loadSqliteVec(db)
      this.ctx.sql.prepare?.(db)
    }
    return db
  }

  /**
   * Stored models of an owner type, most vectors first, then models only the
   * workspace has. Kept until a commit may have changed them.
   */
  storedModels(owner: 'memory' | 'session' = 'memory'): string[] {
    const version = this.dataVersion()
    const hit = this.modelsCache.get(owner)
    if (hit && hit.version === version) return [...hit.models]
    const out = agentModels(this.ctx, owner)
    for (const m of workspaceModels(this.ctx, owner)) if (!out.includes(m)) out.push(m)
    this.modelsCache.set(owner, { version, models: out })
    return [...out]
  }

  /**
   * Embedding models in the agent DB: (owner type, model) with the majority vector length
   * (measured, not trusted from the `dim` column), the row count, and how many rows have
   * another length or cannot be parsed (skipped when loaded).
   */
  embeddingModels(): ModelFacts[] {
    const e = this.ctx.sql.embeddings
    if (!e) return []
    const dm = this.ctx.sql.defaultModel
    const modelExpr = dm ? `coalesce(model, ${sqlString(dm)})` : 'model'
    const lenExpr = `CASE WHEN typeof(vector) = 'blob' THEN (CASE WHEN length(vector) % 4 = 0 THEN length(vector) / 4 ELSE -1 END)
      WHEN json_valid(vector) THEN json_array_length(vector) ELSE -1 END`
    const rows = this.ctx.db.prepare(`SELECT owner_type ot, ${modelExpr} m, ${lenExpr} d, count(*) n FROM (${e}) GROUP BY 1, 2, 3`).all() as {
      ot: string
      m: string
      d: number
      n: number
    }[]
    const byKey = new Map<string, ModelFacts & { best: number }>()
    for (const r of rows) {
      if (r.ot !== 'memory' && r.ot !== 'session') continue
      const key = `${r.ot}\u0000${r.m}`
      const cur = byKey.get(key)
      const valid = r.d > 0
      const bad = valid ? 0 : r.n
      if (!cur)
        byKey.set(key, { model: String(r.m), ownerType: r.ot, dim: valid ? Number(r.d) : 0, count: r.n, best: valid ? r.n : 0, badShape: bad, malformed: 0 })
      else {
        cur.count += r.n
        cur.badShape += bad
        if (valid && r.n > cur.best) [cur.dim, cur.best] = [Number(r.d), r.n]
      }
    }
    return [...byKey.values()]
      .map(({ best, ...x }) => ({ ...x, malformed: x.count - best }))
      .sort((a, b) => a.ownerType.localeCompare(b.ownerType) || b.count - a.count)
  }

  /**
   * The agent's embedding models (cached) with the workspace's backfilled counts added
   * as `backfilled`; a model only the workspace has appears with count 0.
   */
  vectorModels(): EmbeddingModelFacts[] {
    const models: EmbeddingModelFacts[] = this.ctx.cached('models:v2', () => this.embeddingModels()).map((m) => ({ ...m }))
    for (const w of this.workspace.vectorModels()) {
      const m = models.find((x) => x.ownerType === w.ownerType && x.model === w.model)
      if (m) m.backfilled = (m.backfilled ?? 0) + w.count
      else models.push({ model: w.model, ownerType: w.ownerType, dim: w.dim, count: 0, malformed: 0, badShape: 0, backfilled: w.count })
    }
    return models
  }

  /** Vector facts of one memory: each model's dim and norm, backfilled ones marked. */
  vectorInfo(ownerId: string, ownerType: 'memory' | 'session' = 'memory'): VectorInfo[] {
    const e = this.ctx.sql.embeddings
    const dm = this.ctx.sql.defaultModel
    const agentRows = e
      ? (this.ctx.db
          .prepare(`SELECT ${dm ? `coalesce(model, ${sqlString(dm)})` : 'model'} AS model, dim, vector FROM (${e}) WHERE owner_type = ? AND owner_id = ?`)
          .all(ownerType, ownerId) as { model: string; dim: number | null; vector: unknown }[])
      : []
    // Backfilled vectors (workspace) too, marked: they are what dense recall uses when the agent has none.
    const wsRows = this.workspace.vectorRows(ownerType, ownerId).map((r) => ({ ...r, backfilled: true }))
    return [...agentRows.map((r) => ({ ...r, backfilled: false })), ...wsRows].map((r) => {
      const idx = this.indexes.get(`${ownerType}\u0000${r.model}`)
      const expected = idx?.dim || (r.dim ?? null)
      const v = decodeVector(r.vector, expected ?? null)
      const mark = r.backfilled ? { backfilled: true } : {}
      if (typeof v === 'string') return { model: String(r.model), dim: Number(r.dim ?? 0), norm: null, problem: v, preview: [], ...mark }
      let s = 0
      for (let i = 0; i < v.length; i++) s += v[i] * v[i]
      return { model: String(r.model), dim: v.length, norm: Math.sqrt(s), problem: null, preview: Array.from(v.subarray(0, 8)), ...mark }
    })
  }
}

/** Whether `e._rid = ?` over this embeddings SQL is one rowid lookup (not a scan). */
function rowidLookup(db: Database.Database, sql: string): boolean {
  try {
    const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT e.vector FROM (${sql}) e WHERE e._rid = ?`).all(0) as { detail: string }[]
    return plan.length > 0 && plan.every((r) => /USING INTEGER PRIMARY KEY \(rowid=\?\)/.test(r.detail))
  } catch {
    return false
  }
}

/** Rows one batched read asks for at most (the keys go in as one JSON array). */
const MANY_ROWS = 5000

/** The agent's stored vectors of a JSON array of `_rid`s: [_rid, vector] rows. */
const rowidListSql = (sql: string) => `SELECT e._rid, e.vector FROM (${sql}) e WHERE e._rid IN (SELECT value FROM json_each(?))`

/** Is the batched read (rowidListSql) one rowid lookup per asked `_rid` (no scan of the table)? */
function rowidListLookup(db: Database.Database, sql: string): boolean {
  try {
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${rowidListSql(sql)}`).all('[0]') as { detail: string }[]
    return plan.some((r) => /USING INTEGER PRIMARY KEY \(rowid=\?\)/.test(r.detail)) && plan.every((r) => !/^SCAN/.test(r.detail) || /json_each/.test(r.detail))
  } catch {
    return false
  }
}

/**
 * Does the agent's embeddings table allow one row per (owner type, owner id, model)
 * at most? (A UNIQUE index over a subset of those columns.) Then a new row for a
 * known id means the old row was replaced, which keeps refreshes incremental.
 */
function uniqueEmbeddingKey(db: Database.Database): boolean {
  try {
    const key = new Set(['owner_type', 'owner_id', 'model'])
    const idxs = db.prepare(`SELECT name FROM pragma_index_list('embeddings') WHERE "unique" = 1`).pluck().all() as string[]
    return idxs.some((name) => {
      const cols = db.prepare(`SELECT name FROM pragma_index_info(?)`).pluck().all(name) as (string | null)[]
      return cols.length > 0 && cols.every((c) => c !== null && key.has(c))
    })
  } catch {
    return false
  }
}
