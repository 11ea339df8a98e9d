import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../shared/presets'
import { seededRandom } from '../../shared/metrics'
import type { RecallConfig } from '../../shared/types'
import { tmpDir } from '../../../test/helpers/tmp'
import { createEmbedder } from '../embed/index'
import { openSource } from '../store/registry'
import type { SqliteSource } from '../store/sqlite/source'
import { buildDb, DAY, fixedEmbedder, T0, type MemSpec } from '../../../test/helpers/testDb'
import { saveCase } from './cases'
import { gatherCases, scoreCase, type GatheredCase } from './replay'
import { demoWithCases, FIXTURE_NOW } from '../../../test/helpers/evalFixture'
import { applyParams, compileCase, idsCompiled, Scratch, tune } from './tune'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource

beforeAll(() => {
  t = tmpDir()
  store = demoWithCases(t.dir, { memories: 1500, cases: 60 }).store
})
afterAll(() => {
  store?.close()
  t.cleanup()
})

function randomConfig(base: RecallConfig, rnd: () => number): RecallConfig {
  const w = [rnd(), rnd(), rnd(), rnd()]
  const s = w.reduce((a, b) => a + b, 0)
  return applyParams(base, {
    weights: { similarity: w[0] / s, lexical: w[1] / s, recency: w[2] / s, salience: w[3] / s },
    halfLifeHours: Math.pow(10, rnd() * 4),
    floor: rnd() < 0.3 ? null : rnd() * 0.7,
    topK: 1 + Math.floor(rnd() * 15),
    fusion: { method: rnd() < 0.5 ? 'rrf' : 'weighted', rrfK: 1 + rnd() * 100 },
  })
}

describe('the compiled scorer is rerank', () => {
  // Every static knob the compiled path copies, on the three candidate modes.
  const variants: [string, Partial<RecallConfig>][] = [
    ['hybrid', { mode: 'hybrid' }],
    ['dense', { mode: 'dense' }],
    ['lexical', { mode: 'lexical' }],
    ['hybrid + minmax', { mode: 'hybrid', normalize: 'minmax' }],
    ['dense + topk-then-floor', { mode: 'dense', gateOrder: 'topk-then-floor' }],
    ['hybrid + budget stop', { mode: 'hybrid', tokenBudget: 120, overflow: 'stop' }],
    ['hybrid + budget skip + atLeastOne', { mode: 'hybrid', tokenBudget: 60, overflow: 'skip', atLeastOne: true, tokenEstimator: 'neo' }],
    ['dense + minSimilarity', { mode: 'dense', minSimilarity: 0.2 }],
    ['dense + created + oldest', { mode: 'dense', recency: { halfLifeHours: 100, from: 'created' }, tieBreak: 'oldest' }],
  ]
  it.each(variants)('%s: same injected ids for 40 random configs on every case', async (_name, patch) => {
    const base: RecallConfig = { ...getPreset('fieldguide').config, ...patch, cueUse: { dense: 'utterance', lexical: 'utterance' } }
    const cases = store.workspace.loadCases()
    const gathered = await gatherCases(store, cases, base, { embedder: createEmbedder('hashing'), now: FIXTURE_NOW })
    const compiled = gathered.map((g) => compileCase(g, base, 10))
    expect(compiled.every((c) => !c.fallback)).toBe(true)
    const rnd = seededRandom(42)
    const s = new Scratch()
    let nonEmpty = 0
    // A plain comparison per (config, case), one expect over the differences: 2,400 expect() calls cost more than the scoring.
    const diffs: string[] = []
    for (let i = 0; i < 40; i++) {
      const cfg = randomConfig(base, rnd)
      for (const cc of compiled) {
        const want = scoreCase(cc.g, cfg).ids
        const got = idsCompiled(cc, cfg, s)
        if (got.join('\n') !== want.join('\n')) diffs.push(`${cc.g.case.id} config ${i}: compiled [${got.join()}] rerank [${want.join()}]`)
        if (want.length) nonEmpty++
      }
    }
    expect(diffs).toEqual([])
    // The comparison means something only if configs inject something.
    expect(nonEmpty).toBeGreaterThan(500)
  })
})

