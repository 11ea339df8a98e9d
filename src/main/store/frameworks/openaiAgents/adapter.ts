/**
 * OpenAI Agents SDK sessions (Python `SQLiteSession` / `AdvancedSQLiteSession`), read in place.
 *
 * Source read: github.com/openai/openai-agents-python @ 7f7a44f8dc0650296bd5ab6c745c9bcbaa6ac3b7
 *  - src/agents/memory/sqlite_session.py: `agent_sessions(session_id TEXT PRIMARY KEY, created_at,
 *    updated_at)`, `agent_messages(id INTEGER PRIMARY KEY AUTOINCREMENT, session_id, message_data TEXT
 *    /* json.dumps(item) *\/, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`; the table names are
 *    configurable (sessions_table / messages_table), so the tables are also recognised by their columns.
 *    get_items(limit) = the latest `limit` valid items in chronological order (ORDER BY id), rows that
 *    are not JSON skipped; SessionSettings.limit defaults to None (all items).
 *  - src/agents/extensions/memory/advanced_sqlite_session.py: `message_structure(message_id, branch_id,
 *    message_type, sequence_number, user_turn_number, branch_turn_number, tool_name)` and
 *    `turn_usage(session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens,
 *    total_tokens, input_tokens_details, output_tokens_details)`.
 *
 * What maps to what:
 *  - each message row → a memory: id = the row id, session = session_id (`<session_id>@<branch>` for a
 *    branch other than main), role = item.role (function_call → assistant, function_call_output →
 *    tool, developer → system), content = item.content (text, or the text parts of a content list;
 *    a function call as `name(arguments)`, its output as the output), created = created_at, turn =
 *    the row's position in its session (advanced: sequence_number), kind 'episodic', tier 'working'
 *    (a row that is not JSON, which the SDK skips, is 'archived'), metadata = {item, and when present
 *    branch_id, message_type, user_turn_number, branch_turn_number, tool_name, usage (turn_usage)}.
 *  - agent_sessions → sessions (created_at → started, updated_at → ended).
 * Not shown: agent / user scope (the SDK keeps none).
 */
import type Database from 'better-sqlite3'
import type { Adapter, SqlLayout as Source } from '../../sqlite/layouts'
import { isoToMs } from '../sql'
import { openaiAgentsRecords } from './records'

type Tables = Map<string, Set<string>>
const has = (cols: Set<string> | undefined, names: string[]): boolean => !!cols && names.every((c) => cols.has(c))
const q = (name: string) => `"${name.replace(/"/g, '""')}"`

/** The messages table: agent_messages, else the one table with its columns. */
function findTables(db: Database.Database, tables: Tables): { messages: string; sessions: string | null } | null {
  const MSG = ['id', 'session_id', 'message_data', 'created_at']
  let messages: string | null = has(tables.get('agent_messages'), MSG) ? 'agent_messages' : null
  if (!messages) {
    const cands = [...tables].filter(([, c]) => has(c, MSG)).map(([n]) => n)
    if (cands.length !== 1) return null
    messages = cands[0]
  }
  let sessions: string | null = null
  try {
    const fk = db.prepare(`SELECT "table" FROM pragma_foreign_key_list(?) WHERE "from" = 'session_id'`).pluck().get(messages) as string | undefined
    if (fk && has(tables.get(fk), ['session_id'])) sessions = fk
  } catch {
    /* no FK info: fall back to the default name */
  }
  if (!sessions && has(tables.get('agent_sessions'), ['session_id'])) sessions = 'agent_sessions'
  return { messages, sessions }
}

