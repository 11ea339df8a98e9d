/**
 * Agno fixtures: `agno_memories` and `agno_sessions` as agno's SqliteDb creates them
 * (libs/agno/agno/db/sqlite/schemas.py @ 00f3efbc, SQLAlchemy on SQLite: String → VARCHAR,
 * JSON → JSON text, BigInteger → BIGINT) and rows as upsert_user_memory / upsert_session write
 * them: `memory` is the memory text through the JSON type (a JSON string), `topics` a JSON list,
 * times epoch seconds (now_epoch_s()).
 */
import path from 'node:path'
import Database from 'better-sqlite3'

const DDL = `
CREATE TABLE agno_memories (memory_id VARCHAR NOT NULL, memory JSON NOT NULL, input VARCHAR, agent_id VARCHAR, team_id VARCHAR,
  user_id VARCHAR, topics JSON, feedback VARCHAR, created_at BIGINT NOT NULL, updated_at BIGINT, PRIMARY KEY (memory_id));
CREATE TABLE agno_sessions (session_id VARCHAR NOT NULL, session_type VARCHAR NOT NULL, agent_id VARCHAR, team_id VARCHAR,
  workflow_id VARCHAR, user_id VARCHAR, session_data JSON, agent_data JSON, team_data JSON, workflow_data JSON, metadata JSON,
  runs JSON, summary JSON, created_at BIGINT NOT NULL, updated_at BIGINT, PRIMARY KEY (session_id));
`

export interface AgnoMemory {
  id: string
  memory: string
  userId: string
  agentId?: string | null
  teamId?: string | null
  topics?: string[]
  input?: string
  createdAtS: number
  updatedAtS?: number
}

export interface AgnoSession {
  id: string
  userId: string
  agentId: string
  summary: string | null
  createdAtS: number
  updatedAtS: number
}

export function buildAgno(dir: string, memories: AgnoMemory[], sessions: AgnoSession[]): string {
  const file = path.join(dir, 'agno.db')
  const db = new Database(file)
  db.exec(DDL)
  const ins = db.prepare(
    `INSERT INTO agno_memories (memory_id, memory, input, agent_id, team_id, user_id, topics, feedback, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
  )
  for (const m of memories)
    ins.run(
      m.id,
      JSON.stringify(m.memory),
      m.input ?? null,
      m.agentId ?? null,
      m.teamId ?? null,
      m.userId,
      JSON.stringify(m.topics ?? []),
      m.createdAtS,
      m.updatedAtS ?? m.createdAtS,
    )
  const ss = db.prepare(
    `INSERT INTO agno_sessions (session_id, session_type, agent_id, user_id, session_data, runs, summary, created_at, updated_at)
     VALUES (?, 'agent', ?, ?, '{}', '[]', ?, ?, ?)`,
  )
  for (const s of sessions)
    ss.run(
      s.id,
      s.agentId,
      s.userId,
      s.summary === null ? null : JSON.stringify({ summary: s.summary, topics: [], updated_at: null }),
      s.createdAtS,
      s.updatedAtS,
    )
  db.close()
  return file
}
