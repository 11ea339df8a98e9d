/**
 * The two-knob search: a memory that two gates drop (minSimilarity, then topK) is
 * injected by no single knob — checked with the single-knob search and by sweeping
 * each gate alone through `rerank` — and the pair found does inject it (re-ranked here).
 */
import { describe, expect, it } from 'vitest'
import { getPreset } from '../../shared/presets'
import { rerank } from '../../shared/scoring'
import type { CandidateRaw, RecallConfig } from '../../shared/types'
import { searchKnobs, setKnob } from './knobs'
import { searchKnobPairs, spreadValues } from './knobPairs'

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
