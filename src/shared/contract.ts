/**
 * THE IPC contract: every channel once, with its input schema (validated in
 * main for IPC and HTTP alike), its output type, and what it does.
 * Channels are `domain.verb`. The preload imports only types from here.
 *
 * Sections are grouped by domain; add a channel to its domain's section.
 */
import { z } from 'zod'
import type { DbFacts, Memory, Page, RecallEvent, Session } from './types'
import type { RecallTrace } from './types'
import { cueSchema, partialConfigSchema, scopeSchema } from './config'
import type { Preset } from './presets'

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

// --- embed / settings ------------------------------------------------------

/** Mirrors src/main/embed/types.ts EmbedderHealth (main cannot be imported here). */
export interface EmbedderHealthInfo {
  /** the server answered (always true for in-process embedders) */
  reachable: boolean
  /** the configured model is available (Ollama: listed by /api/tags) */
  modelAvailable: boolean
  /** vector length, when known */
  dim: number | null
  /** models the server offers */
  models: string[]
  /** what went wrong, null when healthy */
  error: string | null
  /** 'ECONNREFUSED' | 'MODEL_NOT_FOUND' | 'TIMEOUT' | 'HTTP_<status>' | 'ECONNRESET' | 'BAD_RESPONSE' | … */
  errorCode: string | null
  /** e.g. hashing: "lexical-level", none: "dense arm off" */
  note?: string
  /** the server asked */
  host?: string
  version?: string | null
  tookMs?: number
}

export interface EmbedStatus {
  /** canonical spec: `ollama:nomic-embed-text` */
  spec: string
  /** 'hashing' | 'none' | 'ollama' | 'openai' | a registered kind */
  name: string
  model: string | null
  enabled: boolean
  /**
   * What the status indicator shows:
   * `ok` semantic embedder ready · `lexical` hashing (works offline, lexical-level) ·
   * `off` embedder none (dense arm off) · `unavailable` recall will run degraded (lexical arm only), see `health.error`.
   */
  state: 'ok' | 'lexical' | 'off' | 'unavailable'
  health: EmbedderHealthInfo
  /** Stored memory vectors under this model in the open DB (null: no DB open or no model). */
  storedVectors: number | null
  /** Their dimension, to compare with `health.dim` (a mismatch means the dense arm finds nothing). */
  storedDim: number | null
  /** Problems worth showing next to the indicator (dimension mismatch, no stored vectors…). */
  warnings: string[]
}

export interface EmbedModelInfo {
  name: string
  dim: number | null
  embedding: boolean | null
  family: string | null
  sizeBytes: number | null
}

export interface EmbedModels {
  /** Registered embedder kinds, for the picker. */
  kinds: { kind: string; usage: string; description: string; needsModel: boolean }[]
  /** The asked server kind and what it offers. */
  kind: string
  host: string | null
  reachable: boolean
  models: EmbedModelInfo[]
  error: string | null
  errorCode: string | null
}

export interface SettingsView {
  /** Saved embedder spec, else the default (`hashing`). */
  embedder: string
  /** Saved Ollama host (null: use $OLLAMA_HOST, else http://127.0.0.1:11434). */
  ollamaHost: string | null
  /** Saved OpenAI-compatible base URL (null: $OPENAI_BASE_URL, else http://127.0.0.1:1234/v1). */
  openaiBaseUrl: string | null
  /** Where requests go now, after settings and environment. */
  effective: { ollamaHost: string; openaiBaseUrl: string }
  /** The environment variables seen (API keys are never returned). */
  env: { OLLAMA_HOST: string | null; OPENAI_BASE_URL: string | null; openaiApiKeySet: boolean }
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

/** An http(s) URL (Ollama host, OpenAI-compatible base URL). */
const httpUrl = z
  .string()
  .trim()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v)
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== ''
    } catch {
      return false
    }
  }, 'must be an http(s) URL such as http://127.0.0.1:11434')
/** `hashing` | `none` | `ollama:MODEL` | `openai:MODEL` (checked against the embedder registry in main). */
const embedderSpec = z.string().trim().min(1, 'embedder is required').max(300)
const embedTimeout = z.number().int().min(50).max(60_000).default(3000)

// --- recall inputs/outputs ---------------------------------------------------

const presetName = z.string().trim().min(1).max(100)

/** What every recall channel shares: the query, the time, how to embed. */
const recallQueryShape = {
  /** The raw utterance (lexical arm; dense arm too unless a cue is used). */
  query: z.string().max(20_000).default(''),
  /** Seed 003 cue {goal, currentStep, openQuestions}: the dense arm embeds it. */
  cue: cueSchema.nullable().optional(),
  /** Epoch ms the recall happens at (time travel). @default Date.now() in main */
  now: ms.optional(),
  /** Embedder spec. @default the saved setting, else hashing when the DB holds hashing vectors, else ollama:<first stored model> */
  embedder: z.string().trim().min(1).max(300).optional(),
  /** An explicit query vector: replaces the embedder. */
  queryVector: z.array(z.number().refine(Number.isFinite, 'must be finite')).min(1).max(65_536).optional(),
}

