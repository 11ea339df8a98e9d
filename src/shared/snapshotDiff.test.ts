import { describe, expect, it } from 'vitest'
import { snapshotDiff } from './snapshotDiff'

describe('snapshotDiff', () => {
  it('marks same / moved / dropped / new with the rank shift, and flags relevant memories', () => {
    // left  a b c d        right  b a e c
    // a: 1 → 2 moved (+1) · b: 2 → 1 moved (−1) · c: 3 → 4 moved (+1) · d dropped · e new
    const d = snapshotDiff(['a', 'b', 'c', 'd'], ['b', 'a', 'e', 'c'], ['d', 'e'])
    expect(d.left.map((e) => [e.id, e.mark, e.shift])).toEqual([
      ['a', 'moved', 1],
      ['b', 'moved', -1],
      ['c', 'moved', 1],
      ['d', 'dropped', null],
    ])
    expect(d.right.map((e) => [e.id, e.mark, e.shift])).toEqual([
      ['b', 'moved', -1],
      ['a', 'moved', 1],
      ['e', 'new', null],
      ['c', 'moved', 1],
    ])
    expect(d.counts).toEqual({ same: 0, moved: 3, dropped: 1, new: 1 })
    expect(d.left.find((e) => e.id === 'd')!.relevant).toBe(true)
    expect(d.relevantHits).toEqual({ left: 1, right: 1 })
  })

  it('identical lists are all same', () => {
    const d = snapshotDiff(['x', 'y'], ['x', 'y'], [])
    expect(d.counts).toEqual({ same: 2, moved: 0, dropped: 0, new: 0 })
  })
})
