/**
 * Raw memory rows → the Browse table's rows, for every source (SQLite and Postgres
 * read the same canonical column names through their layouts).
 */
import type { MemoryRow } from '../../shared/contract'
import { decodeMemory } from './decode'
import { makeSnippet } from './sqlite/fts'

/** Decode each row, mark the ones with a stored vector, and cut a highlighted snippet when searching. */
export function toMemoryRows(rows: Record<string, unknown>[], embedded: Set<string>, search?: string): MemoryRow[] {
  return rows.map((r) => {
    const m: MemoryRow = decodeMemory(r, undefined)
    m.hasEmbedding = embedded.has(m.id)
    if (search) m.snippet = makeSnippet(m.content, search)
    return m
  })
}
