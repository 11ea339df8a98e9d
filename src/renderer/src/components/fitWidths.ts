/**
 * Column widths that fit a box (pure, for DataTable). Spare width goes to the
 * `grow` columns (or, when none is marked, to every column in proportion to
 * its size); a box narrower than the columns first takes width back from the
 * grow columns, down to their minimum, and only then does the table scroll.
 */

export interface FitColumn {
  id: string
  /** the column's width (default or set by the user) */
  size: number
  /** the narrowest it may become */
  min: number
  grow?: boolean
}

/** Widths (integer px) by column id for a box `box` px wide; `box` ≤ 0 (not measured yet) keeps the sizes. */
export function fitWidths(cols: readonly FitColumn[], box: number): Map<string, number> {
  const out = new Map(cols.map((c) => [c.id, Math.round(c.size)]))
  if (box <= 0 || cols.length === 0) return out
  const total = [...out.values()].reduce((s, w) => s + w, 0)
  const growing = cols.filter((c) => c.grow)
  if (total < box) {
    const extra = box - total
    const takers = growing.length ? growing : cols
    const weight = takers.reduce((s, c) => s + (growing.length ? 1 : c.size), 0)
    let given = 0
    for (const c of takers) {
      const add = Math.floor((extra * (growing.length ? 1 : c.size)) / weight)
      out.set(c.id, out.get(c.id)! + add)
      given += add
    }
    // rounding leftovers to the last taker, so the columns fill the box exactly
    const last = takers[takers.length - 1]
    out.set(last.id, out.get(last.id)! + extra - given)
  } else if (total > box && growing.length) {
    let over = total - box
    for (const c of growing) {
      const w = out.get(c.id)!
      const give = Math.min(over, Math.max(0, w - c.min))
      out.set(c.id, w - give)
      over -= give
      if (over <= 0) break
    }
  }
  return out
}
