/** The contract's browse channels: sessions, memories (facets, search, similar) and the recall-event log. */
import { z } from 'zod'
import type { EventSourceInfo, Memory, Page, RecallEvent, Session } from '../types'
import { id, limit, ms, offset, out, strList } from './common'

export interface Facets {
  agents: string[]
  users: string[]
  kinds: string[]
  tiers: string[]
  roles: string[]
  timeRange: { min: number; max: number } | null
}

export interface MemoryRow extends Memory {
  hasEmbedding?: boolean
  /** Highlighted segments when the page was a full-text search. */
  snippet?: { text: string; hit: boolean }[]
}

export interface VectorInfo {
  model: string
  dim: number
  norm: number | null
  /** why the stored vector was rejected, if it was */
  problem: string | null
  /** first values, for a glance */
  preview: number[]
  /** backfilled by recallscope into the workspace (not in the agent DB); a valid agent vector of the model wins */
  backfilled?: boolean
}

export interface MemoryDetail {
  memory: Memory
  session: Session | null
  vectors: VectorInfo[]
  /** Recall events whose injected results include this memory (newest first, bounded). */
  appearances: { eventId: string; at: number; rank: number; score: number; query: string | null }[]
  rawMetadata: string | null
}

export interface SimilarResult {
  model: string | null
  results: { memory: Memory; similarity: number }[]
  tookMs: number
}

export const memoryFilterShape = {
  agentId: z.string().optional(),
  userId: z.string().optional(),
  sessionId: z.string().optional(),
  tenantId: z.string().optional(),
  kinds: strList.optional(),
  tiers: strList.optional(),
  roles: strList.optional(),
  after: ms.optional(),
  before: ms.optional(),
  hasEmbedding: z.boolean().optional(),
  ids: strList.optional(),
}

/** The recall-log filter: events.page, trace.timeline and the UI's log share it. */
export const eventFilterShape = {
  agentId: z.string().optional(),
  userId: z.string().optional(),
  sessionId: z.string().optional(),
  /** events whose injected results include this memory */
  memoryId: z.string().optional(),
  /** substring of the query or cue */
  search: z.string().max(1000).optional(),
  after: ms.optional(),
  before: ms.optional(),
}
export type EventFilter = z.infer<z.ZodObject<typeof eventFilterShape>>

export const browseChannels = {
  // --- sessions ------------------------------------------------------------
  /** A page of sessions with their memory counts. */
  'sessions.page': {
    input: z.strictObject({
      agentId: z.string().optional(),
      userId: z.string().optional(),
      tenantId: z.string().optional(),
      search: z.string().max(1000).optional(),
      includeArchived: z.boolean().optional(),
      sort: z.enum(['started_at', 'memory_count']).default('started_at'),
      dir: z.enum(['asc', 'desc']).default('desc'),
      offset,
      limit,
    }),
    output: out<Page<Session>>(),
  },
  /** One session. */
  'sessions.get': { input: z.strictObject({ id }), output: out<Session>() },

  // --- memories ------------------------------------------------------------
  /** A page of memories: facets, full-text search (FTS5, highlighted snippets), sort. */
  'memories.page': {
    input: z.strictObject({
      ...memoryFilterShape,
      search: z.string().max(2000).optional(),
      sort: z.enum(['created_at', 'last_used_at', 'salience', 'turn', 'use_count', 'relevance']).optional(),
      dir: z.enum(['asc', 'desc']).default('desc'),
      offset,
      limit,
    }),
    output: out<Page<MemoryRow>>(),
  },
  /** One memory with its session, vectors and appearances in recall events. */
  'memories.get': { input: z.strictObject({ id }), output: out<MemoryDetail>() },
  /** "More like this": nearest neighbours of a memory by its stored vector (no model needed). */
  'memories.similar': {
    input: z.strictObject({ id, model: z.string().optional(), k: z.number().int().min(1).max(200).default(10), sameAgent: z.boolean().default(false) }),
    output: out<SimilarResult>(),
  },
  /** Distinct values for the browser's facet pickers. */
  'memories.facets': { input: z.strictObject({}), output: out<Facets>() },

  // --- events --------------------------------------------------------------
  /** A page of logged recall events. */
  'events.page': {
    input: z.strictObject({
      ...eventFilterShape,
      dir: z.enum(['asc', 'desc']).default('desc'),
      offset,
      limit,
    }),
    output: out<Page<RecallEvent>>(),
  },
  /**
   * Where the open store's recall events come from: its recall_events table, the agent records
   * read in it (Letta messages, LangGraph checkpoints, Agents SDK sessions), added trace logs;
   * each with its counts (read, skipped and why, how results matched). Reads pending sources.
   */
  'events.sources': { input: z.strictObject({}), output: out<EventSourceInfo[]>() },
} as const
