/**
 * Open an agent memory DB (read-only unless write mode) with its workspace DB.
 *
 * The agent connection is `readonly` + `PRAGMA query_only`, with a busy timeout so
 * reads wait out a writer's commit instead of failing (WAL readers never block).
 * Everything the workbench owns lives in the workspace DB beside it.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import crypto from 'node:crypto'
import Database from 'better-sqlite3'
import { RecallscopeError } from '../../shared/result'
import type { DbFacts, EmbeddingModelFacts, MalformedCounts, Memory, Page, RecallEvent, Session } from '../../shared/types'
import { ADAPTERS, readTables, type Source } from './adapters'
import { materializeForeign, resolveFolderDb } from './frameworks'
import { loadSqliteVec, loadSqliteVecIfDeclared } from './sqliteVec'
import type { Materialized } from './frameworks/materialize'
import { decodeMemory, decodeSession, decodeVector, emptyMalformed, encodeVector, parseJson, toMs } from './decode'
import { makeSnippet, syncWorkspaceFts, toFtsQuery } from './fts'
import { memoryOrder, memoryWhere, type MemoryFilter, type MemorySort } from './queries'
import { WORKSPACE_MIGRATIONS } from './schema'
import { fileSignature, readSnapshot, snapshotPath, writeSnapshot } from './vectorCache'
import { HELD_AGENT, HELD_WORKSPACE, refreshVectorIndex, VectorIndex, type RefreshOptions, type VectorSource } from './vectors'

export interface OpenOptions {
  /** The agent DB. */
  path: string
  /** Workspace DB path. @default `<path>.recallscope`, or under `fallbackDir` when that is not writable */
  workspacePath?: string
  /** Where workspaces go when the agent DB's folder is read-only. @default ~/.recallscope/workspaces */
  fallbackDir?: string
  /** Open the agent DB read-write (only for explicit write mode). @default false */
  write?: boolean
  /** better-sqlite3 native addon to use (the Electron-ABI build in the app). */
  nativeBinding?: string
  /** Model name for vectors whose layout does not record one (Engram). @default 'nomic-embed-text' */
  engramModel?: string
  /** Busy timeout for reads while an agent commits. @default 5000 */
  busyTimeoutMs?: number
  /** Cap on row counts for paging (Datasette's count_limit). @default 100000 */
  countCap?: number
  /** How vector indexes load (bulk threshold, chunking); tests use it to exercise every path. @default {} */
  vectorLoad?: RefreshOptions
  /**
   * Keep a snapshot of big vector indexes beside the workspace (`<workspace>-vectors/`) so
   * reopening an unchanged DB skips the SQL load (store/vectorCache.ts). `minRows`: only
   * indexes at least this big. @default { minRows: 100000 }; false turns it off
   */
  vectorCache?: false | { minRows?: number }
}

export interface MemoryPageQuery extends MemoryFilter {
  search?: string
  sort?: MemorySort
  dir?: 'asc' | 'desc'
  offset?: number
  limit?: number
}

export interface MemoryListRow extends Memory {
  hasEmbedding?: boolean
  snippet?: { text: string; hit: boolean }[]
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

export interface EventPageQuery {
  agentId?: string
  userId?: string
  sessionId?: string
  after?: number
  before?: number
  memoryId?: string
  search?: string
  dir?: 'asc' | 'desc'
  offset?: number
  limit?: number
}

const SQLITE_MAGIC = 'SQLite format 3\0'

/** Check that a file exists and is SQLite before handing it to the driver (clear errors, no side files). */
export function assertSqliteFile(p: string): void {
  let fd: number
  try {
    fd = fs.openSync(p, 'r')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new RecallscopeError('NOT_FOUND', `No such file: ${p}`)
    if (code === 'EISDIR') throw new RecallscopeError('NOT_SQLITE', `${p} is a directory, not a SQLite database`)
    throw new RecallscopeError('NOT_FOUND', `Cannot read ${p}: ${(e as Error).message}`)
  }
  try {
    const buf = Buffer.alloc(16)
    const n = fs.readSync(fd, buf, 0, 16, 0)
    if (fs.fstatSync(fd).isDirectory()) throw new RecallscopeError('NOT_SQLITE', `${p} is a directory`)
    if (n < 16 || buf.toString('latin1') !== SQLITE_MAGIC)
      throw new RecallscopeError('NOT_SQLITE', `${p} is not a SQLite database (${n === 0 ? 'empty file' : 'bad header'})`)
  } finally {
    fs.closeSync(fd)
  }
}

function dirWritable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** Where the workspace of an agent DB lives by default. */
export function defaultWorkspacePath(agentPath: string, fallbackDir?: string): string {
  const abs = path.resolve(agentPath)
  if (dirWritable(path.dirname(abs))) return `${abs}.recallscope`
  const dir = fallbackDir ?? path.join(os.homedir(), '.recallscope', 'workspaces')
  fs.mkdirSync(dir, { recursive: true })
  const h = crypto.createHash('sha1').update(abs).digest('hex').slice(0, 12)
  return path.join(dir, `${path.basename(abs)}-${h}.recallscope`)
}

export function migrate(db: Database.Database, migrations: string[]): void {
  const v = db.pragma('user_version', { simple: true }) as number
  for (let i = v; i < migrations.length; i++) {
    db.transaction(() => {
      db.exec(migrations[i])
      db.pragma(`user_version = ${i + 1}`)
    })()
  }
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory()
  } catch {
    return false
  }
}

/** A non-SQLite framework store, materialized; write mode is refused (there is no file to write). */
function materializeForeignFor(abs: string, opts: OpenOptions): Materialized | null {
  let st: fs.Stats | null = null
  try {
    st = fs.statSync(abs)
  } catch {
    return null // assertSqliteFile reports the missing path
  }
  if (st.isFile()) {
    // A SQLite file is never a framework folder; only read the header once.
    try {
      assertSqliteFile(abs)
      return null
    } catch {
      /* not SQLite: let a materializer try */
    }
  }
  const m = materializeForeign(abs, opts.nativeBinding)
  if (m && opts.write) {
    m.db.close()
    throw new RecallscopeError('READ_ONLY', `${m.layout} stores open read-only: ${abs} is read, never written`)
  }
  return m
}

