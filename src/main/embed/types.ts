/**
 * The embedder extension point: one small interface; built-ins (hashing, ollama,
 * openai-compatible, none) are registered through the same list a third party would use.
 */

import type { EmbedderHealthInfo } from '../../shared/contract'

/** What `health()` reports: the same shape the `embed.status` channel returns (src/shared/contract/embed.ts). */
export type EmbedderHealth = EmbedderHealthInfo

export interface Embedder {
  /** 'hashing' | 'ollama' | 'openai' | 'none' | … */
  readonly name: string
  /** The model name its vectors are stored under (`embeddings.model`); null for `none`. */
  readonly model: string | null
  /** false for `none` (dense arm off). */
  readonly enabled: boolean
  /**
   * Key for the workspace query cache (`query_cache.model`). Two embedders that
   * give different vectors for the same model name (Ollama batch vs legacy
   * endpoint, Ollama vs an OpenAI-compatible server) must use different keys.
   * @default model
   */
  readonly cacheKey?: string
  /** Cache query vectors in the workspace DB. In-process embedders (hashing) say false. @default true */
  readonly cacheable?: boolean
  /** Embed a batch; one vector per text, same order. Throws RecallscopeError('EMBEDDER_UNAVAILABLE') on failure. */
  embed(texts: string[], opts?: { signal?: AbortSignal }): Promise<Float32Array[]>
  /**
   * Is it usable right now, and what does it offer? Never throws.
   * `probeDim`: when the server does not report the vector length, embed a short probe text to learn it.
   */
  health(opts?: { signal?: AbortSignal; probeDim?: boolean }): Promise<EmbedderHealth>
  /** The models the server offers, for pickers (server-backed embedders). Throws like `embed()`. */
  listModels?(opts?: { signal?: AbortSignal }): Promise<ServerModel[]>
}

/** One entry of a server's model list, for pickers. */
export interface ServerModel {
  name: string
  /** vector length when the server reports it (Ollama: details.embedding_length, newer servers) */
  dim: number | null
  /** the server says it can embed (Ollama capabilities); null when it does not say */
  embedding: boolean | null
  capabilities: string[] | null
  family: string | null
  sizeBytes: number | null
}
