import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { RecallscopeError } from '../../shared/result'
import { OllamaEmbedder, resolveOllamaHost, canonicalModelName } from './ollama'
import {
  abortWhenReceived,
  closedPort,
  fakeLegacyVector,
  fakeRawVector,
  fakeUnitVector,
  LEGACY_SCALE,
  startFakeOllama,
  type FakeServer,
  type FakeOllamaSwitches,
} from '../../../test/helpers/fakeOllama'

// Short deadlines keep the timeout paths fast; every test is also bounded by vitest's own timeout.
const T = 300
// Paths that must succeed (or fail for another reason) get a deadline a loaded CI machine cannot hit.
const OK = 4_000
const BOUND = { timeout: 5_000 }

let srv: FakeServer<FakeOllamaSwitches>
const initial = () => ({
  models: [
    { name: 'nomic-embed-text:latest', dim: 8, embeddingLength: true },
    { name: 'all-minilm:l6-v2', dim: 6 },
  ],
  fail500: null,
  delayMs: 0,
  bodyDelayMs: 0,
  hangUp: false,
  noEmbedEndpoint: false,
})
beforeAll(async () => {
  srv = await startFakeOllama()
})
afterAll(() => srv.close())
beforeEach(() => {
  srv.set(initial())
  srv.requests.length = 0
})

/** Run fn, expect an EMBEDDER_UNAVAILABLE with this errorCode; return the error and how long it took. */
async function failure(fn: () => Promise<unknown>): Promise<{ e: RecallscopeError; ms: number }> {
  const t0 = performance.now()
  try {
    await fn()
  } catch (e) {
    return { e: e as RecallscopeError, ms: performance.now() - t0 }
  }
  throw new Error('expected a failure')
}

const close = (a: ArrayLike<number>, b: ArrayLike<number>, tol = 1e-6) => {
  expect(a.length).toBe(b.length)
  for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(tol)
}

describe('resolveOllamaHost (OLLAMA_HOST forms, as Ollama reads them)', () => {
  const cases: [string | undefined, string][] = [
    [undefined, 'http://127.0.0.1:11434'],
    ['', 'http://127.0.0.1:11434'],
    ['127.0.0.1:11434', 'http://127.0.0.1:11434'],
    ['gpu-box', 'http://gpu-box:11434'],
    ['gpu-box:9000', 'http://gpu-box:9000'],
    ['0.0.0.0', 'http://127.0.0.1:11434'],
    ['0.0.0.0:11500', 'http://127.0.0.1:11500'],
    [':11500', 'http://127.0.0.1:11500'],
    ['http://host:1234', 'http://host:1234'],
    ['http://host:1234/', 'http://host:1234'],
    ['"http://host:1234"', 'http://host:1234'],
    ['  https://ollama.example.com  ', 'https://ollama.example.com:443'],
    ['http://proxy.local/ollama/', 'http://proxy.local:80/ollama'],
    ['[::1]:11434', 'http://[::1]:11434'],
    ['::1', 'http://[::1]:11434'],
    ['[::]', 'http://[::1]:11434'],
  ]
  it.each(cases)('%j → %s', (raw, want) => {
    expect(resolveOllamaHost(raw, {})).toBe(want)
  })
  it('reads OLLAMA_HOST when no host is given, and an explicit host wins', () => {
    expect(resolveOllamaHost(undefined, { OLLAMA_HOST: '10.0.0.5' })).toBe('http://10.0.0.5:11434')
    expect(resolveOllamaHost('127.0.0.1:1', { OLLAMA_HOST: '10.0.0.5' })).toBe('http://127.0.0.1:1')
  })
  it('rejects other schemes and bad ports with BAD_INPUT', () => {
    for (const bad of ['ftp://host', 'host:99999', 'host:abc', 'http://host:12x']) {
      expect(() => resolveOllamaHost(bad, {}), bad).toThrow(RecallscopeError)
      try {
        resolveOllamaHost(bad, {})
      } catch (e) {
        expect((e as RecallscopeError).code).toBe('BAD_INPUT')
      }
    }
  })
  it('model names match with and without :latest, case-insensitively', () => {
    expect(canonicalModelName('nomic-embed-text')).toBe(canonicalModelName('nomic-embed-text:latest'))
    expect(canonicalModelName('Nomic-Embed-Text')).toBe(canonicalModelName('registry.ollama.ai/library/nomic-embed-text:latest'))
    expect(canonicalModelName('all-minilm')).not.toBe(canonicalModelName('all-minilm:l6-v2'))
  })
})

