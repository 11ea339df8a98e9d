import { describe, expect, it } from 'vitest'
import { getPreset } from './presets'
import { benchRerank, canRerankLocally, effectiveMode, estimateTokens, recencyOf, rerank, utf8Length } from './scoring'
import type { CandidateRaw, RecallConfig } from './types'

const H = 3_600_000
const cand = (id: string, p: Partial<CandidateRaw> = {}): CandidateRaw => ({
  id,
  similarity: 0,
  lexical: 0,
  bm25: null,
  ageLastUsedMs: 0,
  ageCreatedMs: 0,
  salience: 0,
  denseRank: null,
  lexicalRank: null,
  recencyRank: null,
  textLength: 4,
  ...p,
})
/** Candidates ranked 1..n in the dense arm with the given similarities. */
const dense = (sims: number[]): CandidateRaw[] => sims.map((s, i) => cand(`m${i + 1}`, { similarity: s, denseRank: i + 1, ageCreatedMs: i * 1000 }))
const cfg = (name: string, patch: Partial<RecallConfig> = {}): RecallConfig => ({ ...getPreset(name).config, ...patch })

describe('features', () => {
  it('recency = 0.5 ** (age / halfLife) (seed 003)', () => {
    expect(recencyOf(0, 168)).toBe(1)
    expect(recencyOf(168 * H, 168)).toBeCloseTo(0.5, 15)
    expect(recencyOf(336 * H, 168)).toBeCloseTo(0.25, 15)
    expect(recencyOf(-5 * H, 168)).toBe(1)
  })

  it('ages from last use or from creation, as configured', () => {
    const c = [cand('x', { denseRank: 1, ageLastUsedMs: 24 * H, ageCreatedMs: 48 * H })]
    const lastUsed = rerank(c, cfg('fieldguide', { floor: null, recency: { halfLifeHours: 24, from: 'last_used' } }), 'dense')
    const created = rerank(c, cfg('fieldguide', { floor: null, recency: { halfLifeHours: 24, from: 'created' } }), 'dense')
    expect(lastUsed.results[0].features.recency).toBeCloseTo(0.5, 12)
    expect(created.results[0].features.recency).toBeCloseTo(0.25, 12)
  })

  it('min-max normalisation per query; a flat feature maps to 0.5 (Generative Agents)', () => {
    const c = [
      cand('a', { similarity: 0.2, denseRank: 1, salience: 0.3 }),
      cand('b', { similarity: 0.6, denseRank: 2, salience: 0.3 }),
      cand('c', { similarity: 0.4, denseRank: 3, salience: 0.3 }),
    ]
    const r = rerank(c, cfg('fieldguide', { normalize: 'minmax', floor: null }), 'dense')
    const f = Object.fromEntries([...r.results, ...r.dropped].map((s) => [s.id, s.features]))
    expect(f.a.similarity).toBe(0)
    expect(f.b.similarity).toBe(1)
    expect(f.c.similarity).toBeCloseTo(0.5, 12)
    expect(f.a.salience).toBe(0.5)
  })

  it('composite = Σ wᵢ·featureᵢ with seed 003 weights', () => {
    const c = [cand('a', { similarity: 0.8, denseRank: 1, ageLastUsedMs: 168 * H, salience: 0.9 })]
    const r = rerank(c, cfg('fieldguide'), 'dense')
    expect(r.results[0].score).toBeCloseTo(0.6 * 0.8 + 0.25 * 0.5 + 0.15 * 0.9, 12)
    expect(r.results[0].contributions).toEqual({ similarity: 0.6 * 0.8, lexical: 0, recency: 0.25 * 0.5, salience: expect.closeTo(0.135, 12) as number })
  })
})

