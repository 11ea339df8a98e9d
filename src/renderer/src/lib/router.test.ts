import { describe, expect, it } from 'vitest'
import { formatHash, parseHash, parsePatch, serializePatch } from './router'

describe('hash routes', () => {
  it('round-trips a screen and its parameters, whatever characters they hold', () => {
    const params = { query: 'deploy the tier migration & "backfill"?', config: '{"topK":3}', memoryId: 'm-004et' }
    const hash = formatHash('recall', params)
    expect(hash.startsWith('#/recall?')).toBe(true)
    expect(parseHash(hash)).toEqual({ route: 'recall', params })
  })

  it('leaves out empty and undefined values and orders keys, so one state has one URL', () => {
    expect(formatHash('browse', { memoryId: undefined, b: '2', a: '1', c: '' })).toBe('#/browse?a=1&b=2')
    expect(formatHash('library')).toBe('#/library')
  })

  it('reads no route from a hash that is not one (the token fragment, nothing, junk)', () => {
    expect(parseHash('#token=abc')).toEqual({ route: '', params: {} })
    expect(parseHash('')).toEqual({ route: '', params: {} })
    expect(parseHash('#/trace/?eventId=ev-1&why=')).toEqual({ route: 'trace', params: { eventId: 'ev-1' } })
  })

  it('a serialized patch keeps a parameter set back to its default, so applying it removes the old value', () => {
    const patch = parsePatch(serializePatch({ preset: undefined, query: 'a' }))
    expect(patch).toEqual({ preset: undefined, query: 'a' })
    expect('preset' in patch).toBe(true)
    const next = { ...{ preset: 'neo', query: 'old', tab: 'tune' }, ...patch }
    expect(formatHash('recall', next)).toBe('#/recall?query=a&tab=tune')
    // never '' in the params a screen reads back (a '' preset is not "no preset")
    expect(Object.values(next)).not.toContain('')
  })
})
