/** Stored-vector model names: which ones recallscope made up because the store records none. */

/**
 * Labels of stores whose vectors are kept per collection or table, which recallscope names
 * `<store>:<collection>[:<vector name>]:<dim>` (Qdrant local, Chroma, any LanceDB table) or
 * `mastra:<index table>`: the store records no model for them either.
 */
const PER_COLLECTION_LABELS = ['qdrant:', 'chroma:', 'lancedb:', 'mastra:']

/**
 * A label recallscope gives vectors whose store does not record the model that made
 * them: `<source>:<dim>` (`mem0:1536`, `crewai:3072`, `langgraph:768:title`), or a
 * per-collection label (PER_COLLECTION_LABELS).
 */
export function isUnlabelledModel(model: string): boolean {
  if (PER_COLLECTION_LABELS.some((p) => model.startsWith(p))) return true
  return /^[a-z0-9-]+:\d+(:[^:]+)?$/i.test(model) && !model.startsWith('hashing')
}
