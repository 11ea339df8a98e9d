/**
 * mem0 (open-source), read in place.
 *
 * Sources read (DDL and semantics):
 *  - TypeScript OSS, npm `mem0ai` 3.3.1, `dist/oss/index.js` (src/oss/src/vector_stores/memory.ts,
 *    src/oss/src/storage/SQLiteManager.ts, Memory.createMemory/updateMemory/deleteMemory):
 *      vector store  `vectors(id TEXT PRIMARY KEY, vector BLOB /* f32 LE *\/, payload TEXT /* JSON *\/)`
 *                    + `memory_migrations(id, user_id)`; default file ~/.mem0/vector_store.db
 *      history DB    `memory_history(id INTEGER PK, memory_id, previous_value, new_value, action,
 *                    created_at, updated_at, is_deleted)` + `messages(id, session_scope, role, content,
 *                    name, created_at)`; default file ./memory.db
 *      payload keys  data, hash, textLemmatized, createdAt, updatedAt, user_id, agent_id, run_id, + metadata
 *  - Python OSS, github.com/mem0ai/mem0 `mem0/memory/storage.py` @ 04111ef3dca8d4fbef6b235c867e69639dd40eb0:
 *      `history(id TEXT PK, memory_id, old_memory, new_memory, event, created_at, updated_at,
 *      is_deleted, actor_id, role)` + the same `messages` table; default file ~/.mem0/history.db.
 *      Payload keys there are snake_case (created_at, updated_at).
 *
 * What maps to what:
 *  - With a vector store: each `vectors` row is a memory. content = payload.data, user_id / agent_id =
 *    payload.user_id / agent_id, session = payload.run_id, created = payload.created_at|createdAt,
 *    kind 'semantic' (mem0 stores extracted facts), tier 'long_term', source 'mem0'; metadata = the
 *    payload without data/textLemmatized, plus `history`: the memory's ADD/UPDATE/DELETE timeline from
 *    the history DB (on the full row: the detail and recall results; pages and scans leave it out). The vector is the memory's embedding (no model recorded: labelled `mem0:<dim>`).
 *  - Without one (Python `history.db` alone): current memories are the replay of the history
 *    events — per memory_id, the last event in insertion order; a DELETE (or is_deleted) removes it,
 *    otherwise content = its new_memory, created = its created_at (UPDATEs carry the original), role =
 *    its role; metadata.history = the timeline.
 *  - `messages` rows (the last 10 messages per session scope that mem0 keeps for fact extraction) are
 *    memories too: kind 'episodic', tier 'working', session = session_scope, source 'mem0:messages'.
 *
 * Not shown: mem0's entity store (`vector_store_entities.db`, used for the search entity boost), the
 * `hash` and `updatedAt` beyond metadata, and `memory_migrations` (a telemetry id).
 *
 * Opening either file (or their folder) finds the other in the same folder.
 */
import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import type { Adapter, SqlLayout as Source } from '../../sqlite/layouts'
import { attachSibling, isoToMs, looksLikeSqlite, mainFile } from '../sql'

/** Files mem0 writes by default, in the order a folder is searched. */
const MEM0_FILE_NAMES = ['vector_store.db', 'memory.db', 'history.db'] as const

type Tables = Map<string, Set<string>>
type HistoryFlavor = 'ts' | 'py'

function hasAll(cols: Set<string> | undefined, names: string[]): cols is Set<string> {
  return !!cols && names.every((c) => cols.has(c))
}

function isVectorStore(db: Database.Database, schema: string, tables: Tables): boolean {
  if (!hasAll(tables.get('vectors'), ['id', 'vector', 'payload'])) return false
  if (tables.has('memory_migrations')) return true
  // Without mem0's bookkeeping table, require a mem0-shaped payload ("data" key).
  try {
    const p = db.prepare(`SELECT payload FROM ${schema}.vectors LIMIT 1`).pluck().get() as string | undefined
    return typeof p === 'string' && json(p)?.data !== undefined
  } catch {
    return false
  }
}

function json(s: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(s) as unknown
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null
  } catch {
    return null
  }
}

function historyFlavor(tables: Tables): HistoryFlavor | null {
  if (hasAll(tables.get('memory_history'), ['memory_id', 'previous_value', 'new_value', 'action'])) return 'ts'
  if (hasAll(tables.get('history'), ['memory_id', 'old_memory', 'new_memory', 'event'])) return 'py'
  return null
}

