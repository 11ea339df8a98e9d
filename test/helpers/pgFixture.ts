/**
 * Test helper: one deterministic memory set written twice — into a canonical
 * SQLite file (CanonicalWriter) and into Postgres (canonical tables in one
 * schema, a mem0 pgvector collection in another) — so a test can compare the
 * two sources and recompute every cosine itself.
 *
 * Vectors are rounded to float32 before they are written, so both stores hold
 * the same numbers; salience values are multiples of 1/8 (exact in `real`).
 */
import { hashEmbed, HASHING_DIM, HASHING_MODEL } from '../../src/main/embed/hashing'
import { CanonicalWriter } from '../../src/main/store/sqlite/canonicalWriter'
import type { LettaServerSpec } from './frameworks/letta'
import { pgInsert, pgText, pgVector } from './pgServer'

/** The hashing embedder's vectors (offline, deterministic): evals and CLI recalls can embed queries the same way. */
export const PG_MODEL = HASHING_MODEL
export const PG_DIM = HASHING_DIM
export const PG_T0 = Date.UTC(2026, 0, 1)
const WORDS = [
  'coffee',
  'paris',
  'dentist',
  'guitar',
  'birthday',
  'budget',
  'marathon',
  'sister',
  'garden',
  'python',
  'invoice',
  'flight',
  'allergy',
  'piano',
  'museum',
  'recipe',
]

export interface FixtureMemory {
  id: string
  agent: string
  user: string
  session: string
  content: string
  createdAt: number
  salience: number
  kind: string
  tier: string
  vector: Float32Array | null
}

/** mulberry32: a tiny seeded PRNG (the same data on every run). */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function makeMemories(n: number, seed = 7): FixtureMemory[] {
  const r = rng(seed)
  const out: FixtureMemory[] = []
  for (let i = 0; i < n; i++) {
    const w = () => WORDS[Math.floor(r() * WORDS.length)]
    const content = `note ${i}: ${w()} and ${w()} then ${w()}`
    out.push({
      id: `m${String(i).padStart(5, '0')}`,
      agent: i % 3 === 0 ? 'agent-b' : 'agent-a',
      user: i % 2 === 0 ? 'user-1' : 'user-2',
      session: `s${i % 5}`,
      content,
      createdAt: PG_T0 + i * 60_000,
      salience: Math.floor(r() * 9) / 8,
      kind: i % 4 === 0 ? 'semantic' : 'episodic',
      tier: i % 7 === 0 ? 'long_term' : 'working',
      // every 10th memory has no vector
      vector: i % 10 === 9 ? null : hashEmbed(content),
    })
  }
  return out
}

/** Write the set into a canonical SQLite file. */
export function writeSqlite(file: string, mems: FixtureMemory[]): string {
  const w = new CanonicalWriter(file, { force: true })
  try {
    for (let s = 0; s < 5; s++)
      w.session({
        id: `s${s}`,
        agent_id: 'agent-a',
        user_id: 'user-1',
        tenant_id: null,
        started_at: PG_T0,
        ended_at: PG_T0 + 1000,
        summary: `session ${s}`,
        is_archived: 0,
      })
    for (const m of mems) {
      w.memory({
        id: m.id,
        agent_id: m.agent,
        user_id: m.user,
        session_id: m.session,
        role: 'user',
        kind: m.kind,
        tier: m.tier,
        content: m.content,
        summary: null,
        salience: m.salience,
        created_at: m.createdAt,
        last_used_at: null,
        use_count: 0,
        turn: null,
        source: null,
        metadata: null,
      })
      if (m.vector) w.embedding('memory', m.id, PG_MODEL, m.vector)
    }
    return w.finish()
  } catch (e) {
    w.abort()
    throw e
  }
}

