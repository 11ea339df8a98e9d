/**
 * A memory's subject: the entity a graph store's observation is about. An MCP
 * knowledge-graph observation ("Allergic to peanuts") means nothing without its
 * entity ("Ada"); the store's reader keeps the entity in `metadata.entity`
 * (docs/stores/mcp-memory.md), and every place that shows the memory's text —
 * the Memories rows, the session cards, the context block — names it.
 */

/** The subject in a memory's metadata (`metadata.entity`, a non-empty string), or null. */
export function subjectOf(metadata: unknown): string | null {
  if (!metadata || typeof metadata !== 'object') return null
  const e = (metadata as { entity?: unknown }).entity
  return typeof e === 'string' && e.trim() !== '' ? e : null
}

/** The text with its subject in front ("Ada: Allergic to peanuts"), unless it already names it first. */
export function withSubject(text: string, metadata: unknown): string {
  const s = subjectOf(metadata)
  return s && !text.startsWith(s) ? `${s}: ${text}` : text
}
