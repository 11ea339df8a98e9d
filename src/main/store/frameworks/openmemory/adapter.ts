/**
 * OpenMemory (mem0's self-hosted memory server, `openmemory/api`), its SQLite file
 * (`openmemory.db`, the default DATABASE_URL), read in place.
 *
 * DDL read from mem0ai/mem0 openmemory/api/app/models.py (SQLAlchemy, @ 0294b7a9):
 *   users(id UUID, user_id, name, email, metadata JSON, created_at, updated_at)
 *   apps(id UUID, owner_id → users.id, name, description, metadata JSON, is_active, created_at, updated_at)
 *   memories(id UUID, user_id → users.id, app_id → apps.id, content, vector, metadata JSON,
 *            state ENUM active|paused|archived|deleted, created_at, updated_at, archived_at, deleted_at)
 *   categories(id, name, …) + memory_categories(memory_id, category_id)
 *   memory_access_logs(id UUID, memory_id, app_id, accessed_at, access_type, metadata JSON)
 * On SQLite, SQLAlchemy stores a UUID as 32 hex digits (no dashes), a DateTime as
 * 'YYYY-MM-DD HH:MM:SS.ffffff' (UTC, naive), an Enum by its name, JSON as text.
 *
 * The MCP server's `search_memory` (openmemory/api/app/mcp_server.py) writes one
 * memory_access_logs row per returned memory, `access_type = 'search'`, metadata
 * `{query, score, hash}`, in result order, one commit per search. That is the only real log
 * of which mem0 memories an agent was handed, so it becomes the recall log here: consecutive
 * 'search' rows of one app with the same query, less than 5 s apart, are one recall event
 * (results in row order, with their logged scores), replayed with the `mem0` preset (OpenMemory
 * searches through mem0's Memory.search).
 *
 * Canonical mapping: memory id (dashed, lower case: what the MCP tools return) → id ·
 * content → content · users.user_id → user_id · apps.name → agent_id · created_at →
 * created_at · the newest access → last_used_at, access count → use_count · state active →
 * tier 'long_term', paused/archived → 'archived' (its search skips them), deleted → not shown ·
 * kind 'semantic' (mem0 facts) · metadata = { metadata, categories, state, app }.
 * Not shown: vectors (OpenMemory keeps them in mem0's vector store, Qdrant by default: open
 * that store for dense recall, or backfill into the workspace), documents, access controls.
 */
import type { Adapter } from '../../sqlite/layouts'
import { isoToMs } from '../sql'

/** 32 hex digits → the dashed lower-case form uuid.UUID prints (what the agent saw); other text as is. */
function dashedUuid(expr: string): string {
  const x = `lower(${expr})`
  return `(CASE WHEN length(${expr}) = 32 AND ${expr} NOT GLOB '*[^0-9A-Fa-f]*'
    THEN substr(${x}, 1, 8) || '-' || substr(${x}, 9, 4) || '-' || substr(${x}, 13, 4) || '-' || substr(${x}, 17, 4) || '-' || substr(${x}, 21, 12)
    ELSE ${x} END)`
}

/** A stored UUID (dashed or not, any case) → 32 lower-case hex digits, for joins across tables. */
function bareUuid(expr: string): string {
  return `lower(replace(${expr}, '-', ''))`
}

const REQUIRED = {
  memories: ['id', 'user_id', 'app_id', 'content', 'state', 'created_at'],
  apps: ['id', 'owner_id', 'name'],
  users: ['id', 'user_id'],
}

/** Seconds between two 'search' rows of one recall at most (rows of one commit are microseconds apart). */
const EVENT_GAP_S = 5

