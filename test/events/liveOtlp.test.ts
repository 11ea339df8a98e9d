/**
 * Live OTLP over the browser-mode server: POST /v1/traces with the run's token stores the
 * recalls in the workspace (the agent DB's bytes unchanged), a decision arriving in a
 * later post is attached, the standing job entry is pushed, protobuf is refused with 415,
 * a wrong token with 401, and after a restart the recalls read back from the workspace.
 */
import path from 'node:path'
import zlib from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../../src/main/api/app'
import { createHandlers } from '../../src/main/api/handlers'
import { createOtlpIngest } from '../../src/main/api/otlpLive'
import { createDispatcher } from '../../src/main/api/register'
import { liveRecallReader } from '../../src/main/events/otlp/live'
import { emptyStats, type LoggedRecall } from '../../src/main/events/types'
import { startServer, type RunningServer } from '../../src/main/server/http'
import { startOtlpListener } from '../../src/main/server/otlpListener'
import type { JobProgress } from '../../src/shared/jobs'
import type { Page, RecallEvent } from '../../src/shared/types'
import { hexId, otlpPayload, otlpSpan } from '../helpers/otlpFixture'
import { sha256File, tmpDir } from '../helpers/tmp'
import { writeDemoDb } from '../helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let db: string
let dbHash: string
let app: App
let server: RunningServer
const pushed: JobProgress[] = []
const T = Date.parse('2026-05-01T08:00:00.000Z')
const trace = hexId(16)
const retrievalId = hexId(8)

beforeAll(async () => {
  t = tmpDir()
  db = path.join(t.dir, 'demo.db')
  writeDemoDb(db, { memories: 50 })
  dbHash = sha256File(db)
  app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home') })
  app.open(db)
  app.jobs.onProgress((p) => pushed.push(p))
  server = await startServer({ dispatch: createDispatcher(createHandlers(app)), jobs: app.jobs, rendererDir: t.dir, otlp: createOtlpIngest(app) })
})
afterAll(async () => {
  await server.close()
  app.close()
  t.cleanup()
})

const post = (body: Buffer | string, headers: Record<string, string>) =>
  fetch(`http://127.0.0.1:${server.port}/v1/traces`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, ...headers }, body })

const retrieval = otlpPayload('live-agent', [
  otlpSpan({
    traceId: trace,
    spanId: retrievalId,
    name: 'retrieval',
    start: T,
    end: T + 50,
    attrs: {
      'gen_ai.operation.name': 'retrieval',
      'gen_ai.retrieval.query.text': 'what did we decide about the launch',
      'gen_ai.retrieval.documents': JSON.stringify([{ id: 'mem-1', score: 0.8 }]),
    },
  }),
  { ...otlpSpan({ traceId: trace, name: 'bad', start: T, end: T }), spanId: 'nothex' },
])
const chat = otlpPayload('live-agent', [
  otlpSpan({
    traceId: trace,
    name: 'chat',
    start: T + 100,
    end: T + 400,
    attrs: { 'gen_ai.operation.name': 'chat', 'gen_ai.completion.0.content': 'We launch on Monday.' },
  }),
])

const stored = (a: App): LoggedRecall[] => [...(liveRecallReader(a.requireStore().workspace).read(emptyStats()) as Iterable<LoggedRecall>)]

describe('POST /v1/traces', () => {
  it('refuses a wrong token, protobuf and a non-JSON body with typed errors', async () => {
    const wrong = await fetch(`http://127.0.0.1:${server.port}/v1/traces`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope-nope-nope', 'content-type': 'application/json' },
      body: JSON.stringify(retrieval),
    })
    expect(wrong.status).toBe(401)
    const proto = await post(Buffer.from([0x0a, 0x01]), { 'content-type': 'application/x-protobuf' })
    expect(proto.status).toBe(415)
    expect(((await proto.json()) as { error: { message: string } }).error.message).toMatch(/OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http\/json/)
    const bad = await post('{not json', { 'content-type': 'application/json' })
    expect(bad.status).toBe(400)
    expect(stored(app)).toHaveLength(0)
  })

  it('stores the recall, reports the malformed span as a partial success, and pushes the standing entry', async () => {
    const r = await post(JSON.stringify(retrieval), { 'content-type': 'application/json' })
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual({ partialSuccess: { rejectedSpans: '1', errorMessage: expect.stringMatching(/traceId\/spanId/) } })
    const [rec] = stored(app)
    expect(rec).toMatchObject({
      key: `otlp:${trace}:${retrievalId}`,
      at: T,
      agentId: 'live-agent',
      query: 'what did we decide about the launch',
      decision: null,
    })
    expect(rec.origin.kind).toBe('otlp-live')
    expect(rec.results).toEqual([{ rank: 1, id: 'mem-1', text: null, score: 0.8 }])
    const last = pushed.filter((p) => p.kind === 'otlp').at(-1)!
    expect(last).toMatchObject({ state: 'done', done: 1, result: { posts: 1, recalls: 1, rejected: 1 } })
  })

  it('a later post (gzip) carrying the trace’s chat span gives the stored recall its decision', async () => {
    const r = await post(zlib.gzipSync(JSON.stringify(chat)), { 'content-type': 'application/json', 'content-encoding': 'gzip' })
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual({})
    const [rec] = stored(app)
    expect(rec.decision).toEqual({ text: 'We launch on Monday.', toolCall: null, at: T + 400, via: 'chat span' })
    // events.page (the Decision-trace timeline's source) shows it with its decision
    const page = (await createDispatcher(createHandlers(app))('events.page', { search: 'launch' })) as { ok: true; data: Page<RecallEvent> }
    expect(page.ok).toBe(true)
    expect(page.data.rows.map((e) => [e.id, e.origin?.kind, e.decision?.text])).toEqual([[`otlp:${trace}:${retrievalId}`, 'otlp-live', 'We launch on Monday.']])
    expect(pushed.filter((p) => p.kind === 'otlp').at(-1)).toMatchObject({ result: { posts: 2, recalls: 1, decided: 1 } })
  })

  it('survives a restart (kept in the workspace); the agent DB is never written', async () => {
    const again = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home') })
    again.open(db)
    try {
      expect(stored(again).map((r) => [r.key, r.decision?.text])).toEqual([[`otlp:${trace}:${retrievalId}`, 'We launch on Monday.']])
      const page = (await createDispatcher(createHandlers(again))('events.page', { search: 'launch' })) as { ok: true; data: Page<RecallEvent> }
      expect(page.data.rows.map((e) => e.id)).toEqual([`otlp:${trace}:${retrievalId}`])
    } finally {
      again.close()
    }
    expect(sha256File(db)).toBe(dbHash)
  })
})

describe('the desktop app’s loopback listener', () => {
  it('takes POST /v1/traces with its own token; refuses browsers, other paths and a wrong token', async () => {
    const l = await startOtlpListener({ ingest: createOtlpIngest(app), port: 0 })
    try {
      expect(l.url).toBe(`http://127.0.0.1:${l.port}/v1/traces`)
      const send = (headers: Record<string, string>, url = l.url) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(chat) })
      expect((await send({ authorization: `Bearer ${l.token}` })).status).toBe(200)
      expect((await send({ authorization: `Bearer ${server.token}` })).status).toBe(401)
      expect((await send({ authorization: `Bearer ${l.token}`, origin: 'http://evil.example' })).status).toBe(403)
      expect((await send({ authorization: `Bearer ${l.token}` }, `http://127.0.0.1:${l.port}/api/store.open`)).status).toBe(404)
    } finally {
      await l.close()
    }
  })
})
