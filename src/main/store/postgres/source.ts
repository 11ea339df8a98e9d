/**
 * The Postgres memory source: a read-only window on an agent's Postgres (+
 * pgvector) store, through the blocking bridge (bridge.ts) so the engine's
 * synchronous interface holds.
 *
 * Push-down (capabilities().denseSearchPushdown when vectors are pgvector
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
 * Length: one class implementing every MemorySource method over SQL text built
 * here (browse, recall passes, log, vectors); the bridge, URL and layouts live beside it.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { EventFilter, Facets, MemoryRow, RecallAges, VectorInfo } from '../../../shared/contract'
import { RecallscopeError } from '../../../shared/result'
import type { DbFacts, EmbeddingModelFacts, MalformedCounts, Memory, Page, RecallEvent, RecallScope, Session } from '../../../shared/types'
import { decodeMemory, decodeSession, decodeVector, emptyMalformed, toMs } from '../decode'
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
} from '../source'
import { decodeEvent } from '../sqlite/events'
import { toMemoryRows } from '../memoryRows'
import { pgNormalizeExpr, TEXT_LOOKUP_MAX, type TextMatches } from '../textMatch'
import { HELD_WORKSPACE, VectorIndex } from '../vectors/vectorIndex'
import { readSavedMapping, Workspace } from '../workspace/workspace'
import { PgBridge } from './bridge'
import { detectPgLayout, ident, type PgColumn, type PgLayout } from './layouts'
import { detectLettaPgLayout } from './letta'
import { mappedPgLayout } from '../mapped/pg'
import type { Mapping } from '../../../shared/mapping'
import { identityHash, parsePgUrl, type ParsedPgUrl } from './url'
import { eventWhere, likeEscape, memoryOrder, memoryWhere, Params } from './where'

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

const TS_CONFIG = `'english'`
const docExpr = (a: string) => `to_tsvector(${TS_CONFIG}::regconfig, coalesce(${a}.content, '') || ' ' || coalesce(${a}.summary, ''))`
const tsq = (param: string) => `websearch_to_tsquery(${TS_CONFIG}::regconfig, ${param})`

/** A vector literal pgvector parses ('[0.1,0.2,…]'). */
function vectorLiteral(v: ArrayLike<number>): string {
  let s = '['
  for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + String(v[i])
  return s + ']'
}

function clampLimit(n: number | undefined, dflt = 100): number {
  return Math.max(1, Math.min(1000, Math.floor(n ?? dflt)))
}

interface AnnIndex {
  name: string
  method: 'hnsw' | 'ivfflat'
}

