import { describe, expect, it } from 'vitest'
import { bootstrapMeanCI, caseMetrics, metricKey, metricKeys, parseMetricKey, signTestP, summarize, type Judgment } from './metrics'

// Every expected number below is worked out by hand in the comment beside it.

describe('graded nDCG', () => {
  const j: Judgment = {
    relevant: [
      { id: 'a', grade: 3 },
      { id: 'b', grade: 1 },
      { id: 'c', grade: 2 },
    ],
    expectEmpty: false,
  }

  it('uses gain 2^g − 1, discount log2(rank + 1), ideal = relevant sorted by grade', () => {
    // injected: x, c, a
    // DCG@3 = 0/log2(2) + (2^2−1)/log2(3) + (2^3−1)/log2(4) = 3/1.5849625 + 7/2 = 1.8927893 + 3.5 = 5.3927893
    // IDCG@3 (grades 3,2,1) = 7/1 + 3/1.5849625 + 1/2 = 7 + 1.8927893 + 0.5 = 9.3927893
    const m = caseMetrics(j, ['x', 'c', 'a'], [10, 10, 10], 3, 1000)
    expect(m.ndcg).toBeCloseTo(5.3927893 / 9.3927893, 6)
    // recall@3 = 2 of 3; precision@3 = 2 of 3 injected; first relevant at rank 2
    expect(m.recall).toBeCloseTo(2 / 3, 12)
    expect(m.precision).toBeCloseTo(2 / 3, 12)
    expect(m.mrr).toBe(0.5)
    expect(m.hit).toBe(1)
  })

  it('cuts the ideal at k too', () => {
    // k = 1, injected [a]: DCG@1 = 7, IDCG@1 = 7 → 1 even though two relevant are missing
    expect(caseMetrics(j, ['a'], [1], 1, 1000).ndcg).toBe(1)
    // k = 1, injected [c]: 3 / 7
    expect(caseMetrics(j, ['c'], [1], 1, 1000).ndcg).toBeCloseTo(3 / 7, 12)
  })

  it('is the same for a perfect order and 0 with no relevant hit', () => {
    expect(caseMetrics(j, ['a', 'c', 'b'], [1, 1, 1], 3, 1000).ndcg).toBeCloseTo(1, 12)
    expect(caseMetrics(j, ['x', 'y'], [1, 1], 3, 1000).ndcg).toBe(0)
  })
})

describe('MRR, recall, precision, hit', () => {
  const j: Judgment = {
    relevant: [
      { id: 'r1', grade: 1 },
      { id: 'r2', grade: 1 },
    ],
    expectEmpty: false,
  }

  it('MRR is 0 with no hit, and only the first relevant counts', () => {
    expect(caseMetrics(j, ['x', 'y', 'z'], [1, 1, 1], 10, 1000).mrr).toBe(0)
    expect(caseMetrics(j, ['x', 'y', 'r2', 'r1'], [1, 1, 1, 1], 10, 1000).mrr).toBeCloseTo(1 / 3, 12)
  })

  it('MRR looks past k (it has no cutoff); recall/hit/precision do not', () => {
    // k = 2, injected x, y, r1: nothing relevant in the first 2, first relevant at rank 3
    const m = caseMetrics(j, ['x', 'y', 'r1'], [1, 1, 1], 2, 1000)
    expect(m.recall).toBe(0)
    expect(m.hit).toBe(0)
    expect(m.precision).toBe(0)
    expect(m.mrr).toBeCloseTo(1 / 3, 12)
  })

  it('precision divides by what was injected within k; nothing injected scores 0', () => {
    // k = 10, injected [r1]: precision 1/1, recall 1/2
    const m = caseMetrics(j, ['r1'], [5], 10, 1000)
    expect(m.precision).toBe(1)
    expect(m.recall).toBe(0.5)
    const none = caseMetrics(j, [], [], 10, 1000)
    expect(none).toMatchObject({ precision: 0, recall: 0, mrr: 0, hit: 0, ndcg: 0, tokens: 0, abstention: null })
  })
})

