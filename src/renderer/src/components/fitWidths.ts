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

/**
 * Widths (integer px) by column id for a box `box` px wide; `box` ≤ 0 (not measured yet) keeps the sizes.
 * `growShare` (0..1): the grow columns get at least this share of the box, the other columns giving width
 * back (in proportion to what they have above their minimum) down to their minimums.
 */
export function fitWidths(cols: readonly FitColumn[], box: number, growShare = 0): Map<string, number> {
  const out = fitToBox(cols, box)
  const growing = cols.filter((c) => c.grow)
  if (box <= 0 || !growing.length || growShare <= 0) return out
  const want = Math.ceil(growShare * box)
  const have = growing.reduce((s, c) => s + out.get(c.id)!, 0)
  if (have >= want) return out
  const others = cols.filter((c) => !c.grow)
  const slack = others.reduce((s, c) => s + Math.max(0, out.get(c.id)! - c.min), 0)
  const take = Math.min(want - have, slack)
  if (take <= 0) return out
  let taken = 0
  for (const c of others) {
    const w = out.get(c.id)!
    const give = Math.min(w - c.min, Math.ceil((take * Math.max(0, w - c.min)) / slack), take - taken)
    if (give <= 0) continue
    out.set(c.id, w - give)
    taken += give
  }
  // the width taken goes to the first grow column (the table's total width is unchanged)
  out.set(growing[0].id, out.get(growing[0].id)! + taken)
  return out
}

function fitToBox(cols: readonly FitColumn[], box: number): Map<string, number> {
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