describe('OllamaEmbedder against a loopback Ollama', () => {
  it('embeds a batch through /api/embed, vectors L2-normalised as the server sent them', BOUND, async () => {
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK })
    const texts = ['the deploy failed at 3am', 'user prefers dark mode', 'ünïcode ✓']
    const vs = await e.embed(texts)
    expect(vs).toHaveLength(3)
    texts.forEach((t, i) => close(vs[i], fakeUnitVector(t, 8)))
    expect(srv.requests).toHaveLength(1)
    expect(srv.requests[0]).toMatchObject({ method: 'POST', path: '/api/embed', body: { model: 'nomic-embed-text', input: texts } })
    expect(String(srv.requests[0].headers['user-agent'])).toMatch(/^ollama-js\//)
  })

  it('chunks big batches (64 per request) and keeps the order', BOUND, async () => {
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: 2000 })
    const texts = Array.from({ length: 150 }, (_, i) => `memory number ${i}`)
    const vs = await e.embed(texts)
    expect(srv.requests.map((r) => (r.body as { input: string[] }).input.length)).toEqual([64, 64, 22])
    expect(vs).toHaveLength(150)
    close(vs[149], fakeUnitVector('memory number 149', 8))
    close(vs[64], fakeUnitVector('memory number 64', 8))
  })

  it('legacy mode posts one prompt per call to /api/embeddings and keeps the raw (unnormalised) vector', BOUND, async () => {
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK, legacy: true })
    const [a, b] = await e.embed(['alpha', 'beta'])
    expect(srv.requests.map((r) => [r.path, r.body])).toEqual([
      ['/api/embeddings', { model: 'nomic-embed-text', prompt: 'alpha' }],
      ['/api/embeddings', { model: 'nomic-embed-text', prompt: 'beta' }],
    ])
    close(a, fakeLegacyVector('alpha', 8), 1e-5)
    close(b, fakeLegacyVector('beta', 8), 1e-5)
    // Same direction as /api/embed's vector, different length: why the two never share a cache key.
    const raw = fakeRawVector('alpha', 8)
    const norm = Math.sqrt(raw.reduce((s, x) => s + x * x, 0)) * LEGACY_SCALE
    expect(Math.abs(Math.hypot(...a) - norm)).toBeLessThan(1e-4)
    expect(e.cacheKey).not.toBe(new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url }).cacheKey)
  })

  it('honours OLLAMA_HOST when no host is configured', BOUND, async () => {
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', timeoutMs: OK, env: { OLLAMA_HOST: `127.0.0.1:${srv.port}` } })
    expect(e.host).toBe(srv.url)
    await e.embed(['x'])
    expect(srv.requests).toHaveLength(1)
  })

  it('an empty batch makes no request', BOUND, async () => {
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK })
    expect(await e.embed([])).toEqual([])
    expect(srv.requests).toHaveLength(0)
  })
})

