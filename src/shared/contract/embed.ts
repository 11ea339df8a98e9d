/** The contract's embedder and settings channels: status, models, backfill, saved settings. */
import { z } from 'zod'
import type { JobProgress } from '../jobs'
import { out } from './common'
import { memoryFilterShape } from './browse'

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

export const embedChannels = {
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
} as const