/** Candidate sibling files in the main file's folder: mem0's default names first, then other SQLite files. */
function siblingCandidates(main: string): string[] {
  if (!main) return []
  const dir = path.dirname(main)
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return []
  }
  const known = MEM0_FILE_NAMES.filter((n) => names.includes(n))
  // The entity store (`<vector store>_entities.db`) has a vectors table too, of entities, not memories.
  const others = names.filter((n) => /\.(db|sqlite3?)$/i.test(n) && !/_entities\.db$/i.test(n) && !known.includes(n as (typeof MEM0_FILE_NAMES)[number])).sort()
  return [...known, ...others]
    .slice(0, 24)
    .map((n) => path.join(dir, n))
    .filter((p) => p !== main && looksLikeSqlite(p))
}

/** Attach the first sibling for which `accept` holds; detach the others. */
function findSibling(db: Database.Database, schema: string, accept: (tables: Tables) => boolean): { file: string; tables: Tables } | null {
  for (const file of siblingCandidates(mainFile(db))) {
    const tables = attachSibling(db, file, schema)
    if (tables && accept(tables)) return { file, tables }
    if (tables) db.exec(`DETACH DATABASE ${schema}`)
  }
  return null
}

/** History rows normalised to the Python column names, `seq` = insertion order. */
function historySql(schema: string, flavor: HistoryFlavor, cols: Set<string>): string {
  if (flavor === 'ts')
    return `SELECT rowid AS seq, memory_id, previous_value AS old_memory, new_value AS new_memory, action AS event, created_at, updated_at,
      ${cols.has('is_deleted') ? 'is_deleted' : '0'} AS is_deleted, NULL AS actor_id, NULL AS role FROM ${schema}.memory_history`
  const c = (n: string) => (cols.has(n) ? n : 'NULL')
  return `SELECT rowid AS seq, memory_id, old_memory, new_memory, event, ${c('created_at')} AS created_at, ${c('updated_at')} AS updated_at,
    ${c('is_deleted')} AS is_deleted, ${c('actor_id')} AS actor_id, ${c('role')} AS role FROM ${schema}.history`
}

/**
 * Per memory_id: the timeline (JSON array, insertion order) and the columns of the last event
 * (SQLite takes bare columns from the max() row when max() is the only min/max aggregate).
 */
function replaySql(hist: string, withEvents: boolean): string {
  return `SELECT max(seq) AS last_seq, memory_id, new_memory, event, is_deleted, created_at, updated_at, actor_id, role,
      ${withEvents ? `json_group_array(${EVENT_JSON})` : `'[]'`} AS events
    FROM (${hist} ORDER BY memory_id, seq) GROUP BY memory_id`
}

const EVENT_JSON = `json_object('event', event, 'old_memory', old_memory, 'new_memory', new_memory, 'created_at', created_at,
  'updated_at', updated_at, 'actor_id', actor_id, 'role', role)`

/**
 * Every memory's timeline, joined on memory_id. mem0 creates no index on memory_id, so a per-row
 * lookup would scan the history once per memory; this groups it once per statement instead. Only
 * the full rows carry it (the detail, recall results); scans, counts and pages read memoriesLite.
 */
function timelinesSql(hist: string): string {
  return `SELECT memory_id, json_group_array(${EVENT_JSON}) AS events FROM (${hist} ORDER BY memory_id, seq) GROUP BY memory_id`
}

function messagesSql(schema: string, tables: Tables): string | null {
  const m = tables.get('messages')
  if (!hasAll(m, ['id', 'session_scope', 'role', 'content'])) return null
  return `SELECT msg.rowid * 2 + 1 AS _rid, msg.id AS id, NULL AS agent_id, NULL AS user_id, msg.session_scope AS session_id,
      msg.role AS role, 'episodic' AS kind, 'working' AS tier, msg.content AS content, NULL AS summary, NULL AS salience,
      ${isoToMs(m.has('created_at') ? 'msg.created_at' : 'NULL')} AS created_at, NULL AS last_used_at, NULL AS use_count, NULL AS turn,
      'mem0:messages' AS source, json_object('name', ${m.has('name') ? 'msg.name' : 'NULL'}) AS metadata, NULL AS tenant_id
    FROM ${schema}.messages msg`
}