describe('abstention and false injection', () => {
  const empty: Judgment = { relevant: [], expectEmpty: true }

  it('an expect-empty case is right iff nothing is injected', () => {
    expect(caseMetrics(empty, [], [], 5, 1000)).toMatchObject({
      abstention: 1,
      falseInjection: 0,
      tokens: 0,
      recall: null,
      ndcg: null,
      mrr: null,
      locomo: null,
    })
    expect(caseMetrics(empty, ['m1', 'm2'], [30, 12], 5, 1000)).toMatchObject({ abstention: 0, falseInjection: 2, tokens: 42 })
  })

  it('means are taken over the cases where a metric applies', () => {
    const graded: Judgment = { relevant: [{ id: 'a', grade: 1 }], expectEmpty: false }
    const unjudged: Judgment = { relevant: [], expectEmpty: false }
    const per = [
      caseMetrics(graded, ['a'], [4], 5, 1000), // recall 1
      caseMetrics(graded, ['b'], [4], 5, 1000), // recall 0
      caseMetrics(empty, [], [], 5, 1000), // abstained
      caseMetrics(empty, ['a', 'b', 'c'], [1, 1, 1], 5, 1000), // injected 3
      caseMetrics(unjudged, ['a'], [6], 5, 1000), // LoCoMo counts 1
    ]
    const s = summarize(per, 5)
    expect(s.counts).toEqual({ cases: 5, graded: 2, expectEmpty: 2, unjudged: 1 })
    expect(s.metrics['recall@5']).toBe(0.5) // (1 + 0) / 2
    expect(s.metrics.abstention).toBe(0.5) // (1 + 0) / 2
    expect(s.metrics.falseInjection).toBe(1.5) // (0 + 3) / 2
    expect(s.metrics.tokens).toBe((4 + 4 + 0 + 3 + 6) / 5)
    expect(s.metrics['locomo@5']).toBeCloseTo((1 + 0 + 1) / 3, 12)
  })
})

describe('budget-aware recall', () => {
  it('counts only relevant memories inside the first B tokens of the injected order', () => {
    const j: Judgment = {
      relevant: [
        { id: 'a', grade: 1 },
        { id: 'b', grade: 1 },
      ],
      expectEmpty: false,
    }
    // tokens 60 (a) + 50 (x) = 110 ≤ 120; + 30 (b) = 140 > 120 → only a fits → 1/2
    expect(caseMetrics(j, ['a', 'x', 'b'], [60, 50, 30], 10, 120).budgetRecall).toBe(0.5)
    expect(caseMetrics(j, ['a', 'x', 'b'], [60, 50, 30], 10, 140).budgetRecall).toBe(1)
    // the first memory alone is over budget: nothing fits
    expect(caseMetrics(j, ['a', 'b'], [200, 1], 10, 120).budgetRecall).toBe(0)
  })
})

describe('LoCoMo retrieval score', () => {
  it('is the fraction of evidence in the top k, and 1 for a question without evidence', () => {
    const j: Judgment = {
      relevant: [
        { id: 'D1:3', grade: 1 },
        { id: 'D2:8', grade: 1 },
        { id: 'D4:1', grade: 1 },
      ],
      expectEmpty: false,
    }
    expect(caseMetrics(j, ['D2:8', 'x', 'D4:1', 'D1:3'], [1, 1, 1, 1], 3, 1e9).locomo).toBeCloseTo(2 / 3, 12)
    expect(caseMetrics({ relevant: [], expectEmpty: false }, ['x'], [1], 3, 1e9).locomo).toBe(1)
  })
})

