/**
 * How much two ranked result lists agree: Jaccard over the sets, rank-biased
 * overlap (Webber, Moffat & Zobel 2010) over the orders, and per-id rank deltas.
 * Used by recall.compare to put presets side by side.
 */

/** |A ∩ B| / |A ∪ B|; two empty lists agree fully (1). */
export function jaccard(a: readonly string[], b: readonly string[]): number {
  const sa = new Set(a)
  const sb = new Set(b)
  if (sa.size === 0 && sb.size === 0) return 1
  let inter = 0
  for (const x of sa) if (sb.has(x)) inter++
  return inter / (sa.size + sb.size - inter)
}

/**
 * Extrapolated rank-biased overlap RBO_ext (Webber et al. 2010, eq. 32) for two
 * lists without duplicates, possibly of different lengths. p is the persistence
 * (top-weightedness): with p = 0.9 the first 10 ranks carry ~86% of the weight.
 * Identical lists → 1, disjoint → 0; two empty lists → 1, one empty → 0.
 */
export function rbo(a: readonly string[], b: readonly string[], p = 0.9): number {
  if (!(p > 0 && p < 1)) throw new RangeError('rbo: p must be in (0, 1)')
  const [S, L] = a.length <= b.length ? [a, b] : [b, a]
  const s = S.length
  const l = L.length
  if (l === 0) return 1
  if (s === 0) return 0
  const seenS = new Set<string>()
  const seenL = new Set<string>()
  let x = 0 // overlap at depth d
  let sum = 0
  let xs = 0 // X_s: overlap at depth s
  for (let d = 1; d <= l; d++) {
    const ls = L[d - 1]
    if (d <= s) {
      const ss = S[d - 1]
      if (ss === ls) x++
      else {
        if (seenL.has(ss)) x++
        if (seenS.has(ls)) x++
      }
      seenS.add(ss)
      seenL.add(ls)
      if (d === s) xs = x
    } else if (seenS.has(ls)) x++
    sum += (x / d) * Math.pow(p, d)
    if (d > s) sum += ((xs * (d - s)) / (s * d)) * Math.pow(p, d)
  }
  const xl = x
  return ((1 - p) / p) * sum + ((xl - xs) / l + xs / s) * Math.pow(p, l)
}

/** Rank (1-based) of every id across several lists; null where absent. Delta = rank − rank in the first list. */
export function rankTable(lists: readonly (readonly string[])[]): { id: string; ranks: (number | null)[]; deltas: (number | null)[] }[] {
  const order: string[] = []
  const seen = new Set<string>()
  for (const list of lists)
    for (const id of list)
      if (!seen.has(id)) {
        seen.add(id)
        order.push(id)
      }
  const pos = lists.map((list) => new Map(list.map((id, i) => [id, i + 1])))
  return order.map((id) => {
    const ranks = pos.map((m) => m.get(id) ?? null)
    const base = ranks[0]
    return { id, ranks, deltas: ranks.map((r) => (r === null || base === null ? null : r - base)) }
  })
}
