/**
 * What a Letta V1 server store maps to, once for both of its backends: the
 * SQLite reader (server.ts, `~/.letta/sqlite.db`) and the Postgres layout
 * (store/postgres/letta.ts). Each writes the mapping in its own SQL dialect;
 * the tables it needs, the columns it requires and the kind / tier / source
 * every row gets live here, so the two cannot drift apart.
 *
 * Learned from letta-ai/letta @ 56ba9c25552605eec89de8ed3dc6394b625c1993 (see server.ts).
 */

/** The four tables that make a Letta server store, with the columns each must have. */
const LETTA_REQUIRED: Readonly<Record<'agents' | 'block' | 'messages' | 'archival_passages', readonly string[]>> = {
  agents: ['id'],
  block: ['id', 'label', 'value'],
  messages: ['id', 'agent_id', 'role', 'created_at'],
  archival_passages: ['id', 'text', 'created_at'],
}

/** Tables read when present (owners, tags, block timelines). */
const LETTA_OPTIONAL = ['block_history', 'blocks_agents', 'archives_agents', 'passage_tags'] as const

/** The canonical kind / tier / source of each kind of Letta row. */
export const LETTA_ROWS = {
  /** archival passages: long-term facts the agent searches */
  passage: { kind: 'semantic', tier: 'long_term', source: 'letta-archival' },
  /** core memory blocks: always in the context window, so pinned (tier working, metadata.pinned) */
  block: { kind: 'semantic', tier: 'working', source: 'letta-core' },
  /** messages: turns of a conversation (session = conversation_id, else the agent) */
  message: { kind: 'episodic', tier: 'long_term', source: 'letta-message' },
} as const

/** The model label for passages whose embedding_config names no model: `letta:<dim>`. */
export function lettaModelLabel(dim: number | string): string {
  return `letta:${dim}`
}

/** Whether these tables (name → its columns) are a Letta server store. */
export function isLettaStore(tables: ReadonlyMap<string, { has(column: string): boolean }>): boolean {
  return Object.entries(LETTA_REQUIRED).every(([t, cols]) => {
    const c = tables.get(t)
    return c !== undefined && cols.every((x) => c.has(x))
  })
}

/** The "detected because" line for a Letta store with these optional tables. */
export function lettaDetectedBecause(tables: ReadonlyMap<string, unknown>, where: string): string {
  const found: string[] = Object.keys(LETTA_REQUIRED)
  for (const t of LETTA_OPTIONAL) if (tables.has(t)) found.push(t)
  return `tables ${found.join(', ')}${where}: Letta server (archival passages, core blocks pinned as tier working, messages as turns)`
}
