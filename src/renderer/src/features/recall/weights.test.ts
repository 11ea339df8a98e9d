import { describe, expect, it } from 'vitest'
import { fmtHours, halfLifeToPos, moveWeight, onSimplex, posToHalfLife, toSimplex, weightsForMode } from './weights'

describe('weights on the simplex', () => {
  it('moving one weight shares the rest in proportion (seed 003 defaults 0.6/0.25/0.15)', () => {
    const w = { similarity: 0.6, lexical: 0, recency: 0.25, salience: 0.15 }
    const m = moveWeight(w, 'recency', 0.5, true)
    expect(m.recency).toBe(0.5)
    // the other 0.75 (0.6 + 0 + 0.15) is scaled to 0.5: factor 2/3
    expect(m.similarity).toBeCloseTo(0.4, 12)
    expect(m.salience).toBeCloseTo(0.1, 12)
    expect(m.lexical).toBe(0)
    expect(onSimplex(m)).toBe(true)
  })
  it('shares equally when every other weight is 0', () => {
    const m = moveWeight({ similarity: 1, lexical: 0, recency: 0, salience: 0 }, 'similarity', 0.4, true)
    expect(m.lexical).toBeCloseTo(0.2, 12)
    expect(m.recency).toBeCloseTo(0.2, 12)
    expect(m.salience).toBeCloseTo(0.2, 12)
  })
  it('free mode changes one weight only', () => {
    const w = { similarity: 0.6, lexical: 0, recency: 0.25, salience: 0.15 }
    expect(moveWeight(w, 'lexical', 0.7, false)).toEqual({ ...w, lexical: 0.7 })
  })
  it('toSimplex normalises', () => {
    const s = toSimplex({ similarity: 2, lexical: 1, recency: 1, salience: 0 })
    expect(s).toEqual({ similarity: 0.5, lexical: 0.25, recency: 0.25, salience: 0 })
  })
})

describe('half-life slider', () => {
  it('round-trips 7 days and spans 1 hour to a year', () => {
    expect(posToHalfLife(0)).toBe(1)
    expect(posToHalfLife(1000)).toBeCloseTo(8760, 0)
    expect(posToHalfLife(halfLifeToPos(168))).toBeCloseTo(168, 0)
    expect(fmtHours(168)).toBe('7.0 d')
    expect(fmtHours(12)).toBe('12 h')
  })
})

describe('weightsForMode', () => {
  const w = { similarity: 0.6, lexical: 0, recency: 0.25, salience: 0.15 }
  it('lexical with no lexical weight takes the similarity weight (0.6), the rest unchanged', () => {
    expect(weightsForMode(w, 'lexical')).toEqual({ similarity: 0, lexical: 0.6, recency: 0.25, salience: 0.15 })
  })
  it('dense with no similarity weight takes the lexical weight; other modes and weighted arms keep theirs', () => {
    expect(weightsForMode({ similarity: 0, lexical: 0.5, recency: 0.5, salience: 0 }, 'dense')).toEqual({
      similarity: 0.5,
      lexical: 0,
      recency: 0.5,
      salience: 0,
    })
    expect(weightsForMode(w, 'hybrid')).toBe(w)
    expect(weightsForMode({ ...w, lexical: 0.1 }, 'lexical')).toEqual({ ...w, lexical: 0.1 })
  })
})
