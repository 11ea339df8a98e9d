/**
 * Mastra memory (`@mastra/memory` over `@mastra/libsql`'s LibSQLStore + LibSQLVector, one
 * SQLite/libSQL file, `mastra.db` by default), read in place.
 *
 * Tables read, as @mastra/core's storage constants define them (TABLE_SCHEMAS in
 * packages/core/src/storage/constants.ts; libSQL maps `text`/`timestamp` to TEXT with ISO times):
 *   mastra_threads(id, resourceId, title, metadata JSON, createdAt, updatedAt)
 *   mastra_messages(id, thread_id, content, role, type, createdAt, resourceId)
 *   mastra_resources(id, workingMemory, metadata JSON, createdAt, updatedAt)
 *   mastra_observational_memory(id, lookupKey, scope, resourceId, threadId, activeObservations, …)
 * and LibSQLVector's index tables (packages/libsql src/vector/index.ts createIndex):
 *   <index>(id INTEGER PK, vector_id TEXT UNIQUE, embedding F32_BLOB(dim), metadata TEXT JSON)
 * where semantic recall writes one row per message chunk with metadata {message_id, thread_id,
 * resource_id} (index `memory_messages`, or `memory_messages_<dim>`).
 * A message's `content` is JSON: MastraMessageContentV2 `{format: 2, parts: [{type: 'text', text}…],
 * content?}`, or (v1) a JSON string or an array of parts.
 *
 * Canonical mapping: messages → episodic memories (text parts joined; role; thread → session;
 * resourceId, else the thread's → user); working memory → a pinned memory per resource
 * (`wm:<resource>`, tier 'working', metadata.pinned) and per thread when the thread's metadata
 * holds one (`wm:thread:<thread>`); observational memory's active observations → a pinned memory
 * (`om:<id>`); threads → sessions (title as summary); each vector index table → vectors of model
 * `mastra:<table>` (the first chunk of a message; later chunks are counted, not used).
 * Not shown: workflow snapshots, evals, traces and scorers (not memory); tool-call parts of a
 * message (only its text parts are content; the raw JSON is in metadata).
 */
import type Database from 'better-sqlite3'
import type { Adapter } from '../../sqlite/layouts'
import { isoToMs } from '../sql'

/**
 * JSON text or a JSONB blob: LibSQLStore writes its `jsonb` columns (thread and resource metadata, …) with
 * `jsonb(?)`, SQLite's binary JSON, which `json_valid(x)` calls invalid; flags 1|4 accept both, and json(),
 * json_extract() and json_each() read either.
 */
const isJson = (c: string) => `json_valid(${c}, 5)`

const TEXT_OF_CONTENT = (c: string) => `(CASE WHEN ${isJson(c)} THEN
  CASE json_type(${c})
    WHEN 'object' THEN coalesce(
      (SELECT group_concat(json_extract(p.value, '$.text'), char(10)) FROM json_each(${c}, '$.parts') p WHERE json_extract(p.value, '$.type') = 'text'),
      json_extract(${c}, '$.content'))
    WHEN 'text' THEN json_extract(${c}, '$')
    WHEN 'array' THEN (SELECT group_concat(coalesce(json_extract(p.value, '$.text'), CASE WHEN p.type = 'text' THEN p.value END), char(10))
      FROM json_each(${c}) p WHERE p.type = 'text' OR json_extract(p.value, '$.type') = 'text')
  END
  ELSE ${c} END)`

const jsonOrText = (c: string) => `CASE WHEN ${isJson(c)} THEN json(${c}) ELSE ${c} END`

/** LibSQLVector index tables: (vector_id, embedding, metadata). */
function vectorTables(tables: Map<string, Set<string>>): string[] {
  return [...tables.entries()]
    .filter(([name, cols]) => /^[A-Za-z_][\w]*$/.test(name) && ['vector_id', 'embedding', 'metadata'].every((c) => cols.has(c)))
    .map(([name]) => name)
    .sort()
}