function vectorMemoriesSql(vSchema: string, hist: string | null): string {
  // Malformed payload JSON would make json_extract raise: such rows keep their raw text as metadata (counted as bad).
  const p = (key: string) => `json_extract(v.p, '$.${key}')`
  const history = hist ? `json(coalesce(hg.events, '[]'))` : null
  return `SELECT v.rid * 2 AS _rid, v.id AS id, coalesce(${p('agent_id')}, ${p('agentId')}) AS agent_id, coalesce(${p('user_id')}, ${p('userId')}) AS user_id,
      coalesce(${p('run_id')}, ${p('runId')}) AS session_id, ${p('role')} AS role, 'semantic' AS kind, 'long_term' AS tier,
      coalesce(${p('data')}, '') AS content, NULL AS summary, NULL AS salience,
      ${isoToMs(`coalesce(${p('created_at')}, ${p('createdAt')})`)} AS created_at, NULL AS last_used_at, NULL AS use_count, NULL AS turn,
      'mem0' AS source,
      CASE WHEN v.p IS NULL THEN v.raw ELSE ${history ? `json_set(json_remove(v.p, '$.data', '$.textLemmatized'), '$.history', ${history})` : `json_remove(v.p, '$.data', '$.textLemmatized')`} END AS metadata,
      NULL AS tenant_id
    FROM (SELECT rowid AS rid, id, payload AS raw, CASE WHEN json_valid(payload) THEN payload END AS p FROM ${vSchema}.vectors) v
    ${hist ? `LEFT JOIN (${timelinesSql(hist)}) hg ON hg.memory_id = v.id` : ''}`
}

function replayMemoriesSql(replay: string, withEvents: boolean): string {
  return `SELECT g.last_seq * 2 AS _rid, g.memory_id AS id, NULL AS agent_id, NULL AS user_id, NULL AS session_id, g.role AS role,
      'semantic' AS kind, 'long_term' AS tier, g.new_memory AS content, NULL AS summary, NULL AS salience,
      ${isoToMs('g.created_at')} AS created_at, NULL AS last_used_at, NULL AS use_count, NULL AS turn, 'mem0' AS source,
      json_object('updated_at', g.updated_at, 'actor_id', g.actor_id${withEvents ? `, 'history', json(g.events)` : ''}) AS metadata, NULL AS tenant_id
    FROM (${replay}) g
    WHERE coalesce(g.event, '') <> 'DELETE' AND coalesce(g.is_deleted, 0) = 0 AND g.new_memory IS NOT NULL`
}

/** Moves with every write mem0 makes (history rows are append-only; vectors are rewritten in place). */
function ftsKey(db: Database.Database, vSchema: string | null, hSchema: string | null, flavor: HistoryFlavor | null): string {
  const parts: string[] = []
  if (hSchema && flavor)
    parts.push(
      String(
        db
          .prepare(`SELECT count(*) || '.' || coalesce(max(rowid), 0) FROM ${hSchema}.${flavor === 'ts' ? 'memory_history' : 'history'}`)
          .pluck()
          .get(),
      ),
    )
  if (vSchema) parts.push(String(db.prepare(`SELECT count(*) || '.' || coalesce(max(rowid), 0) FROM ${vSchema}.vectors`).pluck().get()))
  return parts.join(':')
}

const SIB_VEC = 'mem0_vectors'
const SIB_HIST = 'mem0_history'

