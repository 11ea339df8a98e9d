import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { RecallscopeError } from '../../shared/result'
import { openWorkspaceDb, Workspace } from '../store/workspace/workspace'
import { clearQueryCache, embedQueriesOrDegrade, embedQueryCached, embedQueryOrDegrade, parseQueryVector } from './cache'
import { createEmbedder } from './index'
import {
  abortWhenReceived,
  closedPort,
  fakeLegacyVector,
  fakeUnitVector,
  startFakeOllama,
  type FakeOllamaSwitches,
  type FakeServer,
} from '../../../test/helpers/fakeOllama'
import { tmpDir } from '../../../test/helpers/tmp'

/** Deadline for calls that must time out (the fake server waits 3 s). */
const T = 300
/** Deadline for calls that must succeed: generous, so a loaded machine cannot fail them. */
const OK = 4000
const BOUND = { timeout: 5_000 }

let srv: FakeServer<FakeOllamaSwitches>
let ws: Workspace
beforeAll(async () => {
  srv = await startFakeOllama()
})
afterAll(() => srv.close())
beforeEach(() => {
  srv.set({ fail500: null, delayMs: 0, bodyDelayMs: 0, hangUp: false })
  srv.requests.length = 0
  ws = new Workspace(':memory:', openWorkspaceDb(':memory:'))
})

/** Decode a float32 LE blob by hand, independently of decode.ts. */
function readBlob(b: Buffer): number[] {
  const out: number[] = []
  for (let i = 0; i < b.length; i += 4) out.push(b.readFloatLE(i))
  return out
}

describe('embedQueryCached', () => {
  it('embeds once, then serves (model, text) from query_cache with no HTTP call', BOUND, async () => {
    const e = createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: OK })
    const a = await embedQueryCached(ws, e, 'why did the deploy fail?', { now: 1_700_000_000_000 })
    expect(srv.requests).toHaveLength(1)
    const b = await embedQueryCached(ws, e, 'why did the deploy fail?')
    expect(srv.requests).toHaveLength(1)
    expect([...b]).toEqual([...a])

    const row = ws.db.prepare('SELECT model, text, dim, vector, created_at FROM query_cache').get() as {
      model: string
      text: string
      dim: number
      vector: Buffer
      created_at: number
    }
    expect(row).toMatchObject({ model: 'ollama:nomic-embed-text', text: 'why did the deploy fail?', dim: 8, created_at: 1_700_000_000_000 })
    const want = fakeUnitVector('why did the deploy fail?', 8)
    readBlob(row.vector).forEach((x, i) => expect(Math.abs(x - want[i])).toBeLessThan(1e-6))

    // A different text is a different key.
    await embedQueryCached(ws, e, 'why did the deploy fail')
    expect(srv.requests).toHaveLength(2)
  })

  it('a cached vector answers even when Ollama is down afterwards', BOUND, async () => {
    const e = createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: OK })
    await embedQueryCached(ws, e, 'q')
    srv.set({ fail500: 'boom' })
    const v = await embedQueryCached(ws, e, 'q')
    expect(v.length).toBe(8)
  })

  it('legacy and batch vectors of the same model never share a cache row', BOUND, async () => {
    const batch = createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: OK })
    const legacy = createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: OK, legacy: true })
    await embedQueryCached(ws, batch, 'q')
    const v = await embedQueryCached(ws, legacy, 'q')
    const want = fakeLegacyVector('q', 8)
    ;[...v].forEach((x, i) => expect(Math.abs(x - want[i])).toBeLessThan(1e-5))
    expect(ws.db.prepare('SELECT count(*) FROM query_cache').pluck().get()).toBe(2)
    expect(clearQueryCache(ws, legacy.cacheKey)).toBe(1)
  })

  it('a damaged cache row is replaced, never served', BOUND, async () => {
    const e = createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: OK })
    ws.db
      .prepare('INSERT INTO query_cache (model, text, dim, vector, created_at) VALUES (?, ?, ?, ?, ?)')
      .run('ollama:nomic-embed-text', 'q', 8, Buffer.from([1, 2, 3]), 0)
    const v = await embedQueryCached(ws, e, 'q')
    expect(srv.requests).toHaveLength(1)
    const want = fakeUnitVector('q', 8)
    ;[...v].forEach((x, i) => expect(Math.abs(x - want[i])).toBeLessThan(1e-6))
  })

  it('hashing is computed, not cached; none and empty text are refused', BOUND, async () => {
    await embedQueryCached(ws, createEmbedder('hashing'), 'q')
    expect(ws.db.prepare('SELECT count(*) FROM query_cache').pluck().get()).toBe(0)
    await expect(embedQueryCached(ws, createEmbedder('none'), 'q')).rejects.toMatchObject({ code: 'EMBEDDER_UNAVAILABLE' })
    await expect(embedQueryCached(ws, createEmbedder('hashing'), '  ')).rejects.toMatchObject({ code: 'BAD_INPUT' })
  })

  it('keeps the cache bounded', BOUND, async () => {
    const e = createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: OK })
    for (let i = 0; i < 5; i++) await embedQueryCached(ws, e, `q${i}`, { now: 1000 + i, maxEntries: 3 })
    expect(ws.db.prepare('SELECT text FROM query_cache ORDER BY created_at').pluck().all()).toEqual(['q2', 'q3', 'q4'])
  })
})

