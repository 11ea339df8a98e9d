import { describe, expect, it } from 'vitest'
import { assembleWindow, historyLine } from './assemble'

// docs/internals/design.md: the default estimate is ceil(len/4); seed 004's is (len+3)/4 integer division (of UTF-8 bytes).
const ceil4 = (s: string) => (s === '' ? 0 : Math.ceil(s.length / 4))

const base = {
  systemPrompt: 'You are a careful assistant.', // 28 chars → 7
  knowledge: { text: '[Retrieved Knowledge]\nSource: a\nfact\n---\n', tokens: 11, cut: [], note: null },
  episodes: { text: '', tokens: 0, note: 'no episodes' },
  history: [
    { role: 'user', content: 'first question about the deploy' },
    { role: 'assistant', content: 'an answer of some length here' },
    { role: 'user', content: 'a follow-up' },
  ],
  historyNote: null,
  current: 'and now?',
  estimator: 'ceil4' as const,
}

describe('assembleWindow', () => {
  it('lays out the five blocks in seed 001 order with the engine estimator’s counts', () => {
    const p = assembleWindow({ ...base, window: 4096 })
    expect(p.blocks.map((b) => b.key)).toEqual(['system', 'knowledge', 'episodes', 'history', 'current'])
    expect(p.blocks[0].tokens).toBe(ceil4(base.systemPrompt))
    expect(p.blocks[1].tokens).toBe(11)
    const hist = base.history.map(historyLine).join('\n')
    expect(p.blocks[3].text).toBe(hist)
    expect(p.blocks[3].tokens).toBe(ceil4(hist))
    expect(p.blocks[4].tokens).toBe(ceil4('and now?'))
    expect(p.used).toBe(p.blocks.reduce((s, b) => s + b.tokens, 0))
    expect(p.free).toBe(4096 - p.used)
  })

  it('prunes the oldest history turns to the room the other blocks leave, and lists them as cut', () => {
    const fixed = ceil4(base.systemPrompt) + 11 + 0 + ceil4(base.current)
    const lastTwo = base.history.slice(1).map(historyLine).join('\n')
    // Exactly room for the last two turns.
    const p = assembleWindow({ ...base, window: fixed + ceil4(lastTwo) })
    expect(p.blocks[3].text).toBe(lastTwo)
    expect(p.blocks[3].cut.map((c) => c.text)).toEqual([historyLine(base.history[0])])
    expect(p.free).toBe(0)
    // No room at all: every turn is cut, the other blocks stay, the window is over.
    const q = assembleWindow({ ...base, window: 10 })
    expect(q.blocks[3].tokens).toBe(0)
    expect(q.blocks[3].cut).toHaveLength(3)
    expect(q.free).toBe(10 - fixed)
  })

  it('counts with seed 004’s estimator when the config uses it', () => {
    const p = assembleWindow({ ...base, systemPrompt: 'héllo', estimator: 'neo', window: 100 })
    // 'héllo' is 6 UTF-8 bytes → (6+3)/4 = 2
    expect(p.blocks[0].tokens).toBe(2)
  })
})
