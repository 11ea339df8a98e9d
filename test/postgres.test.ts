/**
 * The Postgres source over the real wire: PGlite + pgvector served on a
 * loopback port (test/helpers/pgServer.ts), the same memory set loaded into a
 * canonical SQLite file and into Postgres (canonical schema and a mem0
 * collection). Expectations come from the test's own cosine computation, from
 * Postgres queried directly, or from the SQLite engine on the same data.
 */
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashEmbed } from '../src/main/embed/hashing'
import { runEval } from '../src/main/eval/evaluate'
import { backfillEmbeddings } from '../src/main/embed/backfill'
import type { Embedder } from '../src/main/embed/types'
import { saveCase } from '../src/main/eval/cases'
import { runRecall } from '../src/main/recall/engine'
import { main } from '../src/main/cli/index'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher } from '../src/main/api/register'
import fs from 'node:fs'
import { openSource, openStore } from '../src/main/store/registry'
import { PgSource } from '../src/main/store/postgres/source'
import type { SqliteSource } from '../src/main/store/sqlite/source'
import { getPreset } from '../src/shared/presets'
import { RecallscopeError } from '../src/shared/result'
import type { RecallConfig, RecallTrace } from '../src/shared/types'
import {
  canonicalDdl,
  canonicalInserts,
  cosineRanking,
  langgraphSql,
  LETTA_PG_DIM,
  lettaPgSql,
  makeMemories,
  mem0Sql,
  PG_DIM,
  PG_MODEL,
  PG_T0,
  randomQuery,
  uuidOf,
  writeSqlite,
  type FixtureMemory,
} from './helpers/pgFixture'
import { buildLettaServer, type LettaServerSpec } from './helpers/frameworks/letta'
import { pgVector, startPgServer, type PgTestServer } from './helpers/pgServer'
import { cosine } from './helpers/mappedFixture'
import { tmpDir } from './helpers/tmp'
import { normalizeMatchText } from '../src/main/store/textMatch'

const N = 400
const NOW = PG_T0 + 30 * 86_400_000
let srv: PgTestServer
let t: ReturnType<typeof tmpDir>
let mems: FixtureMemory[]
let lite: SqliteSource
let pgs: PgSource

const url = (params: string) => `${srv.url}&${params}`
const ws = (name: string) => path.join(t.dir, `${name}.recallscope`)

function denseConfig(extra: Partial<RecallConfig> = {}): RecallConfig {
  const base = getPreset('fieldguide').config
  return { ...base, mode: 'dense', topK: 30, candidatePool: 100, minSimilarity: null, ...extra }
}

/** The trace's dense ranking (denseRank 1…n). */
function denseRanking(tr: RecallTrace): { id: string; sim: number | null }[] {
  return tr.candidates
    .filter((c) => c.denseRank !== null)
    .sort((a, b) => a.denseRank! - b.denseRank!)
    .map((c) => ({ id: c.id, sim: c.similarity }))
}

/**
 * A ranking equals the independent one up to exact ties: at every rank, the returned id's own cosine
 * equals the expected cosine at that rank (float32 storage makes equal-within-1e-6 cosines a tie).
 */
function expectRankingUpToTies(got: string[], want: { id: string; sim: number }[]): void {
  const sim = new Map(want.map((x) => [x.id, x.sim]))
  expect(got.length).toBe(Math.min(want.length, got.length))
  got.forEach((id, i) => {
    expect(sim.has(id)).toBe(true)
    expect(Math.abs(sim.get(id)! - want[i].sim)).toBeLessThan(1e-6)
  })
}

function expectCode(f: () => unknown, code: string): RecallscopeError {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(RecallscopeError)
    expect((e as RecallscopeError).code).toBe(code)
    return e as RecallscopeError
  }
  throw new Error(`expected ${code}, nothing was thrown`)
}

beforeAll(async () => {
  t = tmpDir()
  mems = makeMemories(N)
  lite = openSource({ path: writeSqlite(path.join(t.dir, 'same.db'), mems), workspacePath: ws('lite') })
  srv = await startPgServer()
  await srv.seed(`${canonicalDdl('canon')} ${canonicalInserts('canon', mems)}`)
  await srv.seed(mem0Sql('mem0', mems, uuidOf))
  await srv.seed(langgraphSql('lg', mems))
  await srv.seed(`${canonicalDdl('arr', 'real[]')} ${canonicalInserts('arr', mems, 'real[]')}`)
  await srv.seed(
    `${canonicalDdl('sess')} ${canonicalInserts('sess', mems)} ` +
      [0, 1, 2, 3, 4].map((k) => `INSERT INTO sess.embeddings VALUES ('session', 's${k}', '${PG_MODEL}', 256, ${pgVector(sessionVector(k))});`).join('\n'),
  )
  await srv.seed(`CREATE SCHEMA odd; CREATE TABLE odd.memories (id text, body text);`)
  await srv.clearLog()
  pgs = openStore({ path: url('schema=canon'), workspacePath: ws('canon') }) as PgSource
}, 180_000)

afterAll(async () => {
  pgs?.close()
  lite?.close()
  await srv?.stop()
  t?.cleanup()
})

