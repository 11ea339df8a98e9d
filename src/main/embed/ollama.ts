/**
 * The Ollama embedder, through the real `ollama` client (ollama-js).
 *
 * Endpoints (see reference/ollama-api.md):
 * - POST /api/embed       batch input, L2-normalised output (Ollama ≥ 0.2.6). The default.
 * - POST /api/embeddings  legacy, one prompt per call, not normalised. `legacy: true`,
 *                         used by the Engram preset for parity (seed 002).
 * - GET  /api/tags        health: is the model pulled, and (newer servers) its
 *                         `details.embedding_length`.
 * - GET  /api/version     shown in the status indicator.
 *
 * Every request has its own deadline (default 5 s, Engram's) that aborts the
 * socket; failures become RecallscopeError('EMBEDDER_UNAVAILABLE') with a stable
 * `errorCode` in `details` so recall can degrade to the lexical arm and say why.
 */
import { Ollama } from 'ollama'
import { RecallscopeError } from '../../shared/result'
import type { Embedder, EmbedderHealth, ServerModel } from './types'
import { checkTimeout, DeadlineError, fetchWithSignal, innermostMessage, networkCode, toVector, withDeadline } from './net'

const OLLAMA_DEFAULT_PORT = 11434
const OLLAMA_DEFAULT_HOST = `http://127.0.0.1:${OLLAMA_DEFAULT_PORT}`

export interface OllamaEmbedderOptions {
  /** Model name as Ollama knows it, e.g. `nomic-embed-text`. */
  model: string
  /**
   * Server address, in any form OLLAMA_HOST accepts (see `resolveOllamaHost`).
   * @default $OLLAMA_HOST, else http://127.0.0.1:11434
   */
  host?: string
  /** Deadline for each HTTP request, in ms. @default 5000 (seed 002: Engram's timeout) */
  timeoutMs?: number
  /** Use the legacy /api/embeddings endpoint, one prompt per request (Engram parity). @default false */
  legacy?: boolean
  /** Inputs per /api/embed request. @default 64 */
  batchSize?: number
  /** Environment to read OLLAMA_HOST from. @default process.env */
  env?: Record<string, string | undefined>
}

/**
 * Resolve an Ollama address the way Ollama itself reads OLLAMA_HOST
 * (envconfig.Host in ollama/ollama), so the same value works for both:
 * - empty / unset                → http://127.0.0.1:11434
 * - `127.0.0.1:11434`, `gpu-box` → scheme http; a bare host gets port 11434
 * - `:11500`                     → http://127.0.0.1:11500
 * - `http://host:port`, `https://host/prefix` → as given; an explicit scheme with no
 *   port gets that scheme's default (80/443), exactly as Ollama and ollama-js do,
 *   because that form is how people reach Ollama behind a reverse proxy
 * - surrounding quotes and spaces, trailing slashes → dropped (Ollama trims them too)
 * - `0.0.0.0` / `::` (the "listen on every interface" values people put in
 *   OLLAMA_HOST for the server) → 127.0.0.1 / [::1], because a wildcard is a
 *   bind address, not a destination (connecting to it fails on Windows and macOS).
 * Anything else (another scheme, a bad port) is a BAD_INPUT error.
 */
