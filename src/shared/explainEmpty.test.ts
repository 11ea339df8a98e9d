import { describe, expect, it } from 'vitest'
import { explainEmpty } from './explainEmpty'
import { getPreset } from './presets'
import { rerank } from './scoring'
import type { CandidateRaw, RecallConfig } from './types'

const cand = (id: string, similarity: number | null, textLength = 40, rank = 1): CandidateRaw => ({
  id,
  similarity,
  lexical: 0,
  bm25: null,
  ageLastUsedMs: 0,
  ageCreatedMs: 0,
  salience: 0,
  denseRank: rank,
  lexicalRank: null,
  recencyRank: null,
  textLength,
})

// Similarity-only scoring: the composite is the cosine, so every expected number below is read off the inputs.
const base: RecallConfig = { ...getPreset('fieldguide').config, weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 }, floor: 0.35, topK: 5 }
const pool = [cand('a', 0.21, 40, 1), cand('b', 0.15, 40, 2), cand('c', 0.1, 40, 3)]

function explain(config: RecallConfig, cands: CandidateRaw[] = pool) {
  const r = rerank(cands, config, 'dense')
  return explainEmpty({ results: r.results, dropped: r.dropped, candidates: cands, config, mode: 'dense', inScope: cands.length })
}

describe('explainEmpty', () => {
  it('no arm ran: the suggestion switches to lexical and moves the similarity weight there (0.6 + 0.1 → lexical 0.7, similarity 0)', () => {
    const config: RecallConfig = { ...base, weights: { similarity: 0.6, lexical: 0.1, recency: 0.2, salience: 0.1 } }
    const e = explainEmpty({ results: [], dropped: [], candidates: [], config, mode: 'none', inScope: 10 })!
    expect(e.gate).toBe('arm')
    expect(e.suggestion!.patch).toEqual({ mode: 'lexical', weights: { similarity: 0, lexical: 0.7, recency: 0.2, salience: 0.1 } })
    expect(e.suggestion!.label).toBe('mode → lexical, lexical weight → 0.70')
  })

  it('nothing to explain when something is injected', () => {
    expect(explain({ ...base, floor: 0.2 })).toBeNull()
  })

  it('floor: all 3 below 0.35, best 0.21 (0.14 short); lowering the floor to 0.21 injects exactly the best one', () => {
    const e = explain(base)!
    expect(e.gate).toBe('floor')
    expect(e.byGate).toEqual({ floor: 3 })
    expect(e.best).toBeCloseTo(0.21, 12)
    expect(e.threshold).toBe(0.35)
    expect(e.message).toMatch(/All 3 candidates were dropped \(3 below the floor\)/)
    expect(e.message).toMatch(/best score is 0\.210, 0\.140 below floor 0\.350/)
    expect(e.suggestion).toEqual({ patch: { floor: 0.21 }, label: 'floor → 0.21', wouldInject: 1 })
  })

  it('minSimilarity: the best cosine and the gate are named; a row without a vector never counts as best', () => {
    const cands = [cand('a', 0.42, 40, 1), cand('b', 0.3, 40, 2), cand('n', null, 40, 3)]
    const e = explain({ ...base, floor: null, minSimilarity: 0.5 }, cands)!
    expect(e.gate).toBe('minSimilarity')
    expect(e.best).toBeCloseTo(0.42, 12)
    expect(e.message).toMatch(/best cosine is 0\.420, 0\.080 below minSimilarity 0\.500/)
    expect(e.suggestion?.patch).toEqual({ minSimilarity: 0.42 })
    expect(e.suggestion?.wouldInject).toBe(1)
  })

  it('budget: the smallest candidate (ceil(90/4) = 23 tokens) is 3 over a budget of 20', () => {
    const cands = [cand('a', 0.9, 120, 1), cand('b', 0.8, 90, 2)]
    const e = explain({ ...base, floor: null, tokenBudget: 20, overflow: 'skip' }, cands)!
    expect(e.gate).toBe('budget')
    expect(e.best).toBe(23)
    expect(e.message).toMatch(/needs 23 tokens, 3 over the budget of 20/)
    expect(e.suggestion).toEqual({ patch: { tokenBudget: 23 }, label: 'tokenBudget → 23', wouldInject: 1 })
  })

  it('an empty pool and an empty scope say so', () => {
    const r = rerank([], base, 'dense')
    expect(explainEmpty({ results: r.results, dropped: r.dropped, candidates: [], config: base, mode: 'dense', inScope: 12 })!.gate).toBe('pool')
    expect(explainEmpty({ results: r.results, dropped: r.dropped, candidates: [], config: base, mode: 'dense', inScope: 0 })!.gate).toBe('scope')
  })
})
