/**
 * The memory id of one MCP knowledge-graph observation (materialize.ts): shared with the
 * Claude Code transcript reader (events/claudeCode), so a logged `search_nodes` result
 * names the same memory the opened memory.jsonl shows.
 */
import crypto from 'node:crypto'

/** `<entity name>#<first 10 hex of sha1(observation)>`: stable while the text is unchanged. */
export function observationId(entity: string, observation: string): string {
  return `${entity}#${crypto.createHash('sha1').update(observation).digest('hex').slice(0, 10)}`
}
