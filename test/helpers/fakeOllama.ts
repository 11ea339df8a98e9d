/**
 * Loopback HTTP servers that speak Ollama's wire protocol and the OpenAI
 * embeddings protocol (reference/ollama-api.md), so embedder tests exercise the
 * real `ollama` client over real HTTP: real sockets, real status codes and
 * bodies, real delays, real refused connections.
 *
 * The vectors they serve come from `fakeRawVector` (sha256 of the text), which
 * has nothing to do with the code under test, so a test can compute what the
 * client must return independently.
 */
import http from 'node:http'
import crypto from 'node:crypto'
import type { AddressInfo } from 'node:net'

/** A deterministic pseudo-embedding: dim values in [-1, 1] from sha256(text#i). Not normalised. */
export function fakeRawVector(text: string, dim: number): number[] {
  const out: number[] = []
  for (let i = 0; i < dim; i++) {
    const h = crypto.createHash('sha256').update(`${text}#${i}`).digest()
    out.push(h.readUInt16BE(0) / 32767.5 - 1)
  }
  return out
}

/** What /api/embed serves: the raw vector, L2-normalised (the server normalises, routes.go). */
export function fakeUnitVector(text: string, dim: number): number[] {
  const v = fakeRawVector(text, dim)
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0))
  return v.map((x) => x / n)
}

/** What /api/embeddings serves: not normalised; scaled so its norm is visibly not 1. */
export const LEGACY_SCALE = 7.5
export function fakeLegacyVector(text: string, dim: number): number[] {
  return fakeRawVector(text, dim).map((x) => x * LEGACY_SCALE)
}

export interface FakeModel {
  name: string
  dim: number
  /** send details.embedding_length in /api/tags (newer servers) @default false */
  embeddingLength?: boolean
  capabilities?: string[]
}

export interface FakeOllamaSwitches {
  models: FakeModel[]
  /** answer every request with 500 {"error": fail500} */
  fail500: string | null
  /** wait this long before sending anything */
  delayMs: number
  /** send the status line and headers at once, then wait this long before the body */
  bodyDelayMs: number
  /** destroy the socket as soon as a request arrives */
  hangUp: boolean
  /** an Ollama older than 0.2.6: no /api/embed (Go router's text/plain 404) */
  noEmbedEndpoint: boolean
  /** /api/version answer */
  version: string
}

export interface RecordedRequest {
  method: string
  path: string
  body: unknown
  headers: http.IncomingHttpHeaders
}

export interface FakeServer<S> {
  url: string
  port: number
  requests: RecordedRequest[]
  /** requests whose client went away before the answer was complete (an aborted fetch closes its socket) */
  readonly abandoned: number
  state: S
  set(patch: Partial<S>): void
  close(): Promise<void>
}

const DEFAULT_MODELS: FakeModel[] = [
  { name: 'nomic-embed-text:latest', dim: 8, embeddingLength: true },
  { name: 'all-minilm:l6-v2', dim: 6 },
]

