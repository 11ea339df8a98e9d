/**
 * "More like this" groups exact duplicates: neighbours with the same text are
 * one entry ("×8") that lists every id, so eight copies of one memory do not
 * fill the list. Pure, for MemoryDetailPane.
 */

export interface SimilarGroup {
  content: string
  /** ids in neighbour order (best first) */
  ids: string[]
  /** the best and worst similarity in the group */
  best: number
  worst: number
}

/** Group neighbours by identical content, in the order of each text's best neighbour. */
export function groupDuplicates(results: readonly { memory: { id: string; content: string }; similarity: number }[]): SimilarGroup[] {
  const groups = new Map<string, SimilarGroup>()
  for (const r of results) {
    const g = groups.get(r.memory.content)
    if (g) {
      g.ids.push(r.memory.id)
      g.best = Math.max(g.best, r.similarity)
      g.worst = Math.min(g.worst, r.similarity)
    } else groups.set(r.memory.content, { content: r.memory.content, ids: [r.memory.id], best: r.similarity, worst: r.similarity })
  }
  return [...groups.values()]
}