describe('embedQueryOrDegrade: an unavailable embedder is an answer, within the timeout', () => {
  it('closed port → degraded with the reason, in milliseconds', BOUND, async () => {
    const port = await closedPort()
    const e = createEmbedder('ollama:nomic-embed-text', { ollamaHost: `127.0.0.1:${port}`, timeoutMs: OK })
    const r = await embedQueryOrDegrade(ws, e, 'anything')
    expect(r).toMatchObject({ vector: null, degraded: true, errorCode: 'ECONNREFUSED' })
    expect(r.reason).toContain('connection refused')
    expect(r.tookMs).toBeLessThan(OK / 4) // refused at once, not at the deadline (325 ms seen at load 20)
  })

  it('slow server → degraded TIMEOUT at the deadline; 404 → MODEL_NOT_FOUND', BOUND, async () => {
    srv.set({ delayMs: 3000 })
    const slow = await embedQueryOrDegrade(ws, createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: T }), 'anything')
    expect(slow).toMatchObject({ vector: null, degraded: true, errorCode: 'TIMEOUT' })
    expect(slow.tookMs).toBeGreaterThanOrEqual(T - 5)
    expect(slow.tookMs).toBeLessThan(T + 400)
    srv.set({ delayMs: 0 })
    const missing = await embedQueryOrDegrade(ws, createEmbedder('ollama:not-pulled', { ollamaHost: srv.url, timeoutMs: OK }), 'anything')
    expect(missing).toMatchObject({ degraded: true, errorCode: 'MODEL_NOT_FOUND' })
  })

  it('healthy → a vector, cached on the second call; none → no vector and not degraded', BOUND, async () => {
    const e = createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: OK })
    expect(await embedQueryOrDegrade(ws, e, 'x')).toMatchObject({ degraded: false, cached: false, reason: null })
    expect(await embedQueryOrDegrade(ws, e, 'x')).toMatchObject({ degraded: false, cached: true })
    expect(await embedQueryOrDegrade(ws, createEmbedder('none'), 'x')).toMatchObject({ vector: null, degraded: false, errorCode: 'DISABLED' })
  })

  it('cancellation is not degradation: it throws', BOUND, async () => {
    srv.set({ delayMs: 3000 })
    const ac = new AbortController()
    abortWhenReceived(srv, ac)
    await expect(
      embedQueryOrDegrade(ws, createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: 2000 }), 'x', { signal: ac.signal }),
    ).rejects.toMatchObject({
      code: 'CANCELLED',
    })
  })
})