describe('gates', () => {
  it('seed 000: take topK = 3 then drop below 0.65 → a 0.64 third is dropped by the floor, a 0.66 second is kept', () => {
    const r = rerank(dense([0.7, 0.66, 0.64, 0.63]), cfg('portal-episodic', { unit: 'memory' }), 'dense')
    expect(r.results.map((x) => x.id)).toEqual(['m1', 'm2'])
    expect(r.dropped.map((d) => [d.id, d.gate])).toEqual([
      ['m3', 'floor'],
      ['m4', 'topK'],
    ])
  })

  it('seed 003: floor before topK; gate order changes the result when order is not the score (recency mode)', () => {
    // newest first: m1, m2, m3 — scores 0.2, 0.9, 0.8
    const c = [0.2, 0.9, 0.8].map((s, i) => cand(`m${i + 1}`, { similarity: s, recencyRank: i + 1 }))
    const base = cfg('fieldguide', { weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 }, floor: 0.5, topK: 2 })
    const floorFirst = rerank(c, { ...base, gateOrder: 'floor-then-topk' }, 'recency')
    const topkFirst = rerank(c, { ...base, gateOrder: 'topk-then-floor' }, 'recency')
    expect(floorFirst.results.map((x) => x.id)).toEqual(['m2', 'm3'])
    expect(topkFirst.results.map((x) => x.id)).toEqual(['m2'])
  })

  it('minSimilarity gates raw cosine; a candidate without a vector cannot pass it', () => {
    const c = [
      cand('a', { similarity: 0.71, denseRank: 1 }),
      cand('b', { similarity: 0.69, denseRank: 2 }),
      cand('c', { similarity: null, lexicalRank: 1, lexical: 1 }),
    ]
    const r = rerank(c, cfg('portal-semantic', { mode: 'hybrid', tokenBudget: null }), 'hybrid')
    expect(r.results.map((x) => x.id)).toEqual(['a'])
    expect(Object.fromEntries(r.dropped.map((d) => [d.id, d.gate]))).toEqual({ b: 'minSimilarity', c: 'minSimilarity' })
  })

  it('budget: stop at the first that does not fit, or skip it; at least one when asked', () => {
    const c = [40, 4000, 8].map((len, i) => cand(`m${i + 1}`, { similarity: 0.9 - i * 0.1, denseRank: i + 1, textLength: len }))
    const base = cfg('fieldguide', { floor: null, topK: 10, tokenBudget: 100, tokenEstimator: 'ceil4' })
    expect(rerank(c, { ...base, overflow: 'stop' }, 'dense').results.map((x) => x.id)).toEqual(['m1'])
    expect(rerank(c, { ...base, overflow: 'skip' }, 'dense').results.map((x) => x.id)).toEqual(['m1', 'm3'])
    const big = [cand('huge', { similarity: 0.9, denseRank: 1, textLength: 4000 }), cand('small', { similarity: 0.8, denseRank: 2, textLength: 8 })]
    expect(rerank(big, { ...base, atLeastOne: true }, 'dense').results.map((x) => x.id)).toEqual(['huge'])
    expect(rerank(big, { ...base, atLeastOne: false }, 'dense').results.map((x) => x.id)).toEqual([])
  })

  it('dedupe runs after selection: an excluded top hit is removed, not replaced (seed 004)', () => {
    const r = rerank(dense([0.9, 0.8, 0.7]), cfg('neo', { topK: 2, scope: { tiers: ['working'], excludeIds: ['m1'] } }), 'dense')
    expect(r.results.map((x) => x.id)).toEqual(['m2'])
    expect(r.dropped.map((d) => [d.id, d.gate])).toEqual([
      ['m1', 'dedupe'],
      ['m3', 'topK'],
    ])
  })

  it('Engram blend: ceil(limit/2) user rows, identical content skipped, whole list cut to limit', () => {
    const c = [
      ...dense([0.9, 0.8]),
      ...[0.95, 0.7, 0.6, 0.5].map((s, i) =>
        cand(`u${i + 1}`, { similarity: s, denseRank: i + 1, group: 'blend', sameContentAs: i === 0 ? ['m2'] : undefined }),
      ),
    ]
    const r = rerank(c, cfg('engram', { topK: 4 }), 'dense')
    // ceil(4/2) = 2 → u1, u2 taken; u1 duplicates m2 → skipped; m1, m2, u2
    expect(r.results.map((x) => x.id)).toEqual(['m1', 'm2', 'u2'])
    expect(Object.fromEntries(r.dropped.map((d) => [d.id, d.gate]))).toEqual({ u1: 'dedupe', u3: 'topK', u4: 'topK' })
  })
})

