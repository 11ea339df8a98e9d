import { describe, expect, it } from 'vitest'
import { mergeConfig } from '../../../../shared/config'
import { getPreset, PRESETS } from '../../../../shared/presets'
import { configFromParams, decodeBaseline, decodeRequest, diffConfig, encodeBaseline, encodeRecall } from './recallRoute'
import type { RecallRequest } from './useRecall'

const base = PRESETS.find((p) => p.name === 'fieldguide')!.config

describe('a recall request in the URL', () => {
  it('keeps only what differs from the preset, and merging it back gives the edited config', () => {
    const edited = { ...base, topK: 3, weights: { ...base.weights, recency: 0.9 }, scope: { ...base.scope, agentId: 'agent-coder' } }
    const diff = diffConfig(base, edited)
    expect(diff).toEqual({ topK: 3, weights: { recency: 0.9 }, scope: { agentId: 'agent-coder' } })
    expect(mergeConfig(base, diff!)).toEqual(edited)
    expect(diffConfig(base, structuredClone(base))).toBeNull()
  })

  it('encodes and decodes the request: query, preset, cue, the user-set time, overrides', () => {
    const req: RecallRequest = {
      query: 'what does the user eat?',
      useCue: true,
      cue: { goal: 'plan dinners', currentStep: 'shopping', openQuestions: ['allergies?'] },
      now: 1_790_000_000_000,
      embedder: null,
      preset: 'fieldguide:hybrid',
    }
    const config = { ...base, floor: null }
    const params = encodeRecall(req, config, base, true)
    expect(params.config).toBe('{"floor":null}')
    expect(params.now).toBe('1790000000000')
    expect(decodeRequest(params)).toEqual(req)
    expect(configFromParams(base, params)).toEqual(config)
    // An automatic time travel is not the user's: it is worked out again on load, not frozen into the link.
    expect(encodeRecall(req, config, base, false).now).toBeUndefined()
  })

  it('ignores a hand-edited override that is not a valid partial config (no throw, the preset stands)', () => {
    expect(configFromParams(base, { config: '{"topK":' })).toEqual(base)
    expect(configFromParams(base, { config: '{"topK":"many"}' })).toEqual(base)
    expect(decodeRequest({ cue: 'not json', now: 'soon' })).toMatchObject({ useCue: false, now: null, query: '', preset: 'fieldguide' })
  })
})

describe('the pinned baseline in the URL', () => {
  it('round-trips the label and the whole config; a hand-edited or partial config is ignored, never thrown', () => {
    const config = { ...getPreset('engram').config, topK: 7 }
    const pin = encodeBaseline({ label: 'engram, topK 7', config })!
    expect(decodeBaseline({ pin })).toEqual({ label: 'engram, topK 7', config })
    expect(encodeBaseline(null)).toBeUndefined()
    expect(decodeBaseline({})).toBeNull()
    expect(decodeBaseline({ pin: '{"label":"x","config":{"topK":3}}' })).toBeNull()
    expect(decodeBaseline({ pin: pin.slice(0, 40) })).toBeNull()
  })
})