describe('OllamaEmbedder failures: stable codes, clear messages, on time', () => {
  it('404 model not pulled → MODEL_NOT_FOUND naming the pull command (both endpoints)', BOUND, async () => {
    for (const legacy of [false, true]) {
      const e = new OllamaEmbedder({ model: 'mxbai-embed-large', host: srv.url, timeoutMs: OK, legacy })
      const { e: err } = await failure(() => e.embed(['q']))
      expect(err).toBeInstanceOf(RecallscopeError)
      expect(err.code).toBe('EMBEDDER_UNAVAILABLE')
      expect(err.details).toEqual({ errorCode: 'MODEL_NOT_FOUND', host: srv.url, model: 'mxbai-embed-large' })
      expect(err.message).toBe(`Model "mxbai-embed-large" is not pulled on ${srv.url}: run \`ollama pull mxbai-embed-large\``)
    }
    // The fake answered with Ollama's exact body; the client saw a real 404.
    expect(srv.requests.map((r) => r.path)).toEqual(['/api/embed', '/api/embeddings'])
  })

  it('500 → HTTP_500 carrying the server error string', BOUND, async () => {
    srv.set({ fail500: 'llama runner process has terminated: signal: killed' })
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK })
    const { e: err } = await failure(() => e.embed(['q']))
    expect((err.details as { errorCode: string }).errorCode).toBe('HTTP_500')
    expect(err.message).toContain('llama runner process has terminated: signal: killed')
  })

  it('an Ollama older than 0.2.6 (no /api/embed) → HTTP_404 that says so; legacy mode still works', BOUND, async () => {
    srv.set({ noEmbedEndpoint: true })
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK })
    const { e: err } = await failure(() => e.embed(['q']))
    expect((err.details as { errorCode: string }).errorCode).toBe('HTTP_404')
    expect(err.message).toMatch(/older than 0\.2\.6/)
    const [v] = await new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK, legacy: true }).embed(['q'])
    close(v, fakeLegacyVector('q', 8), 1e-5)
  })

  it('a slow server → TIMEOUT after the deadline, not after the server', BOUND, async () => {
    srv.set({ delayMs: 3000 })
    const before = srv.abandoned
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: T })
    const { e: err, ms } = await failure(() => e.embed(['q']))
    expect((err.details as { errorCode: string }).errorCode).toBe('TIMEOUT')
    expect(err.message).toContain(`within ${T} ms`)
    expect(ms).toBeGreaterThanOrEqual(T - 5)
    expect(ms).toBeLessThan(T + 1000) // the deadline, not the server's 3 s (slack for a loaded CI machine)
    // The request was aborted (socket closed), not merely abandoned with the socket left open.
    await expect.poll(() => srv.abandoned, { timeout: 1000 }).toBe(before + 1)
    console.info(`[measure] ollama timeout path (deadline ${T} ms, server delay 3000 ms): ${ms.toFixed(0)} ms`)
  })

  it('headers on time but a slow body → still TIMEOUT at the deadline', BOUND, async () => {
    srv.set({ bodyDelayMs: 3000 })
    const before = srv.abandoned
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: T })
    const { e: err, ms } = await failure(() => e.embed(['q']))
    expect((err.details as { errorCode: string }).errorCode).toBe('TIMEOUT')
    expect(ms).toBeLessThan(T + 1000) // the deadline, not the server's 3 s (slack for a loaded CI machine)
    await expect.poll(() => srv.abandoned, { timeout: 1000 }).toBe(before + 1)
  })

  it('a closed port → ECONNREFUSED at once, with the `ollama serve` hint', BOUND, async () => {
    const port = await closedPort()
    const host = `http://127.0.0.1:${port}`
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host, timeoutMs: OK })
    const { e: err, ms } = await failure(() => e.embed(['q']))
    expect(err.code).toBe('EMBEDDER_UNAVAILABLE')
    expect(err.details).toEqual({ errorCode: 'ECONNREFUSED', host, model: 'nomic-embed-text' })
    expect(err.message).toBe(`Ollama is not reachable at ${host} (connection refused). Start it with \`ollama serve\`.`)
    expect(ms).toBeLessThan(OK / 4) // refused at once, not at the deadline
    console.info(`[measure] ollama closed-port path: ${ms.toFixed(1)} ms`)
  })

  it('the server dropping the connection → ECONNRESET', BOUND, async () => {
    srv.set({ hangUp: true })
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK })
    const { e: err } = await failure(() => e.embed(['q']))
    expect((err.details as { errorCode: string }).errorCode).toBe('ECONNRESET')
  })

  it('a caller abort → CANCELLED, immediately', BOUND, async () => {
    srv.set({ delayMs: 3000 })
    const e = new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: 2000 })
    const ac = new AbortController()
    let abortedAt = 0
    ac.signal.addEventListener('abort', () => (abortedAt = performance.now()))
    abortWhenReceived(srv, ac)
    const { e: err } = await failure(() => e.embed(['q'], { signal: ac.signal }))
    expect(err.code).toBe('CANCELLED')
    // within a second of the abort, not at the server's 3 s answer or the 2 s deadline
    expect(performance.now() - abortedAt).toBeLessThan(1000)
  })

  it('a bad timeout option is BAD_INPUT', () => {
    expect(() => new OllamaEmbedder({ model: 'x', host: srv.url, timeoutMs: -1 })).toThrow(/timeoutMs/)
  })
})