export interface RecallCompare {
  now: number
  runs: { label: string; preset: string | null; trace: RecallTrace }[]
  /** every pair of runs (a < b) */
  overlap: { a: number; b: number; jaccard: number; rbo: number }[]
  /** each injected id's rank per run (null = not injected) and the delta vs run 0 */
  ranks: { id: string; ranks: (number | null)[]; deltas: (number | null)[] }[]
}

export interface RecallAges {
  now: number
  from: 'last_used' | 'created'
  /** bin width, ms */
  binMs: number
  bins: { startMs: number; endMs: number; count: number }[]
  total: number
  /** memories never used by `now` (their age is measured from created_at) */
  neverUsed: number
  maxAgeMs: number
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
  /** The desktop app's file dialog (browser mode: `supported: false`, type a path instead). */
  'store.pick': { input: z.strictObject({}), output: out<{ supported: boolean; path: string | null }>() },

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
  // --- embed ---------------------------------------------------------------
  /**
   * The embedder's status for the indicator: reachable? model pulled? dimension?
   * A down server is not an error here: `state` is `unavailable` and `health` says why.
   */
  'embed.status': {
    input: z.strictObject({
      /** Embedder spec to check. @default the saved setting, else `hashing` */
      embedder: embedderSpec.optional(),
      /** Server to ask (Ollama host or OpenAI-compatible base URL, by the spec's kind). @default the saved setting, else the environment */
      host: httpUrl.optional(),
      /** Embed a probe text when the server does not report the dimension. @default false */
      probeDim: z.boolean().default(false),
      /** Deadline per request, ms. @default 3000 */
      timeoutMs: embedTimeout,
    }),
    output: out<EmbedStatus>(),
  },
  /** Registered embedder kinds, and the models a server offers (Ollama /api/tags, OpenAI-compatible /models). */
  'embed.models': {
    input: z.strictObject({
      /** Server kind to list. @default the saved embedder's kind when it is a server, else `ollama` */
      kind: z.string().trim().min(1).max(50).optional(),
      /** @default the saved setting, else the environment */
      host: httpUrl.optional(),
      /** @default 3000 */
      timeoutMs: embedTimeout,
    }),
    output: out<EmbedModels>(),
  },

  // --- settings ------------------------------------------------------------
  /** Embedder settings as saved, and where requests go after the environment is applied. */
  'settings.get': { input: z.strictObject({}), output: out<SettingsView>() },
  /** Change embedder settings; `null` clears a host back to the environment/default. */
  'settings.set': {
    input: z.strictObject({
      /** `hashing` | `none` | `ollama:MODEL` | `openai:MODEL` */
      embedder: embedderSpec.optional(),
      ollamaHost: httpUrl.nullable().optional(),
      openaiBaseUrl: httpUrl.nullable().optional(),
    }),
    output: out<SettingsView>(),
  },

  // --- recall --------------------------------------------------------------
  /**
   * Run one recall: the trace of every candidate (features, contributions, the gate that
   * dropped it), the results and the exact context block. Missing config fields come from
   * `preset` (default fieldguide). The renderer re-scores `trace.candidates` locally with
   * src/shared/scoring.ts when a slider moves.
   */
  'recall.run': {
    input: z.strictObject({
      ...recallQueryShape,
      /** `portal-episodic` | `portal-semantic` | `engram` | `fieldguide` | `neo`, or `preset:variant`. @default fieldguide */
      preset: presetName.optional(),
      /** A partial RecallConfig merged over the preset. */
      config: partialConfigSchema.optional(),
    }),
    output: out<RecallTrace>(),
  },
  /** The five seed presets (and their variants) as full configs. */
  'recall.presets': { input: z.strictObject({}), output: out<readonly Preset[]>() },
  /**
   * The same query through 2–5 presets/configs at the same `now` with the same query
   * vector: each trace, pairwise Jaccard + rank-biased overlap of the injected ids, and
   * every id's rank per run (delta vs the first run).
   */
  'recall.compare': {
    input: z.strictObject({
      ...recallQueryShape,
      runs: z
        .array(z.strictObject({ label: z.string().max(200).optional(), preset: presetName.optional(), config: partialConfigSchema.optional() }))
        .min(2, 'compare needs at least 2 runs')
        .max(5, 'compare takes at most 5 runs'),
      /** RBO persistence. @default 0.9 */
      rboP: z.number().gt(0).lt(1).default(0.9),
    }),
    output: out<RecallCompare>(),
  },
  /** Histogram of memory ages in a scope at `now` (from last use or creation), for the decay curve. */
  'recall.ages': {
    input: z.strictObject({
      scope: scopeSchema.partial().default({}),
      /** @default Date.now() in main */
      now: ms.optional(),
      /** @default 'last_used' (falls back to created_at when never used by `now`) */
      from: z.enum(['last_used', 'created']).default('last_used'),
      /** @default 40 */
      bins: z.number().int().min(1).max(500).default(40),
    }),
    output: out<RecallAges>(),
  },
} as const

export type Contract = typeof contract
export type Channel = keyof Contract
/** What a caller passes (defaults optional). */
export type Input<C extends Channel> = z.input<Contract[C]['input']>
/** What a handler receives (defaults applied). */
export type ParsedInput<C extends Channel> = z.output<Contract[C]['input']>
export type Output<C extends Channel> = Contract[C]['output']
