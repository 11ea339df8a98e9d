/**
 * mcp-memory-service (doobidoo/mcp-memory-service), its sqlite-vec backend, read in place.
 *
 * DDL read from doobidoo/mcp-memory-service @ 2e193783594cc9292682fcf4789328a6badbfd7d:
 * src/mcp_memory_service/storage/sqlite_vec.py (`memories`, `metadata`, the vec0 table
 * `memory_embeddings(content_embedding FLOAT[dim] distance_metric=cosine)` keyed by
 * rowid = memories.id, `memory_content_fts` fts5(content, content='memories',
 * content_rowid='id', tokenize='trigram')), and storage/migrations/008, 009, 011
 * (`memory_graph(source_hash, target_hash, similarity, connection_types, metadata,
 * created_at, relationship_type)`; parent_id, version, confidence, last_accessed, superseded_by).
 * Times are epoch seconds (REAL); tags are one comma-separated string.
 *
 * Canonical mapping: content_hash → id (the id its tools expose) · content → content ·
 * created_at → created_at · last_accessed → last_used_at · confidence → salience ·
 * superseded rows → tier 'archived' (its search leaves them out by default), others
 * 'long_term' · kind 'semantic' · metadata = { tags, memory_type, metadata, graph: outgoing
 * memory_graph edges } · vectors from the vec0 table (sqlite-vec loaded on the read-only
 * connection) under `mcp-memory-service:<dim>` (the file does not record the model) ·
 * lexical recall on its own trigram FTS table (rowid = memories.id = _rid).
 * Not shown: soft-deleted rows (deleted_at set: tombstones its search never returns).
 */
import type { Adapter } from '../../sqlite/layouts'
import { isVec0Table, loadSqliteVec } from '../../sqliteVec'

export const mcpMemoryServiceAdapter: Adapter = {
  name: 'mcp-memory-service',
  detect(db, tables) {
    const m = tables.get('memories')
    if (!m || !['id', 'content_hash', 'content', 'tags', 'memory_type', 'created_at'].every((c) => m.has(c))) return null
    if (!tables.has('memory_embeddings') || !isVec0Table(db, 'memory_embeddings')) return null
    loadSqliteVec(db)
    const vecSql = db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'memory_embeddings'`).pluck().get() as string
    const dim = Number(/FLOAT\s*\[\s*(\d+)\s*\]/i.exec(vecSql)?.[1] ?? 0)
    const live = m.has('deleted_at') ? 'm.deleted_at IS NULL' : '1'
    const g = tables.get('memory_graph')
    const graph =
      g && g.has('source_hash') && g.has('target_hash')
        ? `(SELECT json_group_array(json_object('target', g.target_hash, 'type', ${g.has('relationship_type') ? 'g.relationship_type' : "'related'"},
             'similarity', g.similarity, 'connection_types', CASE WHEN json_valid(g.connection_types) THEN json(g.connection_types) ELSE g.connection_types END))
           FROM memory_graph g WHERE g.source_hash = m.content_hash)`
        : `json('[]')`
    const metadata = `json_object('tags', m.tags, 'memory_type', m.memory_type,
        'metadata', CASE WHEN json_valid(m.metadata) THEN json(m.metadata) ELSE m.metadata END, 'graph', json(${graph})${
          m.has('parent_id') ? `, 'parent_id', m.parent_id, 'version', m.version, 'superseded_by', m.superseded_by` : ''
        })`
    const tier = m.has('superseded_by') ? `CASE WHEN m.superseded_by IS NULL OR m.superseded_by = '' THEN 'long_term' ELSE 'archived' END` : `'long_term'`
    const row = (meta: string) => `SELECT m.id AS _rid, m.content_hash AS id, NULL AS agent_id, NULL AS user_id, NULL AS session_id,
        NULL AS role, 'semantic' AS kind, ${tier} AS tier, m.content AS content, NULL AS summary,
        ${m.has('confidence') ? 'm.confidence' : 'NULL'} AS salience, CAST(round(m.created_at * 1000) AS INTEGER) AS created_at,
        ${m.has('last_accessed') ? 'CAST(round(m.last_accessed * 1000) AS INTEGER)' : 'NULL'} AS last_used_at, NULL AS use_count,
        NULL AS turn, 'mcp-memory-service' AS source, ${meta} AS metadata, NULL AS tenant_id
      FROM memories m WHERE ${live}`
    const fts = tables.get('memory_content_fts')
    const found = ['memories(content_hash, tags, memory_type)', `memory_embeddings (vec0, dim ${dim})`]
    if (fts) found.push('memory_content_fts')
    if (g) found.push('memory_graph')
    return {
      layout: 'mcp-memory-service',
      memories: row(metadata),
      memoriesLite: row(metadata),
      sessions: `SELECT NULL AS _rid, NULL AS id, NULL AS agent_id, NULL AS user_id, NULL AS tenant_id, NULL AS started_at,
        NULL AS ended_at, NULL AS summary, 0 AS is_archived WHERE 0`,
      embeddings: `SELECT e.rowid AS _rid, 'memory' AS owner_type, m.content_hash AS owner_id, NULL AS model, NULL AS dim,
          e.content_embedding AS vector
        FROM memory_embeddings e JOIN memories m ON m.id = e.rowid WHERE ${live}`,
      recallEvents: null,
      agentFts: fts && fts.has('content') ? 'memory_content_fts' : null,
      defaultModel: `mcp-memory-service:${dim}`,
      needsSqliteVec: true,
      detectedBecause: `tables ${found.join(', ')}: mcp-memory-service (sqlite-vec backend)`,
    }
  },
}
