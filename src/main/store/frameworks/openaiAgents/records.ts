/**
 * OpenAI Agents SDK session items for the in-store event reader
 * (src/main/events/openaiAgents/): every row of the messages table in session
 * order, its `message_data` as stored (the reader parses it and pairs
 * `function_call` with `function_call_output` by `call_id`).
 */
import type Database from 'better-sqlite3'
import type { AgentRecords } from '../../agentRecords'
import { isoToMs } from '../sql'

/** The session items, per session in id order (read lazily, each call re-reads). */
export function openaiAgentsRecords(db: Database.Database, messagesTable: string): AgentRecords {
  const sql = `SELECT m.id AS rowId, m.session_id AS sessionId, ${isoToMs('m.created_at')} AS createdAt, m.message_data AS data
    FROM "${messagesTable.replace(/"/g, '""')}" m ORDER BY m.session_id, m.id`
  return {
    kind: 'openai-agents',
    label: 'OpenAI Agents SDK session (function_call / function_call_output)',
    *rows() {
      for (const r of db.prepare(sql).iterate() as Iterable<{ rowId: unknown; sessionId: unknown; createdAt: unknown; data: unknown }>)
        yield {
          rowId: Number(r.rowId),
          sessionId: String(r.sessionId),
          createdAt: typeof r.createdAt === 'number' ? r.createdAt : null,
          data: typeof r.data === 'string' ? r.data : Buffer.isBuffer(r.data) ? r.data.toString('utf8') : '',
        }
    },
  }
}
