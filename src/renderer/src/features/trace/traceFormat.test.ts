import { describe, expect, it } from 'vitest'
import { getPreset } from '../../../../shared/presets'
import { activeGates } from './traceFormat'

describe('activeGates', () => {
  it('lists every gate that is on, minSimilarity included, in the engine order', () => {
    const c = { ...getPreset('fieldguide').config, minSimilarity: 0.3, floor: 0.2, topK: 5, tokenBudget: 800, gateOrder: 'floor-then-topk' as const }
    expect(activeGates(c).map((g) => g.text)).toEqual(['minSimilarity 0.3', 'floor 0.2', 'topK 5', 'budget 800 tok'])
    expect(activeGates({ ...c, gateOrder: 'topk-then-floor' }).map((g) => g.gate)).toEqual(['minSimilarity', 'topK', 'floor', 'budget'])
  })
  it('leaves out gates that are off; dedupe shows when excludeIds are set', () => {
    const c = { ...getPreset('fieldguide').config, minSimilarity: null, floor: null, tokenBudget: null }
    expect(activeGates(c).map((g) => g.gate)).toEqual(['topK'])
    expect(activeGates({ ...c, scope: { ...c.scope, excludeIds: ['a', 'b'] } }).map((g) => g.text)).toEqual(['topK ' + c.topK, 'dedupe 2 ids'])
  })
})