export class Store {
  readonly path: string
  readonly workspacePath: string
  readonly readOnly: boolean
  readonly source: Source
  /** Agent connection (read-only unless write mode). */
  readonly db: Database.Database
  /** Workspace connection (ours, read-write). */
  readonly ws: Database.Database
  readonly malformed: MalformedCounts = emptyMalformed()
  private readonly countCap: number
  private readonly vectorIndexes = new Map<string, VectorIndex>()
  private vectorSourceList: VectorSource[] | null = null
  /** Bumped on every write to ws_embeddings through `ws` (PRAGMA data_version ignores our own commits). */
  private wsVectorWrites = 0
  private readonly vectorLoad: RefreshOptions
  private readonly vectorCacheMinRows: number | null
  /** per index: the agent file's signature when its full load began, or when its snapshot was read */
  private readonly loadSignatures = new Map<VectorIndex, { signature: string; fromSnapshot: boolean }>()
  private readonly nativeBinding?: string
  private readonly busyTimeoutMs: number
  private wsAttached = false
  private byIdsStmt: Database.Statement | null = null
  private withVectorStmt: Database.Statement | null = null
  private dataVersionStmt: Database.Statement | null = null
  private memoState: { version: string | null; memories: Map<string, Memory>; scopes: Map<string, unknown> } = { version: null, memories: new Map(), scopes: new Map() }
  private closed = false

  private constructor(opts: OpenOptions, db: Database.Database, ws: Database.Database, source: Source, workspacePath: string) {
    this.path = path.resolve(opts.path)
    this.db = db
    this.ws = ws
    this.source = source
    this.workspacePath = workspacePath
    this.readOnly = !opts.write
    this.countCap = opts.countCap ?? 100_000
    this.vectorLoad = opts.vectorLoad ?? {}
    this.vectorCacheMinRows = opts.vectorCache === false ? null : (opts.vectorCache?.minRows ?? 100_000)
    this.nativeBinding = opts.nativeBinding
    this.busyTimeoutMs = opts.busyTimeoutMs ?? 5000
  }