/** Ollama matches `x` with `x:latest`. */
function sameModel(a: string, b: string): boolean {
  const c = (s: string) => (s.includes(':') ? s : `${s}:latest`).toLowerCase()
  return c(a) === c(b)
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) })
  res.end(text)
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** Start a server on 127.0.0.1:<random port>; `handle` returns [status, body] or sends itself. */
async function startServer<S extends { delayMs: number; bodyDelayMs: number; hangUp: boolean }>(
  initial: S,
  handle: (
    state: S,
    method: string,
    path: string,
    body: unknown,
    raw: string,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ) => [number, unknown] | 'sent',
): Promise<FakeServer<S>> {
  const state = { ...initial }
  const requests: RecordedRequest[] = []
  let abandoned = 0
  const timers = new Set<NodeJS.Timeout>()
  const later = (ms: number, fn: () => void, req: http.IncomingMessage) => {
    if (ms <= 0) return fn()
    const t = setTimeout(() => {
      timers.delete(t)
      fn()
    }, ms)
    timers.add(t)
    // The client gave up (timeout): stop waiting, as a real server's handler would.
    req.socket.once('close', () => {
      clearTimeout(t)
      timers.delete(t)
    })
  }
  const respond = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const raw = await readBody(req)
    let body: unknown = undefined
    try {
      body = raw ? JSON.parse(raw) : undefined
    } catch {
      body = raw
    }
    const url = new URL(req.url ?? '/', 'http://x')
    requests.push({ method: req.method ?? 'GET', path: url.pathname, body, headers: req.headers })
    res.once('close', () => {
      if (!res.writableFinished && !state.hangUp) abandoned++
    })
    if (state.hangUp) {
      req.socket.destroy()
      return
    }
    later(
      state.delayMs,
      () => {
        const r = handle(state, req.method ?? 'GET', url.pathname, body, raw, req, res)
        if (r === 'sent') return
        const [status, payload] = r
        if (state.bodyDelayMs > 0) {
          res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' })
          res.flushHeaders()
          later(state.bodyDelayMs, () => res.end(JSON.stringify(payload)), req)
        } else sendJson(res, status, payload)
      },
      req,
    )
  }
  // A handler that throws answers 500 with the message (a test then fails on the status), instead of leaving an
  // unhandled rejection and a client waiting for its timeout.
  const server = http.createServer((req, res) => {
    respond(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(`fake ollama: ${String(e)}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    get abandoned() {
      return abandoned
    },
    state,
    set(patch) {
      Object.assign(state, patch)
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t)
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * Abort `ac` once `srv` has recorded `n` requests (polled every 5 ms, for at most 5 s): a test of a caller's abort
 * then cancels a request the server holds. An abort on a timer instead can come before the request reached the
 * server on a loaded machine; the server then records it after the next test cleared `requests`, and that test sees
 * a request it never sent.
 */
export function abortWhenReceived(srv: { requests: readonly unknown[] }, ac: AbortController, n = 1): void {
  const deadline = performance.now() + 5000
  const tick = () => {
    if (srv.requests.length >= n) ac.abort()
    else if (performance.now() < deadline) setTimeout(tick, 5)
  }
  tick()
}

/** A fake Ollama: POST /api/embed, POST /api/embeddings, GET /api/tags, GET /api/version. */
export function startFakeOllama(init: Partial<FakeOllamaSwitches> = {}): Promise<FakeServer<FakeOllamaSwitches>> {
  const initial: FakeOllamaSwitches = {
    models: DEFAULT_MODELS,
    fail500: null,
    delayMs: 0,
    bodyDelayMs: 0,
    hangUp: false,
    noEmbedEndpoint: false,
    version: '0.12.3',
    ...init,
  }
  return startServer(initial, (s, method, path, body, raw, _req, res) => {
    if (s.fail500 !== null) return [500, { error: s.fail500 }]
    const find = (name: string) => s.models.find((m) => sameModel(m.name, name))
    if (method === 'GET' && path === '/api/version') return [200, { version: s.version }]
    if (method === 'GET' && path === '/api/tags') {
      return [
        200,
        {
          models: s.models.map((m) => ({
            name: m.name,
            model: m.name,
            modified_at: '2025-05-04T17:37:44.706015396-07:00',
            size: 274302450,
            digest: crypto.createHash('sha256').update(m.name).digest('hex'),
            details: {
              parent_model: '',
              format: 'gguf',
              family: 'nomic-bert',
              families: ['nomic-bert'],
              parameter_size: '137M',
              quantization_level: 'F16',
              ...(m.embeddingLength ? { embedding_length: m.dim } : {}),
            },
            ...(m.capabilities ? { capabilities: m.capabilities } : {}),
          })),
        },
      ]
    }
    if (method === 'POST' && (path === '/api/embed' || path === '/api/embeddings')) {
      if (path === '/api/embed' && s.noEmbedEndpoint) {
        res.writeHead(404, { 'Content-Type': 'text/plain' })
        res.end('404 page not found')
        return 'sent'
      }
      if (!raw) return [400, { error: 'missing request body' }]
      if (typeof body !== 'object' || body === null) return [400, { error: 'invalid character looking for beginning of value' }]
      const b = body as { model?: unknown; input?: unknown; prompt?: unknown }
      const model = typeof b.model === 'string' ? b.model : ''
      if (path === '/api/embeddings' && model === '') return [400, { error: 'model is required' }]
      if (model === '') return [404, { error: "model '' not found" }]
      const m = find(model)
      // routes.go: fmt.Sprintf("model %q not found, try pulling it first", req.Model)
      if (!m) return [404, { error: `model ${JSON.stringify(model)} not found, try pulling it first` }]
      if (path === '/api/embeddings') {
        const prompt = typeof b.prompt === 'string' ? b.prompt : ''
        return [200, { embedding: prompt === '' ? [] : fakeLegacyVector(prompt, m.dim) }]
      }
      const input = b.input
      const texts = typeof input === 'string' ? (input === '' ? [] : [input]) : input === undefined ? [] : input
      if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) return [400, { error: 'invalid input type' }]
      return [
        200,
        {
          model,
          embeddings: (texts as string[]).map((t) => fakeUnitVector(t, m.dim)),
          total_duration: 14143917,
          load_duration: 1019500,
          prompt_eval_count: texts.length,
        },
      ]
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' })
    res.end('404 page not found')
    return 'sent'
  })
}

export interface FakeOpenAiSwitches {
  models: { id: string; dim: number }[]
  /** require `Authorization: Bearer <apiKey>` */
  apiKey: string | null
  fail500: string | null
  delayMs: number
  bodyDelayMs: number
  hangUp: boolean
  /** answer rows in reverse order (each with its `index`), as the spec allows */
  shuffle: boolean
  /** no GET /v1/models (404) */
  noModelsEndpoint: boolean
  /** accept any model name and embed with the first model (llama-server does this) */
  anyModel: boolean
}

/** A fake OpenAI-compatible server: POST /v1/embeddings, GET /v1/models. */
export function startFakeOpenAi(init: Partial<FakeOpenAiSwitches> = {}): Promise<FakeServer<FakeOpenAiSwitches>> {
  const initial: FakeOpenAiSwitches = {
    models: [{ id: 'text-embedding-nomic-embed-text-v1.5', dim: 8 }],
    apiKey: null,
    fail500: null,
    delayMs: 0,
    bodyDelayMs: 0,
    hangUp: false,
    shuffle: true,
    noModelsEndpoint: false,
    anyModel: false,
    ...init,
  }
  return startServer(initial, (s, method, path, body, _raw, req) => {
    if (s.apiKey !== null && req.headers.authorization !== `Bearer ${s.apiKey}`)
      return [401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }]
    if (s.fail500 !== null) return [500, { error: { message: s.fail500, type: 'server_error', param: null, code: null } }]
    if (method === 'GET' && path === '/v1/models') {
      if (s.noModelsEndpoint) return [404, { error: { message: 'Not found', type: 'invalid_request_error', code: null } }]
      return [200, { object: 'list', data: s.models.map((m) => ({ id: m.id, object: 'model', owned_by: 'organization_owner' })) }]
    }
    if (method === 'POST' && path === '/v1/embeddings') {
      const b = (body ?? {}) as { model?: unknown; input?: unknown }
      const id = typeof b.model === 'string' ? b.model : ''
      const m = s.models.find((x) => x.id === id) ?? (s.anyModel ? s.models[0] : undefined)
      if (!m)
        return [
          404,
          {
            error: {
              message: `The model \`${id}\` does not exist or you do not have access to it.`,
              type: 'invalid_request_error',
              param: null,
              code: 'model_not_found',
            },
          },
        ]
      const texts = typeof b.input === 'string' ? [b.input] : b.input
      if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string'))
        return [400, { error: { message: "'input' must be a string or an array of strings", type: 'invalid_request_error', param: 'input', code: null } }]
      const data = (texts as string[]).map((t, index) => ({ object: 'embedding', index, embedding: fakeUnitVector(t, m.dim) }))
      if (s.shuffle) data.reverse()
      return [200, { object: 'list', data, model: m.id, usage: { prompt_tokens: texts.length, total_tokens: texts.length } }]
    }
    return [404, { error: { message: `Unknown request URL: ${method} ${path}`, type: 'invalid_request_error', code: null } }]
  })
}

