/**
 * Embedding backfill and import as background jobs, against a loopback Ollama
 * (real HTTP): progress events, cancel mid-way, the backfilled vectors used by
 * dense recall, the agent DB's bytes unchanged, and the `recallscope embed` CLI.
 * Expected vectors come from the fake server's own formula (fakeUnitVector:
 * sha256 of the text), not from the code under test.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JobProgress } from '../src/shared/api'
import type { BackfillReport, ImportReportInfo } from '../src/shared/contract'
import { getPreset } from '../src/shared/presets'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers/index'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { main } from '../src/main/cli/index'
import { backfillEmbeddings } from '../src/main/embed/backfill'
import { createEmbedder } from '../src/main/embed/index'
import { runRecall } from '../src/main/recall/engine'
import { openSource } from '../src/main/store/registry'
import type { SqliteSource } from '../src/main/store/sqlite/source'
import { fakeUnitVector, startFakeOllama, type FakeOllamaSwitches, type FakeServer } from './helpers/fakeOllama'
import { sha256File, tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

const DIM = 8 // the fake server's nomic-embed-text
const MODEL = 'nomic-embed-text'
const NOW = Date.UTC(2026, 9, 31, 18)

let t: ReturnType<typeof tmpDir>
let srv: FakeServer<FakeOllamaSwitches>

beforeAll(async () => {
  t = tmpDir()
  srv = await startFakeOllama()
})
afterAll(async () => {
  await srv.close()
  t.cleanup()
})

function demo(name: string, memories = 400): string {
  const p = path.join(t.dir, name)
  writeDemoDb(p, { memories, events: false })
  return p
}

/** id → content of every memory (independent read of the agent DB). */
function contents(db: string): Map<string, string> {
  const d = new Database(db, { readonly: true })
  const rows = d.prepare(`SELECT id, content FROM memories`).all() as { id: string; content: string }[]
  d.close()
  return new Map(rows.map((r) => [r.id, r.content]))
}

const cosine = (a: number[], b: number[]) => {
  let s = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    s += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return s / Math.sqrt(na * nb)
}

describe('backfill (core)', () => {
  it('embeds every memory lacking a vector into the workspace; dense recall then ranks by those vectors; the agent DB is untouched', async () => {
    srv.set({ delayMs: 0 })
    const db = demo('core.db')
    const before = sha256File(db)
    const text = contents(db)
    const store = openSource({ path: db })
    try {
      const seen: [number, number][] = []
      const embedder = createEmbedder(`ollama:${MODEL}`, { ollamaHost: srv.url })
      const r = await backfillEmbeddings(store, embedder, { batchSize: 16, now: 123, onProgress: (d, n) => seen.push([d, n]) })
      expect(r).toMatchObject({
        model: MODEL,
        embedder: `ollama:${MODEL}`,
        dim: DIM,
        inScope: text.size,
        alreadyEmbedded: 0,
        embedded: text.size,
        skippedEmpty: 0,
        rejected: 0,
      })
      expect(r.batches).toBe(Math.ceil(text.size / 16))
      // Progress: starts at 0, never goes back, ends at the total.
      expect(seen[0]).toEqual([0, text.size])
      for (let i = 1; i < seen.length; i++) expect(seen[i][0]).toBeGreaterThanOrEqual(seen[i - 1][0])
      expect(seen[seen.length - 1]).toEqual([text.size, text.size])

      const idx = store.vectors(MODEL)
      expect(idx.count).toBe(text.size)
      expect(idx.backfilled).toBe(text.size)
      for (const [id, c] of [...text].slice(0, 25)) {
        const want = fakeUnitVector(c, DIM)
        Array.from(idx.get(id)!).forEach((x, i) => expect(x).toBeCloseTo(want[i], 6))
      }

      // Dense recall with that embedder: the top results are the memories whose text is closest to the query's.
      const cfg = {
        ...getPreset('fieldguide').config,
        mode: 'dense' as const,
        weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
        topK: 5,
        floor: null,
        minSimilarity: null,
        tokenBudget: null,
        scope: { tiers: ['working', 'long_term', 'archived'] },
      }
      const query = 'the deploy rollback plan'
      const trace = await runRecall(store, query, cfg, NOW, { embedder })
      expect(trace.degraded).toBe(false)
      const q = fakeUnitVector(query, DIM)
      const d = new Database(db, { readonly: true })
      const visible = new Set(d.prepare(`SELECT id FROM memories WHERE created_at <= ?`).pluck().all(NOW) as string[])
      d.close()
      const expected = [...text]
        .filter(([id]) => visible.has(id))
        .map(([id, c]) => ({ id, sim: cosine(q, fakeUnitVector(c, DIM)) }))
        .sort((a, b) => b.sim - a.sim)
      expect(trace.results.map((x) => x.id)).toEqual(expected.slice(0, 5).map((x) => x.id))
      trace.results.forEach((x, i) => expect(x.features.similarity).toBeCloseTo(expected[i].sim, 5))

      // Facts show the backfilled vectors, marked as such.
      expect(store.facts().models.find((m) => m.model === MODEL)).toMatchObject({ count: 0, backfilled: text.size, dim: DIM })
      // A rerun finds nothing left to do.
      const again = await backfillEmbeddings(store, embedder, {})
      expect(again).toMatchObject({ alreadyEmbedded: text.size, embedded: 0 })
    } finally {
      store.close()
    }
    expect(sha256File(db)).toBe(before)
  })

  it('refuses an embedder whose vectors do not fit the stored ones, writing nothing', async () => {
    const db = demo('dim.db')
    const store = openSource({ path: db })
    try {
      // The demo stores hashing-256 vectors (and a few 128-d ones, which are rejected and so "missing").
      const wrong = await startFakeOllama({ models: [{ name: 'hashing-256', dim: 8 }] })
      try {
        const e = createEmbedder('ollama:hashing-256', { ollamaHost: wrong.url })
        await expect(backfillEmbeddings(store, e, {})).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('8-d vectors') as string })
      } finally {
        await wrong.close()
      }
      expect(store.ws.prepare(`SELECT count(*) FROM ws_embeddings`).pluck().get()).toBe(0)
    } finally {
      store.close()
    }
  })
})