  static open(opts: OpenOptions): Store {
    if (typeof opts.path !== 'string' || opts.path.trim() === '') throw new RecallscopeError('BAD_INPUT', 'A database path is required')
    const given = path.resolve(opts.path)
    let abs = given
    // Framework stores (issue 14): a folder holding a SQLite DB opens that file; a non-SQLite
    // format (LanceDB, markdown folder) is read into an in-memory canonical DB, read-only.
    const folderDb = resolveFolderDb(abs)
    const foreign = folderDb ? null : materializeForeignFor(abs, opts)
    if (folderDb) abs = folderDb
    if (!foreign && !folderDb && isDirectory(abs))
      throw new RecallscopeError(
        'NOT_SQLITE',
        `${abs} is a folder recallscope does not recognise (looked for: a SQLite memory DB file; a LanceDB folder with memories.lance/ (CrewAI); a folder with memory.db (basic-memory); a Letta Code memory folder with system/)`,
      )
    if (!foreign) assertSqliteFile(abs)
    const driverOpts: Database.Options = {
      readonly: !opts.write,
      fileMustExist: true,
      timeout: opts.busyTimeoutMs ?? 5000,
      ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}),
    }
    let db: Database.Database
    try {
      db = foreign ? foreign.db : new Database(abs, driverOpts)
      if (!opts.write) db.pragma('query_only = 1')
    } catch (e) {
      throw new RecallscopeError('NOT_SQLITE', `Cannot open ${abs}: ${(e as Error).message}`)
    }
    let source: Source | null = null
    try {
      loadSqliteVecIfDeclared(db) // vec0 tables cannot even be listed without the module
      const tables = readTables(db)
      for (const a of ADAPTERS) {
        source = a.detect(db, tables)
        if (source) break
      }
      if (!source)
        throw new RecallscopeError(
          'UNKNOWN_LAYOUT',
          `${path.basename(abs)} is SQLite but not a memory DB recallscope knows (tables: ${[...tables.keys()].join(', ') || 'none'})`,
          { tables: [...tables.keys()] },
        )
      if (foreign) source = { ...source, layout: foreign.layout, detectedBecause: foreign.detectedBecause, fingerprint: foreign.fingerprint }
      if (source.defaultModel && opts.engramModel) source.defaultModel = opts.engramModel
    } catch (e) {
      db.close()
      if (e instanceof RecallscopeError) throw e
      throw new RecallscopeError('NOT_SQLITE', `Cannot read ${abs}: ${(e as Error).message}`)
    }
    // A folder's workspace sits beside the folder, so nothing is ever added inside it.
    const wsPath = opts.workspacePath ? path.resolve(opts.workspacePath) : defaultWorkspacePath(given, opts.fallbackDir)
    if (wsPath === abs) {
      db.close()
      throw new RecallscopeError('BAD_INPUT', 'The workspace DB must not be the agent DB')
    }
    let ws: Database.Database
    try {
      ws = new Database(wsPath, opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {})
      ws.pragma('journal_mode = WAL')
      ws.pragma('busy_timeout = 5000')
      migrate(ws, WORKSPACE_MIGRATIONS)
    } catch (e) {
      db.close()
      throw new RecallscopeError('INTERNAL', `Cannot open workspace ${wsPath}: ${(e as Error).message}`)
    }
    // A folder holding a SQLite DB is that file from here on (stats, bulk loads); a materialized folder keeps its path.
    // (A materialized copy has no file signature to key a vector snapshot on: no snapshot.)
    const store = new Store({ ...opts, path: foreign ? given : abs, ...(foreign ? { vectorCache: false as const } : {}) }, db, ws, source, wsPath)
    store.attachWorkspace()
    return store
  }

  close(): void {
    if (this.closed) return
    try {
      this.saveVectorSnapshots()
    } catch {
      /* a cache that cannot be written is no reason to fail a close */
    }
    this.closed = true
    this.db.close()
    this.ws.close()
  }

  get isClosed(): boolean {
    return this.closed
  }

  private get memSql(): string {
    return this.source.memories
  }

  /**
   * (owner_type, owner_id) of every stored vector: the agent's and the ones
   * backfilled into the workspace, so "has a vector" means what dense recall sees.
   */
  get embeddingOwners(): string[] {
    const ws = `SELECT owner_type, owner_id FROM ws.ws_embeddings`
    return this.source.embeddings ? [this.source.embeddings, ws] : [ws]
  }

  /** The cheapest memory source that can answer a filter (the session join only for tenant filters). */
  private memSqlFor(f: MemoryFilter): string {
    return f.tenantId === undefined ? this.source.memoriesLite : this.source.memories
  }

  // -------------------------------------------------------------------------
  // Counting helpers
  // -------------------------------------------------------------------------

  /** count(*) capped: {total, truncated}. */
  private cappedCount(fromWhere: string, params: Record<string, unknown>): { total: number; truncated: boolean } {
    // Unfiltered: an exact count(*) is cheap (SQLite counts the smallest index).
    if (fromWhere === `FROM (${this.source.memoriesLite}) m WHERE 1`) {
      return { total: this.db.prepare(`SELECT count(*) FROM (${this.source.memoriesLite})`).pluck().get() as number, truncated: false }
    }
    const cap = this.countCap
    const n = this.db.prepare(`SELECT count(*) FROM (SELECT 1 ${fromWhere} LIMIT ${cap + 1})`).pluck().get(params) as number
    return n > cap ? { total: cap, truncated: true } : { total: n, truncated: false }
  }

  // -------------------------------------------------------------------------
  // Facts
  // -------------------------------------------------------------------------

  /**
   * A cheap fingerprint of the agent DB's content: row counts, max rowid, and
   * the size/mtime of the file and its WAL. Expensive summaries are cached in
   * the workspace under it.
   */
  private signature(): string {
    const stat = (p: string) => {
      try {
        const st = fs.statSync(p)
        return `${st.size}:${st.mtimeMs}`
      } catch {
        return '-'
      }
    }
    const m = this.db.prepare(`SELECT count(*) AS n, max(_rid) AS r FROM (${this.source.memoriesLite})`).get() as { n: number; r: number | null }
    return `${this.source.layout}|${m.n}|${m.r}|${stat(this.path)}|${stat(`${this.path}-wal`)}${this.source.fingerprint ? `|${this.source.fingerprint}` : ''}`
  }

  private cached<T>(key: string, compute: () => T): T {
    const sig = this.signature()
    const row = this.ws.prepare(`SELECT value FROM meta WHERE key = ?`).pluck().get(key) as string | undefined
    if (row) {
      try {
        const hit = JSON.parse(row) as { sig: string; value: T }
        if (hit.sig === sig) return hit.value
      } catch {
        /* corrupt cache entry: recompute */
      }
    }
    const value = compute()
    this.ws.prepare(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`).run(key, JSON.stringify({ sig, value }))
    return value
  }

  /** Breakdowns by agent/user/kind/tier/role, metadata validity and time range: one indexed query each, cached. */
  private summary(): {
    byAgent: { key: string; count: number }[]
    byUser: { key: string; count: number }[]
    byKind: { key: string; count: number }[]
    byTier: { key: string; count: number }[]
    byRole: { key: string; count: number }[]
    badMetadata: number
    memories: number
    timeRange: { min: number; max: number } | null
  } {
    return this.cached('summary:v1', () => {
      const src = this.source.memoriesLite
      const tally = (col: string) =>
        (this.db.prepare(`SELECT ${col} AS k, count(*) AS n FROM (${src}) GROUP BY 1`).all() as { k: unknown; n: number }[])
          .map((r) => ({ key: r.k === null ? '(none)' : String(r.k), count: r.n }))
          .sort((x, y) => y.count - x.count || x.key.localeCompare(y.key))
      const byAgent = tally('agent_id')
      const tr = this.db.prepare(`SELECT min(created_at) AS mn, max(created_at) AS mx FROM (${src})`).get() as { mn: unknown; mx: unknown }
      const mn = toMs(tr.mn)
      const mx = toMs(tr.mx)
      return {
        byAgent,
        byUser: tally('user_id'),
        byKind: tally('kind'),
        byTier: tally('tier'),
        byRole: tally('role'),
        badMetadata: this.db
          .prepare(`SELECT count(*) FROM (${src}) WHERE metadata IS NOT NULL AND NOT json_valid(metadata)`)
          .pluck()
          .get() as number,
        memories: byAgent.reduce((n, x) => n + x.count, 0),
        timeRange: mn !== null && mx !== null ? { min: mn, max: mx } : null,
      }
    })
  }

  facts(): DbFacts {
    const t0 = performance.now()
    const db = this.db
    const sum = this.summary()
    const known = (list: { key: string; count: number }[], ok: readonly string[]) =>
      list.filter((x) => x.key !== '(none)' && !ok.includes(x.key)).reduce((n, x) => n + x.count, 0)
    const malformed: MalformedCounts = {
      ...this.malformed,
      badMetadata: sum.badMetadata,
      unknownRole: known(sum.byRole, ['user', 'assistant', 'system', 'tool']),
      unknownKind: known(sum.byKind, ['episodic', 'semantic', 'procedural', 'reflection']),
      unknownTier: known(sum.byTier, ['working', 'long_term', 'archived']),
    }
    // A full pass over the vectors table: cached separately so facets never wait for it.
    const models = this.vectorModels()
    // Shape problems are visible from SQL alone; NaN/Infinity only once a model's vectors are loaded.
    let badShape = 0
    let wrongDim = 0
    let loadedBad = 0
    let loadedWrong = 0
    for (const m of models) {
      badShape += m.badShape ?? 0
      wrongDim += m.malformed - (m.badShape ?? 0)
    }
    for (const idx of this.vectorIndexes.values()) {
      loadedBad += idx.malformed.badVectorShape
      loadedWrong += idx.malformed.wrongDimension
      malformed.nonFiniteVector += idx.malformed.nonFiniteVector
    }
    malformed.badVectorShape = Math.max(badShape, loadedBad)
    malformed.wrongDimension = Math.max(wrongDim, loadedWrong)
    const sessions = db.prepare(`SELECT count(*) FROM (${this.source.sessions})`).pluck().get() as number
    const embeddings = models.reduce((n, m) => n + m.count, 0)
    const recallEvents = this.source.recallEvents ? (db.prepare(`SELECT count(*) FROM (${this.source.recallEvents})`).pluck().get() as number) : 0
    const evalCases = this.ws.prepare(`SELECT count(*) FROM eval_cases`).pluck().get() as number
    let sizeBytes = 0
    try {
      sizeBytes = fs.statSync(this.path).size
    } catch {
      /* deleted under us: report 0 */
    }
    return {
      path: this.path,
      layout: this.source.layout,
      ...(this.source.detectedBecause ? { detectedBecause: this.source.detectedBecause } : {}),
      readOnly: this.readOnly,
      workspacePath: this.workspacePath,
      sizeBytes,
      counts: { memories: sum.memories, sessions, embeddings, recallEvents, evalCases },
      byAgent: sum.byAgent,
      byUser: sum.byUser,
      byKind: sum.byKind,
      byTier: sum.byTier,
      byRole: sum.byRole,
      models,
      timeRange: sum.timeRange,
      malformed,
      hasFts: this.source.agentFts ? 'agent' : this.wsFtsReady() ? 'workspace' : 'none',
      tookMs: performance.now() - t0,
    }
  }

  /**
   * Embedding models present: (owner type, model) with the majority vector length
   * (measured, not trusted from the `dim` column), the row count, and how many
   * rows have another length or cannot be parsed (skipped when loaded).
   */
  embeddingModels(): { model: string; ownerType: 'memory' | 'session'; dim: number; count: number; malformed: number; badShape: number }[] {
    const e = this.source.embeddings
    if (!e) return []
    const dm = this.source.defaultModel
    const modelExpr = dm ? `coalesce(model, ${sqlString(dm)})` : 'model'
    const lenExpr = `CASE WHEN typeof(vector) = 'blob' THEN (CASE WHEN length(vector) % 4 = 0 THEN length(vector) / 4 ELSE -1 END)
      WHEN json_valid(vector) THEN json_array_length(vector) ELSE -1 END`
    const rows = this.db
      .prepare(`SELECT owner_type ot, ${modelExpr} m, ${lenExpr} d, count(*) n FROM (${e}) GROUP BY 1, 2, 3`)
      .all() as { ot: string; m: string; d: number; n: number }[]
    const byKey = new Map<string, { model: string; ownerType: 'memory' | 'session'; dim: number; count: number; best: number; badShape: number }>()
    for (const r of rows) {
      if (r.ot !== 'memory' && r.ot !== 'session') continue
      const key = `${r.ot}\u0000${r.m}`
      const cur = byKey.get(key)
      const valid = r.d > 0
      const bad = valid ? 0 : r.n
      if (!cur) byKey.set(key, { model: String(r.m), ownerType: r.ot, dim: valid ? Number(r.d) : 0, count: r.n, best: valid ? r.n : 0, badShape: bad })
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

  /** Distinct values for the browser's facets (from the cached summary). */
  facets(): { agents: string[]; users: string[]; kinds: string[]; tiers: string[]; roles: string[]; timeRange: { min: number; max: number } | null } {
    const sum = this.summary()
    const keys = (xs: { key: string }[]) =>
      xs
        .map((x) => x.key)
        .filter((k) => k !== '(none)')
        .sort()
        .slice(0, 500)
    return { agents: keys(sum.byAgent), users: keys(sum.byUser), kinds: keys(sum.byKind), tiers: keys(sum.byTier), roles: keys(sum.byRole), timeRange: sum.timeRange }
  }

  // -------------------------------------------------------------------------
  // Sessions
  // -------------------------------------------------------------------------

  sessionsPage(q: SessionPageQuery = {}): Page<Session> {
    const t0 = performance.now()
    const parts: string[] = []
    const params: Record<string, unknown> = {}
    if (q.agentId !== undefined) (parts.push('s.agent_id = @agentId'), (params.agentId = q.agentId))
    if (q.userId !== undefined) (parts.push('s.user_id = @userId'), (params.userId = q.userId))
    if (q.tenantId !== undefined) (parts.push('s.tenant_id = @tenantId'), (params.tenantId = q.tenantId))
    if (!q.includeArchived && q.includeArchived !== undefined) parts.push('coalesce(s.is_archived, 0) = 0')
    if (q.search) (parts.push(`(s.summary LIKE @search ESCAPE '\\' OR s.id LIKE @search ESCAPE '\\')`), (params.search = `%${likeEscape(q.search)}%`))
    const where = parts.length ? `WHERE ${parts.join(' AND ')}` : ''
    const limit = clampLimit(q.limit)
    const offset = Math.max(0, q.offset ?? 0)
    const dir = q.dir === 'asc' ? 'ASC' : 'DESC'
    const order =
      q.sort === 'memory_count'
        ? `memory_count ${dir}, s._rid ${dir}`
        : // DESC puts NULLs last already, so the started_at index serves the default sort (and the count subquery runs per page row only).
          `s.started_at ${dir}${dir === 'ASC' ? ' NULLS LAST' : ''}, s._rid ${dir}`
    const rows = this.db
      .prepare(
        `SELECT s.*, (SELECT count(*) FROM (${this.source.memoriesLite}) m WHERE m.session_id = s.id) AS memory_count
         FROM (${this.source.sessions}) s ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`,
      )
      .all(params) as Record<string, unknown>[]
    const { total, truncated } = this.cappedCount(`FROM (${this.source.sessions}) s ${where}`, params)
    return { rows: rows.map(decodeSession), offset, limit, total, truncated, tookMs: performance.now() - t0 }
  }

  getSession(id: string): Session | null {
    const row = this.db
      .prepare(`SELECT s.*, (SELECT count(*) FROM (${this.source.memoriesLite}) m WHERE m.session_id = s.id) AS memory_count FROM (${this.source.sessions}) s WHERE s.id = ?`)
      .get(id) as Record<string, unknown> | undefined
    return row ? decodeSession(row) : null
  }

  /** Sessions by id (for session-unit recall). */
  getSessions(ids: string[]): Map<string, Session> {
    const out = new Map<string, Session>()
    for (const chunk of chunks(ids, 500)) {
      const rows = this.db
        .prepare(`SELECT s.*, 0 AS memory_count FROM (${this.source.sessions}) s WHERE s.id IN (${chunk.map(() => '?').join(',')})`)
        .all(...chunk) as Record<string, unknown>[]
      for (const r of rows) {
        const s = decodeSession(r)
        out.set(s.id, s)
      }
    }
    return out
  }

  /** Sessions matching a scope (agent/user/tenant), for session-unit recall. */
  sessionsInScope(f: { agentId?: string; userId?: string; tenantId?: string; includeArchived?: boolean; before?: number }): Session[] {
    const parts: string[] = []
    const params: Record<string, unknown> = {}
    if (f.agentId !== undefined) (parts.push('s.agent_id = @agentId'), (params.agentId = f.agentId))
    if (f.userId !== undefined) (parts.push('s.user_id = @userId'), (params.userId = f.userId))
    if (f.tenantId !== undefined) (parts.push('s.tenant_id = @tenantId'), (params.tenantId = f.tenantId))
    if (!f.includeArchived) parts.push('coalesce(s.is_archived, 0) = 0')
    if (f.before !== undefined) (parts.push('(s.started_at IS NULL OR s.started_at <= @before)'), (params.before = f.before))
    const rows = this.db
      .prepare(`SELECT s.*, 0 AS memory_count FROM (${this.source.sessions}) s ${parts.length ? `WHERE ${parts.join(' AND ')}` : ''}`)
      .all(params) as Record<string, unknown>[]
    return rows.map(decodeSession)
  }

  // -------------------------------------------------------------------------
  // Memories
  // -------------------------------------------------------------------------

  memoriesPage(q: MemoryPageQuery = {}): Page<MemoryListRow> {
    const t0 = performance.now()
    const where = memoryWhere(q, this.embeddingOwners)
    const limit = clampLimit(q.limit)
    const offset = Math.max(0, q.offset ?? 0)
    const sort = q.sort ?? (q.search ? 'relevance' : 'created_at')
    const dir = q.dir ?? 'desc'
    let rows: Record<string, unknown>[]
    let count: { total: number; truncated: boolean }
    const ftsQ = q.search ? toFtsQuery(q.search) : null
    if (q.search && !ftsQ) {
      rows = []
      count = { total: 0, truncated: false }
    } else if (ftsQ) {
      const fts = this.ftsTable()
      const params = { ...where.params, ftsq: ftsQ }
      const from = (src: string) =>
        `FROM (${src}) m JOIN (SELECT rowid AS rid, bm25(${fts.name}) AS rank FROM ${fts.qualified} WHERE ${fts.name} MATCH @ftsq) r ON r.rid = m._rid WHERE ${where.sql}`
      rows = this.db
        .prepare(`SELECT m.*, r.rank AS rank ${from(this.memSql)} ORDER BY ${memoryOrder(sort, dir, true)} LIMIT ${limit} OFFSET ${offset}`)
        .all(params) as Record<string, unknown>[]
      count = this.cappedCount(from(this.memSqlFor(q)), params)
    } else {
      const lite = `FROM (${this.memSqlFor(q)}) m WHERE ${where.sql}`
      const order = memoryOrder(sort, dir, false)
      // Deferred join: find the page's row keys on the lean source (an index walk, even deep
      // into the list), then read just those rows with their session's tenant.
      const keys = this.db.prepare(`SELECT m._rid ${lite} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`).pluck().all(where.params) as number[]
      const byRid = new Map<number, Record<string, unknown>>()
      if (keys.length)
        for (const r of this.db.prepare(`SELECT m.* FROM (${this.memSql}) m WHERE m._rid IN (SELECT value FROM json_each(?))`).all(JSON.stringify(keys)) as Record<string, unknown>[])
          byRid.set(Number(r._rid), r)
      rows = keys.map((k) => byRid.get(k)).filter((r): r is Record<string, unknown> => r !== undefined)
      count = this.cappedCount(lite, where.params)
    }
    const embedded = this.idsWithEmbedding(rows.map((r) => String(r.id)))
    const out = rows.map((r) => {
      const m: MemoryListRow = decodeMemory(r, undefined)
      m.hasEmbedding = embedded.has(m.id)
      if (q.search) m.snippet = makeSnippet(m.content, q.search)
      return m
    })
    return { rows: out, offset, limit, ...count, tookMs: performance.now() - t0 }
  }

  /** Which of these ids have at least one stored vector. */
  idsWithEmbedding(ids: string[]): Set<string> {
    const out = new Set<string>()
    if (ids.length === 0) return out
    this.withVectorStmt ??= this.db
      .prepare(
        this.embeddingOwners
          .map((src) => `SELECT owner_id FROM (${src}) WHERE owner_type = 'memory' AND owner_id IN (SELECT value FROM json_each(@ids))`)
          .join(' UNION '),
      )
      .pluck()
    for (const chunk of chunks(ids, 5000)) for (const id of this.withVectorStmt.all({ ids: JSON.stringify(chunk) }) as string[]) out.add(String(id))
    return out
  }

  getMemory(id: string): Memory | null {
    const row = this.db.prepare(`SELECT m.* FROM (${this.memSql}) m WHERE m.id = ?`).get(id) as Record<string, unknown> | undefined
    return row ? decodeMemory(row) : null
  }

  /** Memories by id, in one query per 500 ids. Missing ids are absent from the map. */
  getMemories(ids: string[]): Map<string, Memory> {
    const out = new Map<string, Memory>()
    const cache = this.memo()
    const missing: string[] = []
    for (const id of new Set(ids)) {
      const hit = cache.memories.get(id)
      if (hit) out.set(id, hit)
      else missing.push(id)
    }
    if (missing.length === 0) return out
    // One statement for any number of ids (a JSON list), prepared once.
    this.byIdsStmt ??= this.db.prepare(`SELECT m.* FROM (${this.memSql}) m WHERE m.id IN (SELECT value FROM json_each(?))`)
    for (const chunk of chunks(missing, 5000)) {
      for (const r of this.byIdsStmt.all(JSON.stringify(chunk)) as Record<string, unknown>[]) {
        const m = decodeMemory(r)
        out.set(m.id, m)
        cache.memories.set(m.id, m)
      }
    }
    if (cache.memories.size > 200_000) cache.memories.clear()
    return out
  }

  /**
   * Per-version memo of decoded rows and scope listings. Recalls in a loop (eval,
   * replay, tune) ask for the same rows again and again; any commit to the agent DB
   * (PRAGMA data_version, plus our own writes in write mode) empties it. Callers must
   * not mutate what they get back.
   */
  memo(): { memories: Map<string, Memory>; scopes: Map<string, unknown> } {
    this.dataVersionStmt ??= this.db.prepare('PRAGMA data_version').pluck()
    const v = this.readOnly ? String(this.dataVersionStmt.get()) : `${this.dataVersionStmt.get()}:${this.db.prepare('SELECT total_changes()').pluck().get()}`
    if (v !== this.memoState.version) this.memoState = { version: v, memories: new Map(), scopes: new Map() }
    return this.memoState
  }

  /** Memories matching a filter, unpaged but capped (for recall scopes). Ordered by created_at desc. */
  memoriesWhere(f: MemoryFilter, opts: { limit?: number; order?: 'created_desc' | 'created_asc' | 'turn' } = {}): Memory[] {
    const where = memoryWhere(f, this.embeddingOwners)
    const order =
      opts.order === 'created_asc'
        ? 'm.created_at ASC, m._rid ASC'
        : opts.order === 'turn'
          ? 'm.turn IS NULL, m.turn ASC, m.created_at ASC, m._rid ASC'
          : 'm.created_at DESC, m._rid DESC'
    const limit = opts.limit !== undefined ? `LIMIT ${Math.max(0, Math.floor(opts.limit))}` : ''
    const rows = this.db.prepare(`SELECT m.* FROM (${this.memSql}) m WHERE ${where.sql} ORDER BY ${order} ${limit}`).all(where.params) as Record<string, unknown>[]
    return rows.map((r) => decodeMemory(r))
  }

  /** Ids matching a filter (cheap: ids only), capped. */
  idsWhere(f: MemoryFilter, cap = 5_000_000): string[] {
    const where = memoryWhere(f, this.embeddingOwners)
    return (this.db.prepare(`SELECT m.id FROM (${this.memSqlFor(f)}) m WHERE ${where.sql} LIMIT ${cap}`).pluck().all(where.params) as unknown[]).map(String)
  }

  /** How many memories match a filter, capped. */
  countWhere(f: MemoryFilter): { total: number; truncated: boolean } {
    const where = memoryWhere(f, this.embeddingOwners)
    return this.cappedCount(`FROM (${this.memSqlFor(f)}) m WHERE ${where.sql}`, where.params)
  }

  /**
   * Write mode only: what refreshOnRecall means for real (seed 003: recalled
   * memories get `last_used_at = now`, and their use count goes up). Throws
   * READ_ONLY on a read-only store; BAD_INPUT for a layout with no `last_used_at`.
   */
  applyRefresh(ids: string[], now: number): { updated: number } {
    if (this.readOnly) throw new RecallscopeError('READ_ONLY', 'The agent DB is open read-only: reopen it in write mode to write last_used_at')
    if (this.source.layout !== 'canonical') throw new RecallscopeError('BAD_INPUT', `${this.source.layout} files have no last_used_at column to refresh`)
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

  // -------------------------------------------------------------------------
  // Vectors
  // -------------------------------------------------------------------------

  /**
   * The vector index of one model: the agent's vectors merged with the workspace's
   * backfilled ones (a valid agent vector wins). Loaded on first use; every later call
   * costs a PRAGMA data_version read unless something was committed (store/vectors.ts).
   */
  vectors(model: string, ownerType: 'memory' | 'session' = 'memory'): VectorIndex {
    const key = `${ownerType}\u0000${model}`
    let idx = this.vectorIndexes.get(key)
    const first = !idx
    if (!idx) {
      idx = new VectorIndex(ownerType, model)
      this.vectorIndexes.set(key, idx)
    }
    const useCache = this.vectorCacheMinRows !== null && this.source.embeddings !== null
    // Taken before any load starts: a snapshot is only written if the file still has it at close.
    const signature = useCache ? fileSignature(this.path) : null
    let restored = false
    if (first && signature !== null) {
      const t0 = performance.now()
      restored = readSnapshot(snapshotPath(this.workspacePath, ownerType, model), idx, signature)
      if (restored) {
        idx.pristine = true
        this.loadSignatures.set(idx, { signature, fromSnapshot: true })
        idx.last = { path: 'cached', ms: performance.now() - t0 }
      }
    }
    const fullBefore = idx.fullLoads
    const t1 = performance.now()
    const path = refreshVectorIndex(idx, this.vectorSources(), this.vectorLoad)
    if (idx.fullLoads !== fullBefore && signature !== null) this.loadSignatures.set(idx, { signature, fromSnapshot: false })
    if (restored && path !== 'full') idx.last = { path: 'cached', ms: idx.last.ms + (performance.now() - t1) }
    return idx
  }

  /**
   * Write a snapshot of every index that is exactly a full load of the agent file as it
   * is now (store/vectorCache.ts): nothing committed since the load, file unchanged.
   * Called by close(). Returns the files written.
   */
  saveVectorSnapshots(): string[] {
    const written: string[] = []
    if (this.closed || this.vectorCacheMinRows === null || !this.source.embeddings) return written
    const agent = this.vectorSources().find((s) => s.bit === HELD_AGENT)
    if (!agent) return written
    const version = agent.version()
    for (const idx of this.vectorIndexes.values()) {
      const load = this.loadSignatures.get(idx)
      if (!load || load.fromSnapshot || !idx.pristine || idx.count < this.vectorCacheMinRows) continue
      if (idx.sync[0].version !== version || fileSignature(this.path) !== load.signature) continue
      const file = snapshotPath(this.workspacePath, idx.ownerType, idx.model)
      if (writeSnapshot(file, idx, load.signature)) {
        written.push(file)
        load.fromSnapshot = true
      }
    }
    return written
  }

  /**
   * Forget every loaded vector index: the next use reloads from scratch. For the
   * changes the cheap staleness check cannot see (an in-place UPDATE of a vector).
   */
  reloadVectors(): void {
    for (const idx of this.vectorIndexes.values()) {
      idx.reset()
      this.loadSignatures.delete(idx)
    }
  }

  /**
   * Changes whenever stored vectors may have changed (any source). Microseconds: use it
   * to cache anything derived from the embeddings tables.
   */
  vectorDataVersion(): string {
    return this.vectorSources()
      .map((s) => s.version())
      .join('|')
  }

  /** Where vectors come from: the agent DB (when its layout has vectors), then the workspace. */
  private vectorSources(): VectorSource[] {
    if (this.vectorSourceList) return this.vectorSourceList
    const list: VectorSource[] = []
    if (this.source.embeddings) {
      list.push({
        bit: HELD_AGENT,
        db: this.db,
        embeddings: this.source.embeddings,
        defaultModel: this.source.defaultModel,
        // data_version moves on other connections' commits; in write mode our own count too.
        version: () =>
          this.readOnly
            ? String(this.db.pragma('data_version', { simple: true }))
            : `${this.db.pragma('data_version', { simple: true })}:${this.db.prepare('SELECT total_changes()').pluck().get()}`,
        unique: this.source.layout === 'canonical' && uniqueEmbeddingKey(this.db),
        openBulk: () => this.openBulk(this.path),
      })
    }
    list.push({
      bit: HELD_WORKSPACE,
      db: this.ws,
      embeddings: WS_EMBEDDINGS_SQL,
      defaultModel: null,
      version: () => `${this.ws.pragma('data_version', { simple: true })}:${this.wsVectorWrites}`,
      unique: true,
      openBulk: () => this.openBulk(this.workspacePath),
    })
    return (this.vectorSourceList = list)
  }

  /**
   * A short-lived read-only connection for one big first load, memory-mapped (about twice
   * as fast for a GB of BLOBs). It reads inside one transaction and is closed right after,
   * so no other process can truncate the file under the mapping while it is in use.
   */
  private openBulk(file: string): Database.Database {
    const db = new Database(file, { readonly: true, fileMustExist: true, timeout: this.busyTimeoutMs, ...(this.nativeBinding ? { nativeBinding: this.nativeBinding } : {}) })
    db.pragma('mmap_size = 2147418112')
    if (this.source.needsSqliteVec && file === this.path) loadSqliteVec(db)
    return db
  }

  /**
   * Store backfilled vectors of one model in the workspace (the agent DB is never
   * written). One transaction per call; replaces earlier workspace vectors of the same ids.
   */
  putWorkspaceVectors(ownerType: 'memory' | 'session', model: string, rows: { id: string; vector: ArrayLike<number> }[], embedder: string | null, now: number): number {
    const ins = this.ws.prepare(
      `INSERT OR REPLACE INTO ws_embeddings (owner_type, owner_id, model, dim, vector, embedder, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    )
    this.ws.transaction(() => {
      for (const r of rows) ins.run(ownerType, r.id, model, r.vector.length, encodeVector(r.vector), embedder, now)
    })()
    this.wsVectorWrites++
    return rows.length
  }

  /** Delete the workspace's backfilled vectors of a model (all models when omitted). Returns rows deleted. */
  clearWorkspaceVectors(model?: string): number {
    const r = model === undefined ? this.ws.prepare(`DELETE FROM ws_embeddings`).run() : this.ws.prepare(`DELETE FROM ws_embeddings WHERE model = ?`).run(model)
    this.wsVectorWrites++
    return r.changes
  }

  /** Backfilled vectors per (owner type, model, dim) in the workspace. */
  workspaceVectorModels(): { ownerType: 'memory' | 'session'; model: string; dim: number; count: number }[] {
    return (this.ws.prepare(`SELECT owner_type AS ownerType, model, dim, count(*) AS count FROM ws_embeddings GROUP BY 1, 2, 3 ORDER BY 4 DESC`).all() as {
      ownerType: string
      model: string
      dim: number
      count: number
    }[]).filter((r): r is { ownerType: 'memory' | 'session'; model: string; dim: number; count: number } => r.ownerType === 'memory' || r.ownerType === 'session')
  }

  /**
   * The agent's embedding models (embeddingModels(), cached) with the workspace's
   * backfilled counts added as `backfilled`; a model only the workspace has appears with count 0.
   */
  vectorModels(): EmbeddingModelFacts[] {
    const models: EmbeddingModelFacts[] = this.cached('models:v2', () => this.embeddingModels()).map((m) => ({ ...m }))
    for (const w of this.workspaceVectorModels()) {
      const m = models.find((x) => x.ownerType === w.ownerType && x.model === w.model)
      if (m) m.backfilled = (m.backfilled ?? 0) + w.count
      else models.push({ model: w.model, ownerType: w.ownerType, dim: w.dim, count: 0, malformed: 0, badShape: 0, backfilled: w.count })
    }
    return models
  }

  /** Vector facts of one memory: each model's dim and norm. */
  vectorInfo(
    ownerId: string,
    ownerType: 'memory' | 'session' = 'memory',
  ): { model: string; dim: number; norm: number | null; problem: string | null; preview: number[]; backfilled?: boolean }[] {
    const e = this.source.embeddings
    const dm = this.source.defaultModel
    const agentRows = e
      ? (this.db
          .prepare(`SELECT ${dm ? `coalesce(model, ${sqlString(dm)})` : 'model'} AS model, dim, vector FROM (${e}) WHERE owner_type = ? AND owner_id = ?`)
          .all(ownerType, ownerId) as { model: string; dim: number | null; vector: unknown }[])
      : []
    // Backfilled vectors (workspace) too, marked: they are what dense recall uses when the agent has none.
    const wsRows = (this.ws.prepare(`SELECT model, dim, vector FROM ws_embeddings WHERE owner_type = ? AND owner_id = ?`).all(ownerType, ownerId) as { model: string; dim: number | null; vector: unknown }[]).map(
      (r) => ({ ...r, backfilled: true }),
    )
    return [...agentRows.map((r) => ({ ...r, backfilled: false })), ...wsRows].map((r) => {
      const idx = this.vectorIndexes.get(`${ownerType}\u0000${r.model}`)
      const expected = idx?.dim || (r.dim ?? null)
      const v = decodeVector(r.vector, expected ?? null)
      const mark = r.backfilled ? { backfilled: true } : {}
      if (typeof v === 'string') return { model: String(r.model), dim: Number(r.dim ?? 0), norm: null, problem: v, preview: [], ...mark }
      let s = 0
      for (let i = 0; i < v.length; i++) s += v[i] * v[i]
      return { model: String(r.model), dim: v.length, norm: Math.sqrt(s), problem: null, preview: Array.from(v.subarray(0, 8)), ...mark }
    })
  }

  // -------------------------------------------------------------------------
  // Lexical
  // -------------------------------------------------------------------------

  private wsFtsReady(): boolean {
    return this.ws.prepare(`SELECT count(*) FROM ws_fts_state`).pluck().get() === 1
  }

  /** The workspace, attached to the agent connection (read through it: FTS, backfilled vectors). */
  private attachWorkspace(): void {
    if (this.wsAttached) return
    this.db.prepare(`ATTACH DATABASE ? AS ws`).run(this.workspacePath)
    this.wsAttached = true
  }

  /** The FTS table to query from the agent connection, building the workspace index first if needed. */
  ftsTable(onProgress?: (done: number, total: number) => boolean | void): { name: string; qualified: string } {
    if (this.source.agentFts) return { name: this.source.agentFts, qualified: this.source.agentFts }
    syncWorkspaceFts(this.db, this.ws, this.memSql, `${this.source.layout}:${this.path}${this.source.fingerprint ? `:${this.source.fingerprint}` : ''}`, onProgress)
    this.attachWorkspace()
    return { name: 'ws_fts', qualified: 'ws.ws_fts' }
  }

  /**
   * bm25 over the raw utterance within a filter: best `limit` first (FTS5 bm25:
   * lower = better). `onlyIds` restricts to given memories (feature lookup).
   */
  lexicalSearch(text: string, f: MemoryFilter, limit: number): { id: string; bm25: number }[] {
    const q = toFtsQuery(text)
    if (!q || limit <= 0) return []
    const fts = this.ftsTable()
    const where = memoryWhere(f, this.embeddingOwners)
    const rows = this.db
      .prepare(
        `SELECT m.id AS id, r.rank AS bm25 FROM (SELECT rowid AS rid, bm25(${fts.name}) AS rank FROM ${fts.qualified} WHERE ${fts.name} MATCH @ftsq) r
         JOIN (${this.memSql}) m ON m._rid = r.rid WHERE ${where.sql} ORDER BY r.rank ASC, m._rid ASC LIMIT ${Math.floor(limit)}`,
      )
      .all({ ...where.params, ftsq: q }) as { id: string; bm25: number }[]
    return rows.map((r) => ({ id: String(r.id), bm25: r.bm25 }))
  }

  // -------------------------------------------------------------------------
  // Recall events
  // -------------------------------------------------------------------------

  eventsPage(q: EventPageQuery = {}): Page<RecallEvent> {
    const t0 = performance.now()
    const limit = clampLimit(q.limit)
    const offset = Math.max(0, q.offset ?? 0)
    const src = this.source.recallEvents
    if (!src) return { rows: [], offset, limit, total: 0, truncated: false, tookMs: 0 }
    const parts: string[] = []
    const params: Record<string, unknown> = {}
    if (q.agentId !== undefined) (parts.push('r.agent_id = @agentId'), (params.agentId = q.agentId))
    if (q.userId !== undefined) (parts.push('r.user_id = @userId'), (params.userId = q.userId))
    if (q.sessionId !== undefined) (parts.push('r.session_id = @sessionId'), (params.sessionId = q.sessionId))
    if (q.after !== undefined) (parts.push('r.at >= @after'), (params.after = q.after))
    if (q.before !== undefined) (parts.push('r.at <= @before'), (params.before = q.before))
    if (q.memoryId !== undefined) (parts.push(`r.results LIKE @memLike ESCAPE '\\'`), (params.memLike = `%"${likeEscape(q.memoryId)}"%`))
    if (q.search) (parts.push(`(r.query LIKE @search ESCAPE '\\' OR r.cue LIKE @search ESCAPE '\\')`), (params.search = `%${likeEscape(q.search)}%`))
    const where = parts.length ? `WHERE ${parts.join(' AND ')}` : ''
    const dir = q.dir === 'asc' ? 'ASC' : 'DESC'
    let rows = this.db.prepare(`SELECT r.* FROM (${src}) r ${where} ORDER BY r.at ${dir}, r.id ${dir} LIMIT ${limit} OFFSET ${offset}`).all(params) as Record<
      string,
      unknown
    >[]
    let events = rows.map(decodeEvent)
    // LIKE on the JSON text is a prefilter; confirm the id really is among the results.
    if (q.memoryId !== undefined) events = events.filter((e) => e.results.some((r) => r.id === q.memoryId))
    rows = []
    const count = this.cappedCount(`FROM (${src}) r ${where}`, params)
    return { rows: events, offset, limit, ...count, tookMs: performance.now() - t0 }
  }

  getEvent(id: string): RecallEvent | null {
    const src = this.source.recallEvents
    if (!src) return null
    const row = this.db.prepare(`SELECT r.* FROM (${src}) r WHERE r.id = ?`).get(id) as Record<string, unknown> | undefined
    return row ? decodeEvent(row) : null
  }

  /** Events whose results include a memory, newest first (bounded). */
  eventsForMemory(memoryId: string, limit = 200): { eventId: string; at: number; rank: number; score: number; query: string | null }[] {
    const page = this.eventsPage({ memoryId, limit })
    return page.rows.map((e) => {
      const i = e.results.findIndex((r) => r.id === memoryId)
      return { eventId: e.id, at: e.at, rank: i + 1, score: e.results[i]?.score ?? 0, query: e.query }
    })
  }
}

