/**
 * Adapters map a file's layout onto the canonical shape without copying:
 * each yields SQL sub-selects with canonical column names plus `_rid`, a stable
 * integer row key (used for incremental loads and the FTS rowid).
 *
 * Built-ins are registered in store/registry.ts, the same list a third party would
 * extend (Datasette's DEFAULT_PLUGINS).
 */
import { EVENT_COLUMNS, MEMORY_COLUMNS, SESSION_COLUMNS } from '../canonical'
import type Database from 'better-sqlite3'
import type { AgentRecords } from '../agentRecords'
import type { OwnEventsOrigin } from '../source'

export interface SqlLayout {
  /** the layout's name, e.g. 'canonical', 'engram-v1', 'mem0' */
  layout: string
  /** why it was detected (the tables and columns found), shown by `info` and the Library */
  detectedBecause?: string
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
  /** When `recallEvents` maps another table (OpenMemory's access log): each event's origin and the log's label. */
  recallEventsOrigin?: OwnEventsOrigin
  /** An FTS5 table in the agent DB whose rowid equals memories._rid, or null. */
  agentFts: string | null
  /** Default model name for vectors whose layout does not record one (Engram). */
  defaultModel: string | null
  /**
   * Run on every other connection to the file before it reads these sub-selects (the bulk
   * vector loader's): attach sibling files. The adapter already did it on `db`.
   */
  prepare?: (db: Database.Database) => void
  /**
   * For layouts whose rows can be rewritten under the same `_rid` (an edited JSONL, a replayed
   * history, re-decoded checkpoints): a key that changes with the content, so the workspace FTS
   * index (incremental by `_rid`) is rebuilt instead of trusted. Read when the store is opened.
   */
  ftsKey?: string
  /** The layout keeps vectors in sqlite-vec `vec0` tables: load the extension on every connection that reads them. */
  needsSqliteVec?: boolean
  /** The agent's own records the in-store event readers read (over the adapter's `db`): Letta messages, checkpoints, session items. */
  agentRecords?: AgentRecords[]
}

export interface Adapter {
  name: string
  /** The tables it recognises, for the message when no adapter takes a file. */
  lookedFor?: string
  /** Return a SqlLayout when this adapter understands the file, else null. */
  detect(db: Database.Database, tables: Map<string, Set<string>>): SqlLayout | null
}

/** Select a column when it exists, NULL AS it otherwise: tolerant of agents that write a subset. */
function pick(alias: string, cols: Set<string>, name: string, fallback = 'NULL'): string {
  return cols.has(name) ? `${alias}.${name} AS ${name}` : `${fallback} AS ${name}`
}

export const canonicalAdapter: Adapter = {
  name: 'canonical',
  lookedFor: 'canonical: memories(id, content, created_at)',
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
    const recallEvents = r && r.has('id') && r.has('at') ? `SELECT ${EVENT_COLUMNS.map((c) => pick('r', r, c)).join(', ')} FROM recall_events r` : null
    const fts = tables.get('memories_fts')
    return {
      layout: 'canonical',
      detectedBecause: `memories(${[...m].join(', ')})${s ? ', sessions' : ''}${e ? ', embeddings' : ''}${r ? ', recall_events' : ''}${fts ? ', memories_fts' : ''}`,
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
