import { describe, expect, it } from 'vitest'
import { jaccard, rankTable, rbo } from './overlap'

describe('overlap', () => {
  it('jaccard', () => {
    expect(jaccard(['a', 'b', 'c'], ['b', 'c', 'd'])).toBe(2 / 4)
    expect(jaccard([], [])).toBe(1)
    expect(jaccard(['a'], [])).toBe(0)
  })

  it('RBO: identical → 1, disjoint → 0, a swapped top pair → p (hand-derived from Webber et al. eq. 32)', () => {
    expect(rbo(['a', 'b', 'c'], ['a', 'b', 'c'])).toBeCloseTo(1, 12)
    expect(rbo(['a', 'b'], ['c', 'd'])).toBe(0)
    // X1 = 0, X2 = 2: (1−p)/p · (0 + p²) + p² = p
    expect(rbo(['a', 'b'], ['b', 'a'], 0.9)).toBeCloseTo(0.9, 12)
    expect(rbo(['a', 'b'], ['b', 'a'], 0.5)).toBeCloseTo(0.5, 12)
    // uneven: S = [a] agrees with L = [a, b] as far as it goes → 1 (extrapolation)
    expect(rbo(['a'], ['a', 'b'])).toBeCloseTo(1, 12)
    expect(rbo([], [])).toBe(1)
    expect(rbo(['a'], [])).toBe(0)
    // top-weighted: disagreeing at the top costs more than at the bottom
    expect(rbo(['x', 'b', 'c', 'd'], ['a', 'b', 'c', 'd'])).toBeLessThan(rbo(['a', 'b', 'c', 'x'], ['a', 'b', 'c', 'd']))
  })

  it('rank table with deltas vs the first list', () => {
    expect(
      rankTable([
        ['a', 'b'],
        ['b', 'c'],
      ]),
    ).toEqual([
      { id: 'a', ranks: [1, null], deltas: [0, null] },
      { id: 'b', ranks: [2, 1], deltas: [0, -1] },
      { id: 'c', ranks: [null, 2], deltas: [null, null] },
    ])
  })
})
