/**
 * Agno (agno-agi/agno, v2) `SqliteDb`, read in place: user memories and sessions.
 *
 * DDL read from agno-agi/agno libs/agno/agno/db/sqlite/schemas.py @ 00f3efbc (SQLAlchemy):
 *   agno_memories(memory_id PK, memory JSON, input, agent_id, team_id, user_id, topics JSON,
 *                 feedback, created_at BIGINT, updated_at BIGINT)
 *   agno_sessions(session_id PK, session_type, agent_id, team_id, workflow_id, user_id,
 *                 session_data JSON, agent_data JSON, team_data JSON, workflow_data JSON,
 *                 metadata JSON, runs JSON, summary JSON, created_at BIGINT, updated_at BIGINT)
 * (the default table names of `SqliteDb(memory_table=…, session_table=…)`). `memory` is a JSON
 * column holding the memory's text, so the cell is a JSON string ("\"User likes tea\""); times
 * are epoch seconds (agno.utils.dttm.now_epoch_s). A session's `summary` is
 * `{summary, topics, updated_at}` (SessionSummary.to_dict).
 *
 * Canonical mapping: memory_id → id · the JSON-decoded `memory` → content · user_id / agent_id
 * (team_id when no agent) → scope · created_at → created_at · kind 'semantic' (Agno's memory
 * manager writes third-person facts about the user), tier 'long_term', no session (user
 * memories are cross-session) · metadata = { topics, input, feedback, team_id, updated_at }.
 * Sessions: session_id → id, summary.summary → summary, created/updated → started/ended.
 * Not shown: the runs' messages (Agno hands them back through chat history, not recall),
 * knowledge tables (agno_knowledge: documents, vectors in a separate vector DB), evals, metrics.
 */
import type { Adapter } from '../../sqlite/layouts'

const MEMORY_COLS = ['memory_id', 'memory', 'user_id', 'topics', 'created_at']
const SESSION_COLS = ['session_id', 'session_type', 'user_id', 'created_at']

/** Agno writes epoch seconds; a writer that stored ms (> year 5138 in seconds) is taken as ms. */
function epochToMs(expr: string): string {
  return `(CASE WHEN ${expr} IS NULL THEN NULL WHEN abs(${expr}) < 100000000000 THEN CAST(round(${expr} * 1000) AS INTEGER) ELSE CAST(${expr} AS INTEGER) END)`
}

/** The memory column → its text: a JSON string decoded, an object's `memory` key, else the cell as text. */
const CONTENT = `coalesce(CASE WHEN json_valid(m.memory) THEN
    CASE json_type(m.memory) WHEN 'text' THEN json_extract(m.memory, '$') WHEN 'object' THEN coalesce(json_extract(m.memory, '$.memory'), m.memory) END
  END, CAST(m.memory AS TEXT), '')`

const jsonOrText = (col: string) => `CASE WHEN json_valid(${col}) THEN json(${col}) ELSE ${col} END`

export const agnoAdapter: Adapter = {
  name: 'agno',
  lookedFor: 'Agno: agno_memories(memory_id, memory, user_id, topics, created_at) [+ agno_sessions]',
  detect(db, tables) {
    const m = tables.get('agno_memories')
    if (!m || !MEMORY_COLS.every((c) => m.has(c))) return null
    const s = tables.get('agno_sessions')
    const hasSessions = !!s && SESSION_COLS.every((c) => s.has(c))
    const c = (name: string) => (m.has(name) ? `m.${name}` : 'NULL')
    const agent = m.has('team_id') ? `coalesce(${c('agent_id')}, m.team_id)` : c('agent_id')
    const row = () => `SELECT m.rowid AS _rid, m.memory_id AS id, ${agent} AS agent_id, m.user_id AS user_id, NULL AS session_id,
        NULL AS role, 'semantic' AS kind, 'long_term' AS tier, ${CONTENT} AS content, NULL AS summary, NULL AS salience,
        ${epochToMs('m.created_at')} AS created_at, NULL AS last_used_at, NULL AS use_count, NULL AS turn, 'agno' AS source,
        json_object('topics', ${jsonOrText('m.topics')}, 'input', ${c('input')}, 'feedback', ${c('feedback')}, 'team_id', ${c('team_id')},
                'updated_at', ${epochToMs(c('updated_at'))}) AS metadata, NULL AS tenant_id
      FROM agno_memories m`
    const sc = (name: string) => (s?.has(name) ? `s.${name}` : 'NULL')
    const sessions = hasSessions
      ? `SELECT s.rowid AS _rid, s.session_id AS id, coalesce(${sc('agent_id')}, ${sc('team_id')}, ${sc('workflow_id')}) AS agent_id,
          s.user_id AS user_id, NULL AS tenant_id, ${epochToMs('s.created_at')} AS started_at, ${epochToMs(sc('updated_at'))} AS ended_at,
          ${s.has('summary') ? `CASE WHEN json_valid(s.summary) THEN json_extract(s.summary, '$.summary') ELSE s.summary END` : 'NULL'} AS summary,
          0 AS is_archived
        FROM agno_sessions s`
      : `SELECT NULL AS _rid, NULL AS id, NULL AS agent_id, NULL AS user_id, NULL AS tenant_id, NULL AS started_at,
          NULL AS ended_at, NULL AS summary, 0 AS is_archived WHERE 0`
    return {
      layout: 'agno',
      memories: row(),
      // the same rows: lite views feed scans and import, which keep metadata
      memoriesLite: row(),
      sessions,
      embeddings: null,
      recallEvents: null,
      agentFts: null,
      defaultModel: null,
      detectedBecause: `tables agno_memories(memory_id, memory, user_id, topics)${hasSessions ? ' + agno_sessions' : ''}: Agno SqliteDb`,
      // Agno upserts a memory in place (ON CONFLICT DO UPDATE keeps the rowid): key the FTS index on the content.
      ftsKey: String(
        db
          .prepare(`SELECT count(*) || '.' || coalesce(max(${c('updated_at')}), 0) || '.' || coalesce(sum(length(memory)), 0) FROM agno_memories m`)
          .pluck()
          .get(),
      ),
    }
  },
}