export const mastraAdapter: Adapter = {
  name: 'mastra',
  lookedFor: 'Mastra: mastra_messages(id, thread_id, content, role, type, createdAt) + mastra_threads',
  detect(db: Database.Database, tables) {
    const m = tables.get('mastra_messages')
    const t = tables.get('mastra_threads')
    if (!m || !t || !['id', 'thread_id', 'content', 'role', 'createdAt'].every((c) => m.has(c))) return null
    const r = tables.get('mastra_resources')
    const om = tables.get('mastra_observational_memory')
    const user = m.has('resourceId') ? 'coalesce(mm."resourceId", th."resourceId")' : 'th."resourceId"'
    // _rid: messages rowid·4, resource working memory ·4+1, thread working memory ·4+2, observations ·4+3 (distinct, stable)
    const messages = () => `SELECT mm.rowid * 4 AS _rid, mm.id AS id, NULL AS agent_id, ${user} AS user_id, mm.thread_id AS session_id,
        mm.role AS role, 'episodic' AS kind, 'long_term' AS tier, coalesce(${TEXT_OF_CONTENT('mm.content')}, '') AS content, NULL AS summary,
        NULL AS salience, ${isoToMs('mm."createdAt"')} AS created_at, NULL AS last_used_at, NULL AS use_count, NULL AS turn, 'mastra' AS source,
        json_object('type', ${m.has('type') ? 'mm.type' : 'NULL'}, 'content', ${jsonOrText('mm.content')}) AS metadata, NULL AS tenant_id
      FROM mastra_messages mm LEFT JOIN mastra_threads th ON th.id = mm.thread_id`
    const parts = [messages]
    if (r && r.has('workingMemory'))
      parts.push(
        () => `SELECT rs.rowid * 4 + 1 AS _rid, 'wm:' || rs.id AS id, NULL AS agent_id, rs.id AS user_id, NULL AS session_id, NULL AS role,
          'semantic' AS kind, 'working' AS tier, rs."workingMemory" AS content, 'working memory' AS summary, NULL AS salience,
          ${isoToMs(r.has('updatedAt') ? 'coalesce(rs."updatedAt", rs."createdAt")' : 'rs."createdAt"')} AS created_at, NULL AS last_used_at, NULL AS use_count,
          NULL AS turn, 'mastra:working-memory' AS source,
          json_object('pinned', json('true'), 'scope', 'resource', 'metadata', ${r.has('metadata') ? jsonOrText('rs.metadata') : 'NULL'}) AS metadata,
          NULL AS tenant_id
        FROM mastra_resources rs WHERE rs."workingMemory" IS NOT NULL AND trim(rs."workingMemory") <> ''`,
      )
    if (t.has('metadata'))
      parts.push(
        () => `SELECT th.rowid * 4 + 2 AS _rid, 'wm:thread:' || th.id AS id, NULL AS agent_id, th."resourceId" AS user_id, th.id AS session_id,
          NULL AS role, 'semantic' AS kind, 'working' AS tier, json_extract(th.metadata, '$.workingMemory') AS content, 'working memory (thread)' AS summary,
          NULL AS salience, ${isoToMs('coalesce(th."updatedAt", th."createdAt")')} AS created_at, NULL AS last_used_at, NULL AS use_count, NULL AS turn,
          'mastra:working-memory' AS source, json_object('pinned', json('true'), 'scope', 'thread') AS metadata, NULL AS tenant_id
        FROM mastra_threads th WHERE ${isJson('th.metadata')} AND json_type(th.metadata, '$.workingMemory') = 'text'`,
      )
    if (om && om.has('activeObservations'))
      parts.push(
        () => `SELECT o.rowid * 4 + 3 AS _rid, 'om:' || o.id AS id, NULL AS agent_id, ${om.has('resourceId') ? 'o."resourceId"' : 'NULL'} AS user_id,
          ${om.has('threadId') ? 'o."threadId"' : 'NULL'} AS session_id, NULL AS role, 'reflection' AS kind, 'working' AS tier,
          o."activeObservations" AS content, 'observational memory' AS summary, NULL AS salience,
          ${isoToMs(om.has('updatedAt') ? 'coalesce(o."updatedAt", o."createdAt")' : om.has('createdAt') ? 'o."createdAt"' : 'NULL')} AS created_at,
          NULL AS last_used_at, NULL AS use_count, NULL AS turn, 'mastra:observational-memory' AS source,
          json_object('pinned', json('true'), 'scope', ${om.has('scope') ? 'o.scope' : 'NULL'}) AS metadata, NULL AS tenant_id
        FROM mastra_observational_memory o WHERE o."activeObservations" IS NOT NULL AND trim(o."activeObservations") <> ''`,
      )
    const build = () => parts.map((p) => p()).join(' UNION ALL ')
    const sessions = `SELECT th.rowid AS _rid, th.id AS id, NULL AS agent_id, th."resourceId" AS user_id, NULL AS tenant_id,
        ${isoToMs('th."createdAt"')} AS started_at, ${isoToMs('th."updatedAt"')} AS ended_at, th.title AS summary, 0 AS is_archived
      FROM mastra_threads th`
    const vts = vectorTables(tables)
    // first chunk of each message per index (min rowid); a later chunk of the same message is not a second vector
    const embeddings = vts.length
      ? vts
          .map(
            (v) => `SELECT min(x.rowid) * 4 AS _rid, 'memory' AS owner_type, json_extract(x.metadata, '$.message_id') AS owner_id, 'mastra:${v}' AS model,
              NULL AS dim, x.embedding AS vector
            FROM "${v}" x WHERE ${isJson('x.metadata')} AND json_extract(x.metadata, '$.message_id') IS NOT NULL
            GROUP BY json_extract(x.metadata, '$.message_id')`,
          )
          .join(' UNION ALL ')
      : null
    const found = ['mastra_messages', 'mastra_threads']
    if (r) found.push('mastra_resources')
    if (om) found.push('mastra_observational_memory')
    if (vts.length) found.push(`vector index ${vts.join(', ')}`)
    return {
      layout: 'mastra',
      memories: build(),
      // the same rows: lite views feed scans and import, which keep metadata
      memoriesLite: build(),
      sessions,
      embeddings,
      recallEvents: null,
      agentFts: null,
      defaultModel: null,
      detectedBecause: `tables ${found.join(', ')}: Mastra memory (LibSQLStore)`,
      // working memory and observations are rewritten in place (same rowid): key the FTS index on them
      ftsKey: String(
        db
          .prepare(
            `SELECT (SELECT count(*) || '.' || coalesce(max(rowid), 0) FROM mastra_messages)${
              r && r.has('workingMemory')
                ? ` || '.' || (SELECT coalesce(sum(length("workingMemory")), 0) || group_concat("updatedAt") FROM mastra_resources)`
                : ''
            }${t.has('metadata') ? ` || '.' || (SELECT coalesce(sum(length(metadata)), 0) FROM mastra_threads)` : ''}${
              om && om.has('activeObservations') ? ` || '.' || (SELECT coalesce(sum(length("activeObservations")), 0) FROM mastra_observational_memory)` : ''
            }`,
          )
          .pluck()
          .get(),
      ),
    }
  },
}
