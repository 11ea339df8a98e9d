/**
 * The two-knob search: a memory that two gates drop (minSimilarity, then topK) is
 * injected by no single knob — checked with the single-knob search and by sweeping
 * each gate alone through `rerank` — and the pair found does inject it (re-ranked here).
 * Then the fast pair search (moves cheapest first, walks bounded by the best pair so far,
 * knobs that provably cannot inject skipped) against the reference (every move in knob
 * order, a re-rank per tried value) on random small cases.
 */
import { describe, expect, it } from 'vitest'
import { getPreset } from '../../shared/presets'
import { inPool, rerank } from '../../shared/scoring'
import type { CandidateRaw, RecallConfig } from '../../shared/types'
import { searchKnobs, setKnob } from './knobs'
import { pickCheapest, searchKnobPairs, spreadValues, type Move } from './knobPairs'
import { randomCase, rng } from '../../../test/helpers/knobCases'

const HOUR = 3_600_000
const cand = (i: number, similarity: number, salience: number): CandidateRaw => ({
  id: `m${i}`,
  similarity,
  lexical: 0,
  bm25: null,
  ageLastUsedMs: 100 * HOUR,
  ageCreatedMs: 100 * HOUR,
  salience,
  denseRank: i,
  lexicalRank: null,
  recencyRank: i,
  orderKey: i,
  textLength: 40,
  excluded: false,
})

// Ten memories above the target's similarity; the target (rank 11 by similarity) sits under minSimilarity.
const cands = [...Array.from({ length: 10 }, (_, i) => cand(i + 1, 0.9 - i * 0.05, 0)), cand(11, 0.2, 0)]
const config: RecallConfig = {
  ...getPreset('fieldguide').config,
  mode: 'dense',
  weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
  normalize: 'none',
  minSimilarity: 0.3,
  floor: null,
  topK: 3,
  tokenBudget: null,
  atLeastOne: false,
  candidatePool: 30,
}
const injects = (c: RecallConfig) => rerank(cands, c, 'dense').results.some((r) => r.id === 'm11')

describe('searchKnobPairs', () => {
  it('finds a verified-by-rerank pair when no single knob injects the memory', () => {
    expect(injects(config)).toBe(false)
    // No single gate change does it: lowering minSimilarity leaves it 11th of topK 3; raising topK leaves it under minSimilarity.
    expect(injects(setKnob(config, 'minSimilarity', 0))).toBe(false)
    expect(injects(setKnob(config, 'topK', 100))).toBe(false)
    expect(searchKnobs({ candidates: cands, config, mode: 'dense', target: 'm11' }).best).toBeNull()

    const { pair } = searchKnobPairs({ candidates: cands, config, mode: 'dense', target: 'm11' })
    expect(pair).not.toBeNull()
    const [a, b] = pair!.changes
    expect([a.knob, b.knob]).toContain('minSimilarity')
    const both = setKnob(setKnob(config, a.knob, a.to), b.knob, b.to)
    expect(injects(both)).toBe(true)
    expect(pair!.rank).toBe(rerank(cands, both, 'dense').results.findIndex((r) => r.id === 'm11') + 1)
    // costs are measured from the original config
    expect([a, b].find((ch) => ch.knob === 'minSimilarity')!.from).toBe(0.3)
    expect(pair!.normalized).toBeCloseTo(a.normalized + b.normalized, 9)
  })

  it('returns no pair when nothing can reach the memory (no similarity: minSimilarity always drops it)', () => {
    const lost = [...cands.slice(0, 10), { ...cands[10], similarity: null }]
    const cfg = { ...config, minSimilarity: 0.3 }
    expect(searchKnobPairs({ candidates: lost, config: cfg, mode: 'dense', target: 'm11', steps: 3 }).pair).toBeNull()
  })

  it('spreads values over a knob’s range (geometric for log knobs, integers for integer knobs)', () => {
    expect(spreadValues('floor', 5)).toEqual([0, 0.25, 0.5, 0.75, 1])
    expect(spreadValues('topK', 3)).toEqual([1, 10, 100])
  })
})

