/**
 * The built-in in-process embedders: `hashing` (offline, deterministic, what
 * the demo DB and the tests use) and `none` (dense arm off).
 */
import { RecallscopeError } from '../../shared/result'
import { HASHING_DIM, HASHING_MODEL, hashEmbed } from './hashing'
import type { Embedder, EmbedderHealth } from './types'

/** Said wherever hashing vectors are shown, so nobody mistakes them for semantic similarity. */
const HASHING_NOTE =
  'Offline hashing embedder: similarity is lexical-level (shared words, bigrams and word pieces), not semantic. Use an Ollama or OpenAI-compatible model for semantic recall.'

export class HashingEmbedder implements Embedder {
  readonly name = 'hashing'
  readonly model = HASHING_MODEL
  readonly enabled = true
  // Computing a hashing vector is cheaper than a cache lookup.
  readonly cacheable = false

  async embed(texts: string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) throw new RecallscopeError('BAD_INPUT', 'embed() takes an array of strings')
    if (opts.signal?.aborted) throw new RecallscopeError('CANCELLED', 'Cancelled')
    return texts.map((t) => hashEmbed(t, HASHING_DIM))
  }

  async health(): Promise<EmbedderHealth> {
    return { reachable: true, modelAvailable: true, dim: HASHING_DIM, models: [HASHING_MODEL], error: null, errorCode: null, note: HASHING_NOTE, tookMs: 0 }
  }
}

const NONE_NOTE = 'No embedder: the dense arm is off and recall uses the lexical or recency arms only.'

export class NoneEmbedder implements Embedder {
  readonly name = 'none'
  readonly model = null
  readonly enabled = false
  readonly cacheable = false

  async embed(): Promise<Float32Array[]> {
    throw new RecallscopeError('EMBEDDER_UNAVAILABLE', 'The embedder is "none": the dense arm is off', { errorCode: 'DISABLED', host: null, model: null })
  }

  async health(): Promise<EmbedderHealth> {
    // Off by choice is not a fault: no error, and the indicator shows "off".
    return { reachable: true, modelAvailable: false, dim: null, models: [], error: null, errorCode: null, note: NONE_NOTE, tookMs: 0 }
  }
}