export const mem0Adapter: Adapter = {
  name: 'mem0',
  lookedFor: 'mem0: vectors(id, vector, payload) or memory_history / history(memory_id, …, event)',
  detect(db, tables): Source | null {
    let vSchema: string | null = null
    let hSchema: string | null = null
    let hTables: Tables | null = null
    const why: string[] = []
    const main = path.basename(mainFile(db)) || '(memory)'
    // mem0's entity store has the vector store's layout, but its rows are entities (search boosts), not memories.
    if (/_entities\.db$/i.test(main)) return null
    if (isVectorStore(db, 'main', tables)) {
      vSchema = 'main'
      why.push(`vectors(id, vector, payload)${tables.has('memory_migrations') ? ' + memory_migrations' : ''} in ${main}`)
      if (historyFlavor(tables)) [hSchema, hTables] = ['main', tables]
      else {
        const sib = findSibling(db, SIB_HIST, (t) => historyFlavor(t) !== null)
        if (sib) [hSchema, hTables] = [SIB_HIST, sib.tables]
      }
    } else if (historyFlavor(tables)) {
      ;[hSchema, hTables] = ['main', tables]
      const sib = findSibling(db, SIB_VEC, (t) => isVectorStore(db, SIB_VEC, t))
      if (sib) {
        vSchema = SIB_VEC
        why.push(`vectors(id, vector, payload) in sibling ${path.basename(sib.file)}`)
      }
    } else return null

    const flavor = hTables ? historyFlavor(hTables) : null
    let hist: string | null = null
    if (hSchema && hTables && flavor) {
      const table = flavor === 'ts' ? 'memory_history' : 'history'
      hist = historySql(hSchema, flavor, hTables.get(table)!)
      const where =
        hSchema === 'main'
          ? main
          : `sibling ${path.basename(db.prepare(`SELECT file FROM pragma_database_list WHERE name = ?`).pluck().get(hSchema) as string)}`
      why.push(
        `${flavor === 'ts' ? 'memory_history(memory_id, previous_value, new_value, action)' : 'history(memory_id, old_memory, new_memory, event)'}${hTables.has('messages') ? ' + messages' : ''} in ${where}`,
      )
    }
    const msgs = hSchema && hTables ? messagesSql(hSchema, hTables) : null
    // Full rows carry the timeline; the lite ones (scans, counts, pages) do not.
    const build = (full: boolean) => {
      const parts: string[] = []
      if (vSchema) parts.push(vectorMemoriesSql(vSchema, full ? hist : null))
      else if (hist) parts.push(replayMemoriesSql(replaySql(hist, full), full))
      if (msgs) parts.push(msgs)
      return parts.join(' UNION ALL ')
    }
    const memories = build(true)
    const memoriesLite = build(false)
    const sessions = `SELECT min(m._rid) AS _rid, m.session_id AS id, min(m.agent_id) AS agent_id, min(m.user_id) AS user_id, NULL AS tenant_id,
        min(m.created_at) AS started_at, max(m.created_at) AS ended_at, NULL AS summary, 0 AS is_archived
      FROM (${memoriesLite}) m WHERE m.session_id IS NOT NULL GROUP BY m.session_id`
    let defaultModel: string | null = null
    if (vSchema) {
      const bytes = db.prepare(`SELECT length(vector) FROM ${vSchema}.vectors WHERE typeof(vector) = 'blob' LIMIT 1`).pluck().get() as number | undefined
      defaultModel = bytes && bytes % 4 === 0 ? `mem0:${bytes / 4}` : 'mem0'
    }
    const kind = vSchema ? 'vector store' : 'history replayed'
    // The same siblings on any other connection to this file (the bulk vector loader's).
    const attached = db.prepare(`SELECT name, file FROM pragma_database_list WHERE name IN (?, ?)`).all(SIB_VEC, SIB_HIST) as { name: string; file: string }[]
    return {
      layout: vSchema ? 'mem0' : 'mem0-history',
      memories,
      memoriesLite,
      sessions,
      embeddings: vSchema
        ? `SELECT v.rowid * 2 AS _rid, 'memory' AS owner_type, v.id AS owner_id, NULL AS model, NULL AS dim, v.vector AS vector FROM ${vSchema}.vectors v`
        : null,
      recallEvents: null,
      agentFts: null,
      defaultModel,
      detectedBecause: `mem0 (${kind}): ${why.join('; ')}`,
      // mem0 updates a memory in place (same row): every ADD/UPDATE/DELETE adds a history row.
      ftsKey: ftsKey(db, vSchema, hSchema, flavor),
      prepare: attached.length ? (d) => attached.forEach((a) => attachSibling(d, a.file, a.name)) : undefined,
    }
  },
}

/** A folder holding mem0's files → the file to open (the vector store when present). */
export function resolveMem0Folder(dir: string): string | null {
  for (const n of MEM0_FILE_NAMES) {
    const p = path.join(dir, n)
    if (fs.existsSync(p) && looksLikeSqlite(p)) return p
  }
  return null
}

/** For the detection message of an unknown file. */
export const MEM0_LOOKED_FOR = `mem0: vectors(id, vector, payload) or memory_history / history(memory_id, …, event) (${MEM0_FILE_NAMES.join(', ')})`
