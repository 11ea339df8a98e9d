/**
 * LangGraph, read in place: the SQLite store and the SQLite checkpointer (either or both in one file).
 *
 * Sources read:
 *  - SqliteSource (Python only): github.com/langchain-ai/langgraph libs/checkpoint-sqlite/langgraph/store/sqlite/base.py
 *    @ 00752187d109a77fe3f85b2b396206a4529d06a9 — `store(prefix, key, value, created_at, updated_at,
 *    expires_at, ttl_minutes)`, prefix = ".".join(namespace), value = orjson JSON, timestamps
 *    CURRENT_TIMESTAMP (UTC "YYYY-MM-DD HH:MM:SS"); `store_vectors(prefix, key, field_name, embedding)`,
 *    embedding = sqlite_vec.serialize_float32 (a plain f32 BLOB in a plain table: sqlite-vec is only
 *    used for vec_distance_cosine at search time, so reading needs no extension).
 *  - Checkpointer: `checkpoints(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type,
 *    checkpoint, metadata)` + `writes(…)` — npm @langchain/langgraph-checkpoint-sqlite 1.0.4
 *    (dist/index.js SqliteSaver.setup/put, JSON serde) and Python libs/checkpoint-sqlite/langgraph/
 *    checkpoint/sqlite/__init__.py @ 02c4bc992bf5007ea6f7480ecf5aac4e41dbd4ec (msgpack serde; see decode.ts).
 *
 * What maps to what:
 *  - store item → memory: id = "<prefix>/<key>", user = the namespace text (the unit LangGraph's
 *    search scopes by), agent = the namespace's first segment, content = value.content | value.content.content
 *    (langmem) | value.text | value.memory | value.data, else the value JSON; created = created_at; kind
 *    'semantic'; tier 'long_term', or 'archived' once expires_at has passed (LangGraph sweeps those);
 *    metadata = {namespace, key, value, updated_at, expires_at, ttl_minutes}.
 *  - store_vectors row → the item's embedding, labelled `langgraph:<dim>` (one indexed field), or
 *    `langgraph:<dim>:<field>` when several fields are indexed.
 *  - thread (checkpoint_ns '') → session; each message of the latest checkpoint's `messages` channel →
 *    a turn memory (kind 'episodic', tier 'working', role from the message class/type, turn = its
 *    position, created = the `ts` of the first checkpoint that holds it, id = the message id, or
 *    "<thread>#<position>" when it has none).
 * Not shown: subgraph namespaces (checkpoint_ns ≠ ''), other channels, pending `writes`, checkpoint
 * metadata. Checkpoints are decoded once when the file is opened (reopen to see new ones).
 */
import type Database from 'better-sqlite3'
import type { Adapter, SqlLayout as Source } from '../../sqlite/layouts'
import { isoToMs } from '../sql'
import { langgraphRecords, walkThreads } from './records'

const TURNS_TABLE = 'recallscope_langgraph_turns'
type Tables = Map<string, Set<string>>

const has = (cols: Set<string> | undefined, names: string[]): boolean => !!cols && names.every((c) => cols.has(c))

interface TurnRow {
  _rid: number
  id: string
  thread_id: string
  role: string | null
  content: string
  turn: number
  created_at: number | null
  metadata: string
}

/** Decode the threads' messages: latest checkpoint's list, each message dated by the first checkpoint holding it. */
function readTurns(db: Database.Database): { rows: TurnRow[]; threads: number; checkpoints: number; failed: number; serdes: Set<string> } {
  const rows: TurnRow[] = []
  const usedIds = new Set<string>()
  const walk = walkThreads(db)
  for (const t of walk.threads()) {
    t.messages.forEach((m, i) => {
      let id = m.id && !usedIds.has(m.id) ? m.id : `${t.threadId}#${i}`
      if (usedIds.has(id)) id = `${t.threadId}#${i}`
      usedIds.add(id)
      rows.push({
        _rid: rows.length * 2 + 1,
        id,
        thread_id: t.threadId,
        role: m.role,
        content: m.content,
        turn: i,
        created_at: t.firstSeen[i],
        metadata: JSON.stringify({
          thread_id: t.threadId,
          checkpoint_id: t.checkpointId,
          message_id: m.id,
          type: m.type,
          name: m.name,
          tool_calls: m.toolCalls,
        }),
      })
    })
  }
  return { rows, threads: walk.stats.threads, checkpoints: walk.stats.checkpoints, failed: walk.stats.failed, serdes: walk.stats.serdes }
}

function storeContent(v: string): string {
  const text = (path: string) => `CASE WHEN json_type(${v}, '${path}') = 'text' THEN json_extract(${v}, '${path}') END`
  return `CASE WHEN json_valid(${v}) THEN coalesce(${['$.content', '$.content.content', '$.text', '$.memory', '$.data'].map(text).join(', ')}, ${v}) ELSE ${v} END`
}

