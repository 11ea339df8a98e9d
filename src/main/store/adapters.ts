/**
 * Adapters map a file's layout onto the canonical shape without copying:
 * each yields SQL sub-selects with canonical column names plus `_rid`, a stable
 * integer row key (used for incremental loads and the FTS rowid).
 *
 * Built-ins are registered in ADAPTERS, the same list a third party would extend
 * (Datasette's DEFAULT_PLUGINS).
 */
import type Database from 'better-sqlite3'
import type { Layout } from '../../shared/types'
import { crewaiLtmAdapter } from './frameworks/crewai/ltm'
import { mcpMemoryServiceAdapter } from './frameworks/mcpMemoryService/adapter'
import { basicMemoryAdapter } from './frameworks/basicMemory/adapter'
import { lettaAdapter } from './frameworks/letta/server'

export interface Source {
  layout: Layout
  /** Canonical memory columns + tenant_id + _rid. Use as `FROM (${memories}) m`. */
  memories: string
  /** The same without the session join (tenant_id NULL): for counts and id scans that do not filter by tenant. */
  memoriesLite: string
  /** Canonical session columns + _rid. */
  sessions: string
  /** owner_type, owner_id, model, dim, vector (BLOB or JSON text), _rid; null when none. */
  embeddings: string | null
  /** Canonical recall_events columns; null when the layout has none. */
  recallEvents: string | null
  /** An FTS5 table in the agent DB whose rowid equals memories._rid, or null. */
  agentFts: string | null
  /** Default model name for vectors whose layout does not record one (Engram). */
  defaultModel: string | null
  /** Why the adapter matched (the tables/files found), shown by `info` and the Library. */
  detectedBecause?: string
  /**
   * Content fingerprint of a materialized (in-memory) copy: its rowids are assigned on each read, so
   * caches keyed on rowids (the workspace FTS, the facts cache) must rebuild when it changes.
   */
  fingerprint?: string
  /** The layout keeps vectors in sqlite-vec `vec0` tables: load the extension on every connection that reads them. */
  needsSqliteVec?: boolean
}

export interface Adapter {
  name: string
  /** Return a Source when this adapter understands the file, else null. */
  detect(db: Database.Database, tables: Map<string, Set<string>>): Source | null
}

const MEMORY_COLUMNS = [
  'id',
  'agent_id',
  'user_id',
  'session_id',
  'role',
  'kind',
  'tier',
  'content',
  'summary',
  'salience',
  'created_at',
  'last_used_at',
  'use_count',
  'turn',
  'source',
  'metadata',
] as const
const SESSION_COLUMNS = ['id', 'agent_id', 'user_id', 'tenant_id', 'started_at', 'ended_at', 'summary', 'is_archived'] as const
const EVENT_COLUMNS = ['id', 'at', 'agent_id', 'user_id', 'session_id', 'turn', 'query', 'cue', 'preset', 'config', 'results'] as const

/** Select a column when it exists, NULL AS it otherwise: tolerant of agents that write a subset. */
function pick(alias: string, cols: Set<string>, name: string, fallback = 'NULL'): string {
  return cols.has(name) ? `${alias}.${name} AS ${name}` : `${fallback} AS ${name}`
}

export const canonicalAdapter: Adapter = {
  name: 'canonical',
  detect(_db, tables) {
    const m = tables.get('memories')
    if (!m || !m.has('content') || !m.has('created_at') || !m.has('id')) return null
    const s = tables.get('sessions')
    const memCols = MEMORY_COLUMNS.map((c) => pick('m', m, c))
    const tenant = s && s.has('tenant_id') ? 's.tenant_id AS tenant_id' : 'NULL AS tenant_id'
    const join = s ? 'LEFT JOIN sessions s ON s.id = m.session_id' : ''
    const memories = `SELECT m.rowid AS _rid, ${memCols.join(', ')}, ${tenant} FROM memories m ${join}`
    const memoriesLite = `SELECT m.rowid AS _rid, ${memCols.join(', ')}, NULL AS tenant_id FROM memories m`
    const sessions = s
      ? `SELECT s.rowid AS _rid, ${SESSION_COLUMNS.map((c) => pick('s', s, c, c === 'is_archived' ? '0' : 'NULL')).join(', ')} FROM sessions s`
      : // No sessions table: derive sessions from the memories' session ids.
        `SELECT min(m.rowid) AS _rid, m.session_id AS id, min(m.agent_id) AS agent_id, min(m.user_id) AS user_id,
           NULL AS tenant_id, min(m.created_at) AS started_at, max(m.created_at) AS ended_at, NULL AS summary, 0 AS is_archived
         FROM memories m WHERE m.session_id IS NOT NULL GROUP BY m.session_id`
    const e = tables.get('embeddings')
    const embeddings =
      e && ['owner_type', 'owner_id', 'model', 'vector'].every((c) => e.has(c))
        ? `SELECT e.rowid AS _rid, e.owner_type AS owner_type, e.owner_id AS owner_id, e.model AS model, ${
            e.has('dim') ? 'e.dim' : 'NULL'
          } AS dim, e.vector AS vector FROM embeddings e`
        : null
    const r = tables.get('recall_events')
    const recallEvents =
      r && r.has('id') && r.has('at') ? `SELECT ${EVENT_COLUMNS.map((c) => pick('r', r, c)).join(', ')} FROM recall_events r` : null
    const fts = tables.get('memories_fts')
    return {
      layout: 'canonical',
      memories,
      memoriesLite,
      sessions,
      embeddings,
      recallEvents,
      agentFts: fts && fts.has('content') ? 'memories_fts' : null,
      defaultModel: null,
    }
  },
}

