/**
 * A per-case snapshot diff between two runs' injected lists (Quepid-style):
 * each side in its own order, every entry marked same / moved (with the rank
 * change) / dropped (left only) / new (right only), relevant memories flagged.
 * Pure: the Compare tab renders it, tests check it.
 */

export type DiffMark = 'same' | 'moved' | 'dropped' | 'new'

export interface DiffEntry {
  id: string
  /** 1-based rank on this side */
  rank: number
  mark: DiffMark
  /** rank in the right list − rank in the left list (null when on one side only); positive = moved down */
  shift: number | null
  relevant: boolean
}

export interface SnapshotDiff {
  left: DiffEntry[]
  right: DiffEntry[]
  counts: { same: number; moved: number; dropped: number; new: number }
  /** relevant memories injected on each side */
  relevantHits: { left: number; right: number }
}

/** Diff two injected lists (`left` = the baseline run, `right` = the other). */
export function snapshotDiff(left: readonly string[], right: readonly string[], relevant: Iterable<string>): SnapshotDiff {
  const rel = new Set(relevant)
  const rRank = new Map(right.map((id, i) => [id, i + 1]))
  const lRank = new Map(left.map((id, i) => [id, i + 1]))
  const counts = { same: 0, moved: 0, dropped: 0, new: 0 }
  const l: DiffEntry[] = left.map((id, i) => {
    const other = rRank.get(id)
    const mark: DiffMark = other === undefined ? 'dropped' : other === i + 1 ? 'same' : 'moved'
    counts[mark]++
    return { id, rank: i + 1, mark, shift: other === undefined ? null : other - (i + 1), relevant: rel.has(id) }
  })
  const r: DiffEntry[] = right.map((id, i) => {
    const other = lRank.get(id)
    const mark: DiffMark = other === undefined ? 'new' : other === i + 1 ? 'same' : 'moved'
    if (mark === 'new') counts.new++
    return { id, rank: i + 1, mark, shift: other === undefined ? null : i + 1 - other, relevant: rel.has(id) }
  })
  return { left: l, right: r, counts, relevantHits: { left: l.filter((e) => e.relevant).length, right: r.filter((e) => e.relevant).length } }
}
