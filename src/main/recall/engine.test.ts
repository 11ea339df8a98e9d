/**
 * Engine behaviour shared by every preset: time travel, degradation, features for
 * every pool member, the exact dense scan on both scope paths, the trace shape,
 * and the renderer's local re-rank agreeing with a fresh engine run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../shared/presets'
import { canRerankLocally, rerank } from '../../shared/scoring'
import type { RecallConfig } from '../../shared/types'
import { tmpDir } from '../../../test/helpers/tmp'
import { buildConfig } from './request'
import { runRecall } from './engine'
import { buildDb, DAY, downEmbedder, fixedEmbedder, openDb, T0, type MemSpec } from '../../../test/helpers/testDb'

import type { SqliteSource } from '../store/sqlite/source'

let t: ReturnType<typeof tmpDir>
let small: SqliteSource
let big: SqliteSource
let bigVectors: Map<string, number[]>
const NOW = T0 + 90 * DAY

/** Deterministic pseudo-random unit-ish vectors. */
function lcg(seed: number) {
  let s = seed >>> 0
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296) * 2 - 1
}

beforeAll(() => {
  t = tmpDir()
  small = openDb(
    buildDb(t.dir, {
      name: 'small.db',
      memories: [
        { id: 'deploy1', sim: 0.9, content: 'deploy the billing service to staging' },
        { id: 'deploy2', sim: 0.2, content: 'staging deploy failed with error E42' },
        { id: 'other', sim: 0.8, content: 'dinner reservations in Lisbon' },
        { id: 'novec', content: 'error E42 appears in staging logs' },
        { id: 'late', sim: 0.95, content: 'deploy written after now', created_at: NOW + DAY },
      ],
    }),
  )
  const rnd = lcg(42)
  const mems: MemSpec[] = []
  bigVectors = new Map()
  for (let i = 0; i < 6000; i++) {
    const v = [rnd(), rnd(), rnd(), rnd()]
    const id = `b${i}`
    // every 10th is archived (outside the default tiers): the whole-DB scope still has 5,400 rows → scan path
    mems.push({ id, vector: v, tier: i % 10 === 0 ? 'archived' : 'working', user_id: i % 2 ? 'odd' : 'even', content: `row ${i}`, created_at: T0 + i })
    bigVectors.set(id, v)
  }
  big = openDb(buildDb(t.dir, { name: 'big.db', memories: mems }))
})
afterAll(() => {
  small.close()
  big.close()
  t.cleanup()
})

const fg = (patch: Partial<RecallConfig> = {}): RecallConfig => ({ ...getPreset('fieldguide').config, floor: null, ...patch })

