/**
 * OpenAI Agents SDK session fixtures (Python only, no npm client writes them): the tables from
 * src/agents/memory/sqlite_session.py (+ advanced_sqlite_session.py's message_structure and
 * turn_usage), rows written as _insert_items writes them — json.dumps(item) text (Python's default
 * ", " / ": " separators), created_at = CURRENT_TIMESTAMP.
 */
import Database from 'better-sqlite3'

/** json.dumps with Python's default separators. */
export function pyJsonDumps(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pyJsonDumps).join(', ')}]`
  if (v && typeof v === 'object')
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}: ${pyJsonDumps(x)}`)
      .join(', ')}}`
  return JSON.stringify(v)
}

export interface AgentItem {
  session: string
  item: Record<string, unknown> | string
  /** CURRENT_TIMESTAMP text (UTC) */
  at: string
  /** advanced session: structure row */
  structure?: { branch: string; type: string; seq: number; userTurn: number | null; branchTurn: number | null; tool: string | null }
}

export const ITEMS: AgentItem[] = [
  { session: 'conv-1', item: { role: 'user', content: 'What is the weather in Oslo?' }, at: '2025-06-01 08:00:00' },
  { session: 'conv-1', item: { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city": "Oslo"}' }, at: '2025-06-01 08:00:01' },
  { session: 'conv-1', item: { type: 'function_call_output', call_id: 'call_1', output: 'Sunny, 21C' }, at: '2025-06-01 08:00:01' },
  {
    session: 'conv-1',
    item: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'It is sunny and 21C in Oslo.', annotations: [] }],
    },
    at: '2025-06-01 08:00:02',
  },
  { session: 'conv-2', item: { role: 'developer', content: 'Answer briefly.' }, at: '2025-06-02 09:00:00' },
  {
    session: 'conv-2',
    item: {
      role: 'user',
      content: [
        { type: 'input_text', text: 'Summarise this' },
        { type: 'input_text', text: 'and that' },
      ],
    },
    at: '2025-06-02 09:00:05',
  },
  { session: 'conv-1', item: 'not json {', at: '2025-06-01 08:00:03' },
  { session: 'conv-1', item: { role: 'user', content: 'Thanks!' }, at: '2025-06-01 08:00:03' },
]

/** Basic SQLiteSession tables (agent_sessions, agent_messages). */
export function createAgentsSession(file: string, items: AgentItem[] = ITEMS, advanced = false): void {
  const db = new Database(file)
  db.exec(`
    CREATE TABLE IF NOT EXISTS agent_sessions (
        session_id TEXT PRIMARY KEY,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
    );
    CREATE TABLE IF NOT EXISTS agent_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        message_data TEXT NOT NULL,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        FOREIGN KEY (session_id) REFERENCES agent_sessions (session_id)
            ON DELETE CASCADE
    );
    CREATE INDEX IF NOT EXISTS idx_agent_messages_session_id ON agent_messages (session_id, id);`)
  if (advanced)
    db.exec(`
    CREATE TABLE IF NOT EXISTS message_structure (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        message_id INTEGER NOT NULL,
        branch_id TEXT NOT NULL DEFAULT 'main',
        message_type TEXT NOT NULL,
        sequence_number INTEGER NOT NULL,
        user_turn_number INTEGER,
        branch_turn_number INTEGER,
        tool_name TEXT,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        FOREIGN KEY (session_id) REFERENCES agent_sessions(session_id) ON DELETE CASCADE,
        FOREIGN KEY (message_id) REFERENCES agent_messages(id) ON DELETE CASCADE
    );
    CREATE TABLE IF NOT EXISTS turn_usage (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        branch_id TEXT NOT NULL DEFAULT 'main',
        user_turn_number INTEGER NOT NULL,
        requests INTEGER DEFAULT 0,
        input_tokens INTEGER DEFAULT 0,
        output_tokens INTEGER DEFAULT 0,
        total_tokens INTEGER DEFAULT 0,
        input_tokens_details JSON,
        output_tokens_details JSON,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        FOREIGN KEY (session_id) REFERENCES agent_sessions(session_id) ON DELETE CASCADE,
        UNIQUE(session_id, branch_id, user_turn_number)
    );`)
  const sess = db.prepare(`INSERT OR IGNORE INTO agent_sessions (session_id, created_at, updated_at) VALUES (?, ?, ?)`)
  const upd = db.prepare(`UPDATE agent_sessions SET updated_at = ? WHERE session_id = ?`)
  const msg = db.prepare(`INSERT INTO agent_messages (session_id, message_data, created_at) VALUES (?, ?, ?)`)
  const st = advanced
    ? db.prepare(
        `INSERT INTO message_structure (session_id, message_id, branch_id, message_type, sequence_number, user_turn_number, branch_turn_number, tool_name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
    : null
  for (const it of items) {
    sess.run(it.session, it.at, it.at)
    const r = msg.run(it.session, typeof it.item === 'string' ? it.item : pyJsonDumps(it.item), it.at)
    upd.run(it.at, it.session)
    if (st && it.structure) {
      const s = it.structure
      st.run(it.session, r.lastInsertRowid, s.branch, s.type, s.seq, s.userTurn, s.branchTurn, s.tool, it.at)
    }
  }
  if (advanced)
    db.prepare(
      `INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, total_tokens, input_tokens_details, output_tokens_details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run('conv-1', 'main', 1, 2, 120, 30, 150, pyJsonDumps({ cached_tokens: 0 }), pyJsonDumps({ reasoning_tokens: 0 }))
  db.close()
}
