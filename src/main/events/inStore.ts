/**
 * The in-store event readers: one per kind of agent record a store holds
 * (`MemorySource.agentRecords`), added to a store's event log when it is
 * first asked for (no flag).
 */
import type { MemorySource } from '../store/source'
import { langgraphReader } from './langgraph/reader'
import { lettaReader } from './letta/reader'
import { openaiAgentsReader } from './openaiAgents/reader'
import type { EventReader } from './types'

export function inStoreReaders(store: MemorySource): EventReader[] {
  return (store.agentRecords?.() ?? []).map((r) => {
    switch (r.kind) {
      case 'letta':
        return lettaReader(() => r.rows(), r.label)
      case 'langgraph':
        return langgraphReader(() => r.rows(), r.label)
      case 'openai-agents':
        return openaiAgentsReader(() => r.rows(), r.label)
    }
  })
}