/** DDL of the canonical schema in Postgres (vectors as pgvector `vector`, or `real[]`). */
export function canonicalDdl(schema: string, vectorType: 'vector' | 'real[]' = 'vector'): string {
  return `
  CREATE SCHEMA ${schema};
  CREATE TABLE ${schema}.sessions (id text PRIMARY KEY, agent_id text, user_id text, tenant_id text, started_at bigint, ended_at bigint, summary text, is_archived int NOT NULL DEFAULT 0);
  CREATE TABLE ${schema}.memories (id text PRIMARY KEY, agent_id text, user_id text, session_id text, role text, kind text, tier text, content text NOT NULL,
    summary text, salience real, created_at bigint, last_used_at bigint, use_count int, turn int, source text, metadata text);
  CREATE TABLE ${schema}.embeddings (owner_type text NOT NULL, owner_id text NOT NULL, model text NOT NULL, dim int NOT NULL, vector ${vectorType === 'vector' ? `vector(${PG_DIM})` : vectorType} NOT NULL,
    PRIMARY KEY (owner_type, owner_id, model));
  CREATE TABLE ${schema}.recall_events (id text PRIMARY KEY, at bigint NOT NULL, agent_id text, user_id text, session_id text, turn int, query text, cue text, preset text, config text, results text);`
}

/** INSERTs of the set into canonical tables (one multi-row INSERT a table). */
export function canonicalInserts(schema: string, mems: FixtureMemory[], vectorType: 'vector' | 'real[]' = 'vector'): string {
  const sessions = [0, 1, 2, 3, 4].map((s) => [`'s${s}'`, "'agent-a'", "'user-1'", 'NULL', PG_T0, PG_T0 + 1000, `'session ${s}'`, 0])
  const memories = mems.map((m) => [
    pgText(m.id),
    pgText(m.agent),
    pgText(m.user),
    pgText(m.session),
    "'user'",
    pgText(m.kind),
    pgText(m.tier),
    pgText(m.content),
    'NULL',
    m.salience,
    m.createdAt,
    'NULL',
    0,
    'NULL',
    'NULL',
    'NULL',
  ])
  const embeddings = mems.flatMap((m) =>
    m.vector
      ? [
          [
            "'memory'",
            pgText(m.id),
            `'${PG_MODEL}'`,
            m.vector.length,
            vectorType === 'vector' ? pgVector(m.vector) : `ARRAY[${Array.from(m.vector).join(',')}]::real[]`,
          ],
        ]
      : [],
  )
  return [pgInsert(`${schema}.sessions`, sessions), pgInsert(`${schema}.memories`, memories), pgInsert(`${schema}.embeddings`, embeddings)].join('\n')
}

/** mem0's collection (DDL as in mem0ai's PGVector.createCol) holding the memories that have a vector. */
export function mem0Sql(schema: string, mems: FixtureMemory[], uuidOf: (i: number) => string): string {
  const rows = mems.flatMap((m, i) => {
    if (!m.vector) return []
    const payload = { data: m.content, hash: `h${i}`, user_id: m.user, agent_id: m.agent, run_id: m.session, created_at: new Date(m.createdAt).toISOString() }
    return [[`'${uuidOf(i)}'`, pgVector(m.vector), `${pgText(JSON.stringify(payload))}::jsonb`]]
  })
  return [
    `CREATE SCHEMA ${schema};`,
    `CREATE TABLE ${schema}.memories (id UUID PRIMARY KEY, vector vector(${PG_DIM}), payload JSONB);`,
    pgInsert(`${schema}.memories`, rows),
  ].join('\n')
}

/** A deterministic UUID per index. */
export function uuidOf(i: number): string {
  const h = i.toString(16).padStart(12, '0')
  return `00000000-0000-4000-8000-${h}`
}

/** Exact cosine (float64) of a query against each vector: the test's own ranking. */
export function cosineRanking(mems: FixtureMemory[], q: ArrayLike<number>, keep: (m: FixtureMemory) => boolean): { id: string; sim: number }[] {
  let qq = 0
  for (let i = 0; i < q.length; i++) qq += q[i] * q[i]
  const out: { id: string; sim: number }[] = []
  for (const m of mems) {
    if (!m.vector || !keep(m)) continue
    let dot = 0
    let vv = 0
    for (let i = 0; i < q.length; i++) {
      dot += m.vector[i] * q[i]
      vv += m.vector[i] * m.vector[i]
    }
    out.push({ id: m.id, sim: dot / Math.sqrt(qq * vv) })
  }
  return out.sort((a, b) => b.sim - a.sim || (a.id < b.id ? -1 : 1))
}