/**
 * Engram (seed 002, reference/engram-format.md): `memories` keyed by session, and
 * (v0.5+) `user_memories` keyed by user. Three historic layouts: v0.2 (no tier),
 * v0.5 (tier, consolidated_from, user_memories), v1.0 (+ importance, memory_type…).
 * Embeddings are JSON text in the row; Engram does not record the model, which
 * defaults to nomic-embed-text.
 */
export const engramAdapter: Adapter = {
  name: 'engram',
  detect(_db, tables) {
    const m = tables.get('memories')
    if (!m || !m.has('timestamp') || !m.has('session_id') || !m.has('content') || m.has('created_at')) return null
    const u = tables.get('user_memories')
    const layout: Layout = m.has('memory_type') || m.has('importance') ? 'engram-v1' : m.has('tier') ? 'engram-v0.5' : 'engram-v0.2'
    const KIND_SQL = (cols: Set<string>, a: string) =>
      cols.has('memory_type')
        ? `CASE WHEN ${a}.memory_type IN ('episodic','semantic','procedural','reflection') THEN ${a}.memory_type ELSE 'episodic' END`
        : `'episodic'`
    const rowSql = (cols: Set<string>, a: string, table: string, userCol: boolean, ridExpr: string) =>
      `SELECT ${ridExpr} AS _rid, ${a}.id AS id, NULL AS agent_id, ${userCol ? `${a}.user_id` : 'NULL'} AS user_id,
         ${userCol ? 'NULL' : `${a}.session_id`} AS session_id, ${a}.role AS role, ${KIND_SQL(cols, a)} AS kind,
         ${cols.has('tier') ? `${a}.tier` : `'working'`} AS tier, ${a}.content AS content, NULL AS summary,
         ${cols.has('importance') ? `${a}.importance` : 'NULL'} AS salience, ${a}.timestamp AS created_at,
         NULL AS last_used_at, ${cols.has('reinforcement_count') ? `${a}.reinforcement_count` : 'NULL'} AS use_count,
         NULL AS turn, 'engram' AS source, ${a}.metadata AS metadata, NULL AS tenant_id
       FROM ${table} ${a}`
    // rowids of the two tables are interleaved so _rid stays unique and monotone per table.
    const parts = [rowSql(m, 'm', 'memories', false, 'm.rowid * 2')]
    if (u && u.has('user_id') && u.has('content') && u.has('timestamp')) parts.push(rowSql(u, 'u', 'user_memories', true, 'u.rowid * 2 + 1'))
    const memories = parts.join(' UNION ALL ')
    const sessions = `SELECT min(m.rowid) AS _rid, m.session_id AS id, NULL AS agent_id, NULL AS user_id, NULL AS tenant_id,
        min(m.timestamp) AS started_at, max(m.timestamp) AS ended_at, NULL AS summary, 0 AS is_archived
      FROM memories m GROUP BY m.session_id`
    const embParts = []
    if (m.has('embedding'))
      embParts.push(`SELECT m.rowid * 2 AS _rid, 'memory' AS owner_type, m.id AS owner_id, NULL AS model, NULL AS dim, m.embedding AS vector
        FROM memories m WHERE m.embedding IS NOT NULL`)
    if (u && u.has('embedding') && parts.length > 1)
      embParts.push(`SELECT u.rowid * 2 + 1 AS _rid, 'memory' AS owner_type, u.id AS owner_id, NULL AS model, NULL AS dim, u.embedding AS vector
        FROM user_memories u WHERE u.embedding IS NOT NULL`)
    return {
      layout,
      memories,
      memoriesLite: memories,
      sessions,
      embeddings: embParts.length ? embParts.join(' UNION ALL ') : null,
      recallEvents: null,
      agentFts: null,
      defaultModel: 'nomic-embed-text',
    }
  },
}

/** Built-in adapters, tried in order. */
export const ADAPTERS: Adapter[] = [
  mcpMemoryServiceAdapter, // issue 14: before canonical (its `memories` has content + created_at too)
  canonicalAdapter,
  engramAdapter,
  crewaiLtmAdapter, // issue 14: CrewAI legacy long_term_memories
  basicMemoryAdapter, // issue 14: basic-memory entity/observation/relation
  lettaAdapter, // issue 14: Letta server SQLite
]

/** Table name → column names, from sqlite_master + PRAGMA table_info. */
export function readTables(db: Database.Database): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  const names = db.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table','view')`).pluck().all() as string[]
  for (const name of names) {
    const cols = db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(name) as string[]
    out.set(name, new Set(cols))
  }
  return out
}