describe('opening a canonical store in Postgres', () => {
  it('detects the layout from information_schema and never shows the password', () => {
    expect(pgs).toBeInstanceOf(PgSource)
    expect(pgs.layout).toBe('canonical')
    expect(pgs.path).not.toContain('secret-pw')
    expect(pgs.path).toMatch(/^postgres:\/\/recallscope_test@127\.0\.0\.1:\d+\/postgres/)
    const caps = pgs.capabilities()
    expect(caps.pushdown).not.toBeNull()
    expect(caps.readOnly).toBe(true)
    expect(caps.vectorModels).toEqual([{ ownerType: 'memory', model: PG_MODEL, dim: 256 }])
    const f = pgs.facts()
    expect(f.counts.memories).toBe(N)
    expect(f.counts.embeddings).toBe(mems.filter((m) => m.vector).length)
    expect(f.counts.sessions).toBe(5)
    expect(f.byAgent).toEqual(lite.facts().byAgent)
    expect(f.byKind).toEqual(lite.facts().byKind)
    expect(f.timeRange).toEqual({ min: PG_T0, max: PG_T0 + (N - 1) * 60_000 })
    expect(JSON.stringify(f)).not.toContain('secret-pw')
  })

  it('the app (store.open, recent files) keeps the URL without its password, and reopening it works', () => {
    const app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'apphome') })
    try {
      const info = app.open(url('schema=canon'))
      expect(info.layout).toBe('canonical')
      expect(info.path).not.toContain('secret-pw')
      expect(info.workspacePath.startsWith(path.join(t.dir, 'apphome', 'workspaces'))).toBe(true)
      const recent = app.recent()
      expect(recent[0]).toMatchObject({ path: info.path, exists: true, layout: 'canonical' })
      expect(fs.readFileSync(path.join(t.dir, 'apphome', 'settings.json'), 'utf8')).not.toContain('secret-pw')
      // the shown URL keeps ?schema=, so the recent entry reopens the same store (the password then comes from PGPASSWORD / .pgpass)
      expect(app.open(recent[0].path).memories).toBe(N)
    } finally {
      app.close()
    }
  })

  it('browses: pages (keyset after the first) and filters equal the SQLite store', () => {
    const q = { limit: 50, agentId: 'agent-a' }
    for (const offset of [0, 50, 100]) {
      const a = pgs.memoriesPage({ ...q, offset })
      const b = lite.memoriesPage({ ...q, offset })
      expect(a.rows.map((r) => r.id)).toEqual(b.rows.map((r) => r.id))
      expect(a.total).toBe(b.total)
      expect(a.rows.map((r) => r.hasEmbedding)).toEqual(b.rows.map((r) => r.hasEmbedding))
    }
    expect(pgs.facets().agents).toEqual(['agent-a', 'agent-b'])
    const s = pgs.sessionsPage({ limit: 10 })
    expect(s.rows.map((r) => r.id).sort()).toEqual(['s0', 's1', 's2', 's3', 's4'])
    expect(s.rows.find((r) => r.id === 's0')!.memoryCount).toBe(mems.filter((m) => m.session === 's0').length)
  })

  it('caps counts with truncated', () => {
    const capped = openStore({ path: url('schema=canon'), workspacePath: ws('capped'), countCap: 100 })
    try {
      const p = capped.memoriesPage({ limit: 10 })
      expect(p).toMatchObject({ total: 100, truncated: true })
      expect(capped.countWhere({ userId: 'user-1' })).toEqual({ total: 100, truncated: true })
      expect(capped.countWhere({ userId: 'user-1', agentId: 'agent-b', kinds: ['semantic'] })).toEqual({
        total: mems.filter((m) => m.user === 'user-1' && m.agent === 'agent-b' && m.kind === 'semantic').length,
        truncated: false,
      })
    } finally {
      capped.close()
    }
  })

  it('full-text search in the browser finds exactly the rows with the word', () => {
    const p = pgs.memoriesPage({ search: 'dentist', limit: 500 })
    const want = mems.filter((m) => /\bdentist\b/.test(m.content)).map((m) => m.id)
    expect(p.rows.map((r) => r.id).sort()).toEqual(want.sort())
    expect(p.total).toBe(want.length)
  })
})

describe('recall pushed down to Postgres', () => {
  const scopeOk = (m: FixtureMemory) => m.tier === 'working' || m.tier === 'long_term'

  it('exact dense top-30 equals an independent cosine ranking and the SQLite engine', async () => {
    const qv = randomQuery(11)
    const cfg = denseConfig()
    const tr = await runRecall(pgs, 'coffee in paris with my sister', cfg, NOW, { queryVector: qv })
    const want = cosineRanking(mems, qv, scopeOk).slice(0, 100)
    const got = denseRanking(tr)
    expect(got.map((x) => x.id)).toEqual(want.map((x) => x.id))
    got.forEach((x, i) => expect(x.sim!).toBeCloseTo(want[i].sim, 5))
    expect(tr.arms!.dense.pushdown).toEqual({ kind: 'exact' })
    const sq = await runRecall(lite, 'coffee in paris with my sister', cfg, NOW, { queryVector: qv })
    expect(denseRanking(sq).map((x) => x.id)).toEqual(got.map((x) => x.id))
    expect(sq.arms!.dense.pushdown).toBeUndefined()
    expect(tr.results.slice(0, 30).map((r) => r.id)).toEqual(sq.results.slice(0, 30).map((r) => r.id))
  })

  it('scope filters become WHERE clauses (agent, kind, time)', async () => {
    const qv = randomQuery(13)
    const cfg = denseConfig({ scope: { ...getPreset('fieldguide').config.scope, agentId: 'agent-b', kinds: ['semantic'], before: PG_T0 + 200 * 60_000 } })
    const tr = await runRecall(pgs, 'guitar museum budget', cfg, NOW, { queryVector: qv })
    const want = cosineRanking(mems, qv, (m) => scopeOk(m) && m.agent === 'agent-b' && m.kind === 'semantic' && m.createdAt <= PG_T0 + 200 * 60_000)
    expect(denseRanking(tr).map((x) => x.id)).toEqual(want.map((x) => x.id))
    expect(tr.arms!.dense.exhausted).toBe(true)
  })

  it('hybrid: lexical bm25 is −ts_rank_cd (checked against Postgres directly) and lexical-only hits get their cosine', async () => {
    const text = 'dentist invoice'
    const qv = hashEmbed('marathon piano')
    const cfg = { ...getPreset('fieldguide').config, mode: 'hybrid', candidatePool: 100, topK: 10 } as RecallConfig
    const tr = await runRecall(pgs, text, cfg, NOW, { queryVector: qv })
    expect(tr.arms!.lexical.ran).toBe(true)
    const lex = tr.candidates.filter((c) => c.lexicalRank !== null)
    expect(lex.length).toBeGreaterThan(0)
    const direct = await srv.query<{ id: string; r: number }>(
      `SELECT id, ts_rank_cd(to_tsvector('english', content || ' '), websearch_to_tsquery('english', $1))::float8 AS r FROM canon.memories
       WHERE to_tsvector('english', content || ' ') @@ websearch_to_tsquery('english', $1) AND tier IN ('working', 'long_term')`,
      [text],
    )
    const byId = new Map(direct.map((r) => [r.id, r.r]))
    expect(lex.length).toBe(Math.min(byId.size, 100))
    for (const c of lex) expect(c.bm25).toBeCloseTo(-byId.get(c.id)!, 6)
    const cos = new Map(cosineRanking(mems, qv, () => true).map((x) => [x.id, x.sim]))
    for (const c of tr.candidates) {
      if (cos.has(c.id)) expect(c.similarity!).toBeCloseTo(cos.get(c.id)!, 5)
      else expect(c.similarity).toBeNull()
    }
    expect(tr.results.length).toBeGreaterThan(0)
    expect(tr.results[0]).toHaveProperty('contributions')
  })

  it('eval runs on Postgres and scores the same as on SQLite in dense mode', async () => {
    for (const s of [pgs, lite]) {
      for (const [i, q] of ['coffee paris', 'dentist allergy', 'piano museum'].entries()) {
        const top = cosineRanking(mems, hashEmbed(q), scopeOk)[0].id
        saveCase(s.workspace, { id: `c${i}`, query: q, now: NOW, relevant: [{ id: top, grade: 1 }] }, 1)
      }
    }
    const req = { preset: 'fieldguide' as const, config: { mode: 'dense' as const }, k: 5, embedder: 'hashing', now: NOW, createdAt: 1 }
    await srv.clearLog()
    const a = await runEval(pgs, req)
    const b = await runEval(lite, req)
    // the eval's dense arm ran in the database too (no vector index loaded over the wire)
    const sent = await srv.statements()
    expect(sent.some((q) => /ORDER BY d\.dist ASC/.test(q))).toBe(true)
    expect(sent.some((q) => /ORDER BY e\.owner_id LIMIT 20000/.test(q))).toBe(false)
    expect(a.perCase.map((c) => c.retrieved)).toEqual(b.perCase.map((c) => c.retrieved))
    expect(a.metrics).toEqual(b.metrics)
    expect(a.perCase.every((c) => c.retrieved.length > 0)).toBe(true)
  })
})