/** A dense pseudo-random query (seeded): its cosines against the sparse hashing vectors have no ties. */
export function randomQuery(seed: number, dim = PG_DIM): Float32Array {
  const r = rng(seed)
  const v = new Float32Array(dim)
  for (let i = 0; i < dim; i++) v[i] = r() * 2 - 1
  return v
}

/** LangGraph PostgresStore tables (DDL as in langgraph's store/postgres/base.py migrations) holding the set; namespace ('agent', 'user'). */
export function langgraphSql(schema: string, mems: FixtureMemory[]): string {
  const out = [
    `CREATE SCHEMA ${schema};`,
    `CREATE TABLE ${schema}.store (prefix text NOT NULL, key text NOT NULL, value jsonb NOT NULL, created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
       updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP, expires_at TIMESTAMP WITH TIME ZONE, ttl_minutes INT, PRIMARY KEY (prefix, key));`,
    `CREATE TABLE ${schema}.store_vectors (prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, embedding vector(${PG_DIM}),
       created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
       PRIMARY KEY (prefix, key, field_name), FOREIGN KEY (prefix, key) REFERENCES ${schema}.store(prefix, key) ON DELETE CASCADE);`,
  ]
  const prefix = (m: FixtureMemory) => pgText(`${m.agent}.${m.user}`)
  out.push(
    pgInsert(
      `${schema}.store (prefix, key, value, created_at)`,
      mems.map((m) => [prefix(m), pgText(m.id), `${pgText(JSON.stringify({ content: m.content }))}::jsonb`, `to_timestamp(${m.createdAt / 1000})`]),
    ),
    pgInsert(
      `${schema}.store_vectors (prefix, key, field_name, embedding)`,
      mems.flatMap((m) => (m.vector ? [[prefix(m), pgText(m.id), "'$'", pgVector(m.vector)]] : [])),
    ),
  )
  return out.join('\n')
}

/** Letta pads every embedding to this length on Postgres (letta/constants.py MAX_EMBEDDING_DIM). */
export const LETTA_PG_DIM = 4096

/**
 * A Letta V1 server's tables in Postgres, as SQLAlchemy creates them there from letta-ai/letta
 * @ 56ba9c25552605eec89de8ed3dc6394b625c1993 letta/orm (timestamptz, boolean, `json`, and
 * `archival_passages.embedding vector(4096)`), holding the same spec as the SQLite fixture
 * (test/helpers/frameworks/letta.ts buildLettaServer): each embedding zero-padded to 4096 as
 * passage_manager.py does, its model and own length in embedding_config.
 */
