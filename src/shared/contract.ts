/**
 * THE IPC contract: every channel once, with its input schema (validated in
 * main for IPC and HTTP alike), its output type, and what it does.
 * Channels are `domain.verb`. The preload imports only types from here.
 *
 * Sections are grouped by domain; add a channel to its domain's section.
 */
import { z } from 'zod'
import type { DbFacts, EventSourceInfo, Memory, Page, RecallEvent, Session } from './types'
import type { RecallTrace } from './types'
import { cueSchema, partialConfigSchema, scopeSchema } from './config'
import type { Preset } from './presets'
import type { JobProgress, LiveReceipt } from './jobs'
import {
  evalCaseInputSchema,
  type CasesImportReport,
  type CasesPage,
  type EvalCaseRow,
  type EvalRun,
  type EvalRunSummary,
  type RunComparison,
  type SavedTuneReport,
  type TuneReportSummary,
  type ScopeDiagnosis,
} from './eval'
import { mappingSchema, type Mapping, type MappingPreview, type TablesInfo } from './mapping'
import type { TraceDrivers, TraceEventDetail, TraceReplay, TraceTimeline, WhyNot } from './trace'
import type { MapData } from './map'
import type { ConfigDiff, SavedConfig } from './savedConfigs'

/** Marker for an output type (no runtime value). */
const out = <T>() => undefined as unknown as T

const id = z.string().min(1).max(1000)
/** A seed for sampling and search (map layout, tune). @default 1 */
const seedSchema = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31)
  .default(1)
// Date's own range (±8.64e15 ms): beyond it `new Date(ms).toISOString()` throws (issue 10: now = 1e308).
const ms = z
  .number()
  .refine(Number.isFinite, 'must be a finite number')
  .refine((v) => Math.abs(v) <= 8.64e15, 'must be within ±8.64e15 ms (a Date)')
const offset = z.number().int().min(0).max(100_000_000).default(0)
const limit = z.number().int().min(1).max(1000).default(50)
const strList = z.array(z.string().max(1000)).max(10_000)
const storePath = z.string().trim().min(1, 'path is required').max(4096)

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
  /** Why this layout was detected (tables or files found), for framework stores. */
  detectedBecause?: string
  readOnly: boolean
  /** Write mode was asked for but the user chose "Open read-only" in the desktop app's confirmation: opened read-only. */
  writeDeclined?: true
  workspacePath: string
  /** Read from a private copy because the DB's folder is read-only (a snapshot: reopen to see newer commits). */
  snapshot?: boolean
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

/** A Postgres connection as the Library's Connect form gives it: a URL, or the fields. */
const pgConnectionSchema = z.union([
  z.strictObject({
    url: z.string().trim().min(1, 'url is required').max(4096),
    /** added to the URL (desktop app only; browser mode takes it from PGPASSWORD) */
    password: z.string().min(1).max(1024).optional(),
  }),
  z.strictObject({
    host: z.string().trim().min(1, 'host is required').max(255),
    port: z.number().int().min(1).max(65535).optional(),
    database: z.string().trim().min(1, 'database is required').max(255),
    user: z.string().trim().min(1).max(255).optional(),
    password: z.string().min(1).max(1024).optional(),
    sslmode: z.enum(['disable', 'prefer', 'require', 'verify-ca', 'verify-full']).optional(),
    /** the schema the store's tables are in. @default the server's search_path */
    schema: z.string().trim().min(1).max(255).optional(),
  }),
])
export type PgConnectionInput = z.infer<typeof pgConnectionSchema>

/**
 * A Postgres database the mapping dialog reads, named as pg.connect names one: the form's fields (or a URL)
 * or a saved connection's id. The password rules are pg.connect's.
 */
const pgTargetSchema = z
  .strictObject({
    conn: pgConnectionSchema.optional(),
    savedId: z.string().trim().min(1).max(64).optional(),
  })
  .refine((i) => (i.conn === undefined) !== (i.savedId === undefined), 'give conn or savedId (one of them)')