describe('read-only on the wire', () => {
  it('only SELECT, SET and SHOW statements reach the server (logged by the proxy, not by our code)', async () => {
    await srv.clearLog()
    const s = openStore({ path: url('schema=canon'), workspacePath: ws('proof') })
    try {
      s.facts()
      s.facets()
      s.memoriesPage({ limit: 20 })
      s.memoriesPage({ limit: 20, offset: 20 })
      s.memoriesPage({ search: 'garden', limit: 20 })
      s.sessionsPage({})
      s.getMemory('m00001')
      s.eventsPage({})
      s.ageHistogram({}, NOW, 'last_used')
      await runRecall(s, 'garden recipe', { ...getPreset('fieldguide').config, mode: 'hybrid' }, NOW, { queryVector: hashEmbed('garden recipe') })
      saveCase(s.workspace, { id: 'p1', query: 'garden', now: NOW, relevant: [{ id: 'm00001', grade: 1 }] }, 1)
      await runEval(s, { preset: 'fieldguide', k: 5, embedder: 'hashing', now: NOW, createdAt: 1 })
    } finally {
      s.close()
    }
    const sent = await srv.statements()
    expect(sent.length).toBeGreaterThan(20)
    const bad = sent.filter((q) => !/^[\s(]*(SELECT|SET|SHOW)\b/i.test(q))
    expect(bad).toEqual([])
    expect(sent).toContain('SET default_transaction_read_only = on')
    expect(sent.some((q) => /^SET statement_timeout = \d+$/.test(q))).toBe(true)
    expect(sent.some((q) => /ORDER BY d\.dist ASC/.test(q))).toBe(true) // the dense arm ran in the database
  })

  it('the session itself refuses writes (READ_ONLY), so a bug could not write either', () => {
    expectCode(() => pgs.bridge.query('CREATE TABLE canon.nope (a int)'), 'READ_ONLY')
    expectCode(() => pgs.applyRefresh(), 'READ_ONLY')
    expectCode(() => openStore({ path: url('schema=canon'), write: true }), 'BAD_INPUT')
  })
})

describe('the mem0 pgvector collection', () => {
  it('opens as mem0 and recalls with the same dense ranking as an independent cosine', async () => {
    const s = openStore({ path: url('schema=mem0'), workspacePath: ws('mem0') })
    try {
      expect(s.layout).toBe('mem0')
      const withVec = mems.filter((m) => m.vector)
      expect(s.counts().memories).toBe(withVec.length)
      const m5 = s.getMemory(uuidOf(5))!
      expect(m5).toMatchObject({
        content: mems[5].content,
        userId: mems[5].user,
        agentId: mems[5].agent,
        sessionId: mems[5].session,
        createdAt: mems[5].createdAt,
      })
      const model = s.capabilities().vectorModels[0].model
      expect(model).toBe('mem0:memories')
      const qv = randomQuery(12)
      // mem0 rows carry no tier: scope every tier, including none
      const cfg = denseConfig({ scope: { tiers: ['working', 'long_term', '(none)'] } })
      const tr = await runRecall(s, 'flight allergy', cfg, NOW, { queryVector: qv })
      const uuid = new Map(mems.map((m, i) => [m.id, uuidOf(i)]))
      const want = cosineRanking(mems, qv, () => true)
        .slice(0, 100)
        .map((x) => uuid.get(x.id))
      expect(denseRanking(tr).map((x) => x.id)).toEqual(want)
      expect(tr.arms!.dense.pushdown).toEqual({ kind: 'exact' })
    } finally {
      s.close()
    }
  })
})

describe('vectors stored as real[]', () => {
  it('with pgvector installed, the dense arm is still pushed down (cast to vector) and exact', async () => {
    const s = openStore({ path: url('schema=arr'), workspacePath: ws('arr') })
    try {
      expect(s.capabilities().pushdown).not.toBeNull()
      const qv = randomQuery(15)
      const tr = await runRecall(s, 'q', denseConfig(), NOW, { queryVector: qv })
      expect(denseRanking(tr).map((x) => x.id)).toEqual(
        cosineRanking(mems, qv, scopeOkAll)
          .slice(0, 100)
          .map((x) => x.id),
      )
      expect(tr.arms!.dense.pushdown).toEqual({ kind: 'exact' })
    } finally {
      s.close()
    }
  })
})

describe('session units', () => {
  it('sessions rank by their summary vectors, cosine computed in the database', async () => {
    const s = openStore({ path: url('schema=sess'), workspacePath: ws('sess') })
    try {
      const qv = randomQuery(17)
      const cfg = { ...denseConfig(), unit: 'session', topK: 5 } as RecallConfig
      const tr = await runRecall(s, 'q', cfg, NOW, { queryVector: qv })
      const cos = (v: Float32Array) => {
        let d = 0
        let a = 0
        let b = 0
        for (let i = 0; i < v.length; i++) {
          d += v[i] * qv[i]
          a += v[i] * v[i]
          b += qv[i] * qv[i]
        }
        return d / Math.sqrt(a * b)
      }
      const want = [0, 1, 2, 3, 4].map((k) => ({ id: `s${k}`, sim: cos(sessionVector(k)) })).sort((x, y) => y.sim - x.sim)
      const got = denseRanking(tr)
      expect(got.map((x) => x.id)).toEqual(want.map((x) => x.id))
      got.forEach((x, i) => expect(x.sim!).toBeCloseTo(want[i].sim, 5))
    } finally {
      s.close()
    }
  })
})

describe('a LangGraph PostgresStore', () => {
  it('opens as langgraph: namespace → agent/user, value.content → text, store_vectors → dense recall in the database', async () => {
    const s = openStore({ path: url('schema=lg'), workspacePath: ws('lg') })
    try {
      expect(s.layout).toBe('langgraph')
      expect(s.counts().memories).toBe(N)
      expect(s.getMemory(`${mems[7].agent}.${mems[7].user}:${mems[7].id}`)).toMatchObject({
        content: mems[7].content,
        agentId: mems[7].agent,
        userId: mems[7].user,
        createdAt: mems[7].createdAt,
      })
      expect(s.capabilities().vectorModels).toEqual([{ ownerType: 'memory', model: 'langgraph:$', dim: 256 }])
      const qv = randomQuery(14)
      const tr = await runRecall(s, 'q', denseConfig({ scope: { tiers: ['(none)'], userId: 'user-2' } }), NOW, { queryVector: qv })
      const key = new Map(mems.map((m) => [m.id, `${m.agent}.${m.user}:${m.id}`]))
      const want = cosineRanking(mems, qv, (m) => m.user === 'user-2')
        .slice(0, 100)
        .map((x) => key.get(x.id))
      expect(denseRanking(tr).map((x) => x.id)).toEqual(want)
      expect(tr.arms!.dense.pushdown).toEqual({ kind: 'exact' })
    } finally {
      s.close()
    }
  })
})

describe("Letta V1's Postgres tables", () => {
  /** The same Letta store as the SQLite fixture builds it: passages with the fixture's vectors, pinned blocks, turns. */
  function lettaSpec(): LettaServerSpec {
    const some = mems.slice(0, 120)
    return {
      agents: [
        { id: 'agent-a', name: 'Ada' },
        { id: 'agent-b', name: 'Bo' },
      ],
      blocks: [
        {
          id: 'block-persona',
          agent: 'agent-a',
          label: 'persona',
          value: 'I am Ada, a careful assistant.',
          createdAt: PG_T0,
          history: [
            { value: 'I am Ada.', at: PG_T0, actor: 'user' },
            { value: 'I am Ada, a careful assistant.', at: PG_T0 + 60_000, actor: 'letta_agent' },
          ],
        },
        { id: 'block-human', agent: 'agent-b', label: 'human', value: 'The user plays the piano.', createdAt: PG_T0 + 1000 },
        { id: 'block-tpl', agent: 'agent-a', label: 'template', value: 'a template block', createdAt: PG_T0, isTemplate: true },
      ],
      passages: some.map((m, i) => ({
        id: `passage-${m.id}`,
        agent: m.agent,
        text: m.content,
        createdAt: m.createdAt,
        tags: i % 3 === 0 ? ['fixture', m.kind] : undefined,
        embedding: m.vector ? Array.from(m.vector) : null,
        model: PG_MODEL,
        deleted: i % 17 === 16,
      })),
      messages: some.slice(0, 30).map((m, i) => ({
        id: `message-${m.id}`,
        agent: m.agent,
        role: i % 2 ? 'assistant' : 'user',
        text: i % 4 === 0 ? null : m.content,
        parts: i % 4 === 0 ? [`part one of ${m.id}`, `part two of ${m.id}`] : undefined,
        createdAt: m.createdAt + 1,
        seq: i + 1,
        conversation: i % 5 === 0 ? 'conv-1' : null,
      })),
    }
  }

  /** A memory with JSON booleans and SQLite's 0/1 read alike (SQLite has no boolean type). */
  const normal = (m: unknown) => JSON.parse(JSON.stringify(m, (_k, v: unknown) => (v === true ? 1 : v === false ? 0 : v))) as unknown

  it('opens as letta: every memory equals the SQLite Letta reader on the same data; dense recall exact over the 4096-padded column', async () => {
    const spec = lettaSpec()
    await srv.seed(lettaPgSql('letta', spec))
    const lite = openSource({ path: buildLettaServer(fs.mkdtempSync(path.join(t.dir, 'letta-')), spec), workspacePath: ws('letta-lite') })
    const s = openStore({ path: url('schema=letta'), workspacePath: ws('letta') }) as PgSource
    try {
      expect(s.layout).toBe('letta')
      expect(s.detectedBecause).toContain('archival_passages')
      // The stored column really is 4096 wide (asked of Postgres directly).
      const dims = await srv.query<{ d: number }>(`SELECT DISTINCT vector_dims(embedding) AS d FROM letta.archival_passages WHERE embedding IS NOT NULL`)
      expect(dims.map((r) => Number(r.d))).toEqual([LETTA_PG_DIM])
      const live = spec.passages.filter((p) => !p.deleted)
      expect(s.counts().memories).toBe(live.length + 2 + spec.messages.length)
      // Same ids, same canonical rows as the SQLite reader (one mapping, two dialects).
      const ids = lite.idsWhere({}).sort()
      expect(s.idsWhere({}).sort()).toEqual(ids)
      const a = lite.getMemories(ids)
      const b = s.getMemories(ids)
      for (const id of ids) expect(normal(b.get(id)), id).toEqual(normal(a.get(id)))
      // The mapping itself, spelled out for a few rows.
      expect(s.getMemory('block-persona')).toMatchObject({ tier: 'working', summary: 'persona', agentId: 'agent-a', source: 'letta-core' })
      expect((s.getMemory('block-persona')!.metadata as { history: { value: string }[] }).history.map((h) => h.value)).toEqual([
        'I am Ada.',
        'I am Ada, a careful assistant.',
      ])
      expect(s.getMemory('block-tpl')).toBeNull()
      expect(s.getMemory(`message-${mems[0].id}`)).toMatchObject({
        content: `part one of ${mems[0].id}\npart two of ${mems[0].id}`,
        sessionId: 'conv-1',
        turn: 1,
      })
      // Vectors: the model's own length (256), not the padded 4096.
      const withVec = live.filter((p) => p.embedding)
      expect(s.capabilities().vectorModels).toEqual([{ ownerType: 'memory', model: PG_MODEL, dim: PG_DIM }])
      expect(s.vectorModels()[0]).toMatchObject({ count: withVec.length, malformed: 0 })
      expect(s.vectorInfo(withVec[0].id)[0]).toMatchObject({ model: PG_MODEL, dim: PG_DIM, problem: null })
      // Dense recall pushed down: the query is padded with zeros, the ranking is the test's own cosine over the 256 dims.
      const qv = randomQuery(31)
      await srv.clearLog()
      const tr = await runRecall(s, 'q', denseConfig({ scope: { tiers: ['long_term'] }, candidatePool: 50 }), NOW, { queryVector: qv })
      expect(tr.arms!.dense.pushdown).toEqual({ kind: 'exact' })
      const want = withVec.map((p) => ({ id: p.id, sim: cosine(p.embedding!, qv) })).sort((x, y) => y.sim - x.sim || (x.id < y.id ? -1 : 1))
      expect(denseRanking(tr).length).toBeGreaterThanOrEqual(50)
      expectRankingUpToTies(
        denseRanking(tr).map((x) => x.id),
        want,
      )
      for (const c of denseRanking(tr)) expect(Math.abs(c.sim! - want.find((w) => w.id === c.id)!.sim)).toBeLessThan(1e-5)
      const sent = await srv.statements()
      expect(sent.some((q) => /ORDER BY d\.dist ASC/.test(q))).toBe(true)
      expect(sent.some((q) => /ORDER BY e\.owner_id LIMIT 20000/.test(q))).toBe(false) // no vector crossed the wire
      // And the SQLite Letta reader ranks the same (its vectors are unpadded BLOBs).
      const trLite = await runRecall(lite, 'q', denseConfig({ scope: { tiers: ['long_term'] }, candidatePool: 50 }), NOW, { queryVector: qv })
      expect(denseRanking(tr).map((x) => x.id)).toEqual(denseRanking(trLite).map((x) => x.id))
      // Loaded over the wire (the engine's scan path), vectors come back cut to 256.
      expect(s.vectors(PG_MODEL).dim).toBe(PG_DIM)
      expect(s.vectors(PG_MODEL).count).toBe(withVec.length)
    } finally {
      s.close()
      lite.close()
    }
  })
})

describe('backfilled vectors (the workspace) in the pushed-down dense arm', () => {
  /** Deterministic vectors for the workspace, independent of the server's. */
  const wsVec = (seed: number, dim: number) => randomQuery(1000 + seed, dim)

  it('a model only the workspace has: the dense arm scans it here, in scope, exact', async () => {
    const s = openStore({ path: url('schema=canon'), workspacePath: ws('bf-only') }) as PgSource
    try {
      const MODEL = 'backfill-test:32'
      const rows = mems.filter((_, i) => i % 3 !== 0).map((m, i) => ({ id: m.id, vector: wsVec(i, 32) }))
      s.workspace.putVectors('memory', MODEL, rows, 'test', 0)
      expect(s.vectorModels().find((m) => m.model === MODEL)).toMatchObject({ count: 0, backfilled: rows.length, dim: 32 })
      expect(s.capabilities().vectorModels).toContainEqual({ ownerType: 'memory', model: MODEL, dim: 32 })
      const qv = randomQuery(77, 32)
      const byId = new Map(mems.map((m) => [m.id, m]))
      const tr = await runRecall(s, 'q', denseConfig({ model: MODEL, scope: { tiers: ['working', 'long_term'], agentId: 'agent-a' } }), NOW, {
        queryVector: qv,
      })
      expect(tr.arms!.dense.ran).toBe(true)
      const want = rows
        .filter((r) => byId.get(r.id)!.agent === 'agent-a')
        .map((r) => ({ id: r.id, sim: cosine(r.vector, qv) }))
        .sort((a, b) => b.sim - a.sim || (a.id < b.id ? -1 : 1))
      const got = denseRanking(tr)
      expect(got.length).toBe(Math.min(want.length, got.length))
      expect(got.length).toBeGreaterThanOrEqual(30)
      expectRankingUpToTies(
        got.map((x) => x.id),
        want,
      )
      for (const c of got) expect(Math.abs(c.sim! - want.find((w) => w.id === c.id)!.sim)).toBeLessThan(1e-6)
    } finally {
      s.close()
    }
  })

  it('the real backfill writes to the workspace, a rerun skips what it wrote, and recall uses it (the server is never written)', async () => {
    const s = openStore({ path: url('schema=canon'), workspacePath: ws('bf-real') }) as PgSource
    try {
      let embedded = 0
      const embedder = {
        name: 'test',
        model: 'bf-real-16',
        enabled: true,
        cacheable: false,
        embed: (texts: string[]) => {
          embedded += texts.length
          return Promise.resolve(texts.map((x) => hashEmbed(x, 16)))
        },
        health: () => Promise.resolve({ ok: true, model: 'bf-real-16', dim: 16 }),
      } as unknown as Embedder
      const mine = mems.filter((m) => m.agent === 'agent-b')
      await srv.clearLog()
      const first = await backfillEmbeddings(s, embedder, { filter: { agentId: 'agent-b' }, now: 1 })
      expect(first).toMatchObject({ inScope: mine.length, embedded: mine.length, alreadyEmbedded: 0, dim: 16 })
      expect(embedded).toBe(mine.length)
      const again = await backfillEmbeddings(s, embedder, { filter: { agentId: 'agent-b' }, now: 2 })
      expect(again).toMatchObject({ embedded: 0, alreadyEmbedded: mine.length })
      expect(embedded).toBe(mine.length) // nothing embedded twice
      expect(s.vectorModels().find((m) => m.model === 'bf-real-16')).toMatchObject({ count: 0, backfilled: mine.length })
      const sent = await srv.statements()
      expect(sent.filter((q) => !/^[\s(]*(SELECT|SET|SHOW)\b/i.test(q))).toEqual([])
      const qv = hashEmbed('coffee paris', 16)
      const tr = await runRecall(s, 'coffee paris', denseConfig({ model: 'bf-real-16', scope: { tiers: ['working', 'long_term'] } }), NOW, { queryVector: qv })
      const want = mine.map((m) => ({ id: m.id, sim: cosine(hashEmbed(m.content, 16), qv) })).sort((a, b) => b.sim - a.sim || (a.id < b.id ? -1 : 1))
      expectRankingUpToTies(
        denseRanking(tr).map((x) => x.id),
        want,
      )
    } finally {
      s.close()
    }
  })

  it('a model the server has for most rows: backfilled vectors fill the gaps, merged exactly with the pushed-down hits; the agent vector wins', async () => {
    const s = openStore({ path: url('schema=canon'), workspacePath: ws('bf-merge') }) as PgSource
    try {
      const gaps = mems.filter((m) => !m.vector)
      const fill = gaps.map((m, i) => ({ id: m.id, vector: wsVec(500 + i, PG_DIM) }))
      // One backfilled vector for a memory the server has a vector for: it must be ignored (the agent's wins).
      const shadowed = mems.find((m) => m.vector && m.user === 'user-2')!
      s.workspace.putVectors('memory', PG_MODEL, [...fill, { id: shadowed.id, vector: wsVec(9999, PG_DIM) }], 'test', 0)
      expect(s.vectorModels().find((m) => m.model === PG_MODEL)).toMatchObject({ backfilled: fill.length })
      const qv = randomQuery(88)
      const vecOf = new Map<string, ArrayLike<number>>([
        ...mems.filter((m) => m.vector).map((m) => [m.id, m.vector!] as const),
        ...fill.map((f) => [f.id, f.vector] as const),
      ])
      const keep = (m: FixtureMemory) => m.user === 'user-2'
      const want = mems
        .filter((m) => keep(m) && vecOf.has(m.id))
        .map((m) => ({ id: m.id, sim: cosine(vecOf.get(m.id)!, qv) }))
        .sort((a, b) => b.sim - a.sim || (a.id < b.id ? -1 : 1))
      await srv.clearLog()
      const tr = await runRecall(s, 'q', denseConfig({ scope: { tiers: ['working', 'long_term'], userId: 'user-2' } }), NOW, { queryVector: qv })
      expect(tr.arms!.dense.pushdown).toEqual({ kind: 'exact' })
      const got = denseRanking(tr)
      expectRankingUpToTies(
        got.map((x) => x.id),
        want,
      )
      for (const c of got) expect(Math.abs(c.sim! - want.find((w) => w.id === c.id)!.sim)).toBeLessThan(1e-5)
      // Some gap-filling rows made the cut (else the merge was not exercised), and the server still ranked the rest.
      const filled = new Set(fill.map((f) => f.id))
      expect(got.some((c) => filled.has(c.id))).toBe(true)
      const sent = await srv.statements()
      expect(sent.some((q) => /ORDER BY d\.dist ASC/.test(q))).toBe(true)
      expect(sent.some((q) => /ORDER BY e\.owner_id LIMIT 20000/.test(q))).toBe(false) // the server's vectors stayed there
      // Lexical-only candidates get their cosine from the backfill too.
      const sims = s.similarities([fill[0].id, shadowed.id], qv, PG_MODEL)
      expect(sims.get(fill[0].id)).toBeCloseTo(cosine(fill[0].vector, qv), 6)
      expect(sims.get(shadowed.id)).toBeCloseTo(cosine(shadowed.vector!, qv), 5)
      // missingVector = zero: every in-scope row, the ones without any vector at 0 (after the positives, before the negatives).
      const tz = await runRecall(s, 'q', denseConfig({ missingVector: 'zero', scope: { tiers: ['working', 'long_term'], userId: 'user-2' } }), NOW, {
        queryVector: qv,
      })
      const all = mems
        .filter(keep)
        .map((m) => ({ id: m.id, sim: vecOf.has(m.id) ? cosine(vecOf.get(m.id)!, qv) : null }))
        .sort((a, b) => (b.sim ?? 0) - (a.sim ?? 0) || Number(a.sim === null) - Number(b.sim === null) || (a.id < b.id ? -1 : 1))
      const gz = denseRanking(tz)
      gz.forEach((c, i) => {
        if (all[i].sim === null) expect(c.sim).toBeNull()
        else expect(Math.abs((c.sim ?? NaN) - all[i].sim)).toBeLessThan(1e-5)
      })
    } finally {
      s.close()
    }
  })
})

describe("the Library's Connect form channels (browser mode)", () => {
  const dispatchFor = (app: App) => createDispatcher(createHandlers(app))

  it('test and connect from fields; a password from the page is refused in browser mode; wrong password and unknown schema are typed', async () => {
    const app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'formhome') })
    const d = dispatchFor(app)
    const port = Number(new URL(srv.url).port)
    const fields = { host: '127.0.0.1', port, database: 'postgres', user: 'recallscope_test', sslmode: 'disable', schema: 'canon' }
    try {
      const tested = await d('pg.test', { conn: fields })
      expect(tested).toMatchObject({ ok: true, data: { layout: 'canonical', memories: N, denseInDatabase: true, vectorModels: 1 } })
      // Testing opened nothing and left no workspace behind.
      expect(app.current).toBeNull()
      expect(fs.existsSync(path.join(t.dir, 'formhome', 'workspaces'))).toBe(false)
      const pw = await d('pg.test', { conn: { ...fields, password: 'typed-in-page' } })
      expect(pw).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } })
      expect(JSON.stringify(pw)).toContain('PGPASSWORD')
      expect(JSON.stringify(pw)).not.toContain('typed-in-page')
      const odd = await d('pg.test', { conn: { ...fields, schema: 'odd' } })
      expect(odd).toMatchObject({ ok: false, error: { code: 'UNKNOWN_LAYOUT' } })
      const auth = await d('pg.test', { conn: { url: `postgres://u@127.0.0.1:${srv.fakeAuthPort}/db?sslmode=disable` } })
      expect(auth).toMatchObject({ ok: false, error: { code: 'AUTH_FAILED' } })
      const down = await d('pg.test', { conn: { ...fields, port: 1 } })
      expect(down).toMatchObject({ ok: false, error: { code: 'DB_UNREACHABLE' } })
      // Connect and save: the saved entry has no password; it comes from PGPASSWORD (pg reads it) when reopened.
      const opened = await d('pg.connect', { conn: fields, saveAs: 'canon' })
      expect(opened).toMatchObject({ ok: true, data: { layout: 'canonical', memories: N } })
      const saved = (await d('pg.saved', {})) as { ok: true; data: { id: string; url: string; password: string }[] }
      expect(saved.data).toHaveLength(1)
      expect(saved.data[0].url).toBe(`postgres://recallscope_test@127.0.0.1:${port}/postgres?sslmode=disable&schema=canon`)
      expect((await d('pg.connect', { savedId: saved.data[0].id })) as unknown).toMatchObject({ ok: true, data: { memories: N } })
      expect(await d('pg.connect', { savedId: 'nope' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
      expect(await d('pg.connect', {})).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } })
      // Input that fails validation does not echo the password either (errors are logged and shown).
      for (const bad of [
        { conn: { host: '', database: 'x', password: 'echo-me-not' } },
        { conn: { host: 'h', database: 'x', password: 'echo-me-not', port: 0 } },
        { conn: { url: 'postgres://u:echo-me-not@h/db', password: 7 } },
      ]) {
        const r = await d('pg.connect', bad)
        expect(r).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } })
        expect(JSON.stringify(r)).not.toContain('echo-me-not')
      }
    } finally {
      app.close()
    }
  })
})