export function resolveOllamaHost(raw?: string | null, env: Record<string, string | undefined> = process.env): string {
  const given = raw != null && raw.trim() !== '' ? raw : env.OLLAMA_HOST
  let s = (given ?? '')
    .trim()
    .replace(/^["']+|["']+$/g, '')
    .trim()
  if (s === '') return OLLAMA_DEFAULT_HOST
  const bad = (why: string) =>
    new RecallscopeError('BAD_INPUT', `Bad Ollama host "${s}": ${why}. Use a form like 127.0.0.1:11434 or http://host:11434`, { host: s })
  let scheme = 'http'
  let explicit = false
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.*)$/.exec(s)
  if (m) {
    scheme = m[1].toLowerCase()
    if (scheme !== 'http' && scheme !== 'https') throw bad(`the scheme must be http or https, not ${scheme}`)
    explicit = true
    s = m[2]
  }
  s = s.replace(/\/+$/, '')
  const slash = s.indexOf('/')
  const hostport = slash === -1 ? s : s.slice(0, slash)
  const pathPart = slash === -1 ? '' : s.slice(slash)
  let host = hostport
  let port = ''
  const v6 = /^\[([^\]]*)\](?::(.*))?$/.exec(hostport)
  if (v6) {
    host = `[${v6[1]}]`
    port = v6[2] ?? ''
  } else if ((hostport.match(/:/g) ?? []).length === 1) {
    ;[host, port] = hostport.split(':')
  } else if (hostport.includes(':')) {
    host = `[${hostport}]` // a bare IPv6 address
  }
  if (host === '' || host === '0.0.0.0') host = '127.0.0.1'
  if (host === '[::]' || host === '[0:0:0:0:0:0:0:0]') host = '[::1]'
  if (port === '') port = explicit ? (scheme === 'https' ? '443' : '80') : String(OLLAMA_DEFAULT_PORT)
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw bad(`"${port}" is not a port number`)
  let url: URL
  try {
    url = new URL(`${scheme}://${host}:${port}${pathPart}`)
  } catch {
    throw bad('it is not a valid address')
  }
  // URL drops default ports (http:80); keep them explicit so the address is unambiguous in messages.
  return `${url.protocol}//${url.hostname}:${port}${url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '')}`
}

