/**
 * Letta V1 `messages` rows for the in-store event reader (src/main/events/letta/):
 * the assistant tool calls, the tool results and the messages after them, in
 * conversation order. Columns read when present (orm/message.py): id, agent_id,
 * conversation_id, role, text, content (JSON parts), tool_calls (JSON),
 * tool_call_id, tool_returns (JSON), name, created_at, sequence_id, is_deleted.
 */
import type Database from 'better-sqlite3'
import type { AgentRecords } from '../../agentRecords'

/** The agent's messages, per agent and conversation in sequence order (read lazily, each call re-reads). */
export function lettaRecords(db: Database.Database, cols: Set<string>): AgentRecords {
  const opt = (c: string) => (cols.has(c) ? `m.${c}` : 'NULL')
  const conv = cols.has('conversation_id') ? 'm.conversation_id' : 'NULL'
  const order = cols.has('sequence_id') ? 'm.sequence_id, m.created_at, m.rowid' : 'm.created_at, m.rowid'
  const sql = `SELECT m.id AS id, m.agent_id AS agentId, ${conv} AS conversationId, m.role AS role, ${opt('text')} AS text,
      ${opt('content')} AS content, ${opt('tool_calls')} AS toolCalls, ${opt('tool_call_id')} AS toolCallId, ${opt('tool_returns')} AS toolReturns,
      ${opt('name')} AS name, CAST(round((julianday(m.created_at) - 2440587.5) * 86400000) AS INTEGER) AS createdAt, ${opt('sequence_id')} AS sequenceId
    FROM messages m WHERE ${cols.has('is_deleted') ? 'coalesce(m.is_deleted, 0) = 0' : '1'}
    ORDER BY m.agent_id, ${conv}, ${order}`
  return {
    kind: 'letta',
    label: 'Letta messages (archival_memory_search, conversation_search)',
    *rows() {
      for (const r of db.prepare(sql).iterate() as Iterable<Record<string, unknown>>) {
        const text = (k: string): string | null => {
          const v = r[k]
          return typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString('utf8') : typeof v === 'number' ? String(v) : null
        }
        yield {
          id: String(r.id),
          agentId: text('agentId'),
          conversationId: text('conversationId'),
          role: text('role'),
          text: text('text'),
          content: text('content'),
          toolCalls: text('toolCalls'),
          toolCallId: text('toolCallId'),
          toolReturns: text('toolReturns'),
          name: text('name'),
          createdAt: typeof r.createdAt === 'number' ? r.createdAt : null,
          sequenceId: typeof r.sequenceId === 'number' ? r.sequenceId : r.sequenceId == null ? null : Number(r.sequenceId),
        }
      }
    },
  }
}
