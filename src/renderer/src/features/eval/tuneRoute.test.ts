import { describe, expect, it } from 'vitest'
import { formatHash, parseHash } from '../../lib/router'
import { decodeIdList } from './evalRoute'
import { decodeTune, defaultTuneForm, encodeTune, KNOBS, type TuneForm } from './tuneRoute'

/** Through the address bar and back, as a copied link or a reload does. */
const roundTrip = (f: TuneForm, evalK: number) => decodeTune(parseHash(formatHash('eval', { tab: 'tune', ...encodeTune(f, evalK) })).params, evalK)

describe("the Tune tab's search settings in the URL", () => {
  it('round-trips objective, k, configs, seed and the unticked knobs', () => {
    const f: TuneForm = {
      ...defaultTuneForm(10),
      metric: 'ndcg',
      k: 20,
      trials: 250,
      seed: 7,
      space: { ...defaultTuneForm(10).space, floor: false, topK: false },
    }
    expect(encodeTune(f, 10)).toEqual({ tuneMetric: 'ndcg', tuneK: '20', tuneTrials: '250', tuneSeed: '7', tuneOff: 'floor,topK' })
    expect(roundTrip(f, 10)).toEqual(f)
  })

  it('leaves the defaults out, k following the config under test', () => {
    expect(formatHash('eval', encodeTune(defaultTuneForm(10), 10))).toBe('#/eval')
    // the eval's k is 25: a tune k of 25 is the default, 10 is not
    expect(encodeTune(defaultTuneForm(25), 25).tuneK).toBeUndefined()
    expect(encodeTune({ ...defaultTuneForm(25), k: 10 }, 25).tuneK).toBe('10')
    expect(decodeTune({}, 25)).toEqual(defaultTuneForm(25))
    expect(Object.values(decodeTune({}, 10).space).every(Boolean)).toBe(true)
    expect(Object.keys(decodeTune({}, 10).space)).toEqual(KNOBS.map(([k]) => k))
  })

  it('ignores each bad value for its default, never throws', () => {
    const d = defaultTuneForm(10)
    // a lower-is-better metric is not an objective; out-of-bounds, fractional and signed numbers are not taken
    expect(decodeTune({ tuneMetric: 'tokens', tuneK: '201', tuneTrials: '0', tuneSeed: '-3' }, 10)).toEqual(d)
    expect(decodeTune({ tuneMetric: 'nope', tuneK: '2.5', tuneTrials: '1e3', tuneSeed: '2147483648' }, 10)).toEqual(d)
    expect(decodeTune({ tuneOff: 'floor,,noSuchKnob' }, 10)).toEqual({ ...d, space: { ...d.space, floor: false } })
    // one bad field does not take the good ones with it
    expect(decodeTune({ tuneMetric: 'mrr', tuneK: 'x', tuneSeed: '0' }, 10)).toEqual({ ...d, metric: 'mrr', seed: 0 })
  })

  it('reads a run-id list in order, without blanks or repeats', () => {
    expect(decodeIdList('b,a,,b,c')).toEqual(['b', 'a', 'c'])
    expect(decodeIdList(undefined)).toEqual([])
    expect(decodeIdList('')).toEqual([])
  })
})
