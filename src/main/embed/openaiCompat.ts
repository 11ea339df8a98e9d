/**
 * Any OpenAI-compatible embeddings server: LM Studio, llama.cpp's llama-server,
 * vLLM, text-embeddings-inference's OpenAI route, or OpenAI itself.
 *
 * - POST {base}/embeddings  {model, input: string[], encoding_format: 'float'} →
 *   {data: [{embedding, index}]}. Rows are put back in input order by `index`
 *   (the spec does not promise response order).
 * - GET  {base}/models      health: {data: [{id}]}.
 *
 * Same deadline and error codes as the Ollama embedder, so recall degrades the same way.
 */
import { RecallscopeError } from '../../shared/result'
import type { Embedder, EmbedderHealth, ServerModel } from './types'
import { checkTimeout, DeadlineError, fetchJson, innermostMessage, networkCode, toVector, withDeadline } from './net'

/** LM Studio's default server address; llama-server (8080) and vLLM (8000) need the base URL set. */
const OPENAI_DEFAULT_BASE_URL = 'http://127.0.0.1:1234/v1'

export interface OpenAiEmbedderOptions {
  /** Model id as the server knows it. */
  model: string
  /**
   * Base URL including the API prefix, as in the OpenAI SDK (`http://127.0.0.1:8080/v1`).
   * A bare origin gets `/v1` appended; a pasted `…/embeddings` is trimmed.
   * @default $OPENAI_BASE_URL, else http://127.0.0.1:1234/v1 (LM Studio)
   */
  baseUrl?: string
  /** Bearer token. @default $RECALLSCOPE_OPENAI_API_KEY, else $OPENAI_API_KEY, else none (local servers need none) */
  apiKey?: string
  /** Deadline for each HTTP request, in ms. @default 5000 */
  timeoutMs?: number
  /** Inputs per request. @default 64 */
  batchSize?: number
  /** Environment to read the defaults from. @default process.env */
  env?: Record<string, string | undefined>
}

/** Normalise a base URL: http(s) only, no trailing slash, `/v1` when only an origin was given. */
export function resolveOpenAiBaseUrl(raw?: string | null, env: Record<string, string | undefined> = process.env): string {
  const given = raw != null && raw.trim() !== '' ? raw.trim() : (env.OPENAI_BASE_URL?.trim() ?? '')
  if (given === '') return OPENAI_DEFAULT_BASE_URL
  let url: URL
  try {
    url = new URL(given)
  } catch {
    throw new RecallscopeError('BAD_INPUT', `Bad OpenAI-compatible base URL "${given}": use a form like http://127.0.0.1:8080/v1`, { baseUrl: given })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RecallscopeError('BAD_INPUT', `Bad OpenAI-compatible base URL "${given}": the scheme must be http or https`, { baseUrl: given })
  let p = url.pathname.replace(/\/+$/, '').replace(/\/embeddings$/, '')
  if (p === '') p = '/v1'
  return `${url.origin}${p}`
}

interface Failure {
  errorCode: string
  message: string
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly said: string,
    readonly apiCode: string | null,
  ) {
    super(`HTTP ${status}: ${said}`)
  }
}

/** The error text of an OpenAI-style body: {error:{message,code}}, {error:"…"}, vLLM's {message}, FastAPI's {detail}; Ollama's {error:"…"} too. */
export function errorText(body: unknown, fallback: string): { said: string; apiCode: string | null } {
  const b = body as { error?: unknown; message?: unknown; detail?: unknown } | null
  const e = b?.error as { message?: unknown; code?: unknown } | string | undefined
  const said =
    (typeof e === 'object' && e && typeof e.message === 'string' && e.message) ||
    (typeof e === 'string' && e) ||
    (typeof b?.message === 'string' && b.message) ||
    (typeof b?.detail === 'string' && b.detail) ||
    fallback
  const apiCode = typeof e === 'object' && e && typeof e.code === 'string' ? e.code : null
  return { said, apiCode }
}

/** Some servers send base64 float32 even when asked for floats. */
function fromBase64(s: string): Float32Array | string {
  const buf = Buffer.from(s, 'base64')
  if (buf.length === 0 || buf.length % 4 !== 0) return 'not a float32 base64 string'
  const v = new Float32Array(buf.length / 4)
  for (let i = 0; i < v.length; i++) v[i] = buf.readFloatLE(i * 4)
  for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i])) return `a non-finite value at index ${i}`
  return v
}

export class OpenAiCompatEmbedder implements Embedder {
  readonly name = 'openai'
  readonly enabled = true
  readonly model: string
  readonly baseUrl: string
  readonly timeoutMs: number
  readonly batchSize: number
  readonly cacheKey: string
  private readonly apiKey: string | null