describe('jobs channels', () => {
  let app: App
  let call: Dispatch
  let db: string
  const ok = async <T>(channel: string, input: unknown): Promise<T> => {
    const r = await call(channel, input)
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`)
    return r.data as T
  }
  const waitJob = async (jobId: string): Promise<JobProgress> => {
    for (let i = 0; i < 1000; i++) {
      const p = await ok<JobProgress>('jobs.get', { jobId })
      if (p.state !== 'running') return p
      await new Promise((r) => setTimeout(r, 20))
    }
    throw new Error('job did not finish')
  }

  beforeAll(() => {
    db = demo('jobs.db')
    app = new App({ dataDir: path.join(t.dir, 'data'), mode: 'browser' })
    app.saveSettings({ ollamaHost: srv.url })
    app.open(db)
    call = createDispatcher(createHandlers(app))
  })
  afterAll(() => app.close())

  it('embed.backfill: progress events, cancel within a batch keeps whole vectors only, a rerun finishes the rest', async () => {
    const before = sha256File(db)
    const total = contents(db).size
    srv.set({ delayMs: 40 })
    const events: JobProgress[] = []
    const off = app.jobs.onProgress((p) => events.push(p))
    const job = await ok<JobProgress>('embed.backfill', { embedder: `ollama:${MODEL}`, batchSize: 8 })
    expect(job).toMatchObject({ kind: 'embed.backfill', state: 'running' })
    // A second backfill of the same model on the same DB is refused while the first runs.
    const dup = await call('embed.backfill', { embedder: `ollama:${MODEL}`, batchSize: 8 })
    expect(dup.ok ? null : dup.error.code).toBe('CONFLICT')
    // Cancel once a few batches are in: waited for by time (60 s), not a count of polls, which a loaded CI run
    // (the job worker started from source, beside the other files) used up before the third batch.
    const batchesIn = () => events.some((e) => e.jobId === job.jobId && e.done >= 24)
    for (const until = Date.now() + 60_000; !batchesIn() && Date.now() < until;) await new Promise((r) => setTimeout(r, 10))
    expect(batchesIn()).toBe(true)
    expect(await ok('jobs.cancel', { jobId: job.jobId })).toEqual({ cancelled: true })
    const end = await waitJob(job.jobId)
    off()
    expect(end.state).toBe('cancelled')
    expect(end.error?.code).toBe('CANCELLED')
    const running = events.filter((e) => e.jobId === job.jobId && e.state === 'running')
    // The job's first event comes before it knows its total; every later one counts memories in scope.
    expect(running[0].total).toBe(0)
    expect(running.length).toBeGreaterThan(1)
    expect(running.slice(1).every((e) => e.total === total && e.done <= total)).toBe(true)
    // Stopped: no request reaches the server any more.
    const asked = srv.requests.length
    await new Promise((r) => setTimeout(r, 200))
    expect(srv.requests.length).toBe(asked)
    // What was written is whole: full batches of valid vectors, each the server's vector for that memory's text.
    const kept = (app.requireStore() as SqliteSource).ws.prepare(`SELECT owner_id AS id, vector FROM ws_embeddings WHERE model = ?`).all(MODEL) as {
      id: string
      vector: Buffer
    }[]
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.length).toBeLessThan(total)
    expect(kept.length % 8).toBe(0)
    expect(end.error?.message).toContain(`${kept.length} new vectors`)
    const text = contents(db)
    for (const k of kept.slice(0, 10)) {
      const v = new Float32Array(k.vector.buffer, k.vector.byteOffset, DIM)
      fakeUnitVector(text.get(k.id)!, DIM).forEach((x, i) => expect(v[i]).toBeCloseTo(x, 6))
    }

    srv.set({ delayMs: 0 })
    const rerun = await waitJob((await ok<JobProgress>('embed.backfill', { embedder: `ollama:${MODEL}`, batchSize: 64 })).jobId)
    expect(rerun.state).toBe('done')
    const report = rerun.result as BackfillReport
    expect(report).toMatchObject({ alreadyEmbedded: kept.length, embedded: total - kept.length })
    const facts = await ok<{ models: { model: string; backfilled?: number }[] }>('store.facts', {})
    expect(facts.models.find((m) => m.model === MODEL)?.backfilled).toBe(total)
    // Dense recall through the channel now runs on the backfilled vectors.
    const trace = await ok<{ degraded: boolean; results: { id: string }[] }>('recall.run', {
      query: 'deploy',
      embedder: `ollama:${MODEL}`,
      preset: 'fieldguide',
      config: { mode: 'dense' },
      now: NOW,
    })
    expect(trace.degraded).toBe(false)
    expect(trace.results.length).toBeGreaterThan(0)
    expect(sha256File(db)).toBe(before)
  })

  it('embed.backfill rejects bad input and embedders without vectors', async () => {
    for (const bad of [{ batchSize: 0 }, { batchSize: 5000 }, { scope: { agentId: 3 } }, { embedder: '' }, { nope: 1 }]) {
      const r = await call('embed.backfill', bad)
      expect(r.ok ? null : r.error.code, JSON.stringify(bad)).toBe('BAD_INPUT')
    }
    const r = await call('embed.backfill', { embedder: 'none' })
    expect(r.ok ? null : r.error.code).toBe('BAD_INPUT')
  })

  it('import.start runs an importer as a job whose result is the report; bad kinds are rejected', async () => {
    const jsonl = path.join(t.dir, 'in.jsonl')
    const lines = Array.from({ length: 50 }, (_, i) =>
      JSON.stringify({ id: `j${i}`, content: `line ${i} about deploys`, createdAt: 1_700_000_000_000 + i, sessionId: 's1' }),
    )
    fs.writeFileSync(jsonl, `${lines.join('\n')}\n{not json\n`)
    const out = path.join(t.dir, 'imported.db')
    const events: JobProgress[] = []
    const off = app.jobs.onProgress((p) => events.push(p))
    const job = await ok<JobProgress>('import.start', { kind: 'jsonl', in: jsonl, out })
    const end = await waitJob(job.jobId)
    off()
    expect(end.state).toBe('done')
    const r = end.result as ImportReportInfo
    expect(r.written.memories).toBe(50)
    expect(r.skipped).toBe(1)
    expect(events.some((e) => e.jobId === job.jobId && e.state === 'done')).toBe(true)
    const d = new Database(out, { readonly: true })
    expect(d.prepare(`SELECT count(*) FROM memories`).pluck().get()).toBe(50)
    d.close()
    // The same output again without force: CONFLICT at once (no job is started), the file as it was.
    const size = fs.statSync(out).size
    const again = await call('import.start', { kind: 'jsonl', in: jsonl, out })
    expect(again.ok ? null : again.error.code).toBe('CONFLICT')
    expect(fs.statSync(out).size).toBe(size)
    const bad = await call('import.start', { kind: 'csv', in: jsonl, out })
    expect(bad.ok ? null : bad.error.code).toBe('BAD_INPUT')
    const badModel = await call('import.start', { kind: 'locomo', in: jsonl, out: path.join(t.dir, 'x.db'), model: 'm' })
    expect(badModel.ok ? null : badModel.error.code).toBe('BAD_INPUT')
  })
})

describe('recallscope embed', () => {
  it('backfills from the command line with progress lines, --json prints the report', async () => {
    srv.set({ delayMs: 0 })
    const db = demo('cli.db', 200)
    const before = sha256File(db)
    const out: string[] = []
    const err: string[] = []
    const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s) }
    const code = await main(['embed', '--db', db, '--embedder', `ollama:${MODEL}`, '--ollama-host', srv.url, '--batch', '10', '--agent', 'agent-coder'], io)
    expect(code).toBe(0)
    expect(err.some((l) => l.includes('100%'))).toBe(true)
    const d = new Database(db, { readonly: true })
    const coder = d.prepare(`SELECT count(*) FROM memories WHERE agent_id = 'agent-coder'`).pluck().get() as number
    d.close()
    expect(out.join('\n')).toContain(`Backfilled ${coder.toLocaleString('en-US')} ${MODEL} vectors`)
    const json: string[] = []
    const code2 = await main(['embed', '--db', db, '--embedder', `ollama:${MODEL}`, '--ollama-host', srv.url, '--json'], {
      out: (s) => json.push(s),
      err: () => undefined,
    })
    expect(code2).toBe(0)
    const report = JSON.parse(json[0]) as BackfillReport & { ok: boolean }
    expect(report).toMatchObject({ ok: true, alreadyEmbedded: coder, embedded: contents(db).size - coder })
    expect(sha256File(db)).toBe(before)
    // Usage errors exit 2.
    expect(await main(['embed', '--db', db], { out: () => undefined, err: () => undefined })).toBe(2)
    expect(await main(['embed', '--db', db, '--embedder', 'bogus:x'], { out: () => undefined, err: () => undefined })).toBe(2)
  })
})