describe('bad input: one typed error each, nothing retried forever', () => {
  it('unreachable host → DB_UNREACHABLE, fast', () => {
    const t0 = performance.now()
    const e = expectCode(() => openStore({ path: 'postgres://u:topsecret@127.0.0.1:1/db', workspacePath: ws('x') }), 'DB_UNREACHABLE')
    expect(e.message).not.toContain('topsecret')
    expect(performance.now() - t0).toBeLessThan(15_000)
  })

  it('wrong password → AUTH_FAILED (a server that answers the startup with SQLSTATE 28P01, as Postgres does)', () => {
    const e = expectCode(
      () => openStore({ path: `postgres://u:hunter2-wrong@127.0.0.1:${srv.fakeAuthPort}/db?sslmode=disable`, workspacePath: ws('auth') }),
      'AUTH_FAILED',
    )
    expect(e.message).not.toContain('hunter2-wrong')
  })

  it('a schema whose tables lack the expected columns → UNKNOWN_LAYOUT naming what was found', () => {
    const e = expectCode(() => openStore({ path: url('schema=odd'), workspacePath: ws('odd') }), 'UNKNOWN_LAYOUT')
    expect(e.message).toContain('memories(id, body)')
  })

  it('asking for ANN without such an index → BAD_INPUT', () => {
    expectCode(() => openStore({ path: url('schema=canon&ann=hnsw'), workspacePath: ws('ann') }), 'BAD_INPUT')
  })

  it('a statement over the timeout → DB_TIMEOUT, and the source answers again after', () => {
    const s = openStore({ path: url('schema=canon&statement_timeout_ms=500'), workspacePath: ws('slow') }) as PgSource
    try {
      const t0 = performance.now()
      expectCode(() => s.bridge.query('SELECT pg_sleep(4)'), 'DB_TIMEOUT')
      expect(performance.now() - t0).toBeLessThan(4000)
      expect(s.counts().memories).toBe(N)
    } finally {
      s.close()
    }
  })

  // PGlite serves one connection at a time from one WebAssembly thread; dropConnections() returns once it serves a
  // new connection again, so what follows measures the source, not how fast the test server recovers.
  it('a dropped connection → DB_UNREACHABLE for that call at most, fast; the next call reconnects', async () => {
    const s = openStore({ path: url('schema=canon&statement_timeout_ms=3000'), workspacePath: ws('drop') }) as PgSource
    try {
      expect(s.counts().memories).toBe(N)
      const before = await srv.accepted()
      await srv.dropConnections()
      let first: unknown = null
      const t0 = performance.now()
      try {
        s.memoriesPage({ limit: 5 })
      } catch (e) {
        first = e
      }
      // The pool may learn of the drop before handing the client out (then the call simply reconnects); a client it
      // hands out first fails on its dead socket: one typed error, at once (no waiting out a timeout, no retry).
      if (first) {
        expect(first).toBeInstanceOf(RecallscopeError)
        expect((first as RecallscopeError).code).toBe('DB_UNREACHABLE')
        expect((first as RecallscopeError).message).not.toContain('secret-pw')
      }
      expect(performance.now() - t0).toBeLessThan(3000)
      expect(s.memoriesPage({ limit: 5 }).rows).toHaveLength(5)
      // A new session really was opened through the proxy (the old one was gone).
      expect(await srv.accepted()).toBeGreaterThan(before)
    } finally {
      s.close()
    }
  })
})

