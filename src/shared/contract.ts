/**
 * THE IPC contract: every channel once, with its input schema (validated in
 * main for IPC and HTTP alike), its output type, and what it does.
 * Channels are `domain.verb`. The preload imports only types from here.
 *
 * Sections are grouped by domain; add a channel to its domain's section.
 */
import { z } from 'zod'
import type { DbFacts, Memory, Page, RecallEvent, Session } from './types'

/** Marker for an output type (no runtime value). */
const out = <T>() => undefined as unknown as T

const id = z.string().min(1).max(1000)
const ms = z.number().refine(Number.isFinite, 'must be a finite number')
const offset = z.number().int().min(0).max(100_000_000).default(0)
const limit = z.number().int().min(1).max(1000).default(50)
const strList = z.array(z.string().max(1000)).max(10_000)

// ---------------------------------------------------------------------------
// Output shapes that are contract-specific (domain types live in types.ts)
// ---------------------------------------------------------------------------

export interface AppInfo {
  version: string
  /** 'electron' (preload bridge) or 'browser' (loopback HTTP bridge) */
  mode: 'electron' | 'browser'
  /** The DB open right now, if any. */
  current: OpenInfo | null
  /** Path of the generated demo DB (may not exist yet). */
  demoPath: string
}

export interface OpenInfo {
  path: string
  layout: DbFacts['layout']
  readOnly: boolean
  workspacePath: string
  memories: number
  sessions: number
  tookMs: number
}

export interface RecentFile {
  path: string
  openedAt: number
  layout: string | null
  exists: boolean
}

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

// ---------------------------------------------------------------------------
// Input schemas
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// The contract
// ---------------------------------------------------------------------------

export const contract = {
  // --- app -----------------------------------------------------------------
  /** Version, bridge mode, the DB open right now and where the demo DB lives. */
  'app.info': { input: z.strictObject({}), output: out<AppInfo>() },

  // --- store ---------------------------------------------------------------
  /** Open an agent memory DB (read-only unless `write`); its workspace DB is created beside it. */
  'store.open': {
    input: z.strictObject({
      path: z.string().trim().min(1, 'path is required').max(4096),
      /** @default `<path>.recallscope` */
      workspacePath: z.string().min(1).max(4096).optional(),
      /** Open the agent DB read-write (write mode). @default false */
      write: z.boolean().default(false),
    }),
    output: out<OpenInfo>(),
  },
  /** Open the demo DB, generating it first if it does not exist. */
  'store.openDemo': { input: z.strictObject({ regenerate: z.boolean().default(false) }), output: out<OpenInfo>() },
  /** Counts per agent/user/kind/tier/role, embedding models, malformed rows, FTS status. */
  'store.facts': { input: z.strictObject({}), output: out<DbFacts>() },
  /** Recently opened files, newest first. */
  'store.recent': { input: z.strictObject({}), output: out<RecentFile[]>() },
  /** Close the current DB. */
  'store.close': { input: z.strictObject({}), output: out<{ closed: boolean }>() },

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
      agentId: z.string().optional(),
      userId: z.string().optional(),
      sessionId: z.string().optional(),
      memoryId: z.string().optional(),
      after: ms.optional(),
      before: ms.optional(),
      search: z.string().max(1000).optional(),
      dir: z.enum(['asc', 'desc']).default('desc'),
      offset,
      limit,
    }),
    output: out<Page<RecallEvent>>(),
  },
} as const

export type Contract = typeof contract
export type Channel = keyof Contract
/** What a caller passes (defaults optional). */
export type Input<C extends Channel> = z.input<Contract[C]['input']>
/** What a handler receives (defaults applied). */
export type ParsedInput<C extends Channel> = z.output<Contract[C]['input']>
export type Output<C extends Channel> = Contract[C]['output']
