/** Stored-vector model names: which ones recallscope made up because the store records none. */

/**
 * A label recallscope gives vectors whose store does not record the model that made
 * them: `<source>:<dim>` (`mem0:1536`, `crewai:3072`, `langgraph:768:title`).
 */
export function isUnlabelledModel(model: string): boolean {
  return /^[a-z0-9-]+:\d+(:[^:]+)?$/i.test(model) && !model.startsWith('hashing')
}