/** A port on 127.0.0.1 that nothing listens on: listen, note the port, close. Connecting is refused at once. */
export async function closedPort(): Promise<number> {
  const s = http.createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const port = (s.address() as AddressInfo).port
  await new Promise<void>((resolve) => s.close(() => resolve()))
  return port
}

export interface FakeChatSwitches {
  /** chat models the server has (others: 404 model not found) */
  models: string[]
  delayMs: number
  bodyDelayMs: number
  hangUp: boolean
  fail500: string | null
}

/**
 * The fake's answer to a chat: it "uses" its context by echoing it — the system message after its
 * first paragraph (the instructions) — behind a fixed prefix. So a block without a memory gives an
 * answer without that memory's text, and a test can say what every answer must be.
 */
export function fakeChatAnswer(system: string, user: string): string {
  return `Re: ${user}\n${system.split('\n\n').slice(1).join('\n\n')}`
}

/** A fake chat server: Ollama's POST /api/chat and an OpenAI-compatible POST /v1/chat/completions, on one port. */
export function startFakeChat(init: Partial<FakeChatSwitches> = {}): Promise<FakeServer<FakeChatSwitches>> {
  const initial: FakeChatSwitches = { models: ['llama3.2:latest', 'qwen2.5-7b-instruct'], delayMs: 0, bodyDelayMs: 0, hangUp: false, fail500: null, ...init }
  return startServer(initial, (s, method, path, body) => {
    if (s.fail500 !== null) return [500, { error: s.fail500 }]
    const b = (body ?? {}) as { model?: unknown; messages?: { role: string; content: string }[] }
    const model = typeof b.model === 'string' ? b.model : ''
    const msgs = Array.isArray(b.messages) ? b.messages : []
    const system = msgs.find((m) => m.role === 'system')?.content ?? ''
    const user = msgs.find((m) => m.role === 'user')?.content ?? ''
    if (method === 'POST' && path === '/api/chat') {
      if (!s.models.some((m) => sameModel(m, model))) return [404, { error: `model "${model}" not found, try pulling it first` }]
      const content = fakeChatAnswer(system, user)
      return [
        200,
        {
          model,
          created_at: '2026-11-26T00:00:00Z',
          message: { role: 'assistant', content },
          done: true,
          prompt_eval_count: system.length,
          eval_count: content.length,
        },
      ]
    }
    if (method === 'POST' && path === '/v1/chat/completions') {
      if (!s.models.includes(model))
        return [404, { error: { message: `The model \`${model}\` does not exist`, type: 'invalid_request_error', code: 'model_not_found' } }]
      const content = fakeChatAnswer(system, user)
      return [
        200,
        {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: system.length, completion_tokens: content.length },
        },
      ]
    }
    if (method === 'GET' && path === '/api/tags') return [200, { models: [] }]
    return [404, { error: `no route ${method} ${path}` }]
  })
}