/** Compare Ollama model names the way Ollama does: case-insensitive, `:latest` implied, default registry/namespace implied. */
export function canonicalModelName(name: string): string {
  let n = name.trim().toLowerCase()
  n = n.replace(/^registry\.ollama\.ai\//, '').replace(/^library\//, '')
  const lastSlash = n.lastIndexOf('/')
  if (!n.slice(lastSlash + 1).includes(':')) n += ':latest'
  return n
}

interface Failure {
  errorCode: string
  message: string
}

/** ollama-js throws ResponseError { error, status_code } for any non-2xx answer. */
function isResponseError(e: unknown): e is { error: string; status_code: number; message: string } {
  return !!e && typeof e === 'object' && (e as { name?: string }).name === 'ResponseError' && typeof (e as { status_code?: unknown }).status_code === 'number'
}

export class OllamaEmbedder implements Embedder {
  readonly name = 'ollama'
  readonly enabled = true
  readonly model: string
  readonly host: string
  readonly timeoutMs: number
  readonly legacy: boolean
  readonly batchSize: number
  readonly cacheKey: string

  constructor(opts: OllamaEmbedderOptions) {
    if (typeof opts.model !== 'string' || opts.model.trim() === '')
      throw new RecallscopeError('BAD_INPUT', 'An Ollama model name is required, e.g. ollama:nomic-embed-text')
    this.model = opts.model.trim()
    this.host = resolveOllamaHost(opts.host, opts.env)
    this.timeoutMs = checkTimeout(opts.timeoutMs)
    this.legacy = opts.legacy ?? false
    this.batchSize = Math.max(1, Math.floor(opts.batchSize ?? 64))
    // /api/embed normalises, /api/embeddings does not: never serve one's cached vector for the other.
    this.cacheKey = `ollama:${this.model}${this.legacy ? '#legacy' : ''}`
  }

  /** One client per request, so each request carries its own abort signal. */
  private client(signal: AbortSignal): Ollama {
    return new Ollama({ host: this.host, fetch: fetchWithSignal(signal) })
  }

  private call<T>(signal: AbortSignal | undefined, fn: (c: Ollama) => Promise<T>): Promise<T> {
    return withDeadline(this.timeoutMs, signal, (s) => fn(this.client(s)))
  }

  /** Map anything a request threw to a stable code and a message that says what to do. */
  describe(e: unknown, endpoint: string): Failure {
    const host = this.host
    if (e instanceof DeadlineError) return { errorCode: 'TIMEOUT', message: `Ollama at ${host} did not answer ${endpoint} within ${e.timeoutMs} ms (timeout).` }
    if (isResponseError(e)) {
      const status = e.status_code
      const said = String(e.error ?? e.message).trim()
      // A pulled-model miss says `model "x" not found, try pulling it first`; an Ollama
      // older than 0.2.6 has no /api/embed and answers the router's plain "404 page not found".
      if (status === 404 && /model/i.test(said))
        return { errorCode: 'MODEL_NOT_FOUND', message: `Model "${this.model}" is not pulled on ${host}: run \`ollama pull ${this.model}\`` }
      if (status === 404 && endpoint === '/api/embed')
        return {
          errorCode: 'HTTP_404',
          message: `Ollama at ${host} has no ${endpoint} (${said}): it is older than 0.2.6; upgrade it or use the legacy /api/embeddings endpoint`,
        }
      return { errorCode: `HTTP_${status}`, message: `Ollama at ${host} answered ${endpoint} with HTTP ${status}: ${said}` }
    }
    const code = networkCode(e)
    if (code === 'ECONNREFUSED')
      return { errorCode: 'ECONNREFUSED', message: `Ollama is not reachable at ${host} (connection refused). Start it with \`ollama serve\`.` }
    if (code === 'ENOTFOUND')
      return { errorCode: 'ENOTFOUND', message: `Ollama host not found: ${host} (DNS lookup failed). Check OLLAMA_HOST or the Ollama host setting.` }
    if (code === 'ECONNRESET') return { errorCode: 'ECONNRESET', message: `Ollama at ${host} closed the connection before answering ${endpoint}.` }
    if (code === 'ETIMEDOUT') return { errorCode: 'TIMEOUT', message: `Ollama at ${host} did not answer ${endpoint} (network timeout).` }
    if (code) return { errorCode: code, message: `Ollama at ${host} could not be reached (${code}): ${innermostMessage(e)}` }
    if (e instanceof SyntaxError) return { errorCode: 'BAD_RESPONSE', message: `Ollama at ${host} sent a ${endpoint} answer that is not JSON: ${e.message}` }
    return { errorCode: 'UNKNOWN', message: `Ollama at ${host} failed on ${endpoint}: ${innermostMessage(e)}` }
  }

  private unavailable(f: Failure): RecallscopeError {
    return new RecallscopeError('EMBEDDER_UNAVAILABLE', f.message, { errorCode: f.errorCode, host: this.host, model: this.model })
  }

  private rethrow(e: unknown, endpoint: string): never {
    if (e instanceof RecallscopeError && (e.code === 'CANCELLED' || e.code === 'EMBEDDER_UNAVAILABLE')) throw e
    throw this.unavailable(this.describe(e, endpoint))
  }

  private badResponse(endpoint: string, why: string): RecallscopeError {
    return this.unavailable({ errorCode: 'BAD_RESPONSE', message: `Ollama at ${this.host} sent an unusable ${endpoint} answer: ${why}` })
  }

  async embed(texts: string[], opts: { signal?: AbortSignal } = {}): Promise<Float32Array[]> {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) throw new RecallscopeError('BAD_INPUT', 'embed() takes an array of strings')
    if (texts.length === 0) return []
    return this.legacy ? this.embedLegacy(texts, opts.signal) : this.embedBatch(texts, opts.signal)
  }

  private async embedBatch(texts: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const out: Float32Array[] = []
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const chunk = texts.slice(i, i + this.batchSize)
      let res: { embeddings?: unknown }
      try {
        res = await this.call(signal, (c) => c.embed({ model: this.model, input: chunk }))
      } catch (e) {
        this.rethrow(e, '/api/embed')
      }
      const rows = res?.embeddings
      if (!Array.isArray(rows)) throw this.badResponse('/api/embed', 'no "embeddings" array')
      if (rows.length !== chunk.length) throw this.badResponse('/api/embed', `${rows.length} vectors for ${chunk.length} inputs`)
      for (let j = 0; j < rows.length; j++) {
        const v = toVector(rows[j])
        if (typeof v === 'string') throw this.badResponse('/api/embed', `vector ${i + j} is ${v}`)
        if (out.length && v.length !== out[0].length) throw this.badResponse('/api/embed', `vector ${i + j} has ${v.length} dimensions, not ${out[0].length}`)
        out.push(v)
      }
    }
    return out
  }

  /** seed 002: Engram posts {model, prompt} to /api/embeddings and reads `embedding`, one text at a time. */
  private async embedLegacy(texts: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const out: Float32Array[] = []
    for (let i = 0; i < texts.length; i++) {
      let res: { embedding?: unknown }
      try {
        res = await this.call(signal, (c) => c.embeddings({ model: this.model, prompt: texts[i] }))
      } catch (e) {
        this.rethrow(e, '/api/embeddings')
      }
      const v = toVector(res?.embedding)
      if (typeof v === 'string') throw this.badResponse('/api/embeddings', `vector ${i} is ${v}`)
      if (out.length && v.length !== out[0].length) throw this.badResponse('/api/embeddings', `vector ${i} has ${v.length} dimensions, not ${out[0].length}`)
      out.push(v)
    }
    return out
  }

  /**
   * The models this server has pulled (GET /api/tags), with what newer servers
   * report about them. Throws EMBEDDER_UNAVAILABLE like `embed()`.
   */
  async listModels(opts: { signal?: AbortSignal } = {}): Promise<ServerModel[]> {
    let tags: { models?: unknown }
    try {
      tags = await this.call(opts.signal, (c) => c.list())
    } catch (e) {
      this.rethrow(e, '/api/tags')
    }
    if (!Array.isArray(tags?.models)) throw this.badResponse('/api/tags', 'no "models" array')
    return tags.models.flatMap((m: unknown): ServerModel[] => {
      const o = (m ?? {}) as {
        name?: unknown
        model?: unknown
        size?: unknown
        details?: { embedding_length?: unknown; family?: unknown }
        capabilities?: unknown
      }
      const name = typeof o.name === 'string' ? o.name : typeof o.model === 'string' ? o.model : ''
      if (!name) return []
      // Newer servers add details.embedding_length and capabilities (both omitempty).
      const len = o.details?.embedding_length
      const caps = Array.isArray(o.capabilities) ? o.capabilities.filter((c): c is string => typeof c === 'string') : null
      return [
        {
          name,
          dim: typeof len === 'number' && Number.isInteger(len) && len > 0 ? len : null,
          embedding: caps ? caps.includes('embedding') : null,
          capabilities: caps,
          family: typeof o.details?.family === 'string' ? o.details.family : null,
          sizeBytes: typeof o.size === 'number' ? o.size : null,
        },
      ]
    })
  }

  async health(opts: { signal?: AbortSignal; probeDim?: boolean } = {}): Promise<EmbedderHealth> {
    const t0 = performance.now()
    const h: EmbedderHealth = { reachable: false, modelAvailable: false, dim: null, models: [], error: null, errorCode: null, host: this.host, version: null }
    const done = () => ({ ...h, tookMs: performance.now() - t0 })
    const fail = (e: unknown) => {
      const d = e instanceof RecallscopeError ? (e.details as { errorCode?: string } | undefined) : undefined
      h.errorCode = d?.errorCode ?? (e instanceof RecallscopeError ? e.code : 'UNKNOWN')
      h.error = e instanceof RecallscopeError && e.code === 'CANCELLED' ? 'Cancelled' : ((e as Error)?.message ?? String(e))
    }
    let list: ServerModel[]
    try {
      // /api/version is informational: its failure must not hide the /api/tags answer.
      const [models, version] = await Promise.all([this.listModels(opts), this.call(opts.signal, (c) => c.version()).catch(() => null)])
      list = models
      h.version = typeof version?.version === 'string' ? version.version : null
    } catch (e) {
      fail(e)
      // An HTTP error or an odd body still proves a server answered.
      h.reachable = !!h.errorCode && (h.errorCode.startsWith('HTTP_') || h.errorCode === 'BAD_RESPONSE')
      return done()
    }
    h.reachable = true
    h.models = list.map((m) => m.name)
    const want = canonicalModelName(this.model)
    const entry = list.find((m) => canonicalModelName(m.name) === want)
    if (!entry) {
      h.errorCode = 'MODEL_NOT_FOUND'
      h.error = `Model "${this.model}" is not pulled on ${this.host}: run \`ollama pull ${this.model}\``
      return done()
    }
    h.modelAvailable = true
    h.dim = entry.dim
    if (entry.capabilities && !entry.embedding)
      h.note = `Ollama does not list "embedding" among ${this.model}'s capabilities (${entry.capabilities.join(', ')}); it may not embed.`
    if (h.dim === null && opts.probeDim) {
      try {
        const [v] = await this.embed(['dimension probe'], { signal: opts.signal })
        h.dim = v.length
      } catch (e) {
        fail(e)
      }
    }
    return done()
  }
}
