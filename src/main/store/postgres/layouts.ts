/**
 * Postgres layouts, detected from `information_schema`: each maps the tables
 * it finds onto the canonical columns as SQL sub-selects (Postgres dialect),
 * the same idea as the SQLite adapters (store/sqlite/layouts.ts) without `_rid`:
 * Postgres rows have no stable integer key, so ties break by id.
 *
 *  - canonical: the canonical schema (docs/internals/design.md "Data") in Postgres; vectors in
 *    `embeddings.vector` as pgvector `vector`, `real[]`/`float8[]`, or `bytea`
 *    (little-endian float32, like the SQLite BLOB); times as epoch ms (bigint)
 *    or timestamp[tz].
 *  - mem0: mem0's pgvector collection table, learned from mem0ai 3.3.1
 *    `dist/oss/index.js` class PGVector.createCol (the npm package in our
 *    devDependencies; upstream mem0ai/mem0 `mem0-ts/src/oss/src/vector_stores/pgvector.ts`):
 *      CREATE TABLE IF NOT EXISTS <collection> (id UUID PRIMARY KEY, vector vector(<dims>), payload JSONB)
 *    with the memory text in payload.data, user_id / agent_id / run_id, and ISO
 *    created_at / updated_at in the payload (collection name default "memories").
 */
import { EVENT_COLUMNS, MEMORY_COLUMNS, SESSION_COLUMNS } from '../canonical'
import { RecallscopeError } from '../../../shared/result'

/** One column as information_schema describes it. */
export interface PgColumn {
  table: string
  column: string
  /** information_schema data_type, e.g. 'text', 'bigint', 'USER-DEFINED', 'ARRAY', 'bytea', 'jsonb' */
  dataType: string
  /** udt_name, e.g. 'vector', '_float4', 'timestamptz' */
  udt: string
}

export type VectorStorage = 'vector' | 'array' | 'bytea'

/** How the ANN query reads the vector table itself (alias `e`), where an index can serve `ORDER BY column <=> $q`. */
export interface AnnColumns {
  table: string
  column: string
  /** the memory id, owner type and model of a row of that table */
  id: string
  ownerType: string
  model: string
}

export interface PgLayout {
  layout: 'canonical' | 'mem0' | 'langgraph' | 'letta' | 'mapped'
  detectedBecause: string
  /** the schema the tables live in */
  schema: string
  /** canonical memory columns + tenant_id; `FROM (${memories}) m` */
  memories: string
  /** canonical session columns; `FROM (${sessions}) s` */
  sessions: string
  /** owner_type, owner_id, model, vec (raw column); null when the store has no vectors */
  embeddings: string | null
  /** how `vec` is stored */
  vectorStorage: VectorStorage | null
  /**
   * The embeddings query also has a `dim` column: each vector's true length. The stored vectors are zero-padded
   * past it to one fixed length (Letta pads every embedding to 4096 for its `vector(4096)` column). Zeros change
   * no cosine, so the query vector is padded the same way and read vectors are cut back to `dim`.
   */
  vectorPadded?: boolean
  /** the table and column an ANN index would be on (index detection, the ANN query) */
  vectorTable: AnnColumns | null
  /** canonical recall_events columns, or null */
  recallEvents: string | null
  /** the memory table (for index lookups and the read-only grant in docs) */
  memoryTable: string
}

const TIME_COLUMNS = new Set(['created_at', 'last_used_at', 'started_at', 'ended_at', 'at'])

/** A quoted identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** Epoch milliseconds (float8) from whatever a time column holds. */
export function msExpr(expr: string, c: PgColumn | undefined): string {
  if (!c) return 'NULL::float8'
  if (c.udt.startsWith('timestamp') || c.udt === 'date') return `(extract(epoch from ${expr}) * 1000)::float8`
  if (['int2', 'int4', 'int8', 'float4', 'float8', 'numeric'].includes(c.udt)) return `${expr}::float8`
  // Text: epoch digits or an ISO string.
  return `(CASE WHEN ${expr} ~ '^[0-9]+(\\.[0-9]+)?$' THEN ${expr}::float8 ELSE (extract(epoch from (${expr})::timestamptz) * 1000)::float8 END)`
}

