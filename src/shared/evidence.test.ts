/**
 * Evidence attribution math on hand-made texts: every expected number is worked
 * out here from the documented formula (docs/guide/decision-trace.md), not read
 * off the code.
 */
import { describe, expect, it } from 'vitest'
import { cosine, termOf, termSet, tokenEvidence, tokenSimilarity, wordDiff, words } from './evidence'

describe('terms', () => {
  it('lower-cases, drops stop words and lone letters, folds plural and possessive s', () => {
    expect([...termSet("The user's deploys of Billing-API on Fridays, a 2nd time")]).toEqual(['user', 'deploy', 'billing', 'api', 'friday', '2nd', 'time'])
    expect(termOf('status')).toBe('status') // -us is not a plural
    expect(termOf('class')).toBe('class')
    expect(termOf('replies')).toBe('reply')
    expect(termOf('is')).toBeNull()
    expect(termOf('x')).toBeNull()
    expect(termOf('7')).toBe('7')
  })
  it('words() keeps offsets into the text (for highlighting)', () => {
    const t = 'Ship it, Bob.'
    expect(words(t).map((w) => [w.word, t.slice(w.start, w.start + w.word.length), w.term])).toEqual([
      ['Ship', 'Ship', 'ship'],
      ['it', 'it', null],
      ['Bob', 'Bob', 'bob'],
    ])
  })
})

describe('tokenEvidence', () => {
  it('weights shared words by smoothed idf over the returned memories and normalises by the decision', () => {
    const decision = 'Deploy the billing service on Friday.'
    const mems = [
      { id: 'a', text: 'Billing deploys happen on Friday mornings.' },
      { id: 'b', text: 'The auth service runs in staging.' },
      { id: 'c', text: 'Friday is a holiday.' },
      { id: 'gone', text: null },
    ]
    const e = tokenEvidence(decision, mems)
    // decision terms: deploy, billing, service, friday. N = 3 memories with text.
    // df: deploy 1 (a), billing 1 (a), service 1 (b), friday 2 (a, c)
    const w1 = Math.log(4 / 2) + 1
    const w2 = Math.log(4 / 3) + 1
    const total = 3 * w1 + w2
    expect(e.memories).toBe(3)
    const by = Object.fromEntries(e.rows.map((r) => [r.id, r]))
    expect(by.a.support).toBeCloseTo((2 * w1 + w2) / total, 12)
    expect(by.b.support).toBeCloseTo(w1 / total, 12)
    expect(by.c.support).toBeCloseTo(w2 / total, 12)
    expect(by.gone.support).toBe(0)
    expect(by.a.shared.map((s) => s.term)).toEqual(['billing', 'deploy', 'friday']) // heaviest first, ties by name
    expect(by.b.shared.map((s) => s.term)).toEqual(['service'])
    expect(e.union).toBeCloseTo(1, 12)
    expect(e.decisionTerms.find((t) => t.term === 'friday')).toEqual({ term: 'friday', weight: w2, df: 2 })
  })

  it('a decision word no memory has lowers every support alike; union says how much is covered', () => {
    const e = tokenEvidence('Rollback payments tonight', [{ id: 'a', text: 'payments rollback plan' }])
    // N = 1: rollback and payment have df 1 → ln(2/2)+1 = 1; tonight df 0 → ln(2/1)+1
    const wNew = Math.log(2) + 1
    expect(e.rows[0].support).toBeCloseTo(2 / (2 + wNew), 12)
    expect(e.union).toBeCloseTo(2 / (2 + wNew), 12)
  })

  it('an empty decision supports nothing', () => {
    const e = tokenEvidence('the of and', [{ id: 'a', text: 'anything' }])
    expect(e.rows[0].support).toBe(0)
    expect(e.union).toBe(0)
  })
})

describe('cosine, similarity, diff', () => {
  it('cosine of known vectors', () => {
    expect(cosine([1, 0], [0, 1])).toBe(0)
    expect(cosine([3, 4], [6, 8])).toBeCloseTo(1, 12)
    expect(cosine([1, 2, 3], [4, 5, 6])).toBeCloseTo(32 / Math.sqrt(14 * 77), 12)
    expect(cosine([0, 0], [1, 1])).toBeNull()
    expect(cosine([1], [1, 2])).toBeNull()
  })
  it('tokenSimilarity is Dice over content-word sets', () => {
    // {ship, billing, friday} vs {ship, billing, monday, early}: 2·2 / (3 + 4)
    expect(tokenSimilarity('Ship billing on Friday', 'Ship billing on Monday, early')).toBeCloseTo(4 / 7, 12)
    expect(tokenSimilarity('', '')).toBe(1)
    expect(tokenSimilarity('alpha', 'beta')).toBe(0)
  })
  it('wordDiff keeps the common words and marks the rest', () => {
    const d = wordDiff('deploy billing on friday morning', 'deploy billing on monday morning please')
    expect(d.ops).toEqual([
      { op: 'same', text: 'deploy billing on' },
      { op: 'add', text: 'monday' },
      { op: 'del', text: 'friday' },
      { op: 'same', text: 'morning' },
      { op: 'add', text: 'please' },
    ])
    expect([d.added, d.removed]).toEqual([2, 1])
    expect(wordDiff('', 'a b').ops).toEqual([{ op: 'add', text: 'a b' }])
  })
})