export const langgraphAdapter: Adapter = {
  name: 'langgraph',
  lookedFor: 'LangGraph: store(prefix, key, value) or checkpoints(thread_id, checkpoint_ns, checkpoint_id, type, checkpoint)',
  detect(db, tables: Tables): Source | null {
    const store = has(tables.get('store'), ['prefix', 'key', 'value', 'created_at'])
    const cps = has(tables.get('checkpoints'), ['thread_id', 'checkpoint_ns', 'checkpoint_id', 'type', 'checkpoint'])
    if (!store && !cps) return null
    const why: string[] = []
    const parts: string[] = []
    let embeddings: string | null = null
    let defaultModel: string | null = null
    if (store) {
      const s = tables.get('store')!
      const col = (c: string) => (s.has(c) ? `s.${c}` : 'NULL')
      const root = `CASE WHEN instr(s.prefix, '.') > 0 THEN substr(s.prefix, 1, instr(s.prefix, '.') - 1) ELSE s.prefix END`
      const expired = s.has('expires_at') ? `s.expires_at IS NOT NULL AND julianday(s.expires_at) < julianday('now')` : '0'
      parts.push(`SELECT s.rowid * 2 AS _rid, s.prefix || '/' || s.key AS id, ${root} AS agent_id, s.prefix AS user_id, NULL AS session_id,
          NULL AS role, 'semantic' AS kind, CASE WHEN ${expired} THEN 'archived' ELSE 'long_term' END AS tier,
          ${storeContent('s.value')} AS content, NULL AS summary, NULL AS salience, ${isoToMs('s.created_at')} AS created_at,
          NULL AS last_used_at, NULL AS use_count, NULL AS turn, 'langgraph:store' AS source,
          json_object('namespace', s.prefix, 'key', s.key, 'value', CASE WHEN json_valid(s.value) THEN json(s.value) ELSE s.value END,
            'updated_at', ${col('updated_at')}, 'expires_at', ${col('expires_at')}, 'ttl_minutes', ${col('ttl_minutes')}) AS metadata,
          NULL AS tenant_id
        FROM store s`)
      why.push(`store(${['prefix', 'key', 'value', 'created_at', 'updated_at', 'expires_at', 'ttl_minutes'].filter((c) => s.has(c)).join(', ')})`)
      if (has(tables.get('store_vectors'), ['prefix', 'key', 'field_name', 'embedding'])) {
        const f = db
          .prepare(
            `SELECT count(DISTINCT field_name) AS fields, (SELECT length(embedding) FROM store_vectors WHERE typeof(embedding) = 'blob' LIMIT 1) AS bytes FROM store_vectors`,
          )
          .get() as { fields: number; bytes: number | null }
        const dim = f.bytes && f.bytes % 4 === 0 ? f.bytes / 4 : 0
        const label = dim ? `langgraph:${dim}` : 'langgraph'
        const model = f.fields > 1 ? `'${label}:' || sv.field_name` : 'NULL'
        if (f.fields <= 1) defaultModel = label
        embeddings = `SELECT sv.rowid AS _rid, 'memory' AS owner_type, sv.prefix || '/' || sv.key AS owner_id, ${model} AS model, NULL AS dim, sv.embedding AS vector FROM store_vectors sv`
        why.push(`store_vectors(prefix, key, field_name, embedding) with ${f.fields} indexed field(s)`)
      }
    }
    let sessions = `SELECT NULL AS _rid, NULL AS id, NULL AS agent_id, NULL AS user_id, NULL AS tenant_id, NULL AS started_at, NULL AS ended_at, NULL AS summary, 0 AS is_archived WHERE 0`
    if (cps) {
      const t = readTurns(db)
      // An eponymous virtual table over the decoded turns: the SQL views below read it like a table.
      db.table(TURNS_TABLE, {
        columns: ['_rid', 'id', 'thread_id', 'role', 'content', 'turn', 'created_at', 'metadata'],
        *rows() {
          for (const r of t.rows) yield r
        },
      })
      parts.push(`SELECT t._rid AS _rid, t.id AS id, NULL AS agent_id, NULL AS user_id, t.thread_id AS session_id, t.role AS role,
          'episodic' AS kind, 'working' AS tier, t.content AS content, NULL AS summary, NULL AS salience, t.created_at AS created_at,
          NULL AS last_used_at, NULL AS use_count, t.turn AS turn, 'langgraph:checkpoint' AS source, t.metadata AS metadata, NULL AS tenant_id
        FROM ${TURNS_TABLE} t`)
      sessions = `SELECT min(t._rid) AS _rid, t.thread_id AS id, NULL AS agent_id, NULL AS user_id, NULL AS tenant_id, min(t.created_at) AS started_at,
          max(t.created_at) AS ended_at, NULL AS summary, 0 AS is_archived FROM ${TURNS_TABLE} t GROUP BY t.thread_id`
      const failed = t.failed ? `, ${t.failed} could not be decoded` : ''
      why.push(
        `checkpoints(thread_id, checkpoint_ns, checkpoint_id, type, checkpoint)${tables.has('writes') ? ' + writes' : ''}: ${t.threads} thread(s), ${t.checkpoints} checkpoint(s) (${[...t.serdes].join('/') || 'none'} serde${failed})`,
      )
    }
    const memories = parts.join(' UNION ALL ')
    return {
      layout: 'langgraph',
      memories,
      memoriesLite: memories,
      sessions,
      embeddings,
      recallEvents: null,
      agentFts: null,
      defaultModel,
      // Turn row keys follow decode order: new checkpoints can move them.
      ftsKey: cps ? String(db.prepare(`SELECT count(*) || ':' || coalesce(max(checkpoint_id), '') FROM checkpoints`).pluck().get()) : undefined,
      agentRecords: cps ? [langgraphRecords(db)] : [],
      detectedBecause: `LangGraph SQLite ${[store && 'store', cps && 'checkpointer'].filter(Boolean).join(' + ')}: ${why.join('; ')}`,
    }
  },
}
