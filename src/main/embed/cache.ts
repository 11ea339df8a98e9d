/**
 * Query vectors: cached in the workspace DB by (embedder cache key, exact text),
 * so re-running a query or an eval costs no model call; or given explicitly
 * (`--query-vector FILE|JSON`), so an agent's logged vector replays exactly.
 */
import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'
import type { Workspace } from '../store/workspace/workspace'
import type { Embedder } from './types'

export interface EmbedQueryOptions {
  signal?: AbortSignal
  /** created_at for a new cache row. @default Date.now() */
  now?: number
  /** Rows kept per cache; the oldest go first. @default 20000 */
  maxEntries?: number
}

function cacheKeyOf(embedder: Embedder): string | null {
  return embedder.cacheKey ?? embedder.model
}

function checkText(text: unknown): string {
  if (typeof text !== 'string' || text.trim() === '') throw new RecallscopeError('BAD_INPUT', 'The query text is empty: nothing to embed')
  return text
}

/**
 * The query's vector: from `query_cache` when this embedder embedded this exact
 * text before, else from the embedder (then stored). Throws like `embed()`:
 * EMBEDDER_UNAVAILABLE (with details.errorCode) or CANCELLED.
 */
export async function embedQueryCached(ws: Workspace, embedder: Embedder, text: string, opts: EmbedQueryOptions = {}): Promise<Float32Array> {
  return (await lookupOrEmbed(ws, embedder, checkText(text), opts)).vector
}

async function lookupOrEmbed(ws: Workspace, embedder: Embedder, text: string, opts: EmbedQueryOptions): Promise<{ vector: Float32Array; cached: boolean }> {
  if (!embedder.enabled)
    throw new RecallscopeError('EMBEDDER_UNAVAILABLE', `The embedder "${embedder.name}" is off: no query vector`, { errorCode: 'DISABLED' })
  const key = cacheKeyOf(embedder)
  const useCache = embedder.cacheable !== false && key !== null
  if (useCache) {
    const hit = ws.cachedQueryVector(key, text)
    if (hit) return { vector: hit, cached: true }
  }
  const [vector] = await embedder.embed([text], { signal: opts.signal })
  if (!vector || vector.length === 0)
    throw new RecallscopeError('EMBEDDER_UNAVAILABLE', `${embedder.name} returned no vector for the query`, { errorCode: 'BAD_RESPONSE' })
  if (useCache) {
    try {
      ws.cacheQueryVector(key, text, vector, opts.now ?? Date.now(), opts.maxEntries ?? 20_000)
    } catch {
      /* the cache is an optimisation: a busy or read-only workspace must not fail the recall */
    }
  }
  return { vector, cached: false }
}

/** Forget cached query vectors (all, or one cache key). Returns the rows removed. */
export function clearQueryCache(ws: Workspace, cacheKey?: string): number {
  return ws.clearQueryCache(cacheKey)
}

/** What the recall engine needs: a vector, or why the dense arm is skipped. */
export interface QueryEmbedding {
  vector: Float32Array | null
  /** served from query_cache */
  cached: boolean
  /** the embedder should have answered and did not (seed 002 / seed 004 degradation) */
  degraded: boolean
  /** why there is no vector (degraded, or the embedder is `none`); null when there is one */
  reason: string | null
  /** stable code of the failure: ECONNREFUSED | MODEL_NOT_FOUND | TIMEOUT | HTTP_<status> | DISABLED | … */
  errorCode: string | null
  tookMs: number
}

/**
 * Like embedQueryCached, but an unavailable embedder is an answer, not an error:
 * seed 002 — "any failure → keyword fallback". The caller runs the lexical arm
 * and records `degraded` + `reason` in the trace. The wait is bounded by the
 * embedder's timeout. Cancellation and bad input still throw.
 */
export async function embedQueryOrDegrade(ws: Workspace, embedder: Embedder, text: string, opts: EmbedQueryOptions = {}): Promise<QueryEmbedding> {
  const t0 = performance.now()
  checkText(text)
  if (!embedder.enabled)
    return { vector: null, cached: false, degraded: false, reason: `embedder "${embedder.name}": dense arm off`, errorCode: 'DISABLED', tookMs: 0 }
  try {
    const r = await lookupOrEmbed(ws, embedder, text, opts)
    return { vector: r.vector, cached: r.cached, degraded: false, reason: null, errorCode: null, tookMs: performance.now() - t0 }
  } catch (e) {
    if (!(e instanceof RecallscopeError) || e.code !== 'EMBEDDER_UNAVAILABLE') throw e
    const code = (e.details as { errorCode?: string } | undefined)?.errorCode ?? 'UNAVAILABLE'
    return { vector: null, cached: false, degraded: true, reason: e.message, errorCode: code, tookMs: performance.now() - t0 }
  }
}

/** Texts one embedder call takes in a batch of query vectors (the embedder splits further to its own size). */
const QUERY_BATCH = 256

/**
 * embedQueryOrDegrade for many texts (an eval's queries): one cache read for all of them, the
 * missing ones embedded in batches of QUERY_BATCH (one embedder call each), the new vectors cached in
 * one transaction. Each answer is what embedQueryOrDegrade would give that text: a batch the
 * embedder fails degrades its own texts (with the failure's reason), and the next batch is tried.
 * `tookMs` is each text's share of its batch. Empty texts are BAD_INPUT; cancellation throws.
 */