export const openmemoryAdapter: Adapter = {
  name: 'openmemory',
  lookedFor: 'OpenMemory: memories(id, user_id, app_id, content, state) + apps + users (openmemory.db)',
  detect(db, tables) {
    for (const [t, cols] of Object.entries(REQUIRED)) {
      const have = tables.get(t)
      if (!have || !cols.every((c) => have.has(c))) return null
    }
    const m = tables.get('memories')!
    const logs = tables.get('memory_access_logs')
    const hasLogs = !!logs && ['memory_id', 'app_id', 'accessed_at', 'access_type'].every((c) => logs.has(c))
    const hasCats = tables.has('memory_categories') && tables.has('categories')
    const meta = (col: string) => `CASE WHEN json_valid(${col}) THEN json(${col}) ELSE ${col} END`
    const categories = hasCats
      ? `(SELECT json_group_array(c.name) FROM memory_categories mc JOIN categories c ON ${bareUuid('c.id')} = ${bareUuid('mc.category_id')}
          WHERE ${bareUuid('mc.memory_id')} = ${bareUuid('mm.id')})`
      : `json('[]')`
    const access = hasLogs
      ? `LEFT JOIN (SELECT ${bareUuid('memory_id')} AS mid, max(${isoToMs('accessed_at')}) AS last_at, count(*) AS n
           FROM memory_access_logs GROUP BY ${bareUuid('memory_id')}) acc ON acc.mid = ${bareUuid('mm.id')}`
      : ''
    const tier = `CASE lower(mm.state) WHEN 'active' THEN 'long_term' ELSE 'archived' END`
    const live = `lower(coalesce(mm.state, 'active')) <> 'deleted'${m.has('deleted_at') ? ' AND mm.deleted_at IS NULL' : ''}`
    const row = () => `SELECT mm.rowid AS _rid, ${dashedUuid('mm.id')} AS id, a.name AS agent_id, u.user_id AS user_id,
        NULL AS session_id, NULL AS role, 'semantic' AS kind, ${tier} AS tier, coalesce(mm.content, '') AS content, NULL AS summary,
        NULL AS salience, ${isoToMs('mm.created_at')} AS created_at, ${hasLogs ? 'acc.last_at' : 'NULL'} AS last_used_at,
        ${hasLogs ? 'acc.n' : 'NULL'} AS use_count, NULL AS turn, 'openmemory' AS source,
        json_object('metadata', ${m.has('metadata') ? meta('mm.metadata') : 'NULL'}, 'categories', json(${categories}), 'state', mm.state, 'app', a.name) AS metadata,
        NULL AS tenant_id
      FROM memories mm
      LEFT JOIN apps a ON ${bareUuid('a.id')} = ${bareUuid('mm.app_id')}
      LEFT JOIN users u ON ${bareUuid('u.id')} = ${bareUuid('mm.user_id')}
      ${access}
      WHERE ${live}`
    const found = ['memories(id, user_id, app_id, content, state)', 'apps', 'users']
    if (hasCats) found.push('memory_categories')
    if (hasLogs) found.push('memory_access_logs (search rows → recall events)')
    return {
      layout: 'openmemory',
      memories: row(),
      // the same rows: lite views feed scans and import, which keep metadata
      memoriesLite: row(),
      // OpenMemory has no sessions: a memory belongs to a user and the app that wrote it.
      sessions: `SELECT NULL AS _rid, NULL AS id, NULL AS agent_id, NULL AS user_id, NULL AS tenant_id, NULL AS started_at,
        NULL AS ended_at, NULL AS summary, 0 AS is_archived WHERE 0`,
      embeddings: null,
      recallEvents: hasLogs ? accessEventsSql(logs.has('metadata')) : null,
      recallEventsOrigin: { origin: { kind: 'openmemory', tool: 'search_memory' }, label: 'OpenMemory access log (memory_access_logs, search rows)' },
      agentFts: null,
      defaultModel: null,
      detectedBecause: `tables ${found.join(', ')}: OpenMemory (mem0's memory server)`,
      // OpenMemory edits a memory's content and state in place (same rowid): key the FTS index on the content.
      ftsKey: String(
        db
          .prepare(
            `SELECT count(*) || '.' || coalesce(sum(length(content)), 0) || '.' || coalesce(max(${m.has('updated_at') ? 'updated_at' : 'created_at'}), '') || '.' || group_concat(DISTINCT state) FROM memories`,
          )
          .pluck()
          .get(),
      ),
    }
  },
}

/**
 * memory_access_logs 'search' rows grouped into recall events (see the module comment): a new
 * event starts where the app or the query changes or more than EVENT_GAP_S passed. Canonical
 * recall_events columns; the event id is `om-` + the first row's rowid.
 */
function accessEventsSql(hasMeta: boolean): string {
  const q = hasMeta ? `CASE WHEN json_valid(l.metadata) THEN json_extract(l.metadata, '$.query') END` : 'NULL'
  const score = hasMeta ? `CASE WHEN json_valid(l.metadata) THEN json_extract(l.metadata, '$.score') END` : 'NULL'
  return `SELECT 'om-' || min(g.rid) AS id, min(g.at) AS at, min(g.app_name) AS agent_id, min(g.owner) AS user_id, NULL AS session_id,
      NULL AS turn, min(g.q) AS query, NULL AS cue, 'mem0' AS preset, NULL AS config,
      json_group_array(json_object('id', g.mid, 'score', g.score) ORDER BY g.jd, g.rid) AS results
    FROM (
      SELECT s.*, sum(s.brk) OVER (ORDER BY s.jd, s.rid ROWS UNBOUNDED PRECEDING) AS grp
      FROM (
        SELECT b.*, CASE WHEN lag(b.app) OVER w IS b.app AND lag(b.q) OVER w IS b.q AND (b.jd - lag(b.jd) OVER w) * 86400.0 <= ${EVENT_GAP_S}
                    THEN 0 ELSE 1 END AS brk
        FROM (
          SELECT l.rowid AS rid, ${bareUuid('l.app_id')} AS app, julianday(l.accessed_at) AS jd, ${isoToMs('l.accessed_at')} AS at,
            ${q} AS q, ${score} AS score, ${dashedUuid('l.memory_id')} AS mid, a.name AS app_name, u.user_id AS owner
          FROM memory_access_logs l
          LEFT JOIN apps a ON ${bareUuid('a.id')} = ${bareUuid('l.app_id')}
          LEFT JOIN users u ON ${bareUuid('u.id')} = ${bareUuid('a.owner_id')}
          WHERE l.access_type = 'search' AND julianday(l.accessed_at) IS NOT NULL
        ) b
        WINDOW w AS (ORDER BY b.jd, b.rid)
      ) s
    ) g
    GROUP BY g.grp`
}