describe('the CLI takes a postgres:// URL', () => {
  async function run(...args: string[]) {
    let out = ''
    let err = ''
    const home = process.env.HOME
    process.env.HOME = t.dir // the workspace of a URL store goes under ~/.recallscope/workspaces
    try {
      const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
      return { code, out, err }
    } finally {
      process.env.HOME = home
    }
  }

  it('info --json', async () => {
    const r = await run('info', '--db', url('schema=canon'), '--json')
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    const f = JSON.parse(r.out)
    expect(f.layout).toBe('canonical')
    expect(f.counts.memories).toBe(N)
    expect(r.out).not.toContain('secret-pw')
    expect(f.workspacePath.startsWith(path.join(t.dir, '.recallscope', 'workspaces'))).toBe(true)
    void os
  })

  it('recall --json: the hashing embedder ranks in the database', async () => {
    const r = await run('recall', '--db', url('schema=canon'), '--query', 'coffee paris', '--set', 'mode=dense', '--now', String(NOW), '--json')
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    const tr = JSON.parse(r.out) as RecallTrace
    expect(tr.arms!.dense.pushdown).toEqual({ kind: 'exact' })
    // hashing vectors are sparse: many cosines tie exactly, so compare up to ties
    expectRankingUpToTies(
      denseRanking(tr).map((x) => x.id),
      cosineRanking(mems, hashEmbed('coffee paris'), scopeOkAll),
    )
    expect(denseRanking(tr)).toHaveLength(100)
  })

  it('an unreachable URL exits 1 with the code in --json', async () => {
    const r = await run('info', '--db', 'postgres://u:pw-x@127.0.0.1:1/db', '--json')
    expect(r.code).toBe(1)
    expect(r.out + r.err).toContain('DB_UNREACHABLE')
    expect(r.out + r.err).not.toContain('pw-x')
  })
})