describe('LongMemEval recall_any@k / recall_all@k', () => {
  it('any = some relevant memory in the first k, all = every relevant memory in the first k', () => {
    const j: Judgment = {
      relevant: [
        { id: 'a', grade: 1 },
        { id: 'b', grade: 3 },
      ],
      expectEmpty: false,
    }
    const tok = [1, 1, 1, 1]
    // Worked by hand: R_2 = [x, a] holds a but not b; R_4 = [x, a, y, b] holds both.
    expect(caseMetrics(j, ['x', 'a', 'y', 'b'], tok, 2, 1e9)).toMatchObject({ recallAny: 1, recallAll: 0 })
    expect(caseMetrics(j, ['x', 'a', 'y', 'b'], tok, 4, 1e9)).toMatchObject({ recallAny: 1, recallAll: 1 })
    expect(caseMetrics(j, ['x', 'y'], [1, 1], 2, 1e9)).toMatchObject({ recallAny: 0, recallAll: 0 })
    // They do not apply to expect-empty or unjudged cases, and summarize averages them over graded cases only.
    expect(caseMetrics({ relevant: [], expectEmpty: true }, [], [], 2, 1e9).recallAll).toBeNull()
    const s = summarize(
      [caseMetrics(j, ['a', 'b'], [1, 1], 2, 1e9), caseMetrics(j, ['a'], [1], 2, 1e9), caseMetrics({ relevant: [], expectEmpty: false }, ['a'], [1], 2, 1e9)],
      2,
    )
    expect(s.metrics['recallAll@2']).toBe(0.5)
    expect(s.metrics['recallAny@2']).toBe(1)
  })
})

describe('metric keys', () => {
  it('substitutes k where a metric has one', () => {
    expect(metricKey('ndcg', 10)).toBe('ndcg@10')
    expect(metricKey('mrr', 10)).toBe('mrr')
    expect(metricKeys(5)).toEqual([
      'recall@5',
      'precision@5',
      'ndcg@5',
      'mrr',
      'hit@5',
      'abstention',
      'falseInjection',
      'tokens',
      'budgetRecall',
      'locomo@5',
      'recallAny@5',
      'recallAll@5',
    ])
    expect(parseMetricKey('recall_all@10')).toEqual({ id: 'recallAll', k: 10 })
    expect(parseMetricKey('NDCG@10')).toEqual({ id: 'ndcg', k: 10 })
    expect(parseMetricKey('recall@k', 7)).toEqual({ id: 'recall', k: 7 })
    expect(parseMetricKey('mrr')).toEqual({ id: 'mrr', k: null })
    expect(parseMetricKey('mrr@3')).toBeNull()
    expect(parseMetricKey('ndcg')).toBeNull()
    expect(parseMetricKey('bogus@3')).toBeNull()
  })
})

describe('how sure', () => {
  it('sign test: 9 wins vs 1 loss is p = 2·(1 + 10)/1024', () => {
    // P(X ≤ 1) for Binomial(10, ½) = (C(10,0) + C(10,1)) / 2^10 = 11/1024; two-sided ×2
    expect(signTestP(9, 1)).toBeCloseTo(22 / 1024, 12)
    expect(signTestP(5, 5)).toBe(1)
    expect(signTestP(0, 0)).toBe(1)
    // large n stays finite: 600 vs 400 is far from even
    expect(signTestP(600, 400)).toBeLessThan(1e-9)
  })

  it('bootstrap interval brackets the mean, is deterministic, and collapses for a constant sample', () => {
    const xs = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 1 : 0)) // mean 0.25
    const a = bootstrapMeanCI(xs, { seed: 7 })!
    expect(a.mean).toBe(0.25)
    expect(a.lo).toBeLessThan(0.25)
    expect(a.hi).toBeGreaterThan(0.25)
    // the standard error is sqrt(.25·.75/200) ≈ 0.0306, so a 95% interval is about ±0.06
    expect(a.hi - a.lo).toBeGreaterThan(0.08)
    expect(a.hi - a.lo).toBeLessThan(0.16)
    expect(bootstrapMeanCI(xs, { seed: 7 })).toEqual(a)
    const c = bootstrapMeanCI([0.4, 0.4, 0.4])!
    for (const v of [c.mean, c.lo, c.hi]) expect(v).toBeCloseTo(0.4, 12)
    expect(c.hi - c.lo).toBe(0)
    expect(bootstrapMeanCI([])).toBeNull()
  })
})
