/**
 * The embed.* and settings.* channels through their zod schemas and handlers,
 * against a loopback Ollama; and the degradation contract end to end on a real
 * store: with the embedder down, the lexical arm still answers within the timeout.
 */
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Channel, Output } from '../src/shared/contract'
import { toResultError, type Result } from '../src/shared/result'
import { App } from '../src/main/api/app'
import { parseInput } from '../src/main/api/register'
import { embedHandlers } from '../src/main/api/handlers/embed'
import { openSource } from '../src/main/store/registry'
import type { SqliteSource } from '../src/main/store/sqlite/source'
import { createEmbedder } from '../src/main/embed/index'
import { embedQueryOrDegrade } from '../src/main/embed/cache'
import { closedPort, startFakeOllama, type FakeOllamaSwitches, type FakeServer } from './helpers/fakeOllama'
import { tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

const BOUND = { timeout: 10_000 }
type EmbedChannel = 'embed.status' | 'embed.models' | 'settings.get' | 'settings.set'

let t: ReturnType<typeof tmpDir>
let srv: FakeServer<FakeOllamaSwitches>
let app: App
let call: <C extends EmbedChannel>(c: C, raw: unknown) => Promise<Result<Output<C>>>

beforeAll(async () => {
  t = tmpDir()
  srv = await startFakeOllama()
})
afterAll(async () => {
  app?.close()
  await srv.close()
  t.cleanup()
})
beforeEach(() => {
  srv.set({ delayMs: 0, fail500: null, hangUp: false })
  app = new App({ dataDir: path.join(t.dir, `data-${Math.random().toString(36).slice(2)}`), mode: 'browser' })
  const handlers = embedHandlers(app)
  // The same path as register.ts's dispatcher: parse with the contract's schema, call, wrap.
  call = async (c, raw) => {
    const input = parseInput(c as Channel, raw)
    if (!input.ok) return input.error
    try {
      return { ok: true, data: (await (handlers[c] as (i: unknown) => unknown)(input.data)) as Output<typeof c> }
    } catch (e) {
      return { ok: false, error: toResultError(e) }
    }
  }
})

describe('settings.get / settings.set', () => {
  it('defaults to hashing; saves a canonical spec and hosts; null clears a host', BOUND, async () => {
    const g = await call('settings.get', {})
    expect(g.ok && g.data.embedder).toBe('hashing')
    const s = await call('settings.set', { embedder: ' Ollama:nomic-embed-text ', ollamaHost: `${srv.url}/` })
    expect(s.ok).toBe(true)
    if (!s.ok) return
    expect(s.data).toMatchObject({ embedder: 'ollama:nomic-embed-text', ollamaHost: srv.url })
    expect(s.data.effective.ollamaHost).toBe(srv.url)
    // Persisted: a fresh App over the same data dir reads it back.
    const again = new App({ dataDir: app.dataDir, mode: 'browser' })
    expect(again.settings()).toMatchObject({ embedder: 'ollama:nomic-embed-text', ollamaHost: srv.url })
    const cleared = await call('settings.set', { ollamaHost: null })
    expect(cleared.ok && cleared.data.ollamaHost).toBeNull()
  })

  it('rejects a non-http(s) host, an unknown embedder and stray fields with BAD_INPUT, saving nothing', BOUND, async () => {
    for (const bad of [
      { ollamaHost: 'ftp://x' },
      { ollamaHost: '127.0.0.1:11434' },
      { openaiBaseUrl: 'javascript:alert(1)' },
      { embedder: 'bert' },
      { embedder: 'ollama:' },
      { apiKey: 'sk' },
    ]) {
      const r = await call('settings.set', bad)
      expect(r.ok, JSON.stringify(bad)).toBe(false)
      if (!r.ok) expect(r.error.code).toBe('BAD_INPUT')
    }
    expect(app.settings().embedder).toBeUndefined()
    expect(app.settings().ollamaHost).toBeUndefined()
  })
})

describe('embed.status', () => {
  it('ok: reachable, pulled, dimension reported', BOUND, async () => {
    const r = await call('embed.status', { embedder: 'ollama:nomic-embed-text', host: srv.url })
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.data).toMatchObject({ spec: 'ollama:nomic-embed-text', name: 'ollama', model: 'nomic-embed-text', state: 'ok', storedVectors: null })
    expect(r.data.health).toMatchObject({ reachable: true, modelAvailable: true, dim: 8, host: srv.url })
  })

  it('unavailable (not an error) when the port is closed or the model is missing; within the timeout', BOUND, async () => {
    const port = await closedPort()
    const t0 = performance.now()
    const down = await call('embed.status', { embedder: 'ollama:nomic-embed-text', host: `http://127.0.0.1:${port}`, timeoutMs: 4000 })
    expect(performance.now() - t0).toBeLessThan(1000) // refused at once, not at the deadline
    expect(down.ok && down.data.state).toBe('unavailable')
    expect(down.ok && down.data.health.errorCode).toBe('ECONNREFUSED')
    const missing = await call('embed.status', { embedder: 'ollama:mxbai-embed-large', host: srv.url })
    expect(missing.ok && missing.data.health.errorCode).toBe('MODEL_NOT_FOUND')
    srv.set({ delayMs: 2000 })
    const t1 = performance.now()
    const slow = await call('embed.status', { embedder: 'ollama:nomic-embed-text', host: srv.url, timeoutMs: 300 })
    expect(performance.now() - t1).toBeLessThan(1300) // the 300 ms deadline, not the server's 2 s (slack for a loaded CI machine)
    expect(slow.ok && slow.data.health.errorCode).toBe('TIMEOUT')
  })

  it('hashing is lexical, none is off; the saved embedder is the default; a bad spec is BAD_INPUT', BOUND, async () => {
    const h = await call('embed.status', {})
    expect(h.ok && h.data).toMatchObject({ name: 'hashing', state: 'lexical' })
    expect(h.ok && h.data.health.note).toMatch(/lexical-level/)
    const n = await call('embed.status', { embedder: 'none' })
    expect(n.ok && n.data.state).toBe('off')
    app.saveSettings({ embedder: 'ollama:nomic-embed-text', ollamaHost: srv.url })
    const saved = await call('embed.status', {})
    expect(saved.ok && saved.data.state).toBe('ok')
    const bad = await call('embed.status', { embedder: 'word2vec' })
    expect(!bad.ok && bad.error.code).toBe('BAD_INPUT')
    const badHost = await call('embed.status', { host: 'file:///etc/passwd' })
    expect(!badHost.ok && badHost.error.code).toBe('BAD_INPUT')
  })

  it('with a DB open: counts stored vectors for the model and warns when there are none', BOUND, async () => {
    const db = path.join(t.dir, 'status-demo.db')
    writeDemoDb(db, { memories: 200 })
    app.open(db)
    const h = await call('embed.status', { embedder: 'hashing' })
    expect(h.ok && h.data.storedVectors).toBeGreaterThan(0)
    expect(h.ok && h.data.storedDim).toBe(256)
    expect(h.ok && h.data.warnings).toEqual([])
    const o = await call('embed.status', { embedder: 'ollama:nomic-embed-text', host: srv.url })
    expect(o.ok && o.data.storedVectors).toBe(0)
    expect(o.ok && o.data.warnings[0]).toMatch(/no memory vectors under "nomic-embed-text".*hashing-256/)
  })
})

