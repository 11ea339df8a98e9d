/**
 * Every SQLite layout recallscope opens in place, tried in order (the canonical
 * schema first): the list a third party would extend (Datasette's DEFAULT_PLUGINS).
 * Kept apart from registry.ts so the framework folder resolvers can use it
 * without an import cycle.
 */
import { engramAdapter } from './engram/layout'
import { agnoAdapter } from './frameworks/agno/adapter'
import { basicMemoryAdapter } from './frameworks/basicMemory/adapter'
import { crewaiLtmAdapter } from './frameworks/crewai/ltm'
import { langgraphAdapter } from './frameworks/langgraph/adapter'
import { lettaAdapter } from './frameworks/letta/server'
import { mastraAdapter } from './frameworks/mastra/adapter'
import { mcpMemoryServiceAdapter } from './frameworks/mcpMemoryService/adapter'
import { mem0Adapter } from './frameworks/mem0/adapter'
import { openaiAgentsAdapter } from './frameworks/openaiAgents/adapter'
import { openmemoryAdapter } from './frameworks/openmemory/adapter'
import { canonicalAdapter, type Adapter } from './sqlite/layouts'

export const LAYOUTS: Adapter[] = [
  mcpMemoryServiceAdapter, // before canonical: its `memories` table has content + created_at too
  openmemoryAdapter, // likewise (memories(id, content, created_at) + apps + users)
  canonicalAdapter,
  engramAdapter,
  mem0Adapter,
  langgraphAdapter,
  openaiAgentsAdapter,
  crewaiLtmAdapter,
  basicMemoryAdapter,
  lettaAdapter,
  agnoAdapter,
  mastraAdapter,
]