/** A session's summary vector (seeded). */
function sessionVector(k: number): Float32Array {
  return randomQuery(100 + k)
}

function scopeOkAll(m: FixtureMemory): boolean {
  return m.tier === 'working' || m.tier === 'long_term'
}

describe('ANN when an HNSW index exists (last: it adds an index to canon)', () => {
  it('exact stays exact with the index present; ?ann=hnsw uses it and the trace says so', async () => {
    await srv.seed(`CREATE INDEX canon_emb_hnsw ON canon.embeddings USING hnsw (vector vector_cosine_ops)`)
    const qv = randomQuery(21)
    const want = cosineRanking(mems, qv, scopeOkAll)
    const exact = await runRecall(pgs, 'q', denseConfig(), NOW, { queryVector: qv })
    expect(denseRanking(exact).map((x) => x.id)).toEqual(want.slice(0, 100).map((x) => x.id))
    expect(exact.arms!.dense.pushdown).toEqual({ kind: 'exact' })
    const s = openStore({ path: url('schema=canon&ann=hnsw&ef_search=200'), workspacePath: ws('ann-ok') })
    try {
      const tr = await runRecall(s, 'q', denseConfig({ topK: 10, candidatePool: 10 }), NOW, { queryVector: qv })
      expect(tr.arms!.dense.pushdown).toEqual({ kind: 'hnsw', index: 'canon_emb_hnsw', efSearch: 200, indexUsed: true })
      const got = denseRanking(tr)
      expect(got.length).toBeGreaterThan(0)
      // whatever ANN returns carries its true cosine, best first
      const sim = new Map(want.map((x) => [x.id, x.sim]))
      got.forEach((x, i) => {
        expect(x.sim!).toBeCloseTo(sim.get(x.id)!, 5)
        if (i) expect(x.sim!).toBeLessThanOrEqual(got[i - 1].sim!)
      })
    } finally {
      s.close()
    }
  })
})

