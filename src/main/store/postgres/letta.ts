/**
 * Letta V1 server on Postgres: the same tables as its SQLite backend
 * (frameworks/letta/server.ts), mapped the same way (frameworks/letta/mapping.ts
 * holds what maps to what), written in the Postgres dialect.
 *
 * DDL learned from letta-ai/letta @ 56ba9c25552605eec89de8ed3dc6394b625c1993 (the last commit before the
 * repository was archived):
 *  - letta/orm/passage.py: `archival_passages` (id, text, embedding_config JSON, metadata_ JSON, tags JSON,
 *    archive_id, organization_id) and, on Postgres, `embedding = mapped_column(Vector(MAX_EMBEDDING_DIM))`
 *    with letta/constants.py `MAX_EMBEDDING_DIM = 4096`: one `vector(4096)` column for every model;
 *  - letta/services/passage_manager.py: every embedding written to Postgres is
 *    `np.pad(embedding, (0, MAX_EMBEDDING_DIM - len))`, zeros after the model's own length, which is
 *    kept in `embedding_config.embedding_dim` (the model in `embedding_config.embedding_model`);
 *  - letta/orm/base.py: created_at / updated_at `DateTime(timezone=True)` (timestamptz), is_deleted boolean;
 *    SQLAlchemy's JSON is Postgres `json`;
 *  - alembic/versions/74e860718e0d_add_archival_memory_sharing.py: on Postgres `agent_passages` lost its
 *    agent_id and became `archival_passages`; the owner is `archives_agents(agent_id, archive_id)`;
 *  - letta/orm/message.py (`messages`: role, text, content JSON parts, tool_calls JSON, name, model,
 *    tool_call_id, run_id, conversation_id, sequence_id bigint), letta/orm/block.py (`block`: label, value,
 *    "limit", description, read_only, hidden, is_template, metadata_), block_history.py, blocks_agents.py,
 *    passage_tag.py (`passage_tags`), agent.py (`agents`: id, name).
 */
import { isLettaStore, LETTA_ROWS, lettaDetectedBecause, lettaModelLabel } from '../frameworks/letta/mapping'
import { ident, msExpr, type PgColumn, type PgLayout } from './layouts'