describe('the fast pair search equals the reference', () => {
  it('on random small cases: the same pair (moves cheapest first, bounded walks, ruled-out knobs skipped) as every move in knob order with a re-rank per value', () => {
    const r = rng(29)
    let compared = 0
    let pairs = 0
    let fastEvaluations = 0
    let slowEvaluations = 0
    for (let c = 0; c < 60; c++) {
      const { cands, config, mode } = randomCase(r)
      const pool = cands.filter((x) => inPool(x, mode, config.candidatePool))
      const injected = new Set(rerank(pool, config, mode).results.map((x) => x.id))
      for (const target of cands.filter((x) => !injected.has(x.id)).slice(0, 2)) {
        const inp = { candidates: cands, config, mode, target: target.id, steps: 4, maxEvaluations: 40 }
        const slow = searchKnobPairs({ ...inp, fast: false })
        const fast = searchKnobPairs(inp)
        expect(fast.pair, `case ${c} ${mode} ${target.id}`).toEqual(slow.pair)
        compared++
        fastEvaluations += fast.evaluations
        slowEvaluations += slow.evaluations
        if (!fast.pair) continue
        pairs++
        // Independently: both changes applied to the config and re-ranked here inject it at the pair's rank.
        const [a, b] = fast.pair.changes
        const both = setKnob(setKnob(config, a.knob, a.to), b.knob, b.to)
        const res = rerank(
          cands.filter((x) => inPool(x, mode, both.candidatePool)),
          both,
          mode,
        ).results.map((x) => x.id)
        expect(res.indexOf(target.id) + 1, `case ${c} ${mode} ${target.id}`).toBe(fast.pair.rank)
        expect(fast.pair.rank).toBeGreaterThan(0)
      }
    }
    expect(compared).toBeGreaterThan(80)
    expect(pairs).toBeGreaterThan(20)
    // the shortcuts did skip work
    expect(fastEvaluations).toBeLessThan(slowEvaluations / 2)
  }, 120_000)
})

describe('pickCheapest', () => {
  it('picks the least total cost, ties to the earlier move, however the moves are ordered and the walks bounded', () => {
    const r = rng(5)
    let calls = 0
    let allCalls = 0
    for (let c = 0; c < 2000; c++) {
      // Costs on a 1/8 grid (exact in binary), so totals tie exactly and often.
      const eighth = () => Math.floor(r() * 6) / 8
      const moves: Move[] = Array.from({ length: 1 + Math.floor(r() * 12) }, (_, i) => ({ a: 'floor' as const, v: i, cost: eighth(), order: i }))
      const seconds = moves.map(() => (r() < 0.3 ? null : eighth()))
      // The independent answer: every move's total, the least, ties to the smaller order.
      let want: { order: number; cost: number } | null = null
      for (const m of moves) {
        const s = seconds[m.order]
        if (s === null) continue
        const cost = m.cost + s
        if (!want || cost < want.cost) want = { order: m.order, cost }
      }
      const lazy = r() < 0.5 // a bounded walk may drop a change over the bound, or still report it
      const got = pickCheapest(
        moves,
        (m, max) => {
          calls++
          const s = seconds[m.order]
          return s === null || (lazy && s > max) ? null : { cost: s, change: m.order }
        },
        true,
      )
      allCalls += moves.length
      expect(got && { order: got.change, cost: got.cost }, `case ${c}`).toEqual(want)
      const ref = pickCheapest(
        moves,
        (m) => {
          const s = seconds[m.order]
          return s === null ? null : { cost: s, change: m.order }
        },
        false,
      )
      expect(ref && { order: ref.change, cost: ref.cost }, `case ${c} (reference)`).toEqual(want)
    }
    // moves that could not win were skipped
    expect(calls).toBeLessThan(allCalls * 0.8)
  })
})