export type PgTarget = z.infer<typeof pgTargetSchema>

/** The store a mapping channel reads: a SQLite `path` or a Postgres `pg` (one of them, see `oneSource`). */
const mapSource = { path: storePath.optional(), pg: pgTargetSchema.optional() }
const oneSource = [(i: { path?: string; pg?: PgTarget }) => (i.path === undefined) !== (i.pg === undefined), 'give path or pg (one of them)'] as const

/** A saved Postgres connection as the renderer sees it: never its password. */
export interface SavedPgConnection {
  id: string
  name: string
  /** without the password */
  url: string
  /** where the password comes from: the OS keychain (desktop app), PGPASSWORD, or none */
  password: 'keychain' | 'environment' | 'none'
}

/** What "Test" found on a Postgres server. */
export interface PgTestInfo {
  /** without the password */
  url: string
  layout: string
  detectedBecause: string | null
  memories: number
  /** the dense arm runs in the database (pgvector installed and the vectors in a column it reads) */
  denseInDatabase: boolean
  /** embedding models found */
  vectorModels: number
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

// --- embed / settings ------------------------------------------------------

/** An embedder's health: what `Embedder.health()` reports (src/main/embed/types.ts uses this type). */
export interface EmbedderHealthInfo {
  /** the server answered (always true for in-process embedders) */
  reachable: boolean
  /** the configured model is available (Ollama: listed by /api/tags) */
  modelAvailable: boolean
  /** vector length, when known */
  dim: number | null
  /** models the server offers (Ollama /api/tags names), for pickers */
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
  env: { OLLAMA_HOST: string | null; OPENAI_BASE_URL: string | null; openaiApiKeySet: boolean; RECALLSCOPE_CHAT_MODEL: string | null }
  /** Saved chat model for the counterfactual (null: $RECALLSCOPE_CHAT_MODEL, else none). */
  chatModel: string | null
  /** The chat model the counterfactual would use and where it sends (null: none configured, the button is off). */
  chat: { spec: string; host: string } | null
}

export type { BackfillReport, ImportIssue, ImportReport } from './jobs'
import type { ImportReport } from './jobs'

export type ImportReportInfo = ImportReport

// ---------------------------------------------------------------------------
// Input schemas
// ---------------------------------------------------------------------------

const memoryFilterShape = {
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
/** A saved config's name: trimmed, 1–120 characters. */
const configName = z.string().trim().min(1, 'name is required').max(120, 'name is at most 120 characters')

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

// --- eval inputs -------------------------------------------------------------

/** What eval.run and eval.tune share: the config under test and how to embed. */
const evalConfigShape = {
  /** `preset` or `preset:variant` the config starts from. @default fieldguide */
  preset: presetName.optional(),
  /** A partial RecallConfig merged over the preset (case scopes are applied per case). */
  config: partialConfigSchema.optional(),
  /** budget-aware recall's token budget B. @default config.tokenBudget ?? 2000 */
  budget: z.number().int().min(1).max(10_000_000).optional(),
  /** Embedder spec. @default the saved setting, else the DB's default */
  embedder: z.string().trim().min(1).max(300).optional(),
  /** `now` for cases without one. @default Date.now() in main */
  now: ms.optional(),
  /** Drop cached candidates and gather again (the agent DB changed). @default false */
  fresh: z.boolean().default(false),
}

/** The Trace screen's sources panel: remembered log paths, every event source, and where live OTLP is taken. */
export interface TraceLogs {
  /** log paths kept in the workspace (re-read on every open) */
  remembered: string[]
  /** every event source (the same list as `events.sources`) */
  sources: EventSourceInfo[]
  /** POST OTLP/HTTP JSON here with `Authorization: Bearer <token>`; null when nothing listens */
  live: { url: string; token: string } | null
}

/** What a native file dialog is for (store.pick): decides open vs save and what main may do with the file. */
const pickPurpose = z.enum(['db', 'dbFolder', 'importIn', 'importOut', 'casesIn', 'casesOut', 'logIn'])
export type PickPurpose = z.infer<typeof pickPurpose>

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
      /**
       * Open the agent DB read-write (write mode). The desktop app first asks the user in a native
       * message box (once per file per run); a no opens read-only with `writeDeclined: true`. @default false
       */
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
  /**
   * The desktop app's native file dialog (browser mode: `supported: false`, type a path instead).
   * `purpose` picks an open, folder or save dialog; main keeps the chosen path and takes it (only
   * it) for that use: `db`/`dbFolder` → store.open, `importIn`/`importOut` → import.start `in`/`out`,
   * `casesIn`/`casesOut` → cases.import/export `path`, `logIn` → trace.addLog `path`. `path: null` when cancelled.
   */
  'store.pick': {
    input: z.strictObject({
      /** @default 'db' */
      purpose: pickPurpose.default('db'),
      /** where the dialog starts (a suggestion: the user still confirms) */
      defaultPath: z.string().trim().min(1).max(4096).optional(),
    }),
    output: out<{ supported: boolean; path: string | null }>(),
  },

  // --- postgres ------------------------------------------------------------
  /** Connect to a Postgres server, detect its memory layout, and disconnect (nothing is opened). */
  'pg.test': { input: z.strictObject({ conn: pgConnectionSchema }), output: out<PgTestInfo>() },
  /** Open a Postgres store from the form's fields or a saved connection; `saveAs` saves it (after it opened) under that name. */
  'pg.connect': {
    input: z
      .strictObject({
        conn: pgConnectionSchema.optional(),
        savedId: z.string().trim().min(1).max(64).optional(),
        saveAs: z.string().trim().min(1).max(120).optional(),
      })
      .refine((i) => (i.conn === undefined) !== (i.savedId === undefined), 'give conn or savedId (one of them)'),
    output: out<OpenInfo>(),
  },
  /** Saved Postgres connections, newest first (no passwords). */
  'pg.saved': { input: z.strictObject({}), output: out<SavedPgConnection[]>() },
  /** Forget a saved connection (and its encrypted password). */
  'pg.forget': { input: z.strictObject({ id: z.string().trim().min(1).max(64) }), output: out<{ removed: boolean }>() },
  /**
   * A store's tables (columns, types, sampled shapes, row counts), the layout it opens as (null: none) and its saved
   * mapping: the mapping dialog's start. `path`: a SQLite file; `pg`: a Postgres database (the tables of its schema).
   */
  'store.tables': {
    input: z.strictObject({ ...mapSource, workspacePath: z.string().min(1).max(4096).optional() }).refine(...oneSource),
    output: out<TablesInfo>(),
  },
  /** A column mapping for one table, pre-filled from column names, types and sampled values. */
  'store.suggestMapping': { input: z.strictObject({ ...mapSource, table: z.string().min(1).max(200) }).refine(...oneSource), output: out<Mapping>() },
  /** The first 20 rows read through a mapping, each with per-field problems, and the mapping's own problems (missing column, wrong type…). */
  'store.previewMapping': { input: z.strictObject({ ...mapSource, mapping: mappingSchema }).refine(...oneSource), output: out<MappingPreview>() },
  /**
   * Open one table of a file or a Postgres database by a column mapping (read-only); the mapping is saved in the
   * workspace and reused on reopen. `saveAs` (with `pg.conn`) saves the connection once it opened, as pg.connect does.
   */
  'store.openMapped': {
    input: z
      .strictObject({
        ...mapSource,
        mapping: mappingSchema,
        workspacePath: z.string().min(1).max(4096).optional(),
        saveAs: z.string().trim().min(1).max(120).optional(),
      })
      .refine(...oneSource)
      .refine((i) => i.saveAs === undefined || i.pg?.conn !== undefined, 'saveAs needs pg.conn (a saved connection is saved already)'),
    output: out<OpenInfo>(),
  },

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
  /**
   * Start a background job embedding every memory in `scope` that has no usable vector of
   * the embedder's model (none stored, or a malformed one). Vectors go to the workspace DB
   * (the agent DB stays read-only); dense recall uses them at once. Progress: `onJobProgress`
   * (done = memories visited, total = memories in scope); result: BackfillReport. Cancel
   * with `jobs.cancel`: it stops within one batch; vectors already written are kept.
   */
  'embed.backfill': {
    input: z.strictObject({
      /** Embedder spec. @default the saved setting */
      embedder: embedderSpec.optional(),
      /** Server (Ollama host or OpenAI-compatible base URL, by the spec's kind). @default the saved setting, else the environment */
      host: httpUrl.optional(),
      /** Only memories matching this filter. @default every memory */
      scope: z.strictObject({ ...memoryFilterShape }).optional(),
      /** Texts per embedding call. @default 32 */
      batchSize: z.number().int().min(1).max(1024).default(32),
      /** Deadline per embedding request, ms. @default 30000 (a batch on a CPU-only server is slow) */
      timeoutMs: z.number().int().min(50).max(600_000).default(30_000),
    }),
    output: out<JobProgress>(),
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
      /** Chat model for the counterfactual: `ollama:MODEL` | `openai:MODEL`; null clears it */
      chatModel: z.string().trim().min(1).max(300).nullable().optional(),
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
  /**
   * Write mode only: apply refreshOnRecall for real — `last_used_at = now` (and use_count + 1)
   * for the given memories. A read-only DB answers READ_ONLY and is not touched.
   */
  'recall.refresh': {
    input: z.strictObject({ ids: z.array(id).min(1).max(10_000), now: ms }),
    output: out<{ updated: number }>(),
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

  // --- named configs ---------------------------------------------------------
  /**
   * Save a recall config under a name in the workspace. A partial config is merged over `preset`
   * (default fieldguide) and stored whole. A taken name answers CONFLICT unless `replace` is true.
   */
  'configs.save': {
    input: z.strictObject({
      name: configName,
      preset: presetName.optional(),
      config: partialConfigSchema.default({}),
      /** free text shown beside the name. @default '' */
      note: z.string().max(2000).default(''),
      /** replace a config of the same name (keeping its creation time). @default false */
      replace: z.boolean().default(false),
    }),
    output: out<SavedConfig>(),
  },
  /** Saved configs, most recently saved first; `unreadable` names rows that no longer validate. */
  'configs.list': {
    input: z.strictObject({ limit: z.number().int().min(1).max(10_000).default(500) }),
    output: out<{ configs: SavedConfig[]; unreadable: string[] }>(),
  },
  /** One saved config, whole (what "Download" writes). NOT_FOUND when there is none of that name. */
  'configs.get': { input: z.strictObject({ name: configName }), output: out<SavedConfig>() },
  /** Delete saved configs by name. */
  'configs.delete': { input: z.strictObject({ names: z.array(configName).min(1, 'names is required').max(1000) }), output: out<{ deleted: number }>() },
  /**
   * Field-by-field difference from saved config `a` to `b`: another saved config's name, or a config
   * (partial, merged over `preset`) such as the one on the Recall screen.
   */
  'configs.diff': {
    input: z.strictObject({
      a: configName,
      b: z.union([z.strictObject({ name: configName }), z.strictObject({ preset: presetName.optional(), config: partialConfigSchema })]),
    }),
    output: out<ConfigDiff>(),
  },

  // --- map -----------------------------------------------------------------
  /**
   * The embedding map of a recall's scope (or an eval case's): the memories with a vector under the
   * recall's model, marked injected / dropped (gate) / relevant / missed, with the query, laid out by
   * PCA (top two components, computed on a worker thread; the query projected exactly). Above `cap`
   * points a seeded sample that keeps every marked memory (`sampled`). Refine with `map.refine`.
   */
  'map.build': {
    input: z.strictObject({
      ...recallQueryShape,
      /** @default fieldguide */
      preset: presetName.optional(),
      /** A partial RecallConfig merged over the preset. */
      config: partialConfigSchema.optional(),
      /** An eval case: its query, scope, `now` and relevant memories replace the request's. */
      caseId: id.optional(),
      /** Points shown at most (sampled above). @default 20000 */
      cap: z.number().int().min(10).max(200_000).default(20_000),
      /** Sampling and layout seed. @default 1 */
      seed: seedSchema,
    }),
    output: out<MapData>(),
  },
  /**
   * Refine a built map with UMAP (approximate neighbour graph + UMAP's layout, started from the PCA
   * frame) as a background job (progress through every phase: neighbours, then layout epochs;
   * cancellable); the job's result is the layout and the query's placement.
   */
  'map.refine': {
    input: z.strictObject({
      mapId: id,
      /** @default 15 */
      nNeighbors: z.number().int().min(2).max(200).default(15),
      /** @default 200 */
      nEpochs: z.number().int().min(1).max(2000).default(200),
    }),
    output: out<JobProgress>(),
  },

  // --- trace ---------------------------------------------------------------
  /**
   * One logged recall event: its query/cue, the full config it ran with (completed from its
   * preset when the log holds a partial one), the injected memories with their logged scores,
   * and the context block (logged, or re-rendered from the logged results).
   */
  'trace.event': { input: z.strictObject({ eventId: id }), output: out<TraceEventDetail>() },
  /**
   * Replay an event and diff against what was logged. `logged`: the logged config at the
   * event's own `at` (time travel; the logged query vector when the event has one).
   * `current`: "today" — `now` (default the clock in main), the current embedder, and the
   * logged config with `config` merged over it. Each differing row is explained.
   */
  'trace.replay': {
    input: z.strictObject({
      eventId: id,
      /** @default 'logged' */
      mode: z.enum(['logged', 'current']).default('logged'),
      /** current mode: a partial config merged over the logged one */
      config: partialConfigSchema.optional(),
      /** current mode: when "today" is. @default Date.now() in main */
      now: ms.optional(),
      /** current mode: embedder spec. @default the saved setting, else the DB's default */
      embedder: z.string().trim().min(1).max(300).optional(),
    }),
    output: out<TraceReplay>(),
  },
  /**
   * Why was this memory (not) recalled — for a logged event (`eventId`) or an ad-hoc query
   * (`query`/`cue` + `preset`/`config` + `now`): scope, arm ranks (even beyond the pool),
   * features, the gate that dropped it, and the smallest single knob change that injects it,
   * each verified by re-running the recall.
   */
  'trace.why': {
    input: z
      .strictObject({
        memoryId: id,
        eventId: id.optional(),
        query: z.string().max(20_000).optional(),
        cue: cueSchema.nullable().optional(),
        preset: presetName.optional(),
        config: partialConfigSchema.optional(),
        /** ad hoc: @default Date.now() in main */
        now: ms.optional(),
        embedder: z.string().trim().min(1).max(300).optional(),
        queryVector: z.array(z.number().refine(Number.isFinite, 'must be finite')).min(1).max(65_536).optional(),
      })
      .refine((v) => v.eventId !== undefined || (v.query ?? '').trim() !== '' || !!v.cue, {
        message: 'give eventId, or a query (or cue) for an ad-hoc why-not',
        path: ['eventId'],
      }),
    output: out<WhyNot>(),
  },
  /** Which injected memory drove an event: share of the composite and leave-one-out influence. */
  'trace.drivers': { input: z.strictObject({ eventId: id }), output: out<TraceDrivers>() },
  /**
   * Opt-in counterfactual: regenerate the event's decision through the configured chat model
   * (settings `chatModel`, Ollama /api/chat or OpenAI-compatible /chat/completions) with the full
   * context block, then with the block minus each returned memory (leave-one-out), and compare the
   * answers. Sends the query and the memories' text to that server; 1 + N calls. A background job
   * (progress per call, cancellable); its result is a CounterfactualReport. BAD_INPUT when no chat
   * model is configured; a server that is down or slow fails the job with CHAT_UNAVAILABLE.
   */
  'trace.counterfactual': {
    input: z.strictObject({
      eventId: id,
      /** memories left out at most (the first N in returned order). @default 10 */
      maxMemories: z.number().int().min(1).max(50).default(10),
      /** deadline per chat call, ms. @default 60000 */
      timeoutMs: z.number().int().min(100).max(600_000).default(60_000),
    }),
    output: out<JobProgress>(),
  },
  /** The event sources of the open store, the remembered trace logs, and the live OTLP endpoint. */
  'trace.logs': { input: z.strictObject({}), output: out<TraceLogs>() },
  /**
   * Add a trace log (a Claude Code transcript, an OTLP JSON file, or a folder of them) to the open
   * store's events and remember it in the workspace. Desktop app: the path must come from
   * `store.pick` with purpose `logIn` (or the command line); browser mode: a typed path.
   * BAD_INPUT for a path that is no trace log (naming the formats looked for).
   */
  'trace.addLog': { input: z.strictObject({ path: z.string().trim().min(1, 'path is required').max(4096) }), output: out<TraceLogs>() },
  /**
   * One OTLP/HTTP JSON traces payload (what `POST /v1/traces` received, already authenticated), stored
   * as live recall events of the open store. The HTTP route and the desktop app's loopback listener
   * call it so the store's own thread does the work; a renderer has no use for it.
   */
  'trace.ingestOtlp': { input: z.strictObject({ payload: z.unknown() }), output: out<LiveReceipt>() },
  /** Forget a remembered trace log and drop its events. */
  'trace.removeLog': { input: z.strictObject({ path: z.string().trim().min(1, 'path is required').max(4096) }), output: out<TraceLogs>() },
  /** Events over time (histogram by preset) for the timeline, with the filters' values. */
  'trace.timeline': {
    input: z.strictObject({
      ...eventFilterShape,
      /** @default 60 */
      bins: z.number().int().min(1).max(500).default(60),
    }),
    output: out<TraceTimeline>(),
  },

  // --- eval ----------------------------------------------------------------
  /** A page of eval cases (workspace `eval_cases`) with facets over all of them: splits, tags, expect-empty, unjudged. */
  'cases.list': {
    input: z.strictObject({
      /** @default 'all' */
      split: z.enum(['train', 'test', 'all']).default('all'),
      tag: z.string().max(200).optional(),
      /** substring of id, name or query */
      search: z.string().max(1000).optional(),
      kind: z.enum(['graded', 'expectEmpty', 'unjudged']).optional(),
      /** @default 'id' (natural order) */
      sort: z.enum(['id', 'name', 'split', 'relevant', 'now']).default('id'),
      dir: z.enum(['asc', 'desc']).default('asc'),
      offset,
      limit,
    }),
    output: out<CasesPage>(),
  },
  /** One eval case with its note (LoCoMo: the answer). */
  'cases.get': { input: z.strictObject({ id }), output: out<EvalCaseRow>() },
  /**
   * Create (no `id`) or update a case: query (or cue), scope, `now`, relevant ids graded 1–3 or
   * `expectEmpty` (nothing should be recalled), tags, split (default: by a hash of the id).
   */
  'cases.save': { input: z.strictObject({ case: evalCaseInputSchema }), output: out<EvalCaseRow>() },
  /** Delete cases by id (their notes too). */
  'cases.delete': { input: z.strictObject({ ids: strList.min(1, 'ids is required') }), output: out<{ deleted: number }>() },
  /**
   * Import cases: `jsonl` (one case per line, the fields cases.save takes; snake_case and bare relevant
   * ids accepted) or `locomo` (LoCoMo QA for the conversations this DB holds: evidence → relevant ids).
   * Give the file's `text` (the renderer reads it) or a `path` main can read. Upserts by id; bad lines
   * are skipped and reported.
   */
  'cases.import': {
    input: z
      .strictObject({
        format: z.enum(['jsonl', 'locomo']),
        text: z.string().max(15_000_000).optional(),
        path: z.string().trim().min(1).max(4096).optional(),
      })
      .refine((v) => (v.text === undefined) !== (v.path === undefined), { message: 'give the file text or a path (one of them)', path: ['text'] }),
    output: out<CasesImportReport>(),
  },
  /** Export cases as JSONL (the import format): returned as text, and written to `path` when given. */
  'cases.export': {
    input: z.strictObject({
      split: z.enum(['train', 'test', 'all']).default('all'),
      tag: z.string().max(200).optional(),
      ids: strList.optional(),
      path: z.string().trim().min(1).max(4096).optional(),
      /** replace an existing file at `path`. @default false */
      overwrite: z.boolean().default(false),
    }),
    output: out<{ text: string; count: number; path: string | null }>(),
  },
  /**
   * Evaluate a config on the cases (a background job: progress while candidates are gathered,
   * cancellable). Candidates are gathered once per case and cached for this open DB, so a re-run
   * under other scoring knobs only re-scores. The job's result is the saved run's summary.
   */
  'eval.run': {
    input: z.strictObject({
      ...evalConfigShape,
      /** metric cutoff. @default 10 */
      k: z.number().int().min(1).max(1000).default(10),
      /** @default 'all' */
      split: z.enum(['train', 'test', 'all']).default('all'),
      tag: z.string().max(200).optional(),
      caseIds: strList.optional(),
      /** name shown in the runs list. @default the preset name */
      name: z.string().max(200).optional(),
    }),
    output: out<JobProgress>(),
  },
  /**
   * Tune mode, fusion, pool, weights (simplex), half-life, age source, floor, minSimilarity, topK and
   * budget on train conversations; rank with the baselines on held-out ones; report train and
   * held-out test side by side, a weight-simplex heatmap and the best config. A background job
   * (progress, cancel: the best so far is reported); the job's result is the TuneReport.
   */
  'eval.tune': {
    input: z.strictObject({
      ...evalConfigShape,
      /** objective (higher is better). @default 'recall@10' */
      metric: z.string().trim().min(1).max(40).default('recall@10'),
      /** configs to score. @default 1000 */
      trials: z.number().int().min(1).max(100_000).default(1000),
      /** @default 1 */
      seed: seedSchema,
      /** what may move (each @default true); maxTopK @default max(20, k) */
      space: z
        .strictObject({
          weights: z.boolean().optional(),
          halfLife: z.boolean().optional(),
          floor: z.boolean().optional(),
          topK: z.boolean().optional(),
          fusion: z.boolean().optional(),
          maxTopK: z.number().int().min(1).max(1000).optional(),
          mode: z.boolean().optional(),
          pool: z.boolean().optional(),
          ageSource: z.boolean().optional(),
          minSimilarity: z.boolean().optional(),
          tokenBudget: z.boolean().optional(),
        })
        .optional(),
      /** 'auto' (default): whole conversations / sessions held out when the cases name one */
      splitRule: z.enum(['auto', 'group', 'case']).optional(),
      /** share of cases held out (whole groups). @default 0.3 */
      testFraction: z.number().gt(0).lt(1).optional(),
      /** k-fold cross-validation of the tune besides the single split */
      folds: z.number().int().min(2).max(20).optional(),
      /** search the start scope as given even when it reaches under half of the judged memories. @default false */
      keepScope: z.boolean().optional(),
    }),
    output: out<JobProgress>(),
  },
  /**
   * Before a tune: how many judged-relevant memories the start config's unit and scope filters
   * reach; when under half, which filter excludes them and the widening (a partial config).
   * Reads only the judged rows, in the store's job worker.
   */
  'eval.scope': {
    input: z.strictObject({
      preset: evalConfigShape.preset,
      config: evalConfigShape.config,
    }),
    output: out<ScopeDiagnosis>(),
  },
  /** Saved tune reports, newest first (summaries; listed beside runs). */
  'tune.list': { input: z.strictObject({ limit: z.number().int().min(1).max(10_000).default(500) }), output: out<TuneReportSummary[]>() },
  /** One saved tune report, whole (the JSON `tune --json` prints). */
  'tune.get': { input: z.strictObject({ id }), output: out<SavedTuneReport>() },
  /** Delete tune reports by id. */
  'tune.delete': { input: z.strictObject({ ids: strList.min(1, 'ids is required') }), output: out<{ deleted: number }>() },
  /** Saved runs, newest first (config, embedder, metrics; no per-case results). */
  'runs.list': { input: z.strictObject({ limit: z.number().int().min(1).max(10_000).default(500) }), output: out<EvalRunSummary[]>() },
  /** One run with every case's injected list, judgment snapshot and metrics. */
  'runs.get': { input: z.strictObject({ id }), output: out<EvalRun>() },
  /**
   * Compare 2–8 runs case by case against the first: the metric per case, wins / losses / ties with a
   * sign test, mean delta with a paired bootstrap interval, churn (Jaccard, RBO) of the injected lists.
   */
  'runs.compare': {
    input: z.strictObject({
      ids: z.array(id).min(2, 'compare needs at least 2 runs').max(8, 'compare takes at most 8 runs'),
      /** e.g. `ndcg@10`, `mrr`. @default ndcg@k of the first run */
      metric: z.string().trim().min(1).max(40).optional(),
      /** RBO persistence. @default 0.9 */
      rboP: z.number().gt(0).lt(1).default(0.9),
    }),
    output: out<RunComparison>(),
  },
  /** Rename a run. */
  'runs.rename': { input: z.strictObject({ id, name: z.string().max(200) }), output: out<EvalRunSummary>() },
  /** Delete runs by id. */
  'runs.delete': { input: z.strictObject({ ids: strList.min(1, 'ids is required') }), output: out<{ deleted: number }>() },

  // --- import --------------------------------------------------------------
  /**
   * Start a background import of an Engram DB, a JSONL file or LoCoMo JSON into a new
   * canonical DB (`out`); LoCoMo QA items become eval cases in `out`.recallscope. Progress:
   * `onJobProgress`; result: ImportReportInfo. Cancelling leaves no output file behind.
   */
  'import.start': {
    input: z.strictObject({
      kind: z.enum(['engram', 'jsonl', 'locomo']),
      /** input file */
      in: z.string().trim().min(1, 'in is required').max(4096),
      /** canonical DB to write */
      out: z.string().trim().min(1, 'out is required').max(4096),
      /** overwrite `out` (and drop its old workspace). @default false */
      force: z.boolean().default(false),
      /** model name for stored vectors that do not name one (engram, jsonl). @default 'nomic-embed-text' */
      model: z.string().trim().min(1).max(300).optional(),
      /** also write offline hashing-256 vectors. @default the importer's (locomo: hashing, else none) */
      embed: z.enum(['hashing', 'none']).optional(),
    }),
    output: out<JobProgress>(),
  },

  // --- jobs ----------------------------------------------------------------
  /** Background jobs of this process (newest first), without their results. */
  'jobs.list': { input: z.strictObject({}), output: out<JobProgress[]>() },
  /** One job's state, with its result once done (for a renderer that missed the progress event). */
  'jobs.get': { input: z.strictObject({ jobId: id }), output: out<JobProgress>() },
  /** Cancel a running job; `cancelled` is false when it had already finished. */
  'jobs.cancel': { input: z.strictObject({ jobId: id }), output: out<{ cancelled: boolean }>() },
} as const

export type Contract = typeof contract
export type Channel = keyof Contract
/** What a caller passes (defaults optional). */
export type Input<C extends Channel> = z.input<Contract[C]['input']>
/** What a handler receives (defaults applied). */
export type ParsedInput<C extends Channel> = z.output<Contract[C]['input']>
export type Output<C extends Channel> = Contract[C]['output']
