import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RecallAges, RecallCompare } from '../../../shared/contract'
import type { Preset } from '../../../shared/presets'
import type { RecallTrace } from '../../../shared/types'
import { tmpDir } from '../../../../test/helpers/tmp'
import { App } from '../app'
import { createDispatcher, type Dispatch } from '../register'
import { createHandlers } from './index'
import { writeDemoDb } from '../../../../test/helpers/demoDb'
import { openTestApp } from '../../../../test/helpers/testApp'

let t: ReturnType<typeof tmpDir>
let app: App
let call: Dispatch
let dbFile: string
const NOW = Date.UTC(2026, 9, 20, 12)

beforeAll(() => {
  t = tmpDir()
  dbFile = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 800 }).path
  ;({ app, call } = openTestApp(dbFile, path.join(t.dir, 'data')))
})
afterAll(() => {
  app.close()
  t.cleanup()
})

describe('recall.* channels', () => {
  it('recall.run returns the trace; config is merged over the preset', async () => {
    const r = await call('recall.run', { query: 'deploy to staging', preset: 'fieldguide', config: { topK: 3, floor: null }, now: NOW })
    expect(r.ok).toBe(true)
    if (!r.ok) return
    const trace = r.data as RecallTrace
    expect(trace.results).toHaveLength(3)
    expect(trace.now).toBe(NOW)
    expect(trace.embedder.model).toBe('hashing-256')
  })

  it('recall.run rejects bad input with BAD_INPUT, never a crash', async () => {
    for (const bad of [
      { query: 1 },
      { query: 'q', config: { topK: -1 } },
      { query: 'q', config: { nope: 1 } },
      { query: 'q', preset: 'nope' },
      { query: 'q', queryVector: [] },
      { query: 'q', preset: 'engram' },
    ]) {
      const r = await call('recall.run', bad)
      expect(r.ok).toBe(false)
      if (!r.ok) expect(r.error.code).toBe('BAD_INPUT')
    }
  })

  it('recall.presets lists the five seeds, then the frameworks’ own recall', async () => {
    const r = await call('recall.presets', {})
    expect(r.ok && (r.data as Preset[]).map((p) => [p.name, p.seed])).toEqual([
      ['portal-episodic', 0],
      ['portal-semantic', 1],
      ['engram', 2],
      ['fieldguide', 3],
      ['neo', 4],
      ['mem0', null],
      ['langgraph-store', null],
      ['openai-agents', null],
      ['mcp-memory-service', null],
      ['mcp-memory-service:rrf', null],
      ['crewai', null],
      ['agno', null],
      ['mastra', null],
      ['mastra:semantic', null],
    ])
  })

  it('recall.compare runs one query through several configs with overlap and rank deltas', async () => {
    const r = await call('recall.compare', {
      query: 'deploy to staging',
      now: NOW,
      runs: [
        { label: 'fg', preset: 'fieldguide', config: { floor: null } },
        { label: 'fg-top3', preset: 'fieldguide', config: { floor: null, topK: 3 } },
        { label: 'sim-only', preset: 'fieldguide', config: { floor: null, weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 } } },
      ],
    })
    expect(r.ok).toBe(true)
    if (!r.ok) return
    const c = r.data as RecallCompare
    expect(c.runs.map((x) => x.label)).toEqual(['fg', 'fg-top3', 'sim-only'])
    const [a, b] = c.runs.map((x) => x.trace.results.map((y) => y.id))
    // top-3 of the same ranking: the first three agree exactly
    expect(b).toEqual(a.slice(0, 3))
    const ab = c.overlap.find((o) => o.a === 0 && o.b === 1)!
    expect(ab.jaccard).toBeCloseTo(3 / 5, 12)
    expect(c.ranks.find((x) => x.id === a[0])!.ranks.slice(0, 2)).toEqual([1, 1])
    expect((await call('recall.compare', { query: 'q', runs: [{ preset: 'fieldguide' }] })).ok).toBe(false)
  })

  it('recall.ages: a histogram whose bins add up to the scope', async () => {
    const r = await call('recall.ages', { scope: { agentId: 'agent-coder' }, now: NOW, from: 'created' })
    expect(r.ok).toBe(true)
    if (!r.ok) return
    const h = r.data as RecallAges
    expect(h.bins.reduce((s, b) => s + b.count, 0)).toBe(h.total)
    const direct = app.requireStore().countWhere({ agentId: 'agent-coder', tiers: ['working', 'long_term'], before: NOW })
    expect(h.total).toBe(direct.total)
    expect(h.bins[0].startMs).toBe(0)
  })

  it('recall.scopeCount: the scope at now, counted on a connection of its own; the decay chart total too', async () => {
    const db = new Database(dbFile, { readonly: true })
    try {
      const times = (db.prepare(`SELECT created_at FROM memories WHERE agent_id = 'agent-coder' ORDER BY created_at`).pluck().all() as number[]).filter(
        Number.isFinite,
      )
      const mid = times[Math.floor(times.length / 2)]
      for (const now of [mid, NOW, NOW + 86_400_000]) {
        const want = db
          .prepare(
            `SELECT count(*) FROM memories WHERE agent_id = 'agent-coder' AND tier IN ('working', 'long_term') AND (created_at IS NULL OR created_at <= ?)`,
          )
          .pluck()
          .get(now)
        const r = await call('recall.scopeCount', { scope: { agentId: 'agent-coder' }, now })
        expect(r.ok && r.data).toEqual({ total: want })
        const ages = await call('recall.ages', { scope: { agentId: 'agent-coder' }, now, from: 'created' })
        expect(ages.ok && (ages.data as RecallAges).total).toBe(want)
      }
      // the middle of the agent's history is a real cut: fewer memories than now
      const at = async (now: number) => {
        const r = await call('recall.scopeCount', { scope: { agentId: 'agent-coder' }, now })
        return r.ok ? (r.data as { total: number }).total : -1
      }
      expect(await at(mid)).toBeLessThan(await at(NOW))
    } finally {
      db.close()
    }
  })

  it('needs an open DB', async () => {
    const other = new App({ dataDir: path.join(t.dir, 'data2'), mode: 'browser' })
    const r = await createDispatcher(createHandlers(other))('recall.run', { query: 'q' })
    expect(!r.ok && r.error.code).toBe('NO_DB')
  })
})