/** The Letta layout when this schema holds Letta's tables, else null. */
export function detectLettaPgLayout(schema: string, columns: PgColumn[]): PgLayout | null {
  const tables = new Map<string, Map<string, PgColumn>>()
  for (const c of columns) {
    let t = tables.get(c.table)
    if (!t) tables.set(c.table, (t = new Map<string, PgColumn>()))
    t.set(c.column, c)
  }
  if (!isLettaStore(tables)) return null
  const p = tables.get('archival_passages')!
  const b = tables.get('block')!
  const msg = tables.get('messages')!
  const q = (t: string) => `${ident(schema)}.${ident(t)}`
  const ms = (a: string, cols: Map<string, PgColumn>, c: string) => msExpr(`${a}.${ident(c)}`, cols.get(c))
  // is_deleted is boolean in Letta's DDL; read as text so an integer flag reads the same.
  const live = (cols: Map<string, PgColumn>, a: string) => (cols.has('is_deleted') ? `coalesce(${a}.is_deleted::text, 'false') IN ('false', 'f', '0')` : 'true')
  const opt = (cols: Map<string, PgColumn>, a: string, c: string, cast = '::text') => (cols.has(c) ? `${a}.${ident(c)}${cast}` : 'NULL')
  const js = (cols: Map<string, PgColumn>, a: string, c: string) => (cols.has(c) ? `${a}.${ident(c)}::jsonb` : 'NULL::jsonb')

  const aa = tables.get('archives_agents')
  const passageAgent = p.has('agent_id')
    ? 'p.agent_id::text'
    : aa && p.has('archive_id')
      ? `(SELECT min(aa.agent_id::text) FROM ${q('archives_agents')} aa WHERE aa.archive_id = p.archive_id)`
      : 'NULL::text'
  const tagsFromTable = tables.has('passage_tags')
    ? `(SELECT coalesce(jsonb_agg(t.tag ORDER BY t.tag), '[]'::jsonb) FROM ${q('passage_tags')} t WHERE t.passage_id = p.id)`
    : `'[]'::jsonb`
  const tags = p.has('tags') ? `(CASE WHEN p.tags IS NOT NULL AND p.tags::text <> 'null' THEN p.tags::jsonb ELSE ${tagsFromTable} END)` : tagsFromTable
  const row = (r: { kind: string; tier: string; source: string }) => ({
    kind: `'${r.kind}'::text AS kind, '${r.tier}'::text AS tier`,
    source: `'${r.source}'::text AS source`,
  })
  const P = row(LETTA_ROWS.passage)
  const passages = `SELECT p.id::text AS id, ${passageAgent} AS agent_id, NULL::text AS user_id, NULL::text AS session_id, NULL::text AS role,
      ${P.kind}, p.text::text AS content, NULL::text AS summary, NULL::float8 AS salience, ${ms('p', p, 'created_at')} AS created_at,
      NULL::float8 AS last_used_at, NULL::float8 AS use_count, NULL::float8 AS turn, ${P.source},
      jsonb_build_object('archival', true, 'tags', ${tags}, 'metadata', ${js(p, 'p', 'metadata_')}, 'archive_id', ${opt(p, 'p', 'archive_id')})::text AS metadata,
      NULL::text AS tenant_id
    FROM ${q('archival_passages')} p WHERE ${live(p, 'p')}`

  const ba = tables.get('blocks_agents')
  const bh = tables.get('block_history')
  const blockAgent = ba ? `(SELECT min(ba.agent_id::text) FROM ${q('blocks_agents')} ba WHERE ba.block_id = b.id)` : 'NULL::text'
  const blockAgents = ba
    ? `(SELECT coalesce(jsonb_agg(ba.agent_id ORDER BY ba.agent_id), '[]'::jsonb) FROM ${q('blocks_agents')} ba WHERE ba.block_id = b.id)`
    : `'[]'::jsonb`
  const history =
    bh && ['block_id', 'sequence_number', 'value'].every((c) => bh.has(c))
      ? `(SELECT coalesce(jsonb_agg(jsonb_build_object('sequence', h.sequence_number, 'value', h.value, 'actor_type', ${opt(bh, 'h', 'actor_type')},
           'at', ${bh.has('created_at') ? ms('h', bh, 'created_at') : 'NULL'}) ORDER BY h.sequence_number), '[]'::jsonb)
         FROM ${q('block_history')} h WHERE h.block_id = b.id)`
      : `'[]'::jsonb`
  const B = row(LETTA_ROWS.block)
  const blocks = `SELECT b.id::text AS id, ${blockAgent} AS agent_id, NULL::text AS user_id, NULL::text AS session_id, NULL::text AS role,
      ${B.kind}, b.value::text AS content, b.label::text AS summary, NULL::float8 AS salience,
      ${b.has('created_at') ? ms('b', b, 'created_at') : '0::float8'} AS created_at, NULL::float8 AS last_used_at, NULL::float8 AS use_count,
      NULL::float8 AS turn, ${B.source},
      jsonb_build_object('pinned', true, 'label', b.label, 'description', ${opt(b, 'b', 'description')}, 'limit', ${opt(b, 'b', 'limit', '')},
        'read_only', ${opt(b, 'b', 'read_only', '')}, 'hidden', ${opt(b, 'b', 'hidden', '')},
        'updated_at', ${b.has('updated_at') ? ms('b', b, 'updated_at') : 'NULL'}, 'metadata', ${js(b, 'b', 'metadata_')},
        'agents', ${blockAgents}, 'history', ${history})::text AS metadata,
      NULL::text AS tenant_id
    FROM ${q('block')} b WHERE ${live(b, 'b')}${b.has('is_template') ? ` AND coalesce(b.is_template::text, 'false') IN ('false', 'f', '0')` : ''}`

  // The text: `text`, else the content parts' text joined by newlines (in order), else the tool calls.
  const textParts = msg.has('content')
    ? `(SELECT string_agg(j.v->>'text', E'\\n' ORDER BY j.o) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(m.content::jsonb) = 'array' THEN m.content::jsonb ELSE '[]'::jsonb END) WITH ORDINALITY j(v, o)
         WHERE j.v->>'text' IS NOT NULL)`
    : 'NULL'
  const toolCalls = msg.has('tool_calls') ? `nullif(nullif(m.tool_calls::text, 'null'), '[]')` : 'NULL'
  const content = `coalesce(nullif(${opt(msg, 'm', 'text')}, ''), nullif(${textParts}, ''), ${toolCalls}, '')`
  const session = msg.has('conversation_id') ? 'coalesce(m.conversation_id::text, m.agent_id::text)' : 'm.agent_id::text'
  const M = row(LETTA_ROWS.message)
  const messages = `SELECT m.id::text AS id, m.agent_id::text AS agent_id, NULL::text AS user_id, ${session} AS session_id, m.role::text AS role,
      ${M.kind}, ${content} AS content, NULL::text AS summary, NULL::float8 AS salience, ${ms('m', msg, 'created_at')} AS created_at,
      NULL::float8 AS last_used_at, NULL::float8 AS use_count, ${opt(msg, 'm', 'sequence_id', '::float8')} AS turn, ${M.source},
      jsonb_build_object('name', ${opt(msg, 'm', 'name')}, 'model', ${opt(msg, 'm', 'model')}, 'tool_call_id', ${opt(msg, 'm', 'tool_call_id')},
        'run_id', ${opt(msg, 'm', 'run_id')})::text AS metadata,
      NULL::text AS tenant_id
    FROM ${q('messages')} m WHERE ${live(msg, 'm')}`

  const created = ms('m', msg, 'created_at')
  const sessions = `SELECT s.id, s.agent_id, NULL::text AS user_id, NULL::text AS tenant_id, s.started_at, s.ended_at, ag.name::text AS summary, 0 AS is_archived
    FROM (SELECT ${session} AS id, min(m.agent_id::text) AS agent_id, min(${created}) AS started_at, max(${created}) AS ended_at
          FROM ${q('messages')} m WHERE ${live(msg, 'm')} GROUP BY 1) s
    LEFT JOIN ${q('agents')} ag ON ag.id::text = s.agent_id`

  const emb = p.get('embedding')
  const hasVec = emb?.udt === 'vector'
  const cfg = p.has('embedding_config') ? 'p.embedding_config::jsonb' : 'NULL::jsonb'
  // The model's own length; without a config, the stored length (then nothing is padded).
  const dim = `coalesce((${cfg}->>'embedding_dim')::int, vector_dims(p.embedding))`
  const embeddings = hasVec
    ? `SELECT 'memory'::text AS owner_type, p.id::text AS owner_id,
         coalesce(${cfg}->>'embedding_model', '${lettaModelLabel('')}' || ${dim}::text) AS model, p.embedding AS vec, ${dim} AS dim
       FROM ${q('archival_passages')} p WHERE p.embedding IS NOT NULL AND ${live(p, 'p')}`
    : null
  return {
    layout: 'letta',
    detectedBecause: lettaDetectedBecause(tables, ` in schema ${schema}${hasVec ? ', archival_passages.embedding (pgvector, zero-padded)' : ''}`),
    schema,
    memories: [passages, blocks, messages].join(' UNION ALL '),
    sessions,
    embeddings,
    vectorStorage: hasVec ? 'vector' : null,
    vectorPadded: hasVec,
    // No ANN here: pgvector's HNSW / IVFFlat index at most 2,000 dimensions, so a vector(4096) column has none.
    vectorTable: null,
    recallEvents: null,
    memoryTable: 'archival_passages',
  }
}