  constructor(opts: OpenAiEmbedderOptions) {
    if (typeof opts.model !== 'string' || opts.model.trim() === '')
      throw new RecallscopeError('BAD_INPUT', 'A model id is required, e.g. openai:text-embedding-3-small')
    const env = opts.env ?? process.env
    this.model = opts.model.trim()
    this.baseUrl = resolveOpenAiBaseUrl(opts.baseUrl, env)
    this.timeoutMs = checkTimeout(opts.timeoutMs)
    this.batchSize = Math.max(1, Math.floor(opts.batchSize ?? 64))
    this.apiKey = opts.apiKey ?? env.RECALLSCOPE_OPENAI_API_KEY ?? env.OPENAI_API_KEY ?? null
    this.cacheKey = `openai:${this.model}`
  }

  private async request(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    return withDeadline(this.timeoutMs, signal, async (s) => {
      const headers: Record<string, string> = { Accept: 'application/json' }
      if (body !== undefined) headers['Content-Type'] = 'application/json'
      if (this.apiKey) headers.Authorization = `Bearer ${this.apiKey}`
      const { res, text, json } = await fetchJson(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: s,
      })
      if (!res.ok) {
        const { said, apiCode } = errorText(json, text.trim().slice(0, 300) || res.statusText || `HTTP ${res.status}`)
        throw new HttpError(res.status, said, apiCode)
      }
      if (json === undefined) throw new SyntaxError(`${path} answered with a body that is not JSON`)
      return json
    })
  }

  describe(e: unknown, endpoint: string): Failure {
    const base = this.baseUrl
    if (e instanceof DeadlineError)
      return { errorCode: 'TIMEOUT', message: `The embeddings server at ${base} did not answer ${endpoint} within ${e.timeoutMs} ms (timeout).` }
    if (e instanceof HttpError) {
      if ((e.status === 404 || e.status === 400) && (e.apiCode === 'model_not_found' || /model/i.test(e.said)))
        return {
          errorCode: 'MODEL_NOT_FOUND',
          message: `Model "${this.model}" is not available on ${base}: load or download it in the server (${e.said})`,
        }
      if (e.status === 401 || e.status === 403)
        return {
          errorCode: `HTTP_${e.status}`,
          message: `The embeddings server at ${base} refused the API key (HTTP ${e.status}): ${e.said}. Set OPENAI_API_KEY.`,
        }
      return { errorCode: `HTTP_${e.status}`, message: `The embeddings server at ${base} answered ${endpoint} with HTTP ${e.status}: ${e.said}` }
    }
    const code = networkCode(e)
    if (code === 'ECONNREFUSED')
      return {
        errorCode: 'ECONNREFUSED',
        message: `No OpenAI-compatible server is reachable at ${base} (connection refused). Start it (LM Studio's server, llama-server, vLLM) or set the base URL.`,
      }
    if (code === 'ENOTFOUND') return { errorCode: 'ENOTFOUND', message: `Host not found: ${base} (DNS lookup failed).` }
    if (code === 'ECONNRESET')
      return { errorCode: 'ECONNRESET', message: `The embeddings server at ${base} closed the connection before answering ${endpoint}.` }
    if (code === 'ETIMEDOUT') return { errorCode: 'TIMEOUT', message: `The embeddings server at ${base} did not answer ${endpoint} (network timeout).` }
    if (code) return { errorCode: code, message: `The embeddings server at ${base} could not be reached (${code}): ${innermostMessage(e)}` }
    if (e instanceof SyntaxError)
      return { errorCode: 'BAD_RESPONSE', message: `The embeddings server at ${base} sent an answer that is not JSON (${e.message})` }
    return { errorCode: 'UNKNOWN', message: `The embeddings server at ${base} failed on ${endpoint}: ${innermostMessage(e)}` }
  }

  private unavailable(f: Failure): RecallscopeError {
    return new RecallscopeError('EMBEDDER_UNAVAILABLE', f.message, { errorCode: f.errorCode, host: this.baseUrl, model: this.model })
  }

  private badResponse(why: string): RecallscopeError {
    return this.unavailable({ errorCode: 'BAD_RESPONSE', message: `The embeddings server at ${this.baseUrl} sent an unusable /embeddings answer: ${why}` })
  }

  async embed(texts: string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) throw new RecallscopeError('BAD_INPUT', 'embed() takes an array of strings')
    const out: Float32Array[] = []
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const chunk = texts.slice(i, i + this.batchSize)
      let res: unknown
      try {
        res = await this.request('POST', '/embeddings', { model: this.model, input: chunk, encoding_format: 'float' }, opts.signal)
      } catch (e) {
        if (e instanceof RecallscopeError && e.code === 'CANCELLED') throw e
        throw this.unavailable(this.describe(e, '/embeddings'))
      }
      const data = (res as { data?: unknown })?.data
      if (!Array.isArray(data)) throw this.badResponse('no "data" array')
      if (data.length !== chunk.length) throw this.badResponse(`${data.length} vectors for ${chunk.length} inputs`)
      const rows = new Array<Float32Array | undefined>(chunk.length)
      for (let j = 0; j < data.length; j++) {
        const item = data[j] as { embedding?: unknown; index?: unknown }
        const at = typeof item?.index === 'number' ? item.index : j
        if (!Number.isInteger(at) || at < 0 || at >= chunk.length || rows[at]) throw this.badResponse(`bad or repeated index ${String(item?.index)}`)
        const v = typeof item.embedding === 'string' ? fromBase64(item.embedding) : toVector(item.embedding)
        if (typeof v === 'string') throw this.badResponse(`vector ${i + at} is ${v}`)
        rows[at] = v
      }
      for (const v of rows as Float32Array[]) {
        if (out.length && v.length !== out[0].length) throw this.badResponse(`vectors of ${v.length} and ${out[0].length} dimensions in one answer`)
        out.push(v)
      }
    }
    return out
  }

  /** GET {base}/models. Throws EMBEDDER_UNAVAILABLE like `embed()`. */
  async listModels(opts: { signal?: AbortSignal } = {}): Promise<ServerModel[]> {
    let res: unknown
    try {
      res = await this.request('GET', '/models', undefined, opts.signal)
    } catch (e) {
      if (e instanceof RecallscopeError && e.code === 'CANCELLED') throw e
      throw this.unavailable(this.describe(e, '/models'))
    }
    const data = (res as { data?: unknown })?.data
    if (!Array.isArray(data))
      throw this.unavailable({ errorCode: 'BAD_RESPONSE', message: `The server at ${this.baseUrl} sent a /models answer without "data"` })
    return data.flatMap((m): ServerModel[] => {
      const id = (m as { id?: unknown })?.id
      return typeof id === 'string' && id ? [{ name: id, dim: null, embedding: null, capabilities: null, family: null, sizeBytes: null }] : []
    })
  }

  async health(opts: { signal?: AbortSignal; probeDim?: boolean } = {}): Promise<EmbedderHealth> {
    const t0 = performance.now()
    const h: EmbedderHealth = {
      reachable: false,
      modelAvailable: false,
      dim: null,
      models: [],
      error: null,
      errorCode: null,
      host: this.baseUrl,
      version: null,
    }
    let listed = false
    try {
      const res = await this.request('GET', '/models', undefined, opts.signal)
      h.reachable = true
      const data = (res as { data?: unknown })?.data
      h.models = Array.isArray(data)
        ? data.map((m) => (m as { id?: unknown } | null)?.id).filter((id): id is string => typeof id === 'string' && id !== '')
        : []
      listed = h.models.includes(this.model)
      h.modelAvailable = listed
    } catch (e) {
      if (e instanceof RecallscopeError && e.code === 'CANCELLED') return { ...h, errorCode: 'CANCELLED', error: 'Cancelled', tookMs: performance.now() - t0 }
      const f = this.describe(e, '/models')
      // A server without /models (some proxies) still answered: the probe below decides.
      if (!(e instanceof HttpError && e.status === 404)) {
        return { ...h, reachable: e instanceof HttpError, errorCode: f.errorCode, error: f.message, tookMs: performance.now() - t0 }
      }
      h.reachable = true
      h.note = `${this.baseUrl} has no /models list`
    }
    if (opts.probeDim) {
      // llama-server answers with whatever model it loaded, under any name: the probe is the real test.
      try {
        const [v] = await this.embed(['dimension probe'], { signal: opts.signal })
        h.dim = v.length
        h.modelAvailable = true
        if (!listed && h.models.length) h.note = `"${this.model}" is not in /models, but the server embeds with it`
      } catch (e) {
        h.modelAvailable = false
        const d = e instanceof RecallscopeError ? (e.details as { errorCode?: string } | undefined) : undefined
        h.errorCode = d?.errorCode ?? (e instanceof RecallscopeError ? e.code : 'UNKNOWN')
        h.error = (e as Error).message
      }
    } else if (!listed && h.reachable && h.models.length) {
      h.errorCode = 'MODEL_NOT_FOUND'
      h.error = `Model "${this.model}" is not listed by ${this.baseUrl}/models (it offers: ${h.models.slice(0, 8).join(', ')}). Some servers embed under any name: check with a probe.`
    }
    return { ...h, tookMs: performance.now() - t0 }
  }
}
