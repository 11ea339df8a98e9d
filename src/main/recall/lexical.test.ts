/**
 * The lexical arm's fast path (FTS top-n alone, scope checked on that prefix,
 * widened until enough survive) returns exactly what one big join returns:
 * the same ids, bm25 values and order (ties by rowid), for wide and narrow
 * scopes, plus the bm25 of the dense hits it is asked about. The reference is
 * plain SQL written here, not the code under test.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tmpDir } from '../../../test/helpers/tmp'
import { getPreset } from '../../shared/presets'
import { createEmbedder } from '../embed/index'
import { openSource } from '../store/registry'
import type { SqliteSource } from '../store/sqlite/source'
import { gatherRecallSync, prepareVector, runRecall, runRecallSync } from './engine'
import { bm25Settings } from '../store/sqlite/bm25'
import { toFtsQuery } from '../store/sqlite/fts'
import type { MemoryFilter } from '../store/source'
import { writeDemoDb } from '../../../test/helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource
const NOW = Date.UTC(2026, 9, 31, 18)

beforeAll(() => {
  t = tmpDir()
  const db = path.join(t.dir, 'demo.db')
  writeDemoDb(db, { memories: 7000, events: false })
  store = openSource({ path: db })
})
afterAll(() => {
  store.close()
  t.cleanup()
})

/** The reference: every match joined to memories, filtered by hand-written SQL, ordered by (bm25, rowid). */
function reference(q: string, cond: string, params: unknown[], limit: number): { id: string; bm25: number }[] {
  return store.db
    .prepare(
      `SELECT m.id AS id, bm25(memories_fts) AS bm25 FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
       LEFT JOIN sessions s ON s.id = m.session_id
       WHERE memories_fts MATCH ? AND ${cond} ORDER BY bm25 ASC, m.rowid ASC LIMIT ${limit}`,
    )
    .all(q, ...params) as { id: string; bm25: number }[]
}

const SCOPES: { name: string; filter: MemoryFilter; cond: string; params: unknown[] }[] = [
  { name: 'everything', filter: {}, cond: '1', params: [] },
  {
    name: 'tiers + before (fieldguide default)',
    filter: { tiers: ['working', 'long_term'], before: NOW - 30 * 86_400_000 },
    cond: `m.tier IN ('working','long_term') AND m.created_at <= ?`,
    params: [NOW - 30 * 86_400_000],
  },
  {
    name: 'one agent, reflections only (narrow: widens)',
    filter: { agentId: 'agent-helpdesk', kinds: ['reflection'] },
    cond: `m.agent_id = 'agent-helpdesk' AND m.kind = 'reflection'`,
    params: [],
  },
  { name: 'a tenant (sessions join)', filter: { tenantId: 'globex', roles: ['user'] }, cond: `s.tenant_id = 'globex' AND m.role = 'user'`, params: [] },
  { name: 'nothing in scope', filter: { agentId: 'nobody' }, cond: `m.agent_id = 'nobody'`, params: [] },
]

describe('lexical arm: prefix path = one big join', () => {
  for (const text of ['rollback the deploy', 'what did the user say about the budget', 'migration']) {
    for (const sc of SCOPES) {
      it(`"${text}" in ${sc.name}`, () => {
        // The FTS query string itself is the tokenizer's business (store/fts.ts); the scoping and order are under test.
        const q = toFtsQuery(text)!
        // both prefix reads: exact top-k over the JS BM25 index, and FTS5's ORDER BY bm25 LIMIT
        for (const js of [true, false])
          for (const limit of [5, 100]) {
            bm25Settings.enabled = js
            const got = store.lexicalPass({ text, filter: sc.filter, limit, ridRange: null, alsoIds: [] })
            bm25Settings.enabled = true
            expect(got.hits).toEqual(reference(q, sc.cond, sc.params, limit))
            expect(js ? ['topk', 'join'] : ['prefix', 'join']).toContain(got.path)
          }
      })
    }
  }

  it('really takes a prefix path (top-k and FTS5), and returns the bm25 of the ids it is asked about (in or out of the top)', () => {
    const text = 'rollback the deploy'
    const q = toFtsQuery(text)!
    const all = reference(q, '1', [], 100_000)
    expect(all.length).toBeGreaterThan(200)
    // Ask about a row deep in the ranking, one near the top, and one that does not match at all.
    const deep = all[all.length - 1]
    const top = all[1]
    const none =
      (store.db
        .prepare(`SELECT id FROM memories WHERE rowid NOT IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?) LIMIT 1`)
        .pluck()
        .get(q) as string) ?? 'missing'
    for (const js of [true, false]) {
      bm25Settings.enabled = js
      const r = store.lexicalPass({ text, filter: {}, limit: 10, ridRange: null, alsoIds: [deep.id, top.id, none] })
      bm25Settings.enabled = true
      expect(r.path).toBe(js ? 'topk' : 'prefix')
      expect(r.hits).toEqual(all.slice(0, 10))
      expect(r.also.get(deep.id)).toBe(deep.bm25)
      expect(r.also.get(top.id)).toBe(top.bm25)
      expect(r.also.has(none)).toBe(false)
    }
  })
})