export class PgSource implements MemorySource {
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
  private readonly url: ParsedPgUrl
  private closed = false
  private readonly malformed: MalformedCounts = emptyMalformed()
  private readonly memo = new Map<string, Memory>()
  private readonly lexTerms = new Map<string, boolean>()
  private readonly indexes = new Map<string, { idx: VectorIndex; wsWrites: number }>()
  /** per (owner type, model): the workspace's backfilled vectors of ids the server has no vector of that model for */
  private readonly backfills = new Map<string, { idx: VectorIndex; wsWrites: number }>()
  private modelsCache: { facts: EmbeddingModelFacts[]; wsWrites: number } | null = null
  /** the stored length of zero-padded vectors (layout.vectorPadded), read once */
  private padLength: number | null = null
  /** whether the planner uses the ANN index for the dense query (EXPLAIN once, ANN mode only) */
  private annIndexUsed: boolean | null = null
  /** keyset cursors: the last row of a page, keyed by the query without its offset */
  private readonly cursors = new Map<string, { offset: number; key: [number, string] }>()
  /** walkMemories ordinals → the id at that ordinal (keyset continuation) */
  private readonly walkKeys = new Map<string, Map<number, string>>()

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
      secret: url.password,
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
  private get annEf(): number {
    return this.url.options.efSearch ?? 100
  }
  private get annProbes(): number {
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

  private q<R = Record<string, unknown>>(sql: string, params: unknown[] = []): R[] {
    return this.bridge.query<R>(sql, params)
  }

  /** Push-down needs pgvector's operators on the stored column. */
  private get pushdown(): boolean {
    return this.sql.embeddings !== null && this.pgvector !== null && (this.sql.vectorStorage === 'vector' || this.sql.vectorStorage === 'array')
  }

  /**
   * The query as a pgvector literal. Where the store pads its vectors with zeros to one length (Letta), the
   * query is padded the same way: the zeros add nothing to the dot product or the norms, so the cosine is exact.
   */
  private queryLiteral(v: ArrayLike<number>): string {
    if (!this.sql.vectorPadded || !this.sql.embeddings) return vectorLiteral(v)
    if (this.padLength === null)
      this.padLength = Number(
        this.q<{ d: number | null }>(`SELECT max(vector_dims(e.vec)) AS d FROM (SELECT e.vec FROM (${this.sql.embeddings}) e LIMIT 1) e`)[0]?.d ?? 0,
      )
    if (v.length >= this.padLength) return vectorLiteral(v)
    const padded = new Float32Array(this.padLength)
    padded.set(v)
    return vectorLiteral(padded)
  }

  /** A read vector cut back to its model's length (padded layouts); other layouts keep the length check. */
  private decodeStored(raw: unknown, dim: number | null): ReturnType<typeof decodeVector> {
    if (!this.sql.vectorPadded || dim === null) return decodeVector(raw, dim)
    const v = decodeVector(raw, null)
    if (typeof v === 'string') return v
    if (v.length < dim) return 'wrongDimension'
    // Past the model's length Letta wrote zeros; anything else there is not this model's vector.
    for (let i = dim; i < v.length; i++) if (v[i] !== 0) return 'wrongDimension'
    return v.subarray(0, dim)
  }

  /** The vector column as pgvector `vector`. */
  private vecExpr(a: string): string {
    return this.sql.vectorStorage === 'array' ? `${a}.vec::real[]::vector` : `${a}.vec`
  }

  capabilities(): SourceCapabilities {
    return {
      fts: 'agent',
      vectorModels: this.vectorModels().map((m) => ({ ownerType: m.ownerType, model: m.model, dim: m.dim })),
      denseSearchPushdown: this.pushdown,
      recallEvents: this.sql.recallEvents !== null,
      readOnly: true,
      supportsWrite: false,
    }
  }

  // --- facts and browsing -------------------------------------------------
  private tally(col: string): { key: string; count: number }[] {
    return this.q<{ k: string | null; n: string }>(`SELECT m.${col} AS k, count(*) AS n FROM (${this.sql.memories}) m GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 500`)
      .map((r) => ({ key: r.k === null ? '(none)' : String(r.k), count: Number(r.n) }))
      .sort((x, y) => y.count - x.count || x.key.localeCompare(y.key))
  }

  facts(): DbFacts {
    const t0 = performance.now()
    const byAgent = this.tally('agent_id')
    const byUser = this.tally('user_id')
    const byKind = this.tally('kind')
    const byTier = this.tally('tier')
    const byRole = this.tally('role')
    const tr = this.q<{ mn: number | null; mx: number | null; n: string }>(
      `SELECT min(m.created_at) AS mn, max(m.created_at) AS mx, count(*) AS n FROM (${this.sql.memories}) m`,
    )[0]
    let badMetadata = 0
    try {
      // pg_input_is_valid: Postgres 16+; older servers report 0 here (decoding still tolerates bad JSON).
      badMetadata = Number(
        this.q<{ n: string }>(
          `SELECT count(*) AS n FROM (${this.sql.memories}) m WHERE m.metadata IS NOT NULL AND NOT pg_input_is_valid(m.metadata, 'jsonb')`,
        )[0].n,
      )
    } catch (e) {
      if (!(e instanceof RecallscopeError) || e.code === 'DB_UNREACHABLE' || e.code === 'DB_TIMEOUT') throw e
    }
    const known = (list: { key: string; count: number }[], ok: readonly string[]) =>
      list.filter((x) => x.key !== '(none)' && !ok.includes(x.key)).reduce((n, x) => n + x.count, 0)
    const models = this.vectorModels()
    const malformed: MalformedCounts = {
      ...this.malformed,
      badMetadata,
      unknownRole: known(byRole, ['user', 'assistant', 'system', 'tool']),
      unknownKind: known(byKind, ['episodic', 'semantic', 'procedural', 'reflection']),
      unknownTier: known(byTier, ['working', 'long_term', 'archived']),
      badVectorShape: models.reduce((n, m) => n + m.badShape, 0),
      wrongDimension: models.reduce((n, m) => n + m.malformed - m.badShape, 0),
    }
    const sessions = Number(this.q<{ n: string }>(`SELECT count(*) AS n FROM (${this.sql.sessions}) s`)[0].n)
    const recallEvents = this.sql.recallEvents ? Number(this.q<{ n: string }>(`SELECT count(*) AS n FROM (${this.sql.recallEvents}) r`)[0].n) : 0
    const size = this.q<{ b: string | null }>(`SELECT pg_total_relation_size(to_regclass($1)) AS b`, [
      `${ident(this.sql.schema)}.${ident(this.sql.memoryTable)}`,
    ])[0]
    return {
      path: this.path,
      layout: this.sql.layout,
      detectedBecause: `${this.sql.detectedBecause}; Postgres ${this.serverVersion}, pgvector ${this.pgvector ?? 'not installed'}${this.pushdown ? ', dense search pushed down' : ''}${this.annIndex ? `, ${this.annIndex.method} index ${this.annIndex.name}` : ''}`,
      readOnly: true,
      workspacePath: this.workspace.path,
      sizeBytes: Number(size?.b ?? 0),
      counts: { memories: Number(tr.n), sessions, embeddings: models.reduce((n, m) => n + m.count, 0), recallEvents, evalCases: this.workspace.countCases() },
      byAgent,
      byUser,
      byKind,
      byTier,
      byRole,
      models,
      timeRange: tr.mn !== null && tr.mx !== null && Number(tr.n) > 0 ? { min: Number(tr.mn), max: Number(tr.mx) } : null,
      malformed,
      hasFts: 'agent',
      tookMs: performance.now() - t0,
    }
  }

  /** Distinct values from bounded queries (500 each). */
  facets(): Facets {
    const keys = (c: string) =>
      this.q<{ k: string }>(`SELECT DISTINCT m.${c} AS k FROM (${this.sql.memories}) m WHERE m.${c} IS NOT NULL ORDER BY 1 LIMIT 500`).map((r) => String(r.k))
    const tr = this.q<{ mn: number | null; mx: number | null }>(`SELECT min(m.created_at) AS mn, max(m.created_at) AS mx FROM (${this.sql.memories}) m`)[0]
    return {
      agents: keys('agent_id'),
      users: keys('user_id'),
      kinds: keys('kind'),
      tiers: keys('tier'),
      roles: keys('role'),
      timeRange: tr.mn !== null && tr.mx !== null ? { min: Number(tr.mn), max: Number(tr.mx) } : null,
    }
  }

  counts(): { memories: number; sessions: number } {
    const r = this.q<{ m: string; s: string }>(
      `SELECT (SELECT count(*) FROM (${this.sql.memories}) m) AS m, (SELECT count(*) FROM (${this.sql.sessions}) s) AS s`,
    )[0]
    return { memories: Number(r.m), sessions: Number(r.s) }
  }

  /** count(*) capped at countCap (reads at most cap + 1 rows). */
  private cappedCount(fromWhere: string, params: unknown[]): { total: number; truncated: boolean } {
    const cap = this.countCap
    const n = Number(this.q<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 ${fromWhere} LIMIT ${cap + 1}) t`, params)[0].n)
    return n > cap ? { total: cap, truncated: true } : { total: n, truncated: false }
  }

  private sessionCols(): string {
    return `s.*, (SELECT count(*) FROM (${this.sql.memories}) mc WHERE mc.session_id = s.id)::int AS memory_count`
  }

  sessionsPage(q: SessionPageQuery = {}): Page<Session> {
    const t0 = performance.now()
    const ps = new Params()
    const parts: string[] = []
    if (q.agentId !== undefined) parts.push(`s.agent_id = ${ps.p(q.agentId)}`)
    if (q.userId !== undefined) parts.push(`s.user_id = ${ps.p(q.userId)}`)
    if (q.tenantId !== undefined) parts.push(`s.tenant_id = ${ps.p(q.tenantId)}`)
    if (q.includeArchived === false) parts.push('coalesce(s.is_archived, 0) = 0')
    if (q.search) {
      const s = ps.p(`%${likeEscape(q.search)}%`)
      parts.push(`(s.summary ILIKE ${s} OR s.id ILIKE ${s})`)
    }
    const where = parts.length ? `WHERE ${parts.join(' AND ')}` : ''
    const limit = clampLimit(q.limit)
    const offset = Math.max(0, q.offset ?? 0)
    const dir = q.dir === 'asc' ? 'ASC' : 'DESC'
    const order = q.sort === 'memory_count' ? `memory_count ${dir}, s.id ${dir}` : `s.started_at ${dir} NULLS LAST, s.id ${dir}`
    const rows = this.q(`SELECT ${this.sessionCols()} FROM (${this.sql.sessions}) s ${where} ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`, ps.values)
    const count = this.cappedCount(`FROM (${this.sql.sessions}) s ${where}`, ps.values)
    return { rows: rows.map(decodeSession), offset, limit, ...count, tookMs: performance.now() - t0 }
  }

  getSession(id: string): Session | null {
    const r = this.q(`SELECT ${this.sessionCols()} FROM (${this.sql.sessions}) s WHERE s.id = $1`, [id])[0]
    return r ? decodeSession(r) : null
  }

  getSessions(ids: string[]): Map<string, Session> {
    const out = new Map<string, Session>()
    if (ids.length === 0) return out
    for (const r of this.q(`SELECT s.*, 0 AS memory_count FROM (${this.sql.sessions}) s WHERE s.id = ANY($1::text[])`, [ids])) {
      const s = decodeSession(r)
      out.set(s.id, s)
    }
    return out
  }

  /**
   * A page of memories. The default sort (created_at) pages by keyset when the
   * request continues the previous page (offset = last offset + limit): the
   * next page starts after the last row's (created_at, id), not at an OFFSET.
   */
  memoriesPage(q: MemoryPageQuery = {}): Page<MemoryRow> {
    const t0 = performance.now()
    const ps = new Params()
    const where = memoryWhere(q, ps, this.sql.embeddings)
    const limit = clampLimit(q.limit)
    const offset = Math.max(0, q.offset ?? 0)
    const sort = q.sort ?? (q.search ? 'relevance' : 'created_at')
    const dir = q.dir ?? 'desc'
    let rows: Record<string, unknown>[]
    let count: { total: number; truncated: boolean }
    if (q.search) {
      const t = ps.p(q.search)
      const from = `FROM (SELECT m.*, ts_rank_cd(${docExpr('m')}, ${tsq(t)}) AS rank FROM (${this.sql.memories}) m WHERE ${docExpr('m')} @@ ${tsq(t)} AND ${where}) m`
      rows = this.q(`SELECT m.* ${from} ORDER BY ${memoryOrder(sort, dir, true)} LIMIT ${limit} OFFSET ${offset}`, ps.values)
      count = this.cappedCount(from, ps.values)
    } else if (sort === 'created_at') {
      const inf = dir === 'asc' ? `'Infinity'::float8` : `'-Infinity'::float8`
      const key = `coalesce(m.created_at, ${inf})`
      const d = dir === 'asc' ? 'ASC' : 'DESC'
      const sig = JSON.stringify({ ...q, offset: undefined })
      const cur = this.cursors.get(sig)
      let sqlWhere = where
      let off = offset
      if (offset > 0 && cur && cur.offset === offset) {
        const pk = ps.p(cur.key[0])
        const pid = ps.p(cur.key[1])
        sqlWhere = `${where} AND (${key}, m.id) ${dir === 'asc' ? '>' : '<'} (${pk}::float8, ${pid}::text)`
        off = 0
      }
      rows = this.q(`SELECT m.* FROM (${this.sql.memories}) m WHERE ${sqlWhere} ORDER BY ${key} ${d}, m.id ${d} LIMIT ${limit} OFFSET ${off}`, ps.values)
      const last = rows.at(-1)
      if (last) {
        if (this.cursors.size > 50) this.cursors.clear()
        const ca = last.created_at === null ? (dir === 'asc' ? Infinity : -Infinity) : Number(last.created_at)
        this.cursors.set(sig, { offset: offset + rows.length, key: [ca, String(last.id)] })
      }
      const cps = new Params()
      count = this.cappedCount(`FROM (${this.sql.memories}) m WHERE ${memoryWhere(q, cps, this.sql.embeddings)}`, cps.values)
    } else {
      rows = this.q(
        `SELECT m.* FROM (${this.sql.memories}) m WHERE ${where} ORDER BY ${memoryOrder(sort, dir, false)} LIMIT ${limit} OFFSET ${offset}`,
        ps.values,
      )
      count = this.cappedCount(`FROM (${this.sql.memories}) m WHERE ${where}`, ps.values)
    }
    const embedded = this.idsWithEmbedding(rows.map((r) => String(r.id)))
    return { rows: toMemoryRows(rows, embedded, q.search), offset, limit, ...count, tookMs: performance.now() - t0 }
  }

  getMemory(id: string): Memory | null {
    return this.getMemories([id]).get(id) ?? null
  }

  getMemories(ids: string[]): Map<string, Memory> {
    const out = new Map<string, Memory>()
    const missing: string[] = []
    for (const id of new Set(ids)) {
      const hit = this.memo.get(id)
      if (hit) out.set(id, hit)
      else missing.push(id)
    }
    for (let i = 0; i < missing.length; i += 5000) {
      for (const r of this.q(`SELECT m.* FROM (${this.sql.memories}) m WHERE m.id = ANY($1::text[])`, [missing.slice(i, i + 5000)])) {
        const m = decodeMemory(r)
        out.set(m.id, m)
        this.memo.set(m.id, m)
      }
    }
    if (this.memo.size > 200_000) this.memo.clear()
    return out
  }

  rawMetadata(id: string): unknown {
    return this.q<{ metadata: unknown }>(`SELECT m.metadata FROM (${this.sql.memories}) m WHERE m.id = $1`, [id])[0]?.metadata ?? null
  }

  idsWithEmbedding(ids: string[]): Set<string> {
    const out = new Set<string>()
    if (ids.length === 0) return out
    // Backfilled ones (the workspace's) count too.
    for (const m of this.workspace.vectorModels()) {
      if (m.ownerType !== 'memory') continue
      const idx = this.backfilled(m.model, 'memory')
      for (const id of ids) if (idx.rowOf.has(id)) out.add(id)
    }
    if (!this.sql.embeddings) return out
    for (const r of this.q<{ id: string }>(
      `SELECT DISTINCT e.owner_id AS id FROM (${this.sql.embeddings}) e WHERE e.owner_type = 'memory' AND e.owner_id = ANY($1::text[])`,
      [ids],
    ))
      out.add(r.id)
    return out
  }

  memoriesWhere(f: MemoryFilter, opts: { limit?: number; order?: 'created_desc' | 'created_asc' | 'turn' } = {}): Memory[] {
    const ps = new Params()
    const where = memoryWhere(f, ps, this.sql.embeddings)
    const order =
      opts.order === 'created_asc'
        ? 'm.created_at ASC, m.id ASC'
        : opts.order === 'turn'
          ? 'm.turn ASC NULLS LAST, m.created_at ASC, m.id ASC'
          : 'm.created_at DESC, m.id DESC'
    const limit = opts.limit !== undefined ? `LIMIT ${Math.max(0, Math.floor(opts.limit))}` : ''
    return this.q(`SELECT m.* FROM (${this.sql.memories}) m WHERE ${where} ORDER BY ${order} ${limit}`, ps.values).map((r) => decodeMemory(r))
  }

  idsWhere(f: MemoryFilter, cap = 5_000_000): string[] {
    const ps = new Params()
    const where = memoryWhere(f, ps, this.sql.embeddings)
    return this.bridge
      .query<[string]>(`SELECT m.id FROM (${this.sql.memories}) m WHERE ${where} LIMIT ${Math.max(0, Math.floor(cap))}`, ps.values, { rowMode: 'array' })
      .map((r) => String(r[0]))
  }

  countWhere(f: MemoryFilter): { total: number; truncated: boolean } {
    const ps = new Params()
    return this.cappedCount(`FROM (${this.sql.memories}) m WHERE ${memoryWhere(f, ps, this.sql.embeddings)}`, ps.values)
  }

  /** Rows in id order after an ordinal key: keyset by the id remembered for that key (offset only for an unknown key). */
  walkMemories(f: MemoryFilter, afterKey: number, limit: number): { key: number; id: string; content: string }[] {
    const sig = JSON.stringify(f)
    let keys = this.walkKeys.get(sig)
    if (!keys) this.walkKeys.set(sig, (keys = new Map<number, string>()))
    const ps = new Params()
    let where = memoryWhere(f, ps, this.sql.embeddings)
    const lastId = afterKey > 0 ? keys.get(afterKey) : undefined
    let offset = 0
    if (lastId !== undefined) where += ` AND m.id > ${ps.p(lastId)}`
    else if (afterKey > 0) offset = afterKey
    const rows = this.bridge.query<[string, string | null]>(
      `SELECT m.id, m.content FROM (${this.sql.memories}) m WHERE ${where} ORDER BY m.id LIMIT ${Math.max(1, Math.floor(limit))} OFFSET ${offset}`,
      ps.values,
      { rowMode: 'array' },
    )
    const out = rows.map(([id, content], i) => ({ key: Math.max(0, afterKey) + i + 1, id: String(id), content: content ?? '' }))
    const last = out.at(-1)
    if (last) keys.set(last.key, last.id)
    return out
  }

  walkCount(f: MemoryFilter): number {
    const ps = new Params()
    return Number(this.q<{ n: string }>(`SELECT count(*) AS n FROM (${this.sql.memories}) m WHERE ${memoryWhere(f, ps, this.sql.embeddings)}`, ps.values)[0].n)
  }

  rowKey(): number | null {
    return null
  }

  /** Memories by exact and by normalised content (events/match.ts); one query each, only when asked. */
  memoryIdsByText(q: { texts: string[]; normalized: string[] }): TextMatches {
    const out: TextMatches = { exact: new Map(), normalized: new Map() }
    const add = (m: Map<string, string[]>, k: string, id: string) => {
      const l = m.get(k)
      if (l) l.push(id)
      else m.set(k, [id])
    }
    const texts = [...new Set(q.texts)].slice(0, TEXT_LOOKUP_MAX)
    const norms = [...new Set(q.normalized)].slice(0, TEXT_LOOKUP_MAX)
    if (texts.length)
      for (const [id, c] of this.bridge.query<[string, string]>(
        `SELECT m.id, m.content FROM (${this.sql.memories}) m WHERE m.content = ANY($1::text[]) ORDER BY m.id`,
        [texts],
        { rowMode: 'array' },
      ))
        add(out.exact, String(c), String(id))
    if (norms.length)
      for (const [id, n] of this.bridge.query<[string, string]>(
        `SELECT m.id, ${pgNormalizeExpr('m.content')} FROM (${this.sql.memories}) m WHERE ${pgNormalizeExpr('m.content')} = ANY($1::text[]) ORDER BY m.id`,
        [norms],
        { rowMode: 'array' },
      ))
        add(out.normalized, String(n), String(id))
    return out
  }

  // --- recall passes ------------------------------------------------------
  /** Ids of a scope (id order); the keys are ordinals (Postgres rows have no integer key). */
  scopeRows(f: MemoryFilter, cap: number): ScopeRows {
    const ps = new Params()
    const ids = this.bridge
      .query<[string]>(
        `SELECT m.id FROM (${this.sql.memories}) m WHERE ${memoryWhere(f, ps, this.sql.embeddings)} ORDER BY m.id LIMIT ${Math.max(0, Math.floor(cap))}`,
        ps.values,
        { rowMode: 'array' },
      )
      .map((r) => String(r[0]))
    return { ids, rids: ids.map((_, i) => i) }
  }

  countScope(f: MemoryFilter, cap = 10_000): { count: number; capped: boolean } {
    const ps = new Params()
    const n = Number(
      this.q<{ n: string }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM (${this.sql.memories}) m WHERE ${memoryWhere(f, ps, this.sql.embeddings)} LIMIT ${cap + 1}) t`,
        ps.values,
      )[0].n,
    )
    return n > cap ? { count: cap, capped: true } : { count: n, capped: false }
  }

  /** Whether websearch_to_tsquery keeps any term (stop words alone give an empty query). Cached per text. */
  hasLexicalTerms(text: string): boolean {
    if (text.trim() === '') return false
    let v = this.lexTerms.get(text)
    if (v === undefined) {
      v = this.q<{ n: number }>(`SELECT numnode(${tsq('$1')}) AS n`, [text])[0].n > 0
      if (this.lexTerms.size > 1000) this.lexTerms.clear()
      this.lexTerms.set(text, v)
    }
    return v
  }

  /** Full text in the database: bm25 = −ts_rank_cd (lower = better, as FTS5), ties by id. */
  lexicalPass(req: LexicalRequest): LexicalPass {
    const ps = new Params()
    const t = ps.p(req.text)
    const where = memoryWhere(req.filter, ps, this.sql.embeddings)
    const also = req.alsoIds ?? []
    const alsoP = ps.p(also)
    const limit = ps.p(Math.max(0, Math.floor(req.limit)))
    // Plain SELECTs only (no CTE): the read-only proof checks every statement's first word.
    const hit = (extra: string) =>
      `SELECT m.id, ts_rank_cd(${docExpr('m')}, ${tsq(t)})::float8 AS r FROM (${this.sql.memories}) m WHERE ${docExpr('m')} @@ ${tsq(t)} AND ${where}${extra}`
    const rows = this.bridge.query<[string, number, boolean]>(
      `(SELECT h.id, h.r, false AS a FROM (${hit('')}) h ORDER BY h.r DESC, h.id ASC LIMIT ${limit})
       UNION ALL (SELECT h.id, h.r, true FROM (${hit(` AND m.id = ANY(${alsoP}::text[])`)}) h)`,
      ps.values,
      { rowMode: 'array' },
    )
    const hits: { id: string; bm25: number }[] = []
    const alsoMap = new Map<string, number>()
    for (const [id, r, a] of rows) {
      if (a) alsoMap.set(String(id), -Number(r))
      else hits.push({ id: String(id), bm25: -Number(r) })
    }
    return { hits, also: alsoMap, alsoKnown: true, path: 'join' }
  }

  lexicalRankOf(text: string, f: MemoryFilter, id: string): number | null {
    const ps = new Params()
    const t = ps.p(text)
    const where = memoryWhere(f, ps, this.sql.embeddings)
    const idp = ps.p(id)
    const hit = `SELECT m.id, ts_rank_cd(${docExpr('m')}, ${tsq(t)})::float8 AS r FROM (${this.sql.memories}) m WHERE ${docExpr('m')} @@ ${tsq(t)} AND ${where}`
    const r = this.q<{ rank: string | null }>(
      `SELECT (SELECT count(*) + 1 FROM (${hit}) h WHERE h.r > me.r OR (h.r = me.r AND h.id < me.id)) AS rank FROM (${hit}) me WHERE me.id = ${idp}`,
      ps.values,
    )[0]
    return r?.rank == null ? null : Number(r.rank)
  }

  keywordSearch(f: MemoryFilter, keywords: string[], limit: number): string[] {
    const ps = new Params()
    const where = memoryWhere(f, ps, this.sql.embeddings)
    const kw = keywords.length ? ` AND (${keywords.map((k) => `lower(m.content) LIKE ${ps.p(`%${k}%`)}`).join(' OR ')})` : ''
    return this.bridge
      .query<[string]>(
        `SELECT m.id FROM (${this.sql.memories}) m WHERE ${where}${kw} ORDER BY m.created_at DESC, m.id DESC LIMIT ${Math.max(0, Math.floor(limit))}`,
        ps.values,
        { rowMode: 'array' },
      )
      .map((r) => String(r[0]))
  }

  sessionsForRecall(scope: RecallScope, now: number): Session[] {
    const ps = new Params()
    const parts: string[] = []
    if (scope.agentId !== undefined) parts.push(`s.agent_id = ${ps.p(scope.agentId)}`)
    if (scope.userId !== undefined) parts.push(`s.user_id = ${ps.p(scope.userId)}`)
    if (scope.tenantId !== undefined) parts.push(`s.tenant_id = ${ps.p(scope.tenantId)}`)
    if (scope.sessionId !== undefined) parts.push(`s.id = ${ps.p(scope.sessionId)}`)
    if (!scope.tiers.includes('archived')) parts.push('coalesce(s.is_archived, 0) = 0')
    if (scope.after !== undefined) parts.push(`s.started_at >= ${ps.p(scope.after)}::float8`)
    if (scope.before !== undefined) parts.push(`s.started_at <= ${ps.p(scope.before)}::float8`)
    parts.push(`coalesce(s.ended_at, s.started_at) <= ${ps.p(now)}::float8`)
    return this.q(
      `SELECT s.*, 0 AS memory_count FROM (${this.sql.sessions}) s WHERE ${parts.join(' AND ')} ORDER BY s.started_at DESC, s.id ASC LIMIT 100000`,
      ps.values,
    ).map(decodeSession)
  }

  sessionMessages(sessionIds: string[], now: number): Map<string, { role: string | null; content: string }[]> {
    const out = new Map<string, { role: string | null; content: string }[]>()
    for (const id of sessionIds) out.set(id, [])
    if (sessionIds.length === 0) return out
    const rows = this.q<{ s: string; role: string | null; content: string | null }>(
      `SELECT m.session_id AS s, m.role, m.content FROM (${this.sql.memories}) m WHERE m.session_id = ANY($1::text[]) AND m.created_at <= $2::float8
       ORDER BY m.session_id, m.turn ASC NULLS LAST, m.created_at ASC, m.id ASC`,
      [sessionIds, now],
    )
    for (const r of rows) out.get(String(r.s))?.push({ role: r.role, content: r.content ?? '' })
    return out
  }

  ageHistogram(f: MemoryFilter, now: number, from: 'last_used' | 'created', maxBins = 40): RecallAges {
    const ps = new Params()
    const where = memoryWhere(f, ps, this.sql.embeddings)
    const hnow = ps.p(now)
    const t =
      from === 'last_used'
        ? `(CASE WHEN m.last_used_at IS NOT NULL AND m.last_used_at <= ${hnow}::float8 THEN m.last_used_at ELSE m.created_at END)`
        : 'm.created_at'
    const st = this.q<{ n: string; mx: number | null; never: string | null }>(
      `SELECT count(*) AS n, max(${hnow}::float8 - ${t}) AS mx, sum(CASE WHEN m.last_used_at IS NULL OR m.last_used_at > ${hnow}::float8 THEN 1 ELSE 0 END) AS never
       FROM (${this.sql.memories}) m WHERE ${where}`,
      ps.values,
    )[0]
    const NICE = [1, 2, 3, 6, 12, 24, 48, 72, 168, 336, 720, 1440, 2160, 4320, 8760]
    const maxAgeMs = Math.max(0, Number(st.mx ?? 0))
    const hours = maxAgeMs / 3_600_000 / Math.max(1, maxBins)
    const binH = NICE.find((h) => h >= hours) ?? Math.ceil(hours / 8760) * 8760
    const binMs = binH * 3_600_000
    const w = ps.p(binMs)
    const counts = this.q<{ b: number; n: string }>(
      `SELECT floor((${hnow}::float8 - ${t}) / ${w}::float8)::int AS b, count(*) AS n FROM (${this.sql.memories}) m WHERE ${where} GROUP BY 1 ORDER BY 1`,
      ps.values,
    )
    const nb = Math.max(1, Math.floor(maxAgeMs / binMs) + 1)
    const bins = Array.from({ length: nb }, (_, i) => ({ startMs: i * binMs, endMs: (i + 1) * binMs, count: 0 }))
    for (const c of counts) if (c.b >= 0 && c.b < nb) bins[c.b].count += Number(c.n)
    const total = Number(st.n)
    return { now, from, binMs, bins: total === 0 ? [] : bins, total, neverUsed: Number(st.never ?? 0), maxAgeMs }
  }

  // --- vectors ------------------------------------------------------------
  /** Models per owner type with their majority dimension (one GROUP BY over the vectors). */
  vectorModels(): EmbeddingModelFacts[] {
    const wsWrites = this.workspace.vectorWrites
    if (this.modelsCache && this.modelsCache.wsWrites === wsWrites) return this.modelsCache.facts
    const facts = this.serverModels()
    // Backfilled vectors (the workspace's, for memories the server has no vector of that model for).
    for (const w of this.workspace.vectorModels()) {
      const n = this.backfilled(w.model, w.ownerType).count
      if (n === 0) continue
      const f = facts.find((x) => x.model === w.model && x.ownerType === w.ownerType)
      if (f) f.backfilled = n
      else facts.push({ model: w.model, ownerType: w.ownerType, dim: w.dim, count: 0, malformed: 0, badShape: 0, backfilled: n })
    }
    this.modelsCache = { facts, wsWrites }
    return facts
  }

  /** The server's models per owner type with their majority dimension (one GROUP BY over the vectors), cached. */
  private serverModelsCache: EmbeddingModelFacts[] | null = null
  private serverModels(): EmbeddingModelFacts[] {
    if (this.serverModelsCache) return this.serverModelsCache.map((f) => ({ ...f }))
    if (!this.sql.embeddings) return (this.serverModelsCache = [])
    const dimExpr = this.sql.vectorPadded
      ? 'e.dim'
      : this.sql.vectorStorage === 'vector'
        ? 'vector_dims(e.vec)'
        : this.sql.vectorStorage === 'array'
          ? 'cardinality(e.vec)'
          : `(CASE WHEN length(e.vec) % 4 = 0 THEN length(e.vec) / 4 ELSE -1 END)`
    const rows = this.q<{ o: string; m: string; d: number; n: string }>(
      `SELECT e.owner_type AS o, e.model AS m, ${dimExpr} AS d, count(*) AS n FROM (${this.sql.embeddings}) e GROUP BY 1, 2, 3 ORDER BY 4 DESC`,
    )
    const byModel = new Map<string, EmbeddingModelFacts>()
    for (const r of rows) {
      const key = `${r.o}\u0000${r.m}`
      const n = Number(r.n)
      let f = byModel.get(key)
      if (!f) byModel.set(key, (f = { model: r.m, ownerType: r.o === 'session' ? 'session' : 'memory', dim: Number(r.d), count: 0, malformed: 0, badShape: 0 }))
      if (Number(r.d) === f.dim) f.count += n
      else {
        f.malformed += n
        if (Number(r.d) <= 0) f.badShape += n
      }
    }
    this.serverModelsCache = [...byModel.values()].filter((f) => f.ownerType === 'memory' || f.ownerType === 'session').sort((a, b) => b.count - a.count)
    return this.serverModelsCache.map((f) => ({ ...f }))
  }

  /**
   * The workspace's backfilled vectors of one model, for ids the server has no vector of that model for (the
   * agent's vector wins, as in the SQLite source). They live on this machine, so the dense arm scans them here
   * and merges them with the pushed-down hits. Reloaded after every workspace vector write.
   */
  private backfilled(model: string, ownerType: 'memory' | 'session'): VectorIndex {
    const key = `${ownerType}\u0000${model}`
    const wsWrites = this.workspace.vectorWrites
    const hit = this.backfills.get(key)
    if (hit && hit.wsWrites === wsWrites) return hit.idx
    hit?.idx.reset() // a compact one holds files
    const idx = new VectorIndex(ownerType, model, this.workspacePath)
    const rows = this.workspace.db
      .prepare(`SELECT owner_id AS id, dim, vector FROM ws_embeddings WHERE owner_type = ? AND model = ? ORDER BY owner_id`)
      .all(ownerType, model) as { id: string; dim: number | null; vector: unknown }[]
    if (rows.length) {
      const onServer = this.serverHas(
        rows.map((r) => r.id),
        model,
        ownerType,
      )
      for (const r of rows) {
        if (onServer.has(r.id)) continue
        const v = decodeVector(r.vector, idx.dim || r.dim || null)
        if (typeof v === 'string') {
          idx.malformed[v]++
          continue
        }
        if (idx.dim === 0) idx.dim = v.length
        idx.putFrom(r.id, v, 0, idx.count, HELD_WORKSPACE, undefined)
      }
    }
    this.backfills.set(key, { idx, wsWrites })
    return idx
  }

  /** Which of these owners have a vector of this model on the server. */
  private serverHas(ids: string[], model: string, ownerType: 'memory' | 'session'): Set<string> {
    const out = new Set<string>()
    if (!this.sql.embeddings || !this.serverModels().some((m) => m.model === model && m.ownerType === ownerType)) return out
    for (let i = 0; i < ids.length; i += 5000)
      for (const [id] of this.bridge.query<[string]>(
        `SELECT DISTINCT e.owner_id FROM (${this.sql.embeddings}) e WHERE e.owner_type = $1 AND e.model = $2 AND e.owner_id = ANY($3::text[])`,
        [ownerType, model, ids.slice(i, i + 5000)],
        { rowMode: 'array' },
      ))
        out.add(String(id))
    return out
  }

  storedModels(owner: 'memory' | 'session' = 'memory'): string[] {
    return this.vectorModels()
      .filter((m) => m.ownerType === owner)
      .map((m) => m.model)
  }

  /** Decode `vec` as sent (text for vector/arrays, bytes for bytea). */
  private vecSelect(a: string): string {
    return this.sql.vectorStorage === 'bytea' ? `${a}.vec` : this.sql.vectorStorage === 'array' ? `array_to_json(${a}.vec)::text` : `${a}.vec::text`
  }

  /**
   * The whole index of one model, loaded over the wire (the engine's scan path
   * when the dense arm cannot be pushed down; tools that need every vector).
   */
  vectors(model: string, ownerType: 'memory' | 'session' = 'memory'): VectorIndex {
    const key = `${ownerType}\u0000${model}`
    const wsWrites = this.workspace.vectorWrites
    const hit = this.indexes.get(key)
    if (hit && hit.wsWrites === wsWrites) return hit.idx
    hit?.idx.reset() // a compact one holds files
    const idx = new VectorIndex(ownerType, model, this.workspacePath)
    const facts = this.serverModels().find((m) => m.model === model && m.ownerType === ownerType)
    if (this.sql.embeddings && facts) {
      idx.dim = facts.dim
      idx.reserve(facts.count)
      let last = ''
      for (;;) {
        const rows = this.bridge.query<[string, unknown]>(
          `SELECT e.owner_id, ${this.vecSelect('e')} FROM (${this.sql.embeddings}) e WHERE e.owner_type = $1 AND e.model = $2 AND e.owner_id > $3 ORDER BY e.owner_id LIMIT 20000`,
          [ownerType, model, last],
          { rowMode: 'array' },
        )
        for (const [id, raw] of rows) {
          const v = this.decodeStored(raw, facts.dim)
          if (typeof v === 'string') {
            idx.malformed[v]++
            continue
          }
          idx.put(String(id), v, idx.count)
        }
        if (rows.length < 20000) break
        last = String(rows[rows.length - 1][0])
      }
    }
    // Then the backfilled vectors of ids the server left without one (marked as the workspace's).
    const ws = this.backfilled(model, ownerType)
    if (ws.count > 0 && (idx.dim === 0 || idx.dim === ws.dim)) {
      if (idx.dim === 0) idx.dim = ws.dim
      idx.reserve(idx.count + ws.count)
      for (let r = 0; r < ws.count; r++) idx.putFrom(ws.ids[r], ws.get(ws.ids[r])!, 0, idx.count, HELD_WORKSPACE, idx.rowOf.get(ws.ids[r]))
    }
    this.indexes.set(key, { idx, wsWrites })
    return idx
  }

  /** The exact top-N in-scope rows by cosine, computed in Postgres (see the header). */
  denseSearch(req: DenseSearchRequest): DenseSearchResult {
    if (!this.pushdown || !this.sql.embeddings) throw new RecallscopeError('INTERNAL', 'dense search push-down is not available for this store')
    const ps = new Params()
    const qv = ps.p(this.queryLiteral(req.vector))
    const model = ps.p(req.model)
    const where = memoryWhere(req.filter, ps, this.sql.embeddings)
    const n = ps.p(Math.max(0, Math.floor(req.limit)))
    const v = this.vecExpr('e')
    const method = this.denseMethod
    const ws = req.ownerType === 'memory' ? this.backfilled(req.model, 'memory') : null
    if (ws && ws.count > 0 && req.missingZero) return this.denseSearchLocal(req)
    const onServer = this.serverModels().some((m) => m.model === req.model && m.ownerType === req.ownerType)
    let rows: [string, number | null][]
    if (!onServer) {
      rows = []
    } else if (req.ownerType === 'session') {
      throw new RecallscopeError('INTERNAL', 'session-unit dense search uses similarities()')
    } else if (req.missingZero) {
      rows = this.bridge.query<[string, number | null]>(
        `SELECT d.id, d.sim FROM (SELECT m.id, (1 - (${v} <=> ${qv}::vector))::float8 AS sim FROM (${this.sql.memories}) m
           LEFT JOIN (${this.sql.embeddings}) e ON e.owner_type = 'memory' AND e.model = ${model} AND e.owner_id = m.id WHERE ${where} OFFSET 0) d
         ORDER BY coalesce(d.sim, 0) DESC, (d.sim IS NULL), d.id LIMIT ${n}`,
        ps.values,
        { rowMode: 'array' },
      )
    } else if (method === 'exact') {
      // OFFSET 0 fences the subquery: every in-scope distance is computed before the sort, so no ANN index can answer instead (exact).
      rows = this.bridge.query<[string, number]>(
        `SELECT d.id, (1 - d.dist)::float8 AS sim FROM (SELECT m.id, (${v} <=> ${qv}::vector) AS dist FROM (${this.sql.memories}) m
           JOIN (${this.sql.embeddings}) e ON e.owner_type = 'memory' AND e.model = ${model} AND e.owner_id = m.id WHERE ${where} OFFSET 0) d
         ORDER BY d.dist ASC, d.id ASC LIMIT ${n}`,
        ps.values,
        { rowMode: 'array' },
      )
    } else {
      // ANN: the index scan needs `ORDER BY <column> <=> $q` on the table itself, so the nearest rows of the model are read
      // first (at most ef_search / probes-limited by the index), then the scope filters them: a selective scope may get fewer.
      const set = method === 'hnsw' ? `SET hnsw.ef_search = ${this.annEf}` : `SET ivfflat.probes = ${this.annProbes}`
      const vt = this.sql.vectorTable!
      const col = `e.${ident(vt.column)}`
      const fetch = ps.p(Math.max(Math.floor(req.limit), method === 'hnsw' ? this.annEf : Math.floor(req.limit)))
      // The inner query has no WHERE, so the only way to serve its ORDER BY … LIMIT is the ANN index (a btree on the
      // other columns cannot); rows of other models among those nearest are dropped by the outer filter.
      const annSql = `SELECT c.id, (1 - c.dist)::float8 AS sim FROM (SELECT ${vt.id} AS id, ${vt.ownerType} AS owner_type, ${vt.model} AS model, (${col} <=> ${qv}::vector) AS dist
          FROM ${ident(this.sql.schema)}.${ident(vt.table)} e ORDER BY ${col} <=> ${qv}::vector LIMIT ${fetch}) c
        JOIN (${this.sql.memories}) m ON m.id = c.id WHERE c.owner_type = 'memory' AND c.model = ${model} AND ${where} ORDER BY c.dist ASC, c.id ASC LIMIT ${n}`
      // The user asked for ANN: steer the planner off the sequential scan for this statement only (set back after).
      const steer = [{ sql: set }, { sql: 'SET enable_seqscan = off' }]
      const unsteer = { sql: 'SET enable_seqscan = on' }
      if (this.annIndexUsed === null) {
        // Once per source: does the plan really use the index? The trace must not claim an ANN search that did not run.
        const plan = this.bridge.run<{ 'QUERY PLAN': unknown }>([
          ...steer,
          { sql: `EXPLAIN (FORMAT JSON) ${annSql}`, params: ps.values, result: true },
          unsteer,
        ]).rows
        this.annIndexUsed = JSON.stringify(plan).includes(this.annIndex?.name ?? '\u0000')
      }
      rows = this.bridge.run<[string, number]>([...steer, { sql: annSql, params: ps.values, result: true }, unsteer], { rowMode: 'array' }).rows
    }
    const c = this.countScope(req.filter)
    let hits = rows.map(([id, sim]) => ({ id: String(id), similarity: sim === null ? null : Number(sim) }))
    if (ws && ws.count > 0) {
      // Backfilled vectors of ids the server has none for: the in-scope ones scanned here, merged by the same
      // order as the database's (similarity desc, id asc); the two sets are disjoint, so the top n of the union is exact.
      const local = this.scanBackfilled(ws, req.vector, this.inScopeOf(ws.ids.slice(0, ws.count), req.filter), Math.floor(req.limit))
      hits = [...hits, ...local]
        .sort((a, b) => b.similarity! - a.similarity! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, Math.max(0, Math.floor(req.limit)))
    }
    return {
      hits,
      exhausted: hits.length < req.limit,
      inScope: c.count,
      inScopeCapped: c.capped,
      method:
        method === 'exact'
          ? { kind: 'exact' }
          : method === 'hnsw'
            ? { kind: 'hnsw', index: this.annIndex?.name, efSearch: this.annEf, indexUsed: this.annIndexUsed === true }
            : { kind: 'ivfflat', index: this.annIndex?.name, probes: this.annProbes, indexUsed: this.annIndexUsed === true },
    }
  }

  /** Which of these ids are in the scope (asked of the server, 5,000 at a time). */
  private inScopeOf(ids: string[], f: MemoryFilter): Set<string> {
    const out = new Set<string>()
    for (let i = 0; i < ids.length; i += 5000) {
      const ps = new Params()
      const where = memoryWhere(f, ps, this.sql.embeddings)
      const idp = ps.p(ids.slice(i, i + 5000))
      for (const [id] of this.bridge.query<[string]>(`SELECT m.id FROM (${this.sql.memories}) m WHERE m.id = ANY(${idp}::text[]) AND ${where}`, ps.values, {
        rowMode: 'array',
      }))
        out.add(String(id))
    }
    return out
  }

  /** Cosine of the query with each kept row of a (normalised) index, best first, ties by id; at most n. */
  private scanBackfilled(idx: VectorIndex, query: ArrayLike<number>, keep: Set<string>, n: number): { id: string; similarity: number }[] {
    let qq = 0
    for (let i = 0; i < query.length; i++) qq += query[i] * query[i]
    const inv = qq > 0 ? 1 / Math.sqrt(qq) : 0
    const out: { id: string; similarity: number }[] = []
    for (let r = 0; r < idx.count; r++) {
      const id = idx.ids[r]
      if (!keep.has(id)) continue
      const v = idx.get(id)!
      let dot = 0
      for (let i = 0; i < v.length; i++) dot += v[i] * query[i]
      out.push({ id, similarity: dot * inv })
    }
    return out.sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, Math.max(0, n))
  }

  /**
   * missingVector = zero with backfilled vectors: every in-scope row counts (a row without a vector scores 0),
   * so the model's whole index (server + workspace) is scanned here, in the database's order for that mode.
   */
  private denseSearchLocal(req: DenseSearchRequest): DenseSearchResult {
    const idx = this.vectors(req.model, 'memory')
    const ids = this.idsWhere(req.filter)
    const keep = new Set(ids.filter((id) => idx.rowOf.has(id)))
    const scored = this.scanBackfilled(idx, req.vector, keep, keep.size)
    const sim = new Map(scored.map((h) => [h.id, h.similarity]))
    const all = ids.map((id) => ({ id, similarity: sim.has(id) ? sim.get(id)! : null }))
    all.sort(
      (a, b) =>
        (b.similarity ?? 0) - (a.similarity ?? 0) || Number(a.similarity === null) - Number(b.similarity === null) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    )
    const hits = all.slice(0, Math.max(0, Math.floor(req.limit)))
    const c = this.countScope(req.filter)
    return { hits, exhausted: hits.length < req.limit, inScope: c.count, inScopeCapped: c.capped, method: { kind: 'exact' } }
  }

  /** Cosine similarity (1 − pgvector's cosine distance) of these owners' vectors; ids without one are absent. */
  similarities(ids: string[], vector: ArrayLike<number>, model: string, ownerType: 'memory' | 'session' = 'memory'): Map<string, number> {
    const out = new Map<string, number>()
    if (ids.length === 0 || !this.sql.embeddings) return out
    for (let i = 0; i < ids.length; i += 5000) {
      const rows = this.bridge.query<[string, number]>(
        `SELECT e.owner_id, (1 - (${this.vecExpr('e')} <=> $1::vector))::float8 FROM (${this.sql.embeddings}) e WHERE e.owner_type = $2 AND e.model = $3 AND e.owner_id = ANY($4::text[])`,
        [this.queryLiteral(vector), ownerType, model, ids.slice(i, i + 5000)],
        { rowMode: 'array' },
      )
      for (const [id, s] of rows) out.set(String(id), Number(s))
    }
    const ws = this.backfilled(model, ownerType)
    if (ws.count > 0) {
      const missing = new Set(ids.filter((id) => !out.has(id) && ws.rowOf.has(id)))
      for (const h of this.scanBackfilled(ws, vector, missing, missing.size)) out.set(h.id, h.similarity)
    }
    return out
  }

  vectorDataVersion(): string {
    return `pg:${this.url.identity}:ws${this.workspace.vectorWrites}:${this.vectorModels()
      .map((m) => `${m.model}=${m.count}`)
      .join(',')}`
  }

  vectorInfo(ownerId: string, ownerType: 'memory' | 'session' = 'memory'): VectorInfo[] {
    const server = this.sql.embeddings
      ? this.q<{ model: string; v: unknown }>(
          `SELECT e.model, ${this.vecSelect('e')} AS v FROM (${this.sql.embeddings}) e WHERE e.owner_type = $1 AND e.owner_id = $2`,
          [ownerType, ownerId],
        ).map((r) => ({ model: r.model, v: r.v, backfilled: false }))
      : []
    // Backfilled vectors (workspace) too, marked, as the SQLite source shows them.
    const ws = this.workspace.vectorRows(ownerType, ownerId).map((r) => ({ model: r.model, v: r.vector, backfilled: true }))
    return [...server, ...ws].map((r) => {
      const facts = this.vectorModels().find((m) => m.model === r.model && m.ownerType === ownerType)
      const v = r.backfilled ? decodeVector(r.v, facts?.dim ?? null) : this.decodeStored(r.v, facts?.dim ?? null)
      const mark = r.backfilled ? { backfilled: true } : {}
      if (typeof v === 'string') return { model: r.model, dim: facts?.dim ?? 0, norm: null, problem: v, preview: [], ...mark }
      let s = 0
      for (const x of v) s += x * x
      return { model: r.model, dim: v.length, norm: Math.sqrt(s), problem: null, preview: Array.from(v.subarray(0, 8)), ...mark }
    })
  }

  reloadVectors(): void {
    this.indexes.clear()
    this.backfills.clear()
    this.modelsCache = null
    this.serverModelsCache = null
    this.memo.clear()
  }

  // --- recall log ---------------------------------------------------------
  eventsPage(q: EventPageQuery = {}): Page<RecallEvent> {
    const t0 = performance.now()
    const limit = clampLimit(q.limit)
    const offset = Math.max(0, q.offset ?? 0)
    const src = this.sql.recallEvents
    if (!src) return { rows: [], offset, limit, total: 0, truncated: false, tookMs: 0 }
    const ps = new Params()
    const w = eventWhere(q, ps)
    const dir = q.dir === 'asc' ? 'ASC' : 'DESC'
    const rows = this.q(`SELECT r.* FROM (${src}) r WHERE ${w} ORDER BY r.at ${dir}, r.id ${dir} LIMIT ${limit} OFFSET ${offset}`, ps.values)
    const count = this.cappedCount(`FROM (${src}) r WHERE ${w}`, ps.values)
    return { rows: rows.map(decodeEvent), offset, limit, ...count, tookMs: performance.now() - t0 }
  }

  getEvent(id: string): RecallEvent | null {
    if (!this.sql.recallEvents) return null
    const r = this.q(`SELECT r.* FROM (${this.sql.recallEvents}) r WHERE r.id = $1`, [id])[0]
    return r ? decodeEvent(r) : null
  }

  eventExtras(): EventExtras {
    return { queryVector: null, queryVectorProblem: null, context: null }
  }

  eventsForMemory(memoryId: string, limit = 200): EventRef[] {
    return this.eventsPage({ memoryId, limit }).rows.map((e) => {
      const i = e.results.findIndex((r) => r.id === memoryId)
      return { eventId: e.id, at: e.at, rank: i + 1, score: e.results[i]?.score ?? 0, query: e.query }
    })
  }

  eventTimeline(f: EventFilter): EventTimelineStats {
    const src = this.sql.recallEvents
    if (!src) return { total: 0, range: null, agents: [], users: [], presets: [], badTimestamps: 0, counts: () => [] }
    const ps = new Params()
    const w = eventWhere(f, ps)
    const st = this.q<{ n: string; mn: unknown; mx: unknown }>(
      `SELECT count(*) AS n, min(r.at) AS mn, max(r.at) AS mx FROM (${src}) r WHERE ${w}`,
      ps.values,
    )[0]
    const facet = (c: string) =>
      this.q<{ v: string }>(`SELECT DISTINCT ${c} AS v FROM (${src}) r WHERE ${c} IS NOT NULL ORDER BY 1 LIMIT 500`).map((r) => String(r.v))
    const mn = toMs(st.mn)
    const mx = toMs(st.mx)
    const total = Number(st.n)
    return {
      total,
      range: total && mn !== null && mx !== null ? { min: mn, max: mx } : null,
      agents: facet('r.agent_id'),
      users: facet('r.user_id'),
      presets: facet('r.preset'),
      badTimestamps: 0, // the canonical `at` is a bigint column in Postgres: nothing unreadable to skip
      counts: (binMs, start) => {
        const p2 = new Params()
        const w2 = eventWhere(f, p2)
        return this.q<{ b: number; p: string; n: string }>(
          `SELECT floor((r.at - ${p2.p(start)}::float8) / ${p2.p(binMs)}::float8)::int AS b, coalesce(r.preset, '(none)') AS p, count(*) AS n FROM (${src}) r WHERE ${w2} GROUP BY 1, 2 ORDER BY 1`,
          p2.values,
        ).map((r) => ({ bin: r.b, preset: r.p, count: Number(r.n) }))
      },
    }
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
