import { describe, expect, it } from 'vitest'
import { listHeight, rowStart, rowsInView, scrollToShow, slotStart, type FixedRows } from './fixedRows'

/** The list laid out one item after another, as a browser would stack them: each row's slot and row top. */
function stacked(g: FixedRows): { slot: number; row: number }[] {
  const out: { slot: number; row: number }[] = []
  let y = 0
  for (let i = 0; i < g.count; i++) {
    const slot = y
    y += g.cutsAt.filter((c) => c === i).length * g.cutPx
    out.push({ slot, row: y })
    y += g.rowPx
  }
  return out
}

/** Pseudo-random, repeatable. */
function lcg(seed: number): () => number {
  let s = seed
  return () => (s = (s * 1664525 + 1013904223) % 2 ** 32) / 2 ** 32
}

describe('fixed-height rows with cut lines', () => {
  it('places every row and slot where stacking the items one after another would, over random lists', () => {
    const rnd = lcg(7)
    for (let t = 0; t < 200; t++) {
      const count = Math.floor(rnd() * 60)
      const cutsAt = Array.from({ length: Math.floor(rnd() * 4) }, () => Math.floor(rnd() * Math.max(1, count))).sort((a, b) => a - b)
      const g = { count, rowPx: 62, cutPx: 23, cutsAt }
      const want = stacked(g)
      want.forEach((w, i) => {
        expect(slotStart(g, i)).toBe(w.slot)
        expect(rowStart(g, i)).toBe(w.row)
      })
      expect(listHeight(g)).toBe(count * 62 + cutsAt.length * 23)
      // The window: every row that overlaps the viewport, plus the overscan, and nothing else.
      const top = Math.floor(rnd() * listHeight(g))
      const height = 100 + Math.floor(rnd() * 700)
      const overlapping = want.map((w, i) => ({ w, i })).filter(({ w }) => w.row + 62 > top && w.slot < top + height)
      const { first, last } = rowsInView(g, top, height, 3)
      if (overlapping.length === 0) continue
      expect(first).toBe(Math.max(0, overlapping[0].i - 3))
      expect(last).toBe(Math.min(count - 1, overlapping[overlapping.length - 1].i + 3))
    }
  })

  it('an empty list shows nothing', () => {
    const { first, last } = rowsInView({ count: 0, rowPx: 62, cutPx: 23, cutsAt: [] }, 0, 600, 3)
    expect(last).toBeLessThan(first)
  })

  it('scrolls a row into view by as little as it takes', () => {
    const g = { count: 100, rowPx: 62, cutPx: 23, cutsAt: [5, 5] }
    // Row 5 sits below its two cut lines at 5 × 62 + 46 = 356.
    expect(scrollToShow(g, 5, 0, 600)).toBe(0)
    expect(scrollToShow(g, 5, 400, 600)).toBe(356)
    expect(scrollToShow(g, 20, 0, 600)).toBe(20 * 62 + 46 + 62 - 600)
  })
})