describe('a server without the pgvector extension', () => {
  let bare: PgTestServer
  beforeAll(async () => {
    bare = await startPgServer({ vector: false })
    await bare.seed(`${canonicalDdl('arr', 'real[]')} ${canonicalInserts('arr', mems, 'real[]')}`)
  }, 180_000)
  afterAll(async () => {
    await bare?.stop()
  })

  it('real[] vectors: no push-down; the engine ranks the vectors it loads over the wire, still exact', async () => {
    const s = openStore({ path: `${bare.url}&schema=arr`, workspacePath: ws('bare') })
    try {
      expect(s.capabilities().pushdown).toBeNull()
      expect(s.facts().detectedBecause).toContain('pgvector not installed')
      const qv = randomQuery(16)
      const tr = await runRecall(s, 'q', denseConfig(), NOW, { queryVector: qv })
      expect(denseRanking(tr).map((x) => x.id)).toEqual(
        cosineRanking(mems, qv, scopeOkAll)
          .slice(0, 100)
          .map((x) => x.id),
      )
      expect(tr.arms!.dense.pushdown).toBeUndefined()
    } finally {
      s.close()
    }
  })

  it('asking for ANN there → BAD_INPUT naming the missing extension', () => {
    const e = expectCode(() => openStore({ path: `${bare.url}&schema=arr&ann=hnsw`, workspacePath: ws('bare-ann') }), 'BAD_INPUT')
    expect(e.message).toContain('pgvector extension is not installed')
  })
})

describe('memories by text (event matching)', () => {
  it('exact and normalised text lookups find the same memories as the SQLite store of the same rows', () => {
    const some = mems.slice(0, 6)
    const texts = some.map((m) => m.content)
    // The same texts, upper-cased, re-spaced and quoted: only the normalised lookup finds them.
    const norms = some.map((m) => normalizeMatchText(`  “${m.content.toUpperCase().replace(/ /g, '   ')}”  `))
    const q = { texts: [...texts, 'no such memory'], normalized: [...norms, 'no such memory'] }
    const a = pgs.memoryIdsByText(q)
    const b = lite.memoryIdsByText(q)
    expect([...a.exact.entries()].sort()).toEqual([...b.exact.entries()].sort())
    expect([...a.normalized.entries()].sort()).toEqual([...b.normalized.entries()].sort())
    // Every memory of the slice is found by its own text, both ways (an independent check of the ids).
    for (const m of some) {
      expect(a.exact.get(m.content)).toContain(m.id)
      expect(a.normalized.get(normalizeMatchText(m.content))).toContain(m.id)
    }
    expect(a.exact.has('no such memory')).toBe(false)
  })
})