describe('OllamaEmbedder.health (GET /api/tags)', () => {
  it('reachable, model pulled (matched without :latest), dimension from details.embedding_length, version', BOUND, async () => {
    const h = await new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK }).health()
    expect(h).toMatchObject({ reachable: true, modelAvailable: true, dim: 8, error: null, errorCode: null, host: srv.url, version: '0.12.3' })
    expect(h.models).toEqual(['nomic-embed-text:latest', 'all-minilm:l6-v2'])
    // No embedding request was needed to learn the dimension.
    expect(srv.requests.map((r) => r.path).sort()).toEqual(['/api/tags', '/api/version'])
  })

  it('an older server without embedding_length: dim unknown unless probed', BOUND, async () => {
    const e = new OllamaEmbedder({ model: 'all-minilm:l6-v2', host: srv.url, timeoutMs: OK })
    expect((await e.health()).dim).toBeNull()
    const h = await e.health({ probeDim: true })
    expect(h.dim).toBe(6)
    expect(srv.requests.filter((r) => r.path === '/api/embed')).toHaveLength(1)
  })

  it('a model that is not pulled: reachable, MODEL_NOT_FOUND, and the models it does have', BOUND, async () => {
    const h = await new OllamaEmbedder({ model: 'mxbai-embed-large', host: srv.url, timeoutMs: OK }).health({ probeDim: true })
    expect(h).toMatchObject({ reachable: true, modelAvailable: false, dim: null, errorCode: 'MODEL_NOT_FOUND' })
    expect(h.error).toContain('ollama pull mxbai-embed-large')
    expect(h.models).toContain('nomic-embed-text:latest')
  })

  it('says when Ollama lists the model without the embedding capability', BOUND, async () => {
    srv.set({ models: [{ name: 'llama3.2:latest', dim: 8, capabilities: ['completion', 'tools'] }] })
    const h = await new OllamaEmbedder({ model: 'llama3.2', host: srv.url, timeoutMs: OK }).health()
    expect(h.modelAvailable).toBe(true)
    expect(h.note).toMatch(/capabilities/)
  })

  it('never throws: closed port, 500, timeout, hang-up, cancel', BOUND, async () => {
    const port = await closedPort()
    const refused = await new OllamaEmbedder({ model: 'nomic-embed-text', host: `127.0.0.1:${port}`, timeoutMs: OK }).health()
    expect(refused).toMatchObject({ reachable: false, modelAvailable: false, errorCode: 'ECONNREFUSED' })
    expect(refused.error).toContain('ollama serve')

    srv.set({ fail500: 'model list cache unavailable' })
    const five = await new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK }).health()
    expect(five).toMatchObject({ reachable: true, modelAvailable: false, errorCode: 'HTTP_500' })
    expect(five.error).toContain('model list cache unavailable')

    srv.set({ fail500: null, delayMs: 3000 })
    const slow = await new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: T }).health()
    expect(slow).toMatchObject({ reachable: false, errorCode: 'TIMEOUT' })
    expect(slow.tookMs!).toBeLessThan(T + 400)

    srv.set({ delayMs: 0, hangUp: true })
    expect((await new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: OK }).health()).errorCode).toBe('ECONNRESET')

    const ac = new AbortController()
    ac.abort()
    expect((await new OllamaEmbedder({ model: 'nomic-embed-text', host: srv.url, timeoutMs: T }).health({ signal: ac.signal })).errorCode).toBe('CANCELLED')
  })
})