export const openaiAgentsAdapter: Adapter = {
  name: 'openai-agents',
  lookedFor: 'OpenAI Agents SDK: agent_messages(id, session_id, message_data, created_at)',
  detect(db, tables): Source | null {
    const found = findTables(db, tables)
    if (!found) return null
    const M = q(found.messages)
    const ms = has(tables.get('message_structure'), ['message_id', 'branch_id', 'sequence_number']) ? tables.get('message_structure')! : null
    const tu = ms && has(tables.get('turn_usage'), ['session_id', 'branch_id', 'user_turn_number']) ? tables.get('turn_usage')! : null
    const d = 'm.message_data'
    const valid = `json_valid(${d})`
    const str = (path: string) => `CASE WHEN json_type(${d}, '${path}') = 'text' THEN json_extract(${d}, '${path}') END`
    const parts = `(SELECT group_concat(json_extract(p.value, '$.text'), char(10)) FROM json_each(${d}, '$.content') p WHERE json_type(p.value, '$.text') = 'text')`
    const itemType = `json_extract(${d}, '$.type')`
    const content = `CASE WHEN NOT ${valid} THEN ${d}
      WHEN ${itemType} = 'function_call' THEN coalesce(json_extract(${d}, '$.name'), '') || '(' || coalesce(json_extract(${d}, '$.arguments'), '') || ')'
      WHEN ${itemType} = 'function_call_output' THEN coalesce(${str('$.output')}, json_extract(${d}, '$.output'), '')
      ELSE coalesce(${str('$.content')}, CASE WHEN json_type(${d}, '$.content') = 'array' THEN ${parts} END, ${d}) END`
    const role = `CASE WHEN NOT ${valid} THEN NULL
      WHEN json_extract(${d}, '$.role') = 'developer' THEN 'system'
      WHEN json_type(${d}, '$.role') = 'text' THEN json_extract(${d}, '$.role')
      WHEN ${itemType} IN ('function_call', 'reasoning', 'web_search_call', 'file_search_call', 'computer_call') THEN 'assistant'
      WHEN ${itemType} LIKE '%_output' THEN 'tool' END`
    const branch = ms ? `coalesce(s.branch_id, 'main')` : `'main'`
    const session = `CASE WHEN ${branch} = 'main' THEN m.session_id ELSE m.session_id || '@' || ${branch} END`
    // Position in the session: the (session_id, id) index makes this a range count.
    const position = `(SELECT count(*) FROM ${M} p2 WHERE p2.session_id = m.session_id AND p2.id < m.id)`
    const turn = ms ? `coalesce(s.sequence_number, ${position})` : position
    const usage = tu
      ? `(SELECT json_object('requests', u.requests, 'input_tokens', u.input_tokens, 'output_tokens', u.output_tokens, 'total_tokens', u.total_tokens,
            'input_tokens_details', u.input_tokens_details, 'output_tokens_details', u.output_tokens_details)
          FROM turn_usage u WHERE u.session_id = m.session_id AND u.branch_id = ${branch} AND u.user_turn_number = s.user_turn_number)`
      : 'NULL'
    const structure = ms
      ? `, 'branch_id', s.branch_id, 'message_type', s.message_type, 'user_turn_number', s.user_turn_number,
         'branch_turn_number', ${ms.has('branch_turn_number') ? 's.branch_turn_number' : 'NULL'}, 'tool_name', ${ms.has('tool_name') ? 's.tool_name' : 'NULL'}, 'usage', json(${usage})`
      : ''
    const memories = `SELECT m.id AS _rid, CAST(m.id AS TEXT) AS id, NULL AS agent_id, NULL AS user_id, ${session} AS session_id, ${role} AS role,
        'episodic' AS kind, CASE WHEN ${valid} THEN 'working' ELSE 'archived' END AS tier, ${content} AS content, NULL AS summary,
        NULL AS salience, ${isoToMs('m.created_at')} AS created_at, NULL AS last_used_at, NULL AS use_count, ${turn} AS turn,
        'openai-agents' AS source,
        json_object('item', CASE WHEN ${valid} THEN json(${d}) ELSE ${d} END ${structure}) AS metadata, NULL AS tenant_id
      FROM ${M} m ${ms ? `LEFT JOIN message_structure s ON s.message_id = m.id` : ''}`
    const S = found.sessions ? q(found.sessions) : null
    const sCols = found.sessions ? tables.get(found.sessions)! : new Set<string>()
    // Sessions: the messages' sessions (branches included), dated from agent_sessions when it has the row.
    const sessions = `SELECT min(x._rid) AS _rid, x.session_id AS id, NULL AS agent_id, NULL AS user_id, NULL AS tenant_id,
        ${S && sCols.has('created_at') ? `coalesce((SELECT ${isoToMs('a.created_at')} FROM ${S} a WHERE a.session_id = x.session_id), min(x.created_at))` : 'min(x.created_at)'} AS started_at,
        ${S && sCols.has('updated_at') ? `coalesce((SELECT ${isoToMs('a.updated_at')} FROM ${S} a WHERE a.session_id = x.session_id), max(x.created_at))` : 'max(x.created_at)'} AS ended_at,
        NULL AS summary, 0 AS is_archived
      FROM (${memories}) x GROUP BY x.session_id`
    const why = [`${found.messages}(id, session_id, message_data, created_at)`]
    if (found.sessions) why.unshift(`${found.sessions}(session_id, …)`)
    if (ms) why.push('message_structure')
    if (tu) why.push('turn_usage')
    return {
      layout: 'openai-agents',
      memories,
      memoriesLite: memories,
      sessions,
      embeddings: null,
      recallEvents: null,
      agentFts: null,
      defaultModel: null,
      agentRecords: [openaiAgentsRecords(db, found.messages)],
      detectedBecause: `OpenAI Agents SDK ${ms ? 'AdvancedSQLiteSession' : 'SQLiteSession'}: ${why.join(' + ')}`,
    }
  },
}
