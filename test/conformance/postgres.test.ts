/**
 * The conformance spec (spec.ts) run against Postgres (PGlite + pgvector on a loopback port): the
 * canonical tables with pgvector `vector` (no fixed length, so a vector of another length can be
 * stored) and with `real[]` (which can also hold a NaN). A server has no file to hash: its
 * read-only session is proven in test/postgres.test.ts (only reads reach the server).
 */
import { afterAll, beforeAll } from 'vitest'
import { openStore } from '../../src/main/store/registry'
import { pgInsert, pgText, startPgServer, type PgTestServer } from '../helpers/pgServer'
import { describeSourceConformance, type ConfContent } from './spec'

let srv: PgTestServer
beforeAll(async () => {
  srv = await startPgServer()
}, 180_000)
afterAll(async () => {
  await srv?.stop()
})

/** Canonical tables in `schema`, filled with the content; NaN written as the 'NaN' literal. */
function canonicalSql(schema: string, content: ConfContent, vectorType: 'vector' | 'real[]', withNan: boolean): string {
  const lit = (v: number[]) =>
    vectorType === 'vector' ? `'[${v.join(',')}]'` : `ARRAY[${v.map((x) => (Number.isNaN(x) ? `'NaN'::real` : String(x))).join(',')}]::real[]`
  const out = [
    `CREATE SCHEMA ${schema};`,
    `CREATE TABLE ${schema}.sessions (id text PRIMARY KEY, agent_id text, user_id text, tenant_id text, started_at bigint, ended_at bigint, summary text, is_archived int NOT NULL DEFAULT 0);`,
    `CREATE TABLE ${schema}.memories (id text PRIMARY KEY, agent_id text, user_id text, session_id text, role text, kind text, tier text, content text NOT NULL,
      summary text, salience real, created_at bigint, last_used_at bigint, use_count int, turn int, source text, metadata text);`,
    `CREATE TABLE ${schema}.embeddings (owner_type text NOT NULL, owner_id text NOT NULL, model text NOT NULL, dim int NOT NULL, vector ${vectorType} NOT NULL,
      PRIMARY KEY (owner_type, owner_id, model));`,
    `CREATE TABLE ${schema}.recall_events (id text PRIMARY KEY, at bigint NOT NULL, agent_id text, user_id text, session_id text, turn int, query text, cue text, preset text, config text, results text);`,
  ]
  const rows = [...content.memories, ...content.bad.filter((b) => withNan || b.problem !== 'nan')]
  // canonical sessions are rows of their own table
  out.push(
    pgInsert(
      `${schema}.sessions (id)`,
      [...new Set(rows.map((m) => m.session))].map((id) => [pgText(id)]),
    ),
    pgInsert(
      `${schema}.memories`,
      rows.map((m) => [
        pgText(m.id),
        pgText(m.agent),
        pgText(m.user),
        pgText(m.session),
        "'user'",
        "'episodic'",
        "'working'",
        pgText(m.content),
        'NULL',
        0.5,
        m.createdAt,
        'NULL',
        0,
        'NULL',
        'NULL',
        'NULL',
      ]),
    ),
    pgInsert(
      `${schema}.embeddings`,
      rows.flatMap((m) => (m.vector ? [["'memory'", pgText(m.id), "'conf-model'", m.vector.length, lit(m.vector)]] : [])),
    ),
  )
  return out.join('\n')
}

describeSourceConformance('Postgres canonical (pgvector vector)', async (_dir, content) => {
  await srv.seed(canonicalSql('conf_vec', content, 'vector', false))
  return {
    open: (workspacePath) => openStore({ path: `${srv.url}&schema=conf_vec`, workspacePath }),
    files: [],
    // pgvector refuses NaN in a vector: only the other-length row can be stored
    carries: { agent: true, user: true, vectors: true, malformed: ['wrongDimension'], session: true, times: true },
  }
})

describeSourceConformance('Postgres canonical (real[] vectors)', async (_dir, content) => {
  await srv.seed(canonicalSql('conf_arr', content, 'real[]', true))
  return {
    open: (workspacePath) => openStore({ path: `${srv.url}&schema=conf_arr`, workspacePath }),
    files: [],
    carries: { agent: true, user: true, vectors: true, malformed: ['wrongDimension', 'nan'], session: true, times: true },
  }
})
