/**
 * basic-memory (basicmachines-co/basic-memory): its SQLite index, read in place.
 *
 * Layout read from basicmachines-co/basic-memory @ 4d1dfdb7e2cf9bfaff83c75daa8f02ce45ccc552:
 * src/basic_memory/models/knowledge.py (`entity`, `observation`, `relation`),
 * models/project.py (`project`), models/search.py (`search_index`, FTS5),
 * config_models.py (`memory.db` in the data dir: `~/.basic-memory/`, `$XDG_CONFIG_HOME/basic-memory/`
 * or `$BASIC_MEMORY_CONFIG_DIR`), alembic 3dae7c7b1564 (older `entity_type` column).
 * Timestamps are SQLAlchemy DateTime text: the writer's local time without a zone
 * (`datetime.now().astimezone()` stored naive), read here as local time.
 *
 * Canonical mapping: each observation is a memory of its entity (note):
 *   'obs-' || observation.id → id · observation.content → content · its entity → session
 *   ('entity-' || id; the session summary is the note title, so browse groups a note's facts) ·
 *   project.name → agent_id · entity.created_at / updated_at → created_at / last_used_at
 *   (observations carry no times of their own) · kind 'semantic', tier 'long_term' ·
 *   metadata = { category, tags, context, entity: {title, permalink, file_path, note_type},
 *   relations: the entity's outgoing relations (type, to, context) }.
 * Not shown: the notes' markdown bodies (the files are the source of truth); the semantic
 * chunk vectors (search_vector_chunks / search_vector_embeddings are per text chunk, not per
 * observation); search_index (its rowids are not observation ids, so lexical recall uses the
 * workspace index).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Adapter } from '../../sqlite/layouts'

const DB_NAME = 'memory.db'

/** Local-time SQLAlchemy DateTime text → epoch ms. */
const ms = (col: string) => `CAST(round((julianday(${col}, 'utc') - 2440587.5) * 86400000) AS INTEGER)`

export const basicMemoryAdapter: Adapter = {
  name: 'basic-memory',
  detect(_db, tables) {
    const e = tables.get('entity')
    const o = tables.get('observation')
    const r = tables.get('relation')
    if (!e || !o || !r) return null
    if (!['id', 'title', 'permalink', 'file_path', 'created_at'].every((c) => e.has(c))) return null
    if (!['id', 'entity_id', 'content', 'category'].every((c) => o.has(c))) return null
    if (!['from_id', 'to_name', 'relation_type'].every((c) => r.has(c))) return null
    const p = tables.get('project')
    const hasProject = !!p && e.has('project_id') && p.has('name')
    const noteType = e.has('note_type') ? 'e.note_type' : e.has('entity_type') ? 'e.entity_type' : 'NULL'
    const agent = hasProject ? '(SELECT p.name FROM project p WHERE p.id = e.project_id)' : 'NULL'
    const relations = `(SELECT json_group_array(json_object('type', r.relation_type, 'to', coalesce(t.permalink, r.to_name), 'context', r.context))
        FROM relation r LEFT JOIN entity t ON t.id = r.to_id WHERE r.from_id = e.id)`
    const tags = o.has('tags') ? `CASE WHEN json_valid(o.tags) THEN json(o.tags) ELSE o.tags END` : `json('[]')`
    const memories = `SELECT o.id AS _rid, 'obs-' || o.id AS id, ${agent} AS agent_id, NULL AS user_id, 'entity-' || e.id AS session_id,
        NULL AS role, 'semantic' AS kind, 'long_term' AS tier, o.content AS content, NULL AS summary, NULL AS salience,
        ${ms('e.created_at')} AS created_at, ${e.has('updated_at') ? ms('e.updated_at') : 'NULL'} AS last_used_at, NULL AS use_count,
        NULL AS turn, 'basic-memory' AS source,
        json_object('category', o.category, 'tags', ${tags}, 'context', ${o.has('context') ? 'o.context' : 'NULL'},
          'entity', json_object('title', e.title, 'permalink', e.permalink, 'file_path', e.file_path, 'note_type', ${noteType}),
          'relations', json(${relations})) AS metadata,
        NULL AS tenant_id
      FROM observation o JOIN entity e ON e.id = o.entity_id`
    const sessions = `SELECT e.id AS _rid, 'entity-' || e.id AS id, ${agent} AS agent_id, NULL AS user_id, NULL AS tenant_id,
        ${ms('e.created_at')} AS started_at, ${e.has('updated_at') ? ms('e.updated_at') : 'NULL'} AS ended_at, e.title AS summary, 0 AS is_archived
      FROM entity e`
    const found = ['entity', 'observation', 'relation']
    if (tables.has('search_index')) found.push('search_index')
    if (hasProject) found.push('project')
    return {
      layout: 'basic-memory',
      memories,
      memoriesLite: memories,
      sessions,
      embeddings: null,
      recallEvents: null,
      agentFts: null,
      defaultModel: null,
      detectedBecause: `tables ${found.join(', ')}: basic-memory knowledge graph (observations shown as memories of their notes)`,
    }
  },
}

/** basic-memory's data folder (`~/.basic-memory/`) → its `memory.db`; null for any other path. */
export function resolveBasicMemoryFolder(p: string): string | null {
  try {
    if (!fs.statSync(p).isDirectory()) return null
    const f = path.join(p, DB_NAME)
    return fs.statSync(f).isFile() ? f : null
  } catch {
    return null
  }
}
