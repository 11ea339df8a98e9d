import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { RecallscopeError } from '../../shared/result'
import { OpenAiCompatEmbedder, resolveOpenAiBaseUrl } from './openaiCompat'
import { closedPort, fakeUnitVector, startFakeOpenAi, type FakeOpenAiSwitches, type FakeServer } from '../../../test/helpers/fakeOllama'

const T = 300
// Paths that must succeed (or fail for another reason) get a deadline a loaded CI machine cannot hit.
const OK = 4_000
const BOUND = { timeout: 5_000 }
const MODEL = 'text-embedding-nomic-embed-text-v1.5'

let srv: FakeServer<FakeOpenAiSwitches>
let base: string
beforeAll(async () => {
  srv = await startFakeOpenAi()
  base = `${srv.url}/v1`
})
afterAll(() => srv.close())
beforeEach(() => {
  srv.set({
    models: [{ id: MODEL, dim: 8 }],
    apiKey: null,
    fail500: null,
    delayMs: 0,
    bodyDelayMs: 0,
    hangUp: false,
    shuffle: true,
    noModelsEndpoint: false,
    anyModel: false,
  })
  srv.requests.length = 0
})

async function failure(fn: () => Promise<unknown>): Promise<{ e: RecallscopeError; ms: number }> {
  const t0 = performance.now()
  try {
    await fn()
  } catch (e) {
    return { e: e as RecallscopeError, ms: performance.now() - t0 }
  }
  throw new Error('expected a failure')
}
const codeOf = (e: RecallscopeError) => (e.details as { errorCode: string }).errorCode

describe('resolveOpenAiBaseUrl', () => {
  it('normalises the forms people paste', () => {
    expect(resolveOpenAiBaseUrl('http://127.0.0.1:8080', {})).toBe('http://127.0.0.1:8080/v1')
    expect(resolveOpenAiBaseUrl('http://127.0.0.1:8080/v1/', {})).toBe('http://127.0.0.1:8080/v1')
    expect(resolveOpenAiBaseUrl('http://127.0.0.1:8000/v1/embeddings', {})).toBe('http://127.0.0.1:8000/v1')
    expect(resolveOpenAiBaseUrl(undefined, { OPENAI_BASE_URL: 'http://gpu:8000/v1' })).toBe('http://gpu:8000/v1')
    expect(resolveOpenAiBaseUrl(undefined, {})).toBe('http://127.0.0.1:1234/v1')
    expect(() => resolveOpenAiBaseUrl('ftp://x', {})).toThrow(/http or https/)
    expect(() => resolveOpenAiBaseUrl('not a url', {})).toThrow(RecallscopeError)
  })
})