describe('embed.models', () => {
  it('lists the registry and the server models with their dimensions', BOUND, async () => {
    const r = await call('embed.models', { kind: 'ollama', host: srv.url })
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.data.kinds.map((k) => k.usage)).toEqual(['hashing', 'none', 'ollama:MODEL', 'openai:MODEL'])
    expect(r.data.models.map((m) => [m.name, m.dim])).toEqual([
      ['nomic-embed-text:latest', 8],
      ['all-minilm:l6-v2', null],
    ])
    const port = await closedPort()
    const down = await call('embed.models', { kind: 'ollama', host: `http://127.0.0.1:${port}` })
    expect(down.ok && down.data).toMatchObject({ reachable: false, models: [], errorCode: 'ECONNREFUSED' })
    const bad = await call('embed.models', { kind: 'nope' })
    expect(!bad.ok && bad.error.code).toBe('BAD_INPUT')
  })
})

describe('degraded recall (seed 002: any embedder failure → keyword fallback)', () => {
  let store: SqliteSource
  beforeAll(() => {
    const db = path.join(t.dir, 'degraded-demo.db')
    writeDemoDb(db, { memories: 300 })
    store = openSource({ path: db })
  })
  afterAll(() => store.close())

  for (const failure of ['closed port', 'timeout'] as const) {
    it(`${failure}: the lexical arm still answers, within the embedder timeout, and says why the dense arm is missing`, BOUND, async () => {
      const timeoutMs = 300
      const host = failure === 'closed port' ? `http://127.0.0.1:${await closedPort()}` : srv.url
      srv.set({ delayMs: failure === 'timeout' ? 5000 : 0 })
      const embedder = createEmbedder('ollama:nomic-embed-text', { ollamaHost: host, timeoutMs })
      const query = 'deploy rollback'
      const t0 = performance.now()
      const q = await embedQueryOrDegrade(store.workspace, embedder, query)
      const lexical = store.lexicalPass({ text: query, filter: {}, limit: 10 }).hits
      const ms = performance.now() - t0
      expect(q.vector).toBeNull()
      expect(q.degraded).toBe(true)
      expect(q.errorCode).toBe(failure === 'closed port' ? 'ECONNREFUSED' : 'TIMEOUT')
      expect(q.reason).toMatch(failure === 'closed port' ? /connection refused.*ollama serve/ : /within 300 ms/)
      expect(lexical.length).toBeGreaterThan(0)
      expect(ms).toBeLessThan(timeoutMs + 400)
      console.info(`[measure] degraded recall (${failure}): embed ${q.tookMs.toFixed(1)} ms, embed+lexical ${ms.toFixed(1)} ms (timeout ${timeoutMs} ms)`)
    })
  }
})