describe('embedQueriesOrDegrade: many queries, each answered as embedQueryOrDegrade answers it', () => {
  it('one cache read, one request per batch of new texts (duplicates once), then all from the cache', BOUND, async () => {
    const e = createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: OK })
    // a text cached beforehand through the one-text path
    const pre = await embedQueryOrDegrade(ws, e, 'cached before')
    srv.requests.length = 0
    const texts = ['cached before', ...Array.from({ length: 300 }, (_, i) => `query ${i % 280}`)]
    const got = await embedQueriesOrDegrade(ws, e, texts, { now: 5 })
    // 280 distinct new texts: embed() calls of 256 and 24 texts, which the Ollama embedder sends
    // 64 at a time (its batch size): 4 + 1 requests, none for the cached text or the duplicates
    expect(srv.requests).toHaveLength(5)
    const sent = srv.requests.flatMap((r) => (r.body as { input: string[] }).input)
    expect(sent).toHaveLength(280)
    expect(new Set(sent).size).toBe(280)
    expect(sent).not.toContain('cached before')
    expect(got).toHaveLength(texts.length)
    expect(got[0]).toMatchObject({ cached: true, degraded: false })
    expect([...got[0].vector!]).toEqual([...pre.vector!])
    texts.forEach((t, i) => {
      if (i === 0) return
      const want = fakeUnitVector(t, 8)
      got[i].vector!.forEach((x, j) => expect(Math.abs(x - want[j])).toBeLessThan(1e-6))
      expect(got[i]).toMatchObject({ cached: false, degraded: false, reason: null, errorCode: null })
    })
    // the same texts one by one now come from the cache, with the same numbers
    srv.requests.length = 0
    for (const i of [1, 50, 299]) {
      const one = await embedQueryOrDegrade(ws, e, texts[i])
      expect(one.cached).toBe(true)
      expect([...one.vector!]).toEqual([...got[i].vector!])
    }
    expect(srv.requests).toHaveLength(0)
    expect(ws.db.prepare('SELECT count(*) FROM query_cache').pluck().get()).toBe(281)
  })

  it('an unavailable embedder degrades every text with the reason one text gets; none is not degraded; empty text is BAD_INPUT', BOUND, async () => {
    const port = await closedPort()
    const down = createEmbedder('ollama:nomic-embed-text', { ollamaHost: `127.0.0.1:${port}`, timeoutMs: OK })
    const one = await embedQueryOrDegrade(ws, down, 'a')
    const many = await embedQueriesOrDegrade(ws, down, ['a', 'b', 'a'])
    for (const r of many) expect(r).toMatchObject({ vector: null, degraded: true, errorCode: one.errorCode, reason: one.reason })
    const none = await embedQueriesOrDegrade(ws, createEmbedder('none'), ['a', 'b'])
    for (const r of none) expect(r).toMatchObject({ vector: null, degraded: false, errorCode: 'DISABLED' })
    await expect(embedQueriesOrDegrade(ws, createEmbedder('hashing'), ['a', '  '])).rejects.toMatchObject({ code: 'BAD_INPUT' })
  })

  it('cancellation throws', BOUND, async () => {
    srv.set({ delayMs: 3000 })
    const ac = new AbortController()
    abortWhenReceived(srv, ac)
    const e = createEmbedder('ollama:nomic-embed-text', { ollamaHost: srv.url, timeoutMs: 2000 })
    await expect(embedQueriesOrDegrade(ws, e, ['x', 'y'], { signal: ac.signal })).rejects.toMatchObject({ code: 'CANCELLED' })
  })
})

describe('parseQueryVector (--query-vector FILE|JSON)', () => {
  let t: ReturnType<typeof tmpDir>
  beforeAll(() => {
    t = tmpDir()
  })
  afterAll(() => t.cleanup())

  it('reads an inline JSON array exactly (as float32)', () => {
    const v = parseQueryVector('[0.25, -1.5, 3e-2]')
    expect(v).toBeInstanceOf(Float32Array)
    expect([...v]).toEqual([0.25, -1.5, Math.fround(3e-2)])
  })

  it('reads a file: a bare array, or what an agent logged ({embedding}, Ollama /api/embed, OpenAI /embeddings)', () => {
    const logged = [0.1, 0.2, 0.3]
    const want = logged.map(Math.fround)
    const forms = [logged, { embedding: logged }, { vector: logged }, { embeddings: [logged] }, { data: [{ embedding: logged, index: 0 }] }]
    forms.forEach((f, i) => {
      const p = path.join(t.dir, `v${i}.json`)
      fs.writeFileSync(p, JSON.stringify(f))
      expect([...parseQueryVector(p)], JSON.stringify(f)).toEqual(want)
    })
    // relative to cwd
    expect([...parseQueryVector('v0.json', { cwd: t.dir })]).toEqual(want)
  })

  it('clear BAD_INPUT errors: missing file, bad JSON, empty, non-numeric, null/NaN, overflow, all zeros', () => {
    const cases: [string, RegExp][] = [
      ['', /needs a file path or a JSON array/],
      ['no/such/file.json', /neither a file nor a JSON array/],
      ['[1, 2', /not valid JSON/],
      ['[NaN]', /not valid JSON/],
      ['[]', /empty vector/],
      ['[1, "2", 3]', /element 1 is not a number \("2"\)/],
      ['[1, null]', /element 1 is not a number \(null\)/],
      ['[1e39]', /element 0 .* not finite as a float32/],
      ['{"foo": 1}', /must be a JSON array of numbers/],
      ['[0, 0, 0]', /all zeros/],
    ]
    for (const [arg, re] of cases) {
      let caught: unknown
      try {
        parseQueryVector(arg)
      } catch (e) {
        caught = e
      }
      expect(caught, arg).toBeInstanceOf(RecallscopeError)
      expect((caught as RecallscopeError).code, arg).toBe('BAD_INPUT')
      expect((caught as RecallscopeError).message, arg).toMatch(re)
    }
  })
})