export function lettaPgSql(schema: string, spec: LettaServerSpec): string {
  const s = schema
  const common = `created_at TIMESTAMP WITH TIME ZONE DEFAULT now(), updated_at TIMESTAMP WITH TIME ZONE DEFAULT now(), is_deleted BOOLEAN DEFAULT FALSE NOT NULL,
    _created_by_id VARCHAR, _last_updated_by_id VARCHAR`
  const ts = (ms: number) => `to_timestamp(${ms / 1000})`
  const out = [
    `CREATE SCHEMA ${s};`,
    `CREATE TABLE ${s}.organizations (id VARCHAR NOT NULL PRIMARY KEY, name VARCHAR NOT NULL, privileged_tools BOOLEAN NOT NULL, ${common});`,
    `CREATE TABLE ${s}.agents (id VARCHAR NOT NULL PRIMARY KEY, agent_type VARCHAR, name VARCHAR, description VARCHAR, system VARCHAR, message_ids JSON,
       metadata_ JSON, llm_config JSON, embedding_config JSON, organization_id VARCHAR REFERENCES ${s}.organizations (id), project_id VARCHAR, ${common});`,
    `CREATE TABLE ${s}.block (id VARCHAR NOT NULL PRIMARY KEY, template_name VARCHAR, description VARCHAR, label VARCHAR NOT NULL, is_template BOOLEAN NOT NULL,
       preserve_on_migration BOOLEAN, value VARCHAR NOT NULL, "limit" INTEGER NOT NULL, metadata_ JSON, read_only BOOLEAN NOT NULL, hidden BOOLEAN,
       current_history_entry_id VARCHAR, version INTEGER DEFAULT 1 NOT NULL, organization_id VARCHAR REFERENCES ${s}.organizations (id), project_id VARCHAR, ${common});`,
    `CREATE TABLE ${s}.block_history (id VARCHAR NOT NULL PRIMARY KEY, description TEXT, label VARCHAR NOT NULL, value TEXT NOT NULL, "limit" BIGINT NOT NULL,
       metadata_ JSON, actor_type VARCHAR, actor_id VARCHAR, block_id VARCHAR NOT NULL REFERENCES ${s}.block (id) ON DELETE CASCADE,
       sequence_number INTEGER NOT NULL, organization_id VARCHAR REFERENCES ${s}.organizations (id), ${common});`,
    `CREATE TABLE ${s}.blocks_agents (agent_id VARCHAR NOT NULL REFERENCES ${s}.agents (id) ON DELETE CASCADE, block_id VARCHAR NOT NULL, block_label VARCHAR NOT NULL,
       PRIMARY KEY (agent_id, block_id, block_label));`,
    `CREATE TABLE ${s}.messages (id VARCHAR NOT NULL PRIMARY KEY, version INTEGER DEFAULT 1 NOT NULL, role VARCHAR NOT NULL, text VARCHAR, content JSON,
       model VARCHAR, name VARCHAR, tool_calls JSON NOT NULL, tool_call_id VARCHAR, step_id VARCHAR, run_id VARCHAR, otid VARCHAR, tool_returns JSON,
       group_id VARCHAR, sender_id VARCHAR, conversation_id VARCHAR, is_err BOOLEAN, sequence_id BIGSERIAL NOT NULL UNIQUE,
       organization_id VARCHAR REFERENCES ${s}.organizations (id), agent_id VARCHAR REFERENCES ${s}.agents (id) ON DELETE CASCADE, ${common});`,
    `CREATE TABLE ${s}.archives (id VARCHAR NOT NULL PRIMARY KEY, name VARCHAR NOT NULL, description VARCHAR, vector_db_provider VARCHAR NOT NULL,
       embedding_config JSON, metadata_ JSON, organization_id VARCHAR REFERENCES ${s}.organizations (id), ${common});`,
    `CREATE TABLE ${s}.archives_agents (agent_id VARCHAR NOT NULL REFERENCES ${s}.agents (id) ON DELETE CASCADE,
       archive_id VARCHAR NOT NULL REFERENCES ${s}.archives (id) ON DELETE CASCADE, created_at TIMESTAMP WITH TIME ZONE DEFAULT now() NOT NULL,
       is_owner BOOLEAN NOT NULL, PRIMARY KEY (agent_id, archive_id));`,
    `CREATE TABLE ${s}.archival_passages (id VARCHAR NOT NULL PRIMARY KEY, text VARCHAR NOT NULL, embedding_config JSON, metadata_ JSON NOT NULL, tags JSON,
       embedding vector(${LETTA_PG_DIM}), organization_id VARCHAR REFERENCES ${s}.organizations (id),
       archive_id VARCHAR NOT NULL REFERENCES ${s}.archives (id) ON DELETE CASCADE, ${common});`,
    `CREATE TABLE ${s}.passage_tags (id VARCHAR NOT NULL PRIMARY KEY, tag VARCHAR NOT NULL, passage_id VARCHAR NOT NULL REFERENCES ${s}.archival_passages (id) ON DELETE CASCADE,
       archive_id VARCHAR NOT NULL REFERENCES ${s}.archives (id) ON DELETE CASCADE, organization_id VARCHAR REFERENCES ${s}.organizations (id), ${common},
       CONSTRAINT uq_passage_tag UNIQUE (passage_id, tag));`,
    `INSERT INTO ${s}.organizations (id, name, privileged_tools) VALUES ('org-1', 'default', false);`,
  ]
  const archive = (agent: string) => pgText(`archive-${agent}`)
  const padded = (v: number[]) => {
    const out = new Float32Array(LETTA_PG_DIM)
    out.set(v)
    return pgVector(out)
  }
  const blocks = spec.blocks
  const passages = spec.passages
  out.push(
    pgInsert(
      `${s}.agents (id, name, agent_type, message_ids, organization_id)`,
      spec.agents.map((a) => [pgText(a.id), pgText(a.name), "'memgpt_v2_agent'", "'[]'", "'org-1'"]),
    ),
    pgInsert(
      `${s}.archives (id, name, vector_db_provider, organization_id)`,
      spec.agents.map((a) => [archive(a.id), pgText(`${a.name} archive`), "'native'", "'org-1'"]),
    ),
    pgInsert(
      `${s}.archives_agents (agent_id, archive_id, is_owner)`,
      spec.agents.map((a) => [pgText(a.id), archive(a.id), 'true']),
    ),
    pgInsert(
      `${s}.block (id, label, is_template, value, "limit", metadata_, read_only, organization_id, created_at, updated_at)`,
      blocks.map((b) => [
        pgText(b.id),
        pgText(b.label),
        b.isTemplate ? 'true' : 'false',
        pgText(b.value),
        20000,
        "'{}'",
        'false',
        "'org-1'",
        ts(b.createdAt),
        ts(b.createdAt),
      ]),
    ),
    pgInsert(
      `${s}.blocks_agents (agent_id, block_id, block_label)`,
      blocks.map((b) => [pgText(b.agent), pgText(b.id), pgText(b.label)]),
    ),
    pgInsert(
      `${s}.block_history (id, label, value, "limit", actor_type, block_id, sequence_number, organization_id, created_at)`,
      blocks.flatMap((b) =>
        (b.history ?? []).map((h, i) => [
          pgText(`block_hist-${b.id}-${i}`),
          pgText(b.label),
          pgText(h.value),
          20000,
          pgText(h.actor),
          pgText(b.id),
          i + 1,
          "'org-1'",
          ts(h.at),
        ]),
      ),
    ),
    pgInsert(
      `${s}.archival_passages (id, text, embedding_config, metadata_, tags, embedding, organization_id, archive_id, created_at, is_deleted)`,
      passages.map((p) => [
        pgText(p.id),
        pgText(p.text),
        p.model ? pgText(JSON.stringify({ embedding_model: p.model, embedding_endpoint_type: 'openai', embedding_dim: p.embedding?.length ?? 0 })) : 'NULL',
        "'{}'",
        p.tags ? pgText(JSON.stringify(p.tags)) : 'NULL',
        p.embedding ? padded(p.embedding) : 'NULL',
        "'org-1'",
        archive(p.agent),
        ts(p.createdAt),
        p.deleted ? 'true' : 'false',
      ]),
    ),
    pgInsert(
      `${s}.passage_tags (id, tag, passage_id, archive_id, organization_id)`,
      passages.flatMap((p) => (p.tags ?? []).map((t) => [pgText(`pt-${p.id}-${t}`), pgText(t), pgText(p.id), archive(p.agent), "'org-1'"])),
    ),
    pgInsert(
      `${s}.messages (id, role, text, content, tool_calls, sequence_id, conversation_id, organization_id, agent_id, created_at)`,
      spec.messages.map((m) => [
        pgText(m.id),
        pgText(m.role),
        pgText(m.text ?? null),
        pgText(JSON.stringify((m.parts ?? []).map((t) => ({ type: 'text', text: t })))),
        "'[]'",
        m.seq,
        pgText(m.conversation ?? null),
        "'org-1'",
        pgText(m.agent),
        ts(m.createdAt),
      ]),
    ),
  )
  return out.join('\n')
}
