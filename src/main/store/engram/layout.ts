/**
 * Engram files opened in place (seed 002, docs/internals/recall-systems/engram.md), as a
 * SQLite layout: the SQLite source does the rest.
 */
import type { Adapter, SqlLayout } from '../sqlite/layouts'

/**
 * Engram (seed 002, docs/internals/recall-systems/engram.md): `memories` keyed by session, and
 * (v0.5+) `user_memories` keyed by user. Three historic layouts: v0.2 (no tier),
 * v0.5 (tier, consolidated_from, user_memories), v1.0 (+ importance, memory_type…).
 * Embeddings are JSON text in the row; Engram does not record the model, which
 * defaults to nomic-embed-text.
 */
export const engramAdapter: Adapter = {
  name: 'engram',
  lookedFor: 'Engram: memories(id, session_id, content, timestamp)',
  detect(_db, tables) {
    const m = tables.get('memories')
    if (!m || !m.has('timestamp') || !m.has('session_id') || !m.has('content') || m.has('created_at')) return null
    const u = tables.get('user_memories')
    const layout: SqlLayout['layout'] = m.has('memory_type') || m.has('importance') ? 'engram-v1' : m.has('tier') ? 'engram-v0.5' : 'engram-v0.2'
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
      detectedBecause: `memories(timestamp, session_id, content)${u ? ', user_memories' : ''}${m.has('tier') ? ', tier' : ''}${m.has('memory_type') || m.has('importance') ? ', memory_type/importance' : ''}`,
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
