import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CaseResult, EvalRun } from '../../shared/eval'
import { jaccard, rbo } from '../../shared/overlap'
import { getPreset } from '../../shared/presets'
import { tmpDir } from '../../../test/helpers/tmp'

import type { SqliteSource } from '../store/sqlite/source'
import { runEval } from './evaluate'
import { GatherCache } from './replay'
import { compareRuns } from './runs'
import { demoWithCases, FIXTURE_NOW } from '../../../test/helpers/evalFixture'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource

beforeAll(() => {
  t = tmpDir()
  store = demoWithCases(t.dir, { memories: 800, cases: 40 }).store
})
afterAll(() => {
  store.close()
  t.cleanup()
})

function caseResult(id: string, retrieved: string[], relevant: string[]): CaseResult {
  return {
    id,
    name: id,
    retrieved,
    tokens: retrieved.map(() => 10),
    relevant: relevant.map((r) => ({ id: r, grade: 1 })),
    expectEmpty: false,
    split: 'train',
    tags: [],
    metrics: {},
  }
}

function fakeRun(name: string, perCase: CaseResult[], createdAt: number): Omit<EvalRun, 'id'> {
  return {
    createdAt,
    name,
    preset: 'fieldguide',
    config: getPreset('fieldguide').config,
    embedder: { name: 'hashing', model: 'hashing-256', available: true },
    warnings: [],
    k: 3,
    split: 'all',
    budget: 2000,
    metrics: {},
    counts: { cases: perCase.length, graded: perCase.length, expectEmpty: 0, unjudged: 0, degraded: 0 },
    source: 'test',
    timings: { gatherMs: 0, scoreMs: 0, totalMs: 0 },
    perCase,
  }
}

