import { describe, expect, it } from 'vitest'
import { mergeConfig, partialConfigSchema } from '../../../../shared/config'
import { getPreset } from '../../../../shared/presets'
import { formatHash, parseHash } from '../../lib/router'
import { decodeEval, encodeEval } from './evalRoute'
import { DEFAULT_SETTINGS, mergeOverrides, parseOverrides, type EvalSettings } from './settings'

/** Through the address bar and back, as a copied link or a reload does. */
const roundTrip = (s: EvalSettings) => decodeEval(parseHash(formatHash('eval', encodeEval(s))).params)

describe('the config under test in the URL', () => {
  it('round-trips preset, overrides (after "Widen to unit=memory"), k and split through the hash', () => {
    const widened = mergeOverrides('{"topK": 7, "weights": {"recency": 0.2}}', { unit: 'memory' })
    const s: EvalSettings = { preset: 'portal-episodic', overrides: widened, k: 25, split: 'test' }
    const params = encodeEval(s)
    expect(params).toEqual({ preset: 'portal-episodic', k: '25', split: 'test', config: '{"topK":7,"weights":{"recency":0.2},"unit":"memory"}' })
    const back = roundTrip(s)
    expect(back).toMatchObject({ preset: 'portal-episodic', k: 25, split: 'test' })
    expect(parseOverrides(back.overrides)).toEqual({ ok: true, config: { topK: 7, weights: { recency: 0.2 }, unit: 'memory' } })
  })

  it('leaves the defaults out of the URL and reads an empty URL as the defaults', () => {
    expect(formatHash('eval', encodeEval(DEFAULT_SETTINGS))).toBe('#/eval')
    expect(decodeEval({})).toEqual(DEFAULT_SETTINGS)
  })

  it('keeps a whole applied config (a tuned RecallConfig) as the overrides', () => {
    const whole = mergeConfig(getPreset('fieldguide').config, { topK: 4, floor: null })
    expect(partialConfigSchema.safeParse(whole).success).toBe(true)
    const back = roundTrip({ ...DEFAULT_SETTINGS, overrides: JSON.stringify(whole, null, 2) })
    expect(JSON.parse(back.overrides)).toEqual(whole)
  })

  it('leaves config out of the patch while the overrides are not valid JSON (the URL keeps the last valid ones)', () => {
    const p = encodeEval({ ...DEFAULT_SETTINGS, overrides: '{"topK": ' })
    expect('config' in p).toBe(false)
    // cleared overrides remove the parameter
    const cleared = encodeEval({ ...DEFAULT_SETTINGS, overrides: '  ' })
    expect('config' in cleared && cleared.config === undefined).toBe(true)
  })

  it('ignores each bad value for its default, never throws', () => {
    const bad = decodeEval({ preset: 'x'.repeat(201), config: '{"topK":', k: '2.5', split: 'everything' })
    expect(bad).toEqual(DEFAULT_SETTINGS)
    expect(decodeEval({ config: '{"topK":"many"}', k: '0' })).toEqual(DEFAULT_SETTINGS)
    expect(decodeEval({ config: '{"unknownKnob":1}', k: '1001' })).toEqual(DEFAULT_SETTINGS)
    expect(decodeEval({ config: '[1,2]', k: 'ten', preset: '   ' })).toEqual(DEFAULT_SETTINGS)
    // one bad field does not take the good ones with it
    expect(decodeEval({ preset: 'mem0', config: 'nope', k: '5' })).toEqual({ ...DEFAULT_SETTINGS, preset: 'mem0', k: 5 })
  })
})
