/**
 * The age histogram's bins, shared by the SQLite and Postgres stores: a nice width for the oldest age, the counts
 * put in their bins, and a memory without a time (a NULL bin) in none — `null >= 0` is true in JS, so without its
 * check that count crashed the histogram (bins[null]).
 */
import { describe, expect, it } from 'vitest'
import { ageBinMs, ageBins } from './ageBins'

const H = 3_600_000

describe('age bins', () => {
  it('a nice number of hours a bin, else whole years', () => {
    expect(ageBinMs(0, 40)).toBe(1 * H)
    expect(ageBinMs(40 * 5 * H, 40)).toBe(6 * H) // 5 h a bin asked: the next nice width
    expect(ageBinMs(30 * 24 * H, 30)).toBe(24 * H)
    expect(ageBinMs(40 * 3 * 8760 * H, 40)).toBe(3 * 8760 * H) // past a year a bin: whole years
  })

  it('puts each count in its bin; a NULL bin (no time) and bins out of range in none', () => {
    const bins = ageBins(
      [
        { b: null, n: 3 },
        { b: 0, n: 2 },
        { b: 2, n: '5' },
        { b: 7, n: 1 },
        { b: -1, n: 1 },
      ],
      2.5 * H,
      H,
    )
    expect(bins).toEqual([
      { startMs: 0, endMs: H, count: 2 },
      { startMs: H, endMs: 2 * H, count: 0 },
      { startMs: 2 * H, endMs: 3 * H, count: 5 },
    ])
  })
})