describe('engine: dense-only hits get their bm25 from the same pass', () => {
  it('every candidate with a match has exactly the bm25 SQL gives it', async () => {
    const cfg = getPreset('fieldguide').config
    const trace = await runRecall(store, 'the deploy rollback runbook', cfg, NOW, { embedder: createEmbedder('hashing') })
    // A scope too big to list: the dense arm scans, the lexical pass answers for its hits.
    expect(trace.counts.inScopeCapped).toBe(true)
    const q = toFtsQuery('the deploy rollback runbook')!
    const bm25 = new Map((reference(q, '1', [], 1_000_000) as { id: string; bm25: number }[]).map((r) => [r.id, r.bm25]))
    const denseOnly = trace.candidates.filter((c) => c.denseRank !== null && c.lexicalRank === null)
    expect(denseOnly.length).toBeGreaterThan(0)
    for (const c of trace.candidates) expect(c.bm25, c.id).toBe(bm25.get(c.id) ?? null)
  })
})

describe('lexical arm: listed small scope (FTS over the rid range, no join) = one big join', () => {
  const SMALL: { name: string; filter: MemoryFilter; cond: string }[] = [
    { name: 'one session', filter: { sessionId: 's-00005' }, cond: `m.session_id = 's-00005'` },
    {
      name: 'one user of one agent, working tier',
      filter: { agentId: 'agent-coder', userId: 'user-ben', tiers: ['working'] },
      cond: `m.agent_id = 'agent-coder' AND m.user_id = 'user-ben' AND m.tier = 'working'`,
    },
  ]
  for (const text of ['rollback the deploy', 'what did the user say about the budget']) {
    for (const sc of SMALL) {
      it(`"${text}" in ${sc.name}`, () => {
        const q = toFtsQuery(text)!
        const listed = store.scopeRows(sc.filter, 100_000)
        expect(listed.ids.length).toBeGreaterThan(0)
        const range: [number, number] = [Math.min(...listed.rids), Math.max(...listed.rids)]
        for (const limit of [3, 1000]) {
          const got = store.lexicalPass({ text, filter: sc.filter, limit, ridRange: range, alsoIds: [], listed })
          expect(got.path).toBe('range')
          expect(got.hits).toEqual(reference(q, sc.cond, [], limit))
        }
      })
    }
  }
})

describe('listed small scope: the bm25 of rows it is asked about comes back with a short read', () => {
  const filter: MemoryFilter = { agentId: 'agent-coder', userId: 'user-ben' }
  const cond = `m.agent_id = 'agent-coder' AND m.user_id = 'user-ben'`
  for (const js of [true, false]) {
    it(`JS bm25 ${js ? 'on' : 'off (FTS5)'}: hits and also = the big join's numbers`, () => {
      bm25Settings.enabled = js
      try {
        const text = 'what did the user say about the deploy'
        const all = reference(toFtsQuery(text)!, cond, [], 100_000)
        expect(all.length).toBeGreaterThan(50)
        const listed = store.scopeRows(filter, 100_000)
        const range: [number, number] = [Math.min(...listed.rids), Math.max(...listed.rids)]
        const matched = new Set(all.map((r) => r.id))
        const none = listed.ids.find((id) => !matched.has(id))!
        const outside = store.scopeRows({ agentId: 'agent-helpdesk' }, 1).ids[0]
        const asked = [all[all.length - 1].id, all[2].id, all[40].id, none, outside]
        const got = store.lexicalPass({ text, filter, limit: 3, ridRange: range, alsoIds: asked, listed })
        expect(got.path).toBe('range')
        expect(got.alsoKnown).toBe(true)
        expect(got.hits).toEqual(all.slice(0, 3))
        const want = new Map(all.map((r) => [r.id, r.bm25]))
        expect([...got.also.entries()].sort()).toEqual(
          asked
            .filter((id) => want.has(id))
            .map((id) => [id, want.get(id)!])
            .sort(),
        )
      } finally {
        bm25Settings.enabled = true
      }
    })
  }
})

describe('engine on a listed scope: the eval gather = the full trace, every bm25 = SQL', () => {
  for (const mode of ['dense', 'hybrid', 'lexical', 'recency'] as const) {
    it(`mode ${mode}`, async () => {
      const base = getPreset('fieldguide').config
      const cfg = { ...base, mode, scope: { ...base.scope, agentId: 'agent-coder', userId: 'user-ben' } }
      const text = 'what did the user say about the deploy rollback'
      const embedder = createEmbedder('hashing')
      const prepared = await prepareVector(store, text, { embedder })
      const trace = runRecallSync(store, text, cfg, NOW, { prepared })
      const g = gatherRecallSync(store, text, cfg, NOW, { prepared })
      expect(trace.counts.inScopeCapped).toBe(false)
      expect(g.candidates).toEqual(trace.candidates)
      expect(g.arms).toEqual(trace.arms)
      expect(g.mode).toBe(trace.mode)
      expect(g.degraded).toBe(trace.degraded)
      const sql = new Map(reference(toFtsQuery(text)!, '1', [], 1_000_000).map((r) => [r.id, r.bm25]))
      expect(trace.candidates.filter((c) => c.lexicalRank === null && c.bm25 !== null).length, 'non-lexical candidates with a match').toBeGreaterThan(0)
      for (const c of trace.candidates) expect(c.bm25, c.id).toBe(sql.get(c.id) ?? null)
    })
  }
})