describe('pool, fusion, order', () => {
  it('only candidates within candidatePool of an arm of the mode are scored', () => {
    const c = [
      cand('d1', { denseRank: 1, similarity: 0.5 }),
      cand('d2', { denseRank: 2, similarity: 0.4 }),
      cand('l1', { lexicalRank: 1, lexical: 1 }),
      cand('l3', { lexicalRank: 3, lexical: 0.2 }),
    ]
    const base = cfg('fieldguide', { candidatePool: 2, floor: null })
    expect(rerank(c, base, 'dense').pool).toBe(2)
    expect([...rerank(c, base, 'hybrid').results, ...rerank(c, base, 'hybrid').dropped].map((s) => s.id).sort()).toEqual(['d1', 'd2', 'l1'])
  })

  it('RRF: each arm contributes (k+1)/(k+rank) in place of its raw feature', () => {
    const c = [cand('a', { denseRank: 1, lexicalRank: 2, similarity: 0.3, lexical: 0.4 }), cand('b', { denseRank: 2, similarity: 0.2 })]
    const r = rerank(c, cfg('fieldguide', { mode: 'hybrid', floor: null, weights: { similarity: 1, lexical: 1, recency: 0, salience: 0 } }), 'hybrid')
    const a = r.results.find((x) => x.id === 'a')!
    expect(a.fused).toEqual({ dense: 1, lexical: 61 / 62 })
    expect(a.score).toBeCloseTo(1 + 61 / 62, 12)
    expect(a.features.similarity).toBe(0.3) // the measured feature is still shown
  })

  it('ties: newest first by default, oldest first for Neo', () => {
    const c = [cand('old', { similarity: 0.5, denseRank: 1, ageCreatedMs: 2000 }), cand('new', { similarity: 0.5, denseRank: 2, ageCreatedMs: 1000 })]
    expect(rerank(c, cfg('engram'), 'dense').results.map((x) => x.id)).toEqual(['new', 'old'])
    expect(rerank(c, cfg('neo', { tokenBudget: null }), 'dense').results.map((x) => x.id)).toEqual(['old', 'new'])
  })

  it('effective mode: Engram falls back to keywords, Neo to nothing, hybrid keeps its lexical arm', () => {
    expect(effectiveMode(cfg('engram'), { dense: false, lexical: true })).toBe('keyword')
    expect(effectiveMode(cfg('neo'), { dense: false, lexical: true })).toBe('none')
    expect(effectiveMode(cfg('fieldguide', { mode: 'hybrid' }), { dense: false, lexical: true })).toBe('lexical')
  })

  it('is deterministic and keeps every pool member (results + dropped = pool)', () => {
    const c = dense(Array.from({ length: 50 }, (_, i) => Math.sin(i) * 0.5 + 0.5))
    const a = rerank(c, cfg('fieldguide'), 'dense')
    const b = rerank([...c].reverse(), cfg('fieldguide'), 'dense')
    expect(a.results).toEqual(b.results)
    expect(a.results.length + a.dropped.length).toBe(30)
  })
})

describe('tokens', () => {
  it('ceil(len/4) and Neo’s (bytes+3)/4', () => {
    expect(estimateTokens('abcde', 'ceil4')).toBe(2)
    expect(estimateTokens('abcde', 'neo')).toBe(2)
    expect(estimateTokens('ééééé', 'neo')).toBe(3)
    expect(utf8Length('a€😀')).toBe(1 + 3 + 4)
  })
})

describe('local re-rank', () => {
  it('allows weight/floor/topK changes, refuses a scope change or a pool deeper than fetched', () => {
    const config = cfg('fieldguide')
    const arms = {
      dense: { ran: true, fetched: 100, exhausted: false, reason: null },
      lexical: { ran: true, fetched: 12, exhausted: true, reason: null },
      recency: { ran: false, fetched: 0, exhausted: false, reason: 'x' },
      order: { ran: false, fetched: 0, exhausted: false, reason: 'x' },
    }
    const trace = { config, arms, mode: 'dense' as const }
    expect(canRerankLocally(trace, { ...config, weights: { ...config.weights, salience: 0.5 }, floor: 0.2, topK: 9 }).ok).toBe(true)
    expect(canRerankLocally(trace, { ...config, mode: 'hybrid', candidatePool: 80 }).ok).toBe(true)
    expect(canRerankLocally(trace, { ...config, candidatePool: 200 }).ok).toBe(false)
    expect(canRerankLocally(trace, { ...config, scope: { ...config.scope, userId: 'u' } }).ok).toBe(false)
    expect(canRerankLocally(trace, { ...config, mode: 'recency' }).ok).toBe(false)
  })

  it('re-ranks 1,000 candidates well within 2 ms (generous bound here; bench/ reports the number)', () => {
    // The bound is on this process's CPU time per call (30 warm-up calls + 100 timed), not the wall clock: on
    // the shared 2 cores of a full `npm test` the wall time per call measured 25 ms (a tenth of a core).
    // (src/shared is typed without Node's globals; this test runs in the unit project, under Node)
    type CpuUsage = { user: number; system: number }
    const node = (globalThis as unknown as { process: { cpuUsage(since?: CpuUsage): CpuUsage } }).process
    const cpu0 = node.cpuUsage()
    const r = benchRerank(cfg('fieldguide'), 1000, 100)
    const cpu = node.cpuUsage(cpu0)
    const cpuMsPerCall = (cpu.user + cpu.system) / 1000 / 130
    console.log(`rerank 1000 candidates: ${r.msPerCall.toFixed(3)} ms/call wall, ${cpuMsPerCall.toFixed(3)} ms/call CPU`)
    expect(r.results).toBeGreaterThan(0)
    expect(cpuMsPerCall).toBeLessThan(20)
  })
})