describe('OpenAiCompatEmbedder against a loopback /v1/embeddings server', () => {
  it('embeds a batch and puts rows back in input order by `index`', BOUND, async () => {
    const e = new OpenAiCompatEmbedder({ model: MODEL, baseUrl: base, timeoutMs: OK, env: {} })
    const texts = ['first', 'second', 'third']
    const vs = await e.embed(texts)
    // The server answered in reverse order; the client must not trust position.
    texts.forEach((t, i) => {
      const want = fakeUnitVector(t, 8)
      for (let j = 0; j < 8; j++) expect(Math.abs(vs[i][j] - want[j])).toBeLessThan(1e-6)
    })
    expect(srv.requests[0]).toMatchObject({ method: 'POST', path: '/v1/embeddings', body: { model: MODEL, input: texts, encoding_format: 'float' } })
    expect(srv.requests[0].headers.authorization).toBeUndefined()
  })

  it('chunks batches', BOUND, async () => {
    const e = new OpenAiCompatEmbedder({ model: MODEL, baseUrl: base, timeoutMs: 2000, batchSize: 10, env: {} })
    await e.embed(Array.from({ length: 25 }, (_, i) => `t${i}`))
    expect(srv.requests.map((r) => (r.body as { input: string[] }).input.length)).toEqual([10, 10, 5])
  })

  it('sends the API key (option or OPENAI_API_KEY); a wrong key is HTTP_401 with a hint', BOUND, async () => {
    srv.set({ apiKey: 'sk-test' })
    await new OpenAiCompatEmbedder({ model: MODEL, baseUrl: base, timeoutMs: OK, env: { OPENAI_API_KEY: 'sk-test' } }).embed(['x'])
    expect(srv.requests[0].headers.authorization).toBe('Bearer sk-test')
    const { e } = await failure(() => new OpenAiCompatEmbedder({ model: MODEL, baseUrl: base, apiKey: 'wrong', timeoutMs: OK, env: {} }).embed(['x']))
    expect(codeOf(e)).toBe('HTTP_401')
    expect(e.message).toContain('Incorrect API key provided')
  })

  it('an unknown model → MODEL_NOT_FOUND', BOUND, async () => {
    const { e } = await failure(() => new OpenAiCompatEmbedder({ model: 'nope', baseUrl: base, timeoutMs: OK, env: {} }).embed(['x']))
    expect(e.code).toBe('EMBEDDER_UNAVAILABLE')
    expect(e.details).toEqual({ errorCode: 'MODEL_NOT_FOUND', host: base, model: 'nope' })
    expect(e.message).toMatch(/^Model "nope" is not available on/)
  })

  it('500 → HTTP_500 with the server message; slow → TIMEOUT on time; closed port → ECONNREFUSED', BOUND, async () => {
    srv.set({ fail500: 'CUDA out of memory' })
    const e500 = (await failure(() => new OpenAiCompatEmbedder({ model: MODEL, baseUrl: base, timeoutMs: OK, env: {} }).embed(['x']))).e
    expect(codeOf(e500)).toBe('HTTP_500')
    expect(e500.message).toContain('CUDA out of memory')

    srv.set({ fail500: null, delayMs: 3000 })
    const slow = await failure(() => new OpenAiCompatEmbedder({ model: MODEL, baseUrl: base, timeoutMs: T, env: {} }).embed(['x']))
    expect(codeOf(slow.e)).toBe('TIMEOUT')
    expect(slow.ms).toBeLessThan(T + 1000) // the deadline, not the server's 3 s (slack for a loaded CI machine)

    const port = await closedPort()
    const refused = await failure(() => new OpenAiCompatEmbedder({ model: MODEL, baseUrl: `http://127.0.0.1:${port}/v1`, timeoutMs: OK, env: {} }).embed(['x']))
    expect(codeOf(refused.e)).toBe('ECONNREFUSED')
    expect(refused.ms).toBeLessThan(OK / 4) // refused at once, not at the deadline
  })

  it('health: lists models; an unlisted model is MODEL_NOT_FOUND unless a probe shows the server embeds with it', BOUND, async () => {
    const ok = await new OpenAiCompatEmbedder({ model: MODEL, baseUrl: base, timeoutMs: OK, env: {} }).health({ probeDim: true })
    expect(ok).toMatchObject({ reachable: true, modelAvailable: true, dim: 8, models: [MODEL], errorCode: null })

    srv.set({ anyModel: true })
    const other = new OpenAiCompatEmbedder({ model: 'whatever-name', baseUrl: base, timeoutMs: OK, env: {} })
    expect(await other.health()).toMatchObject({ reachable: true, modelAvailable: false, errorCode: 'MODEL_NOT_FOUND' })
    expect(await other.health({ probeDim: true })).toMatchObject({ reachable: true, modelAvailable: true, dim: 8, errorCode: null })

    const port = await closedPort()
    const down = await new OpenAiCompatEmbedder({ model: MODEL, baseUrl: `http://127.0.0.1:${port}`, timeoutMs: T, env: {} }).health()
    expect(down).toMatchObject({ reachable: false, modelAvailable: false, errorCode: 'ECONNREFUSED' })
  })

  it('health without a /models endpoint falls back to the probe', BOUND, async () => {
    srv.set({ noModelsEndpoint: true })
    const h = await new OpenAiCompatEmbedder({ model: MODEL, baseUrl: base, timeoutMs: T, env: {} }).health({ probeDim: true })
    expect(h).toMatchObject({ reachable: true, modelAvailable: true, dim: 8 })
  })
})