describe('runs', () => {
  it('compare: per-case deltas, wins/losses/ties, churn — on lists whose numbers are worked out by hand', () => {
    // Three cases, each with one relevant memory "r". Metric: hit@3.
    // base:  c1 [r,a,b] hit 1 · c2 [a,b,c] hit 0 · c3 [a,r,b] hit 1
    // other: c1 [a,b,c] hit 0 · c2 [r,a,b] hit 1 · c3 [a,r,b] hit 1 (same list)
    const a = store.workspace.saveRun({
      ...fakeRun('base', [caseResult('c1', ['r', 'a', 'b'], ['r']), caseResult('c2', ['a', 'b', 'c'], ['r']), caseResult('c3', ['a', 'r', 'b'], ['r'])], 1),
      id: 'A',
    })
    const b = store.workspace.saveRun({
      ...fakeRun('other', [caseResult('c1', ['a', 'b', 'c'], ['r']), caseResult('c2', ['r', 'a', 'b'], ['r']), caseResult('c3', ['a', 'r', 'b'], ['r'])], 2),
      id: 'B',
    })
    const cmp = compareRuns(store.workspace, [a.id, b.id], { metric: 'hit@3' })
    expect(cmp.metric).toBe('hit@3')
    expect(cmp.perCase.map((c) => c.values)).toEqual([
      [1, 0],
      [0, 1],
      [1, 1],
    ])
    const v = cmp.vsBaseline[0]
    expect({ wins: v.wins, losses: v.losses, ties: v.ties }).toEqual({ wins: 1, losses: 1, ties: 1 })
    expect(v.delta).toBe(0)
    expect(v.p).toBe(1) // 1 win vs 1 loss: no evidence either way
    // churn: c1 {r,a,b} vs {a,b,c} → 2/4; c2 the same sets reversed → 2/4; c3 identical → 1
    expect(v.jaccard).toBeCloseTo((0.5 + 0.5 + 1) / 3, 12)
    expect(cmp.perCase[0].jaccard[1]).toBe(jaccard(['r', 'a', 'b'], ['a', 'b', 'c']))
    expect(cmp.perCase[2].rbo[1]).toBeCloseTo(1, 12)
    expect(v.rbo).toBeCloseTo((rbo(['r', 'a', 'b'], ['a', 'b', 'c']) + rbo(['a', 'b', 'c'], ['r', 'a', 'b']) + 1) / 3, 12)
    // MRR deltas on the same runs: base 1, 0, 1/2 · other 0, 1, 1/2 → means equal
    expect(cmp.vsBaseline[0].metrics.mrr).toEqual({ value: 0.5, baseline: 0.5, delta: 0 })
    // At k = 1 (recomputed from the stored lists): base hits c1 only, other c2 only.
    const at1 = compareRuns(store.workspace, [a.id, b.id], { metric: 'hit@1' })
    expect(at1.perCase.map((c) => c.values)).toEqual([
      [1, 0],
      [0, 1],
      [0, 0],
    ])
    expect(() => compareRuns(store.workspace, [a.id], {})).toThrow(/at least 2/)
    expect(() => compareRuns(store.workspace, [a.id, 'missing'], {})).toThrow(/No eval run/)
    expect(() => compareRuns(store.workspace, [a.id, b.id], { metric: 'nope' })).toThrow(/Unknown metric/)
    store.workspace.deleteRuns([a.id, b.id])
  })

  it('an eval run is saved with its config, metrics and per-case lists; list, rename and delete', async () => {
    const cache = new GatherCache(store)
    const r1 = await runEval(store, {
      preset: 'fieldguide',
      k: 5,
      now: FIXTURE_NOW,
      createdAt: 100,
      embedder: 'hashing',
      cache,
      save: { name: 'fg', source: 'test' },
    })
    expect(cache.size).toBe(40)
    // A scoring-only change re-scores the cached candidates: no new gather.
    const r2 = await runEval(store, {
      preset: 'fieldguide',
      config: { floor: null, weights: { similarity: 1, recency: 0, salience: 0 } },
      k: 5,
      now: FIXTURE_NOW,
      createdAt: 200,
      embedder: 'hashing',
      cache,
      save: { name: 'no floor', source: 'test' },
    })
    expect(r2.timings.gatherMs).toBeLessThan(r1.timings.gatherMs)
    expect(r1.counts).toMatchObject({ cases: 40 })
    expect(r1.counts.expectEmpty).toBe(4)
    const list = store.workspace.listRuns()
    expect(list.map((r) => r.id)).toEqual([r2.id, r1.id])
    expect(list[1]).not.toHaveProperty('perCase')
    const got = store.workspace.getRun(r1.id)
    expect(got.perCase).toHaveLength(40)
    expect(got.config).toEqual(r1.config)
    expect(got.metrics).toEqual(r1.metrics)
    // No floor injects something for every off-topic case: abstention falls to 0.
    expect(r2.metrics.abstention).toBe(0)
    expect(store.workspace.renameRun(r1.id, 'renamed').name).toBe('renamed')
    const cmp = compareRuns(store.workspace, [r1.id, r2.id], { metric: 'abstention' })
    expect(cmp.vsBaseline[0].cases).toBe(4)
    expect(store.workspace.deleteRuns([r1.id, r2.id])).toBe(2)
    expect(store.workspace.listRuns()).toEqual([])
  })
})

describe('the gather cache', () => {
  it('scores an edited judgment, not the one cached with the candidates', async () => {
    const { saveCase } = await import('./cases')
    const cache = new GatherCache(store)
    const first = await runEval(store, { caseIds: ['t-0'], k: 5, now: FIXTURE_NOW, createdAt: 1, embedder: 'hashing', cache })
    const injected = first.perCase[0].retrieved
    expect(injected.length).toBeGreaterThan(0)
    // Re-judge: exactly the first injected memory is relevant → recall@5 = 1, MRR = 1.
    const c = store.workspace.getCase('t-0')
    saveCase(store.workspace, { ...c, relevant: [{ id: injected[0], grade: 2 }] }, 2)
    const again = await runEval(store, { caseIds: ['t-0'], k: 5, now: FIXTURE_NOW, createdAt: 2, embedder: 'hashing', cache })
    expect(again.perCase[0].retrieved).toEqual(injected)
    expect(again.perCase[0].metrics).toMatchObject({ 'recall@5': 1, mrr: 1 })
    saveCase(store.workspace, c, 3)
  })
})