describe('the compiled scorer is rerank on a tie min-max makes', () => {
  it('two different similarities min-max rounds to one value: the tie goes to the newer memory, as in rerank', async () => {
    const base: RecallConfig = {
      ...getPreset('fieldguide').config,
      mode: 'dense',
      normalize: 'minmax',
      candidatePool: 10,
      weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
      topK: 2,
      floor: null,
      minSimilarity: null,
      tokenBudget: null,
      cueUse: { dense: 'utterance', lexical: 'utterance' },
    }
    const [g] = await gatherCases(store, store.workspace.loadCases().slice(0, 1), base, { embedder: createEmbedder('hashing'), now: FIXTURE_NOW })
    // 0.1 and the next double differ, but over the range [-1, 0.9] min-max maps both onto one value.
    const lo = -1
    const hi = 0.9
    const a = 0.1
    const b = 0.1 + 2 ** -56
    expect(b).not.toBe(a)
    expect((b - lo) / (hi - lo)).toBe((a - lo) / (hi - lo))
    const cand = (id: string, similarity: number, ageCreatedMs: number, denseRank: number) => ({
      id,
      similarity,
      lexical: 0,
      bm25: null,
      ageLastUsedMs: ageCreatedMs,
      ageCreatedMs,
      salience: 0,
      denseRank,
      lexicalRank: null,
      recencyRank: null,
      textLength: 40,
    })
    const crafted: GatheredCase = {
      ...g,
      candidates: [cand('top', hi, 5, 1), cand('older-higher', b, 9, 2), cand('newer-lower', a, 1, 3), cand('bottom', lo, 5, 4)],
    }
    // Equal scores, equal normalised similarity: the newer memory (created 1 ms before now, not 9) comes first.
    expect(scoreCase(crafted, base).ids).toEqual(['top', 'newer-lower'])
    expect(idsCompiled(compileCase(crafted, base, 10), base, new Scratch())).toEqual(['top', 'newer-lower'])
  })
})

describe('the compiled scorer is rerank across the whole space', () => {
  it.each([
    ['no normalisation', 'none'],
    ['min-max (normalised over the whole pool, before minSimilarity gates)', 'minmax'],
  ] as const)(
    'random mode, pool, minSimilarity, age source and token budget (each compiled per mode × pool), %s: same injected ids',
    async (_name, normalize) => {
      const base: RecallConfig = { ...getPreset('fieldguide').config, normalize, cueUse: { dense: 'utterance', lexical: 'utterance' } }
      const cases = store.workspace.loadCases()
      const gathered = await gatherCases(store, cases, base, { embedder: createEmbedder('hashing'), now: FIXTURE_NOW, depth: 100 })
      const rnd = seededRandom(9)
      const s = new Scratch()
      const compiled = new Map<string, ReturnType<typeof compileCase>[]>()
      let nonEmpty = 0
      let gated = 0
      const diffs: string[] = []
      for (let i = 0; i < 60; i++) {
        const cfg0 = randomConfig(base, rnd)
        const cfg = applyParams(base, {
          weights: cfg0.weights,
          halfLifeHours: cfg0.recency.halfLifeHours,
          floor: cfg0.floor,
          topK: cfg0.topK,
          fusion: cfg0.fusion,
          mode: (['dense', 'lexical', 'hybrid'] as const)[Math.floor(rnd() * 3)],
          candidatePool: [5, 10, 20, 30, 50, 100][Math.floor(rnd() * 6)],
          ageFrom: rnd() < 0.5 ? 'created' : 'last_used',
          minSimilarity: rnd() < 0.5 ? null : rnd() * 0.5,
          tokenBudget: rnd() < 0.5 ? null : [50, 200, 1000][Math.floor(rnd() * 3)],
        })
        const key = `${cfg.mode}|${cfg.candidatePool}`
        let cs = compiled.get(key)
        if (!cs) compiled.set(key, (cs = gathered.map((g) => compileCase(g, cfg, 10))))
        for (const cc of cs) {
          const want = scoreCase(cc.g, cfg)
          const got = idsCompiled(cc, cfg, s)
          if (got.join('\n') !== want.ids.join('\n')) diffs.push(`${cc.g.case.id} config ${i} ${key}: compiled [${got.join()}] rerank [${want.ids.join()}]`)
          if (want.ids.length) nonEmpty++
          if (cfg.minSimilarity !== null || cfg.tokenBudget !== null) gated++
        }
      }
      expect(diffs).toEqual([])
      expect(compiled.size).toBeGreaterThan(5)
      expect(nonEmpty).toBeGreaterThan(1000)
      expect(gated).toBeGreaterThan(1000)
    },
  )
})