/** A canonical column of table alias `a`, typed the way the decoder wants it. */
function col(a: string, cols: Map<string, PgColumn>, name: string): string {
  const c = cols.get(name)
  if (TIME_COLUMNS.has(name)) return `${msExpr(c ? `${a}.${ident(name)}` : 'NULL', c)} AS ${name}`
  if (!c) return name === 'is_archived' ? `0 AS ${name}` : `NULL AS ${name}`
  if (name === 'salience') return `${a}.${ident(name)}::float8 AS ${name}`
  if (name === 'turn' || name === 'use_count') return `${a}.${ident(name)}::float8 AS ${name}`
  if (name === 'is_archived') return `(CASE WHEN ${a}.${ident(name)}::text IN ('1', 'true', 't') THEN 1 ELSE 0 END) AS ${name}`
  return `${a}.${ident(name)}::text AS ${name}`
}

function vectorStorageOf(c: PgColumn): VectorStorage | null {
  if (c.udt === 'vector') return 'vector'
  if (c.udt === '_float4' || c.udt === '_float8') return 'array'
  if (c.udt === 'bytea') return 'bytea'
  return null
}

/** The layouts this schema holds, best first; throws UNKNOWN_LAYOUT with what was found when none fits. */
export function detectPgLayout(schema: string, columns: PgColumn[], label: string): PgLayout {
  const tables = new Map<string, Map<string, PgColumn>>()
  for (const c of columns) {
    let t = tables.get(c.table)
    if (!t) tables.set(c.table, (t = new Map<string, PgColumn>()))
    t.set(c.column, c)
  }
  const q = (t: string) => `${ident(schema)}.${ident(t)}`
  const m = tables.get('memories')
  if (m && m.has('id') && m.has('content') && m.has('created_at')) {
    const s = tables.get('sessions')
    const memCols = MEMORY_COLUMNS.map((c) => col('m', m, c))
    const join = s ? `LEFT JOIN ${q('sessions')} s ON s.${ident('id')}::text = m.${ident('session_id')}::text` : ''
    const memories = `SELECT ${memCols.join(', ')}, ${s?.has('tenant_id') ? 's.tenant_id::text' : 'NULL::text'} AS tenant_id FROM ${q('memories')} m ${m.has('session_id') ? join : ''}`
    const sessions = s
      ? `SELECT ${SESSION_COLUMNS.map((c) => col('s', s, c)).join(', ')} FROM ${q('sessions')} s`
      : `SELECT m.session_id::text AS id, min(m.agent_id::text) AS agent_id, min(m.user_id::text) AS user_id, NULL::text AS tenant_id,
           min(${msExpr('m.created_at', m.get('created_at'))}) AS started_at, max(${msExpr('m.created_at', m.get('created_at'))}) AS ended_at,
           NULL::text AS summary, 0 AS is_archived
         FROM ${q('memories')} m WHERE m.session_id IS NOT NULL GROUP BY m.session_id`
    const e = tables.get('embeddings')
    let embeddings: string | null = null
    let storage: VectorStorage | null = null
    if (e && ['owner_type', 'owner_id', 'model', 'vector'].every((c) => e.has(c))) {
      storage = vectorStorageOf(e.get('vector')!)
      if (!storage)
        throw new RecallscopeError(
          'UNKNOWN_LAYOUT',
          `${label}: embeddings.vector is ${e.get('vector')!.udt}; recallscope reads pgvector vector, real[] or bytea (float32)`,
          {
            column: 'embeddings.vector',
            type: e.get('vector')!.udt,
          },
        )
      embeddings = `SELECT e.owner_type::text AS owner_type, e.owner_id::text AS owner_id, e.model::text AS model, e.${ident('vector')} AS vec FROM ${q('embeddings')} e`
    }
    const r = tables.get('recall_events')
    const recallEvents = r && r.has('id') && r.has('at') ? `SELECT ${EVENT_COLUMNS.map((c) => col('r', r, c)).join(', ')} FROM ${q('recall_events')} r` : null
    return {
      layout: 'canonical',
      detectedBecause: `${schema}.memories(${[...m.keys()].join(', ')})${s ? ', sessions' : ''}${e ? `, embeddings (${storage})` : ''}${r ? ', recall_events' : ''}`,
      schema,
      memories,
      sessions,
      embeddings,
      vectorStorage: storage,
      vectorTable: embeddings
        ? { table: 'embeddings', column: 'vector', id: 'e.owner_id::text', ownerType: 'e.owner_type::text', model: 'e.model::text' }
        : null,
      recallEvents,
      memoryTable: 'memories',
    }
  }
  // LangGraph's PostgresStore: store(prefix, key, value jsonb, created_at, updated_at[, expires_at, ttl_minutes]) and, with an
  // index config, store_vectors(prefix, key, field_name, embedding vector(d)) — langchain-ai/langgraph
  // libs/checkpoint-postgres/langgraph/store/postgres/base.py MIGRATIONS / VECTOR_MIGRATIONS (commit 00752187d109a77fe3f85b2b396206a4529d06a9).
  // The namespace tuple is stored joined by '.', so ("memories", "user-1") is prefix 'memories.user-1'.
  const st = tables.get('store')
  if (st && ['prefix', 'key', 'value'].every((c) => st.has(c)) && st.get('value')!.udt === 'jsonb') {
    const sv = tables.get('store_vectors')
    const vecOk = sv && ['prefix', 'key', 'field_name', 'embedding'].every((c) => sv.has(c)) && sv.get('embedding')!.udt === 'vector'
    const idOf = (a: string) => `(${a}.prefix || ':' || ${a}.key)`
    // The memory text: value.content / .text / .memory / .data when a string (langmem puts {content: {content}}), else the JSON.
    const str = (path: string) => `(CASE WHEN jsonb_typeof(x.value #> '{${path}}') = 'string' THEN x.value #>> '{${path}}' END)`
    const content = `coalesce(${str('content')}, ${str('content,content')}, ${str('text')}, ${str('memory')}, ${str('data')}, x.value::text)`
    const memories = `SELECT ${idOf('x')} AS id, split_part(x.prefix, '.', 1) AS agent_id, nullif(split_part(x.prefix, '.', 2), '') AS user_id,
        NULL::text AS session_id, NULL::text AS role, ${str('kind')} AS kind, NULL::text AS tier, ${content} AS content, NULL::text AS summary,
        NULL::float8 AS salience, ${msExpr('x.created_at', st.get('created_at'))} AS created_at, NULL::float8 AS last_used_at, NULL::float8 AS use_count,
        NULL::float8 AS turn, 'langgraph' AS source, x.value::text AS metadata, NULL::text AS tenant_id
      FROM ${q('store')} x${st.has('expires_at') ? ' WHERE x.expires_at IS NULL OR x.expires_at > now()' : ''}`
    return {
      layout: 'langgraph',
      detectedBecause: `${schema}.store(${[...st.keys()].join(', ')})${vecOk ? ', store_vectors (pgvector)' : ''}: a LangGraph PostgresStore (namespace → agent_id.user_id)`,
      schema,
      memories,
      sessions: `SELECT NULL::text AS id, NULL::text AS agent_id, NULL::text AS user_id, NULL::text AS tenant_id, NULL::float8 AS started_at, NULL::float8 AS ended_at, NULL::text AS summary, 0 AS is_archived WHERE false`,
      embeddings: vecOk
        ? `SELECT 'memory'::text AS owner_type, ${idOf('v')} AS owner_id, ('langgraph:' || v.field_name)::text AS model, v.embedding AS vec FROM ${q('store_vectors')} v WHERE v.embedding IS NOT NULL`
        : null,
      vectorStorage: vecOk ? 'vector' : null,
      vectorTable: vecOk
        ? { table: 'store_vectors', column: 'embedding', id: idOf('e'), ownerType: `'memory'::text`, model: `('langgraph:' || e.field_name)::text` }
        : null,
      recallEvents: null,
      memoryTable: 'store',
    }
  }
  // mem0: a table (id uuid, vector vector(d), payload jsonb). The collection's name is the user's; take the first that fits.
  for (const [name, t] of [...tables].sort(([a], [b]) => (a === 'memories' ? -1 : b === 'memories' ? 1 : a.localeCompare(b)))) {
    const id = t.get('id')
    const v = t.get('vector')
    const p = t.get('payload')
    if (!id || !v || !p || v.udt !== 'vector' || !['jsonb', 'json'].includes(p.udt)) continue
    const mem0Model = `'mem0:${name.replace(/'/g, "''")}'`
    const pl = (k: string) => `(x.payload->>'${k}')`
    const ts = (k: string) =>
      `(CASE WHEN ${pl(k)} IS NULL THEN NULL WHEN ${pl(k)} ~ '^[0-9]+(\\.[0-9]+)?$' THEN ${pl(k)}::float8 ELSE (extract(epoch from ${pl(k)}::timestamptz) * 1000)::float8 END)`
    const memories = `SELECT x.id::text AS id, ${pl('agent_id')} AS agent_id, ${pl('user_id')} AS user_id, ${pl('run_id')} AS session_id,
        ${pl('role')} AS role, NULL::text AS kind, NULL::text AS tier, coalesce(${pl('data')}, '') AS content, NULL::text AS summary,
        NULL::float8 AS salience, coalesce(${ts('created_at')}, 0) AS created_at, NULL::float8 AS last_used_at, NULL::float8 AS use_count,
        NULL::float8 AS turn, 'mem0' AS source, (x.payload - 'data')::text AS metadata, NULL::text AS tenant_id
      FROM ${q(name)} x`
    const sessions = `SELECT mm.session_id AS id, min(mm.agent_id) AS agent_id, min(mm.user_id) AS user_id, NULL::text AS tenant_id,
        min(mm.created_at) AS started_at, max(mm.created_at) AS ended_at, NULL::text AS summary, 0 AS is_archived
      FROM (${memories}) mm WHERE mm.session_id IS NOT NULL GROUP BY mm.session_id`
    return {
      layout: 'mem0',
      detectedBecause: `${schema}.${name}(id ${id.udt}, vector vector, payload ${p.udt}): a mem0 pgvector collection`,
      schema,
      memories,
      sessions,
      embeddings: `SELECT 'memory'::text AS owner_type, x.id::text AS owner_id, ${mem0Model}::text AS model, x.vector AS vec FROM ${q(name)} x WHERE x.vector IS NOT NULL`,
      vectorStorage: 'vector',
      vectorTable: { table: name, column: 'vector', id: 'e.id::text', ownerType: `'memory'::text`, model: `${mem0Model}::text` },
      recallEvents: null,
      memoryTable: name,
    }
  }
  const found = [...tables].map(([t, c]) => `${t}(${[...c.keys()].join(', ')})`)
  throw new RecallscopeError(
    'UNKNOWN_LAYOUT',
    `${label}: schema "${schema}" holds no memory store recallscope knows (looked for canonical memories(id, content, created_at, …) a LangGraph store(prefix, key, value jsonb), a mem0 collection (id uuid, vector vector(d), payload jsonb), or Letta's agents, block, messages, archival_passages; found ${found.join('; ') || 'no tables'})`,
    { schema, tables: [...tables.keys()], lookedFor: ['canonical', 'langgraph', 'mem0', 'letta'] },
  )
}