export function decodeEvent(r: Record<string, unknown>): RecallEvent {
  const cue = parseJson(r.cue)
  const cfg = parseJson(r.config)
  const res = parseJson(r.results)
  const results: { id: string; score: number }[] = []
  if (res.ok && Array.isArray(res.value)) {
    for (const x of res.value) {
      if (x && typeof x === 'object' && 'id' in x) results.push({ id: String((x as { id: unknown }).id), score: Number((x as { score?: unknown }).score ?? 0) })
      else if (typeof x === 'string') results.push({ id: x, score: 0 })
    }
  }
  return {
    id: String(r.id),
    at: toMs(r.at) ?? 0,
    agentId: r.agent_id == null ? null : String(r.agent_id),
    userId: r.user_id == null ? null : String(r.user_id),
    sessionId: r.session_id == null ? null : String(r.session_id),
    turn: r.turn == null ? null : Number(r.turn),
    query: r.query == null ? null : String(r.query),
    cue: cue.ok && cue.value && typeof cue.value === 'object' ? (cue.value as RecallEvent['cue']) : null,
    preset: r.preset == null ? null : String(r.preset),
    config: cfg.ok && cfg.value && typeof cfg.value === 'object' ? (cfg.value as RecallEvent['config']) : null,
    results,
  }
}

export function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}

export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`
}

function clampLimit(n: number | undefined): number {
  if (n === undefined || !Number.isFinite(n)) return 50
  return Math.min(1000, Math.max(1, Math.floor(n)))
}

export function* chunks<T>(arr: T[], n: number): Generator<T[]> {
  for (let i = 0; i < arr.length; i += n) yield arr.slice(i, i + n)
}

/** The workspace's backfilled vectors in the canonical embeddings shape (`_rid` = rowid). */
export const WS_EMBEDDINGS_SQL = `SELECT w.rowid AS _rid, w.owner_type AS owner_type, w.owner_id AS owner_id, w.model AS model, w.dim AS dim, w.vector AS vector FROM ws_embeddings w`

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

export function openStore(opts: OpenOptions): Store {
  return Store.open(opts)
}