export async function embedQueriesOrDegrade(
  ws: Workspace,
  embedder: Embedder,
  texts: readonly string[],
  opts: EmbedQueryOptions & { onBatch?: (done: number, total: number) => void } = {},
): Promise<QueryEmbedding[]> {
  for (const t of texts) checkText(t)
  if (!embedder.enabled)
    return texts.map(() => ({
      vector: null,
      cached: false,
      degraded: false,
      reason: `embedder "${embedder.name}": dense arm off`,
      errorCode: 'DISABLED',
      tookMs: 0,
    }))
  const t0 = performance.now()
  const distinct = [...new Set(texts)]
  const key = cacheKeyOf(embedder)
  const useCache = embedder.cacheable !== false && key !== null
  const got = new Map<string, QueryEmbedding>()
  const hits = useCache ? ws.cachedQueryVectors(key, distinct) : distinct.map(() => null)
  const missing: string[] = []
  const lookupMs = (performance.now() - t0) / Math.max(1, distinct.length)
  distinct.forEach((t, i) => {
    const v = hits[i]
    if (v) got.set(t, { vector: v, cached: true, degraded: false, reason: null, errorCode: null, tookMs: lookupMs })
    else missing.push(t)
  })
  const fresh: { text: string; vector: Float32Array }[] = []
  for (let i = 0; i < missing.length; i += QUERY_BATCH) {
    const chunk = missing.slice(i, i + QUERY_BATCH)
    const tb = performance.now()
    try {
      const vs = await embedder.embed(chunk, { signal: opts.signal })
      const share = (performance.now() - tb) / chunk.length + lookupMs
      chunk.forEach((t, j) => {
        const v = vs[j]
        if (!v || v.length === 0) {
          const reason = `${embedder.name} returned no vector for the query`
          got.set(t, { vector: null, cached: false, degraded: true, reason, errorCode: 'BAD_RESPONSE', tookMs: share })
        } else {
          got.set(t, { vector: v, cached: false, degraded: false, reason: null, errorCode: null, tookMs: share })
          fresh.push({ text: t, vector: v })
        }
      })
    } catch (e) {
      if (!(e instanceof RecallscopeError) || e.code !== 'EMBEDDER_UNAVAILABLE') throw e
      const code = (e.details as { errorCode?: string } | undefined)?.errorCode ?? 'UNAVAILABLE'
      const share = (performance.now() - tb) / chunk.length + lookupMs
      for (const t of chunk) got.set(t, { vector: null, cached: false, degraded: true, reason: e.message, errorCode: code, tookMs: share })
    }
    opts.onBatch?.(Math.min(missing.length, i + QUERY_BATCH), missing.length)
  }
  if (useCache && fresh.length) {
    try {
      ws.cacheQueryVectors(key, fresh, opts.now ?? Date.now(), opts.maxEntries ?? 20_000)
    } catch {
      /* the cache is an optimisation: a busy or read-only workspace must not fail the recall */
    }
  }
  return texts.map((t) => got.get(t)!)
}

/**
 * `--query-vector FILE|JSON`: an inline JSON array (`[0.1, -0.2, …]`) or a file
 * holding one. A file may also hold what an agent logged: `{"embedding": […]}`,
 * `{"vector": […]}`, an Ollama /api/embed answer with one row, or an OpenAI
 * /embeddings answer with one row.
 */
export function parseQueryVector(arg: string, opts: { cwd?: string } = {}): Float32Array {
  if (typeof arg !== 'string' || arg.trim() === '') throw new RecallscopeError('BAD_INPUT', '--query-vector needs a file path or a JSON array of numbers')
  const s = arg.trim()
  let source: string
  let text: string
  if (s.startsWith('[') || s.startsWith('{')) {
    source = 'the inline --query-vector'
    text = s
  } else {
    const file = path.resolve(opts.cwd ?? process.cwd(), s)
    if (!fs.existsSync(file) || !fs.statSync(file).isFile())
      throw new RecallscopeError('BAD_INPUT', `--query-vector: "${s}" is neither a file nor a JSON array of numbers`, { arg: s.slice(0, 200) })
    source = file
    text = fs.readFileSync(file, 'utf8')
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    throw new RecallscopeError('BAD_INPUT', `--query-vector: ${source} is not valid JSON (${(e as Error).message})`)
  }
  const arr = unwrapVector(parsed)
  if (!Array.isArray(arr)) throw new RecallscopeError('BAD_INPUT', `--query-vector: ${source} must be a JSON array of numbers (or {"embedding": [...]})`)
  if (arr.length === 0) throw new RecallscopeError('BAD_INPUT', `--query-vector: ${source} is an empty vector`)
  const v = new Float32Array(arr.length)
  for (let i = 0; i < arr.length; i++) {
    const x: unknown = arr[i]
    if (typeof x !== 'number')
      throw new RecallscopeError('BAD_INPUT', `--query-vector: element ${i} is not a number (${JSON.stringify(x)?.slice(0, 40)})`, { index: i })
    v[i] = x
    if (!Number.isFinite(v[i])) throw new RecallscopeError('BAD_INPUT', `--query-vector: element ${i} (${x}) is not finite as a float32`, { index: i })
  }
  let norm = 0
  for (let i = 0; i < v.length; i++) norm += v[i] * v[i]
  if (norm === 0) throw new RecallscopeError('BAD_INPUT', `--query-vector: ${source} is all zeros (cosine is undefined)`)
  return v
}

function unwrapVector(x: unknown): unknown {
  if (Array.isArray(x)) {
    // [[…]]: a one-row batch
    if (x.length === 1 && Array.isArray(x[0])) return x[0]
    return x
  }
  if (!x || typeof x !== 'object') return x
  const o = x as Record<string, unknown>
  if (Array.isArray(o.embedding)) return o.embedding
  if (Array.isArray(o.vector)) return o.vector
  if (Array.isArray(o.embeddings) && o.embeddings.length === 1) return o.embeddings[0]
  if (Array.isArray(o.data) && o.data.length === 1) return (o.data[0] as { embedding?: unknown })?.embedding
  return x
}
