import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { fitWidths } from './fitWidths'

const sum = (m: Map<string, number>) => [...m.values()].reduce((s, w) => s + w, 0)

describe('fitWidths', () => {
  it('gives spare width to the grow column only', () => {
    const w = fitWidths(
      [
        { id: 'a', size: 100, min: 50 },
        { id: 'b', size: 300, min: 120, grow: true },
        { id: 'c', size: 80, min: 50 },
      ],
      1000,
    )
    expect(Object.fromEntries(w)).toEqual({ a: 100, b: 820, c: 80 })
  })

  it('takes width back from the grow column down to its minimum, then overflows', () => {
    const cols = [
      { id: 'a', size: 100, min: 50 },
      { id: 'b', size: 300, min: 120, grow: true },
    ]
    expect(Object.fromEntries(fitWidths(cols, 300))).toEqual({ a: 100, b: 200 })
    // 100 + 120 = 220 > 200: the grow column stops at its minimum and the table scrolls
    expect(Object.fromEntries(fitWidths(cols, 200))).toEqual({ a: 100, b: 120 })
  })

  it('keeps the sizes while the box is not measured', () => {
    expect(Object.fromEntries(fitWidths([{ id: 'a', size: 90.4, min: 10 }], 0))).toEqual({ a: 90 })
  })

  it('fills the box exactly whenever the columns fit (any sizes, grow or not)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ size: fc.integer({ min: 40, max: 500 }), grow: fc.boolean() }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4000 }),
        (specs, box) => {
          const cols = specs.map((s, i) => ({ id: `c${i}`, size: s.size, min: 40, grow: s.grow }))
          const w = fitWidths(cols, box)
          const total = specs.reduce((s, c) => s + c.size, 0)
          const minTotal = cols.reduce((s, c) => s + (c.grow ? c.min : c.size), 0)
          if (total <= box) expect(sum(w)).toBe(box)
          else if (cols.some((c) => c.grow)) expect(sum(w)).toBe(Math.max(box, minTotal))
          else expect(sum(w)).toBe(total)
          for (const c of cols) {
            expect(w.get(c.id)!).toBeGreaterThanOrEqual(Math.min(c.size, c.min))
            if (!c.grow && cols.some((x) => x.grow)) expect(w.get(c.id)).toBe(c.size)
          }
        },
      ),
    )
  })
})

describe('fitWidths growShare', () => {
  const cols = [
    { id: 'created', size: 142, min: 90 },
    { id: 'kind', size: 100, min: 60 },
    { id: 'content', size: 260, min: 150, grow: true },
    { id: 'salience', size: 82, min: 60 },
  ]
  it('gives the grow column at least its share, taken from the others down to their minimums, total unchanged', () => {
    for (const box of [420, 500, 600, 700]) {
      const w = fitWidths(cols, box, 0.4)
      const total = [...w.values()].reduce((s, x) => s + x, 0)
      const before = [...fitWidths(cols, box).values()].reduce((s, x) => s + x, 0)
      expect(total).toBe(before)
      for (const c of cols) expect(w.get(c.id)!).toBeGreaterThanOrEqual(c.min)
      // enough slack above the minimums (142−90 + 100−60 + 82−60 = 114 px): the share is met
      expect(w.get('content')! / box).toBeGreaterThanOrEqual(0.4)
    }
  })
  it('leaves a box where the share is met as it was', () => {
    expect(fitWidths(cols, 1400, 0.4)).toEqual(fitWidths(cols, 1400))
  })
})
