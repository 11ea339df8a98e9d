/**
 * The agent's own records a store can hand to the in-store event readers
 * (src/main/events/<kind>/): the row shapes, one per framework, and the union
 * `MemorySource.agentRecords` returns. Kept apart from source.ts and the SQL
 * so neither imports the other.
 */
import type { DecodedMessage } from './frameworks/langgraph/decode'

/**
 * One kind of agent record a store holds (read by src/main/events/<kind>/). The row types
 * are declared beside the SQL that reads them (this file), read by the SQL beside each adapter (store/frameworks/<fw>/records.ts).
 */
export type AgentRecords =
  | { kind: 'letta'; label: string; rows(): Iterable<LettaMessageRow> }
  | { kind: 'langgraph'; label: string; rows(): Iterable<LangGraphThreadRow> }
  | { kind: 'openai-agents'; label: string; rows(): Iterable<AgentsItemRow> }

/** One Letta message as stored (JSON columns as their text). */
export interface LettaMessageRow {
  id: string
  agentId: string | null
  conversationId: string | null
  role: string | null
  text: string | null
  /** JSON list of content parts ({type, text, …}) */
  content: string | null
  /** JSON list of OpenAI-style tool calls ({id, function: {name, arguments}}) */
  toolCalls: string | null
  toolCallId: string | null
  /** JSON list of tool returns ({tool_call_id, status, func_response}) (current Letta) */
  toolReturns: string | null
  name: string | null
  /** epoch ms (naive UTC text in the DB) */
  createdAt: number | null
  sequenceId: number | null
}

/** One thread as its latest checkpoint holds it. */
export interface LangGraphThreadRow {
  threadId: string
  checkpointId: string
  /** the latest checkpoint's ts (epoch ms) */
  ts: number | null
  messages: DecodedMessage[]
  /** per message: the ts of the first checkpoint holding it (else the latest's) */
  firstSeen: (number | null)[]
}

/** One session item as stored. */
export interface AgentsItemRow {
  /** the row id (also the memory id the adapter gives the item) */
  rowId: number
  sessionId: string
  /** epoch ms */
  createdAt: number | null
  /** `message_data`: json.dumps(item) */
  data: string
}