describe('engine', () => {
  it('time travel: rows created after `now` are out of scope; at a later `now` they are in', async () => {
    const before = await runRecall(small, 'deploy', fg(), NOW, { embedder: fixedEmbedder() })
    expect(before.candidates.map((c) => c.id)).not.toContain('late')
    const after = await runRecall(small, 'deploy', fg(), NOW + 2 * DAY, { embedder: fixedEmbedder() })
    expect(after.results[0].id).toBe('late')
  })

  it('hybrid with the embedder down: degraded, but the lexical arm still answers', async () => {
    const trace = await runRecall(small, 'error E42', fg({ mode: 'hybrid' }), NOW, { embedder: downEmbedder() })
    expect(trace.degraded).toBe(true)
    expect(trace.degradedReason).toMatch(/unavailable/)
    expect(trace.embedder.available).toBe(false)
    expect(trace.mode).toBe('lexical')
    expect(trace.results.map((r) => r.id).sort()).toEqual(['deploy2', 'novec'])
  })

  it('measures every feature for every pool member: bm25 of dense hits, cosine of lexical hits', async () => {
    const trace = await runRecall(small, 'staging deploy', fg({ mode: 'hybrid' }), NOW, { embedder: fixedEmbedder() })
    const c = Object.fromEntries(trace.candidates.map((x) => [x.id, x]))
    // the best lexical match in scope normalises to 1, the others are −bm25 / max(−bm25)
    const best = Math.max(...trace.candidates.filter((x) => x.bm25 !== null).map((x) => -x.bm25!))
    for (const x of trace.candidates) if (x.bm25 !== null) expect(x.lexical).toBeCloseTo(-x.bm25 / best, 12)
    expect(Math.max(...trace.candidates.map((x) => x.lexical))).toBe(1)
    expect(c.other.bm25).toBeNull() // no shared word
    expect(c.other.lexical).toBe(0)
    expect(c.deploy2.similarity).toBeCloseTo(0.2, 6)
    expect(c.novec.similarity).toBeNull() // no vector: unknowable, not silently 0
  })

  it('dense arm is exact on the scan path (whole DB) and on the selective path (a scope)', async () => {
    const cos = (v: number[]) => v[0] / Math.hypot(...v)
    const expectTop = (ids: string[]) =>
      [...bigVectors]
        .filter(([id]) => ids.includes(id))
        .map(([id, v]) => ({ id, s: cos(v) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, 30)
        .map((x) => x.id)
    const all = [...bigVectors.keys()].filter((id) => Number(id.slice(1)) % 10 !== 0)
    const scan = await runRecall(big, 'q', fg({ weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 }, topK: 30 }), NOW, {
      embedder: fixedEmbedder(),
    })
    expect(scan.counts.inScopeCapped).toBe(true) // 5,400 > 5,000: scanned, then verified against the scope
    expect(scan.results.map((r) => r.id)).toEqual(expectTop(all))
    const even = all.filter((id) => Number(id.slice(1)) % 2 === 0)
    const sel = await runRecall(
      big,
      'q',
      fg({ weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 }, topK: 30, scope: { tiers: ['working', 'long_term'], userId: 'even' } }),
      NOW,
      {
        embedder: fixedEmbedder(),
      },
    )
    expect(sel.counts.inScopeCapped).toBe(false)
    expect(sel.counts.inScope).toBe(even.length)
    expect(sel.results.map((r) => r.id)).toEqual(expectTop(even))
    for (const r of sel.results) expect(r.features.similarity).toBeCloseTo(cos(bigVectors.get(r.id)!), 6)
  })

  it('has the docs/internals/design.md trace shape', async () => {
    const trace = await runRecall(small, 'deploy', fg({ floor: 0.5 }), NOW, { embedder: fixedEmbedder(), preset: 'fieldguide' })
    for (const k of ['query', 'now', 'preset', 'config', 'embedder', 'degraded', 'results', 'dropped', 'context', 'contextTokens'])
      expect(trace).toHaveProperty(k)
    expect(trace.embedder).toEqual({ name: 'fixed', model: 'test-4', available: true })
    for (const r of trace.results) {
      expect(Object.keys(r)).toEqual(expect.arrayContaining(['id', 'rank', 'score', 'features', 'contributions', 'tokens']))
      expect(Object.keys(r.features).sort()).toEqual(['lexical', 'recency', 'salience', 'similarity'])
    }
    for (const d of trace.dropped) expect(['minSimilarity', 'floor', 'topK', 'budget', 'dedupe', 'scope']).toContain(d.gate)
    expect(trace.units[trace.results[0].id].content).toBeTruthy()
    expect(JSON.parse(JSON.stringify(trace))).toEqual(trace) // plain JSON
  })

  it('the renderer’s local re-rank of trace.candidates equals a fresh engine run', async () => {
    const base = fg({ mode: 'dense', floor: 0.3 })
    const trace = await runRecall(small, 'staging deploy', base, NOW, { embedder: fixedEmbedder() })
    const edits: RecallConfig[] = [
      { ...base, weights: { similarity: 0.2, lexical: 0.5, recency: 0.1, salience: 0.2 }, floor: 0.1, topK: 2 },
      { ...base, mode: 'hybrid', fusion: { method: 'rrf', rrfK: 10 } },
      { ...base, mode: 'hybrid', fusion: { method: 'weighted', rrfK: 60 }, normalize: 'minmax' },
      { ...base, candidatePool: 2, recency: { halfLifeHours: 1, from: 'created' } },
    ]
    for (const next of edits) {
      const local = canRerankLocally(trace, next)
      expect(local.ok).toBe(true)
      const fresh = await runRecall(small, 'staging deploy', next, NOW, { embedder: fixedEmbedder() })
      const mine = rerank(trace.candidates, next, local.ok ? local.mode : 'none')
      expect(mine.results).toEqual(fresh.results)
      expect(mine.dropped).toEqual(fresh.dropped)
    }
  })

  it('rejects what cannot run with a clear BAD_INPUT', async () => {
    await expect(runRecall(small, '', { ...getPreset('portal-episodic:session').config }, NOW, {})).rejects.toMatchObject({ code: 'BAD_INPUT' })
    await expect(runRecall(small, 'q', fg({ model: 'other-model' }), NOW, { embedder: fixedEmbedder() })).rejects.toMatchObject({ code: 'BAD_INPUT' })
    // A config is validated once, at the edge (CLI, channels, logged events), not by the engine.
    expect(() => buildConfig({ preset: 'fieldguide', config: { topK: -1 } })).toThrow(expect.objectContaining({ code: 'BAD_INPUT' }))
    await expect(runRecall(small, 'q', fg(), Number.NaN, {})).rejects.toMatchObject({ code: 'BAD_INPUT' })
  })

  it('an explicit query vector replaces the embedder and picks the stored model of its length', async () => {
    const trace = await runRecall(small, 'anything', fg(), NOW, { queryVector: [1, 0, 0, 0] })
    expect(trace.embedder).toEqual({ name: 'vector', model: 'test-4', available: true })
    expect(trace.results[0].id).toBe('deploy1')
    const wrong = await runRecall(small, 'anything', fg(), NOW, { queryVector: [1, 0, 0] })
    expect(wrong.degraded).toBe(true)
  })
})