describe('re-ranking the same candidates again (the rows kept between calls)', () => {
  it('gives what a first re-rank of a fresh copy gives, over random candidates and random sequences of knob changes', () => {
    let seed = 7
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
    for (let trial = 0; trial < 12; trial++) {
      const n = 50 + Math.floor(rnd() * 400)
      // Ties on purpose: scores, similarities and ages drawn from a few values, so the comparator's later keys decide.
      const c: CandidateRaw[] = Array.from({ length: n }, (_, i) =>
        cand(`m${Math.floor(rnd() * 1e9)}-${i}`, {
          similarity: rnd() < 0.1 ? null : pick([0.2, 0.5, 0.5, 0.8, rnd()]),
          lexical: rnd() < 0.5 ? pick([0, 0.3, rnd()]) : 0,
          ageLastUsedMs: pick([0, 1, 5, 40]) * 24 * H,
          ageCreatedMs: pick([0, 2, 9, 30]) * 24 * H,
          salience: pick([0, 0.5, 1, rnd()]),
          denseRank: rnd() < 0.9 ? i + 1 : null,
          lexicalRank: rnd() < 0.5 ? 1 + Math.floor(rnd() * n) : null,
          recencyRank: 1 + Math.floor(rnd() * n),
          textLength: 10 + Math.floor(rnd() * 300),
          group: rnd() < 0.1 ? 'blend' : undefined,
          excluded: rnd() < 0.05 ? true : undefined,
        }),
      )
      const preset = pick(['fieldguide', 'engram', 'neo', 'portal-episodic', 'portal-semantic'])
      let config = cfg(preset, { candidatePool: Math.max(10, Math.floor(n * rnd())) })
      const mode = pick(['hybrid', 'dense', 'lexical', 'recency'] as const)
      for (let step = 0; step < 25; step++) {
        // A drag's knobs mostly (weights, floor, topK, budget), sometimes one that reshapes the rows.
        const w = () => Math.round(rnd() * 100) / 100
        const knob = Math.floor(rnd() * 9)
        if (knob <= 3) config = { ...config, weights: { similarity: w(), lexical: w(), recency: w(), salience: w() } }
        else if (knob === 4) config = { ...config, floor: rnd() < 0.3 ? null : w() }
        else if (knob === 5) config = { ...config, topK: 1 + Math.floor(rnd() * 20), gateOrder: pick(['floor-then-topk', 'topk-then-floor'] as const) }
        else if (knob === 6) config = { ...config, tokenBudget: rnd() < 0.4 ? null : 50 + Math.floor(rnd() * 500), minSimilarity: rnd() < 0.7 ? null : w() }
        else if (knob === 7) config = { ...config, recency: { ...config.recency, halfLifeHours: 1 + Math.floor(rnd() * 400) } }
        else config = { ...config, normalize: pick(['none', 'minmax'] as const), fusion: { method: pick(['rrf', 'weighted'] as const), rrfK: pick([1, 60]) } }
        const again = rerank(c, config, mode)
        const fresh = rerank(
          c.map((x) => ({ ...x })),
          config,
          mode,
        )
        expect(again, `trial ${trial} step ${step}`).toEqual(fresh)
        // The drag fast path's call, writing into the objects of its last one: the same answer, and what a call
        // without `reuse` returned (React's) untouched by it.
        const held = structuredClone(again)
        expect(rerank(c, config, mode, { reuse: true }), `trial ${trial} step ${step}, reuse`).toEqual(fresh)
        expect(again, `trial ${trial} step ${step}, after a reuse`).toEqual(held)
      }
    }
  })

  it('does not change what an earlier call returned', () => {
    const c = dense([0.9, 0.8, 0.7, 0.6, 0.5])
    const a = rerank(c, cfg('fieldguide', { topK: 2, floor: null }), 'dense')
    const snapshot = structuredClone(a)
    rerank(c, cfg('fieldguide', { topK: 4, floor: null, weights: { similarity: 0, lexical: 0, recency: 0, salience: 1 } }), 'dense')
    expect(a).toEqual(snapshot)
  })
})

import { sameScope } from './scoring'
describe('sameScope', () => {
  it('ignores key order, undefined keys and list order', () => {
    expect(sameScope({ tiers: ['working', 'long_term'], agentId: 'a' }, { agentId: 'a', tiers: ['long_term', 'working'], userId: undefined })).toBe(true)
    expect(sameScope({ tiers: ['working'], excludeIds: [] }, { tiers: ['working'] })).toBe(true)
  })
  it('sees real differences', () => {
    expect(sameScope({ tiers: ['working'], agentId: 'a' }, { tiers: ['working'], agentId: 'b' })).toBe(false)
    expect(sameScope({ tiers: ['working'] }, { tiers: ['working', 'archived'] })).toBe(false)
    expect(sameScope({ tiers: ['working'], kinds: ['semantic'] }, { tiers: ['working'] })).toBe(false)
    expect(sameScope({ tiers: ['working'], kinds: [] }, { tiers: ['working'] })).toBe(false)
  })
})