describe('tune', () => {
  let gathered: GatheredCase[]
  const base = { ...getPreset('fieldguide:hybrid').config }
  beforeAll(async () => {
    gathered = await gatherCases(store, store.workspace.loadCases(), base, { embedder: createEmbedder('hashing'), now: FIXTURE_NOW })
  })

  it('scores exactly its budget of configs, never worse than the base on train, and reports the test split beside train', async () => {
    const seen: number[] = []
    const r = await tune(gathered, base, { metric: 'ndcg@10', budget: 300, onProgress: (d) => seen.push(d) })
    expect(r.trials).toBe(300)
    expect(r.metric).toBe('ndcg@10')
    expect(r.split.train + r.split.test).toBe(gathered.length)
    expect(r.split.test).toBeGreaterThan(0)
    expect(r.best.train!).toBeGreaterThanOrEqual(r.base.train!)
    expect(r.best.test).not.toBeNull()
    // The best config's reported train score is what a plain replay of that config gives.
    const again = gathered.filter((g) => g.case.split === 'train')
    const { scoreGathered } = await import('./replay')
    expect(scoreGathered(again, r.best.config, { k: 10, budget: 2000 }).metrics['ndcg@10']).toBeCloseTo(r.best.train!, 12)
    // Weights on the simplex; the exported config is a valid full config.
    const w = r.best.config.weights
    expect(w.similarity + w.lexical + w.recency + w.salience).toBeCloseTo(1, 9)
    expect(seen.length).toBeGreaterThan(0)
    // The heatmap covers the triangle: (steps+1)(steps+2)/2 points, each summing to 1 − the fixed weight.
    const h = r.heatmap!
    expect(h.cells).toHaveLength(((h.steps + 1) * (h.steps + 2)) / 2)
    for (const c of h.cells) expect(c.w[0] + c.w[1] + c.w[2] + h.fixed.weight).toBeCloseTo(1, 9)
    expect(r.top[0].train).toBe(r.best.train)
  })

  it('is deterministic for a seed', async () => {
    const a = await tune(gathered, base, { metric: 'recall@5', budget: 120, seed: 3 })
    const b = await tune(gathered, base, { metric: 'recall@5', budget: 120, seed: 3 })
    expect(b.best.params).toEqual(a.best.params)
    expect(b.best.train).toBe(a.best.train)
  })

  it('stops when cancelled and reports the best so far', async () => {
    const ac = new AbortController()
    const r = await tune(gathered, base, {
      metric: 'mrr',
      budget: 100_000,
      signal: ac.signal,
      onProgress: (d) => {
        if (d >= 50) ac.abort()
      },
    })
    expect(r.cancelled).toBe(true)
    expect(r.trials).toBeLessThan(100_000)
    expect(r.best.train).not.toBeNull()
  })

  it('rejects a lower-is-better or unknown objective', async () => {
    await expect(tune(gathered, base, { metric: 'tokens' })).rejects.toThrow(/lower-is-better/)
    await expect(tune(gathered, base, { metric: 'banana@3' })).rejects.toThrow(/Unknown metric/)
  })
})

describe('tune finds a planted optimum', () => {
  it('puts the weight on recency when only recency tells the relevant memory apart', async () => {
    // 20 questions, each with 6 identical-looking candidates (same similarity, text, salience); the relevant
    // one is always the newest. A similarity-led config ties and falls back to oldest-first; any weight on
    // recency ranks the relevant one first.
    const dir = tmpDir()
    try {
      const mems: MemSpec[] = []
      for (let q = 0; q < 20; q++)
        for (let j = 0; j < 6; j++)
          mems.push({ id: `q${q}-m${j}`, agent_id: `a${q}`, sim: 0.8, content: `note ${q}`, created_at: T0 + (j === 3 ? 10 : j) * DAY, salience: 0.5 })
      const p = buildDb(dir.dir, { memories: mems })
      const s = openSource({ path: p, workspacePath: `${p}.ws` })
      try {
        for (let q = 0; q < 20; q++)
          saveCase(
            s.workspace,
            {
              id: `c${q}`,
              query: `note ${q}`,
              scope: { agentId: `a${q}` },
              now: T0 + 11 * DAY,
              relevant: [{ id: `q${q}-m3`, grade: 1 }],
              split: q % 4 === 0 ? 'test' : 'train',
            },
            0,
          )
        const base: RecallConfig = {
          ...getPreset('fieldguide').config,
          floor: null,
          topK: 1,
          cueUse: { dense: 'utterance', lexical: 'utterance' },
          weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
          tieBreak: 'oldest',
        }
        const g = await gatherCases(s, s.workspace.loadCases(), base, { embedder: fixedEmbedder(), now: T0 })
        const r = await tune(g, base, { metric: 'hit@1', budget: 200, space: { topK: false, floor: false, fusion: false } })
        expect(r.base.train).toBe(0) // ties → oldest first: never the planted one
        expect(r.best.train).toBe(1)
        expect(r.best.test).toBe(1)
        expect(r.best.params.weights.recency).toBeGreaterThan(0)
      } finally {
        s.close()
      }
    } finally {
      dir.cleanup()
    }
  })
})
