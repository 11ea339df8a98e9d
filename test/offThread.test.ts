/**
 * Nothing blocks the app (issue 13): evals, tunes and why-nots run in the open
 * store's job worker (src/main/jobs/), so `app.info` keeps answering while one
 * runs, and the worker gives the same answers as running the task in-thread.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JobProgress } from '../src/shared/jobs'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { runTask, type TaskInputs } from '../src/main/jobs/tasks'
import { GatherCache } from '../src/main/eval/replay'
import { openSource } from '../src/main/store/registry'
import { demoWithCases, FIXTURE_NOW } from './helpers/evalFixture'
import { tmpDir } from './helpers/tmp'

let t: ReturnType<typeof tmpDir>
let app: App
let call: Dispatch
let db: string

async function ok<T>(channel: string, input: unknown): Promise<T> {
  const r = await call(channel, input)
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`)
  return r.data as T
}

/** Wall-clock fields differ run to run; everything else must match exactly. */
function withoutTimings(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (k, x: unknown) => (/(Ms|timings|createdAt)$/.test(k) ? undefined : x)))
}

beforeAll(() => {
  t = tmpDir()
  const f = demoWithCases(t.dir, { memories: 3000, cases: 120 })
  db = f.db
  f.store.close()
  app = new App({ dataDir: path.join(t.dir, 'data'), mode: 'browser' })
  app.open(db)
  call = createDispatcher(createHandlers(app))
}, 180_000)
afterAll(() => {
  app.close()
  t.cleanup()
})

describe('heavy work off the main thread', () => {
  it('app.info answers in ≤ 200 ms every 50 ms while a tune and why-nots at a pool of 5,000 run (≥ 2 s)', async () => {
    const ids = (await ok<{ rows: { id: string }[] }>('memories.page', { limit: 400 })).rows.map((r) => r.id)
    const why = (id: string) => ({
      memoryId: id,
      query: 'what did we plan for the trip',
      config: { candidatePool: 5000, scope: {} },
      now: FIXTURE_NOW,
      embedder: 'hashing',
    })
    // The control: one such why-not on this thread holds it longer than the limit, so the check below can fail.
    const store = openSource({ path: db })
    try {
      const c0 = performance.now()
      await runTask(store, 'why', why(ids[399]), { signal: new AbortController().signal, progress: () => {} })
      expect(performance.now() - c0).toBeGreaterThan(200)
    } finally {
      store.close()
    }

    const t0 = performance.now()
    const job = await ok<JobProgress>('eval.tune', { metric: 'recall@10', trials: 4000, seed: 3, now: FIXTURE_NOW, embedder: 'hashing', fresh: true })
    let whysDone = false
    // Why-nots one after another, at least four and until the work has run 2 s: how long the tune and four take
    // depends on the machine (about 2 s here since the scans got faster, stop 37), and the check below means
    // something only if the work was long. A different memory each time (97 is prime to the 400 listed).
    const whys = (async () => {
      for (let i = 0; i < 4 || performance.now() - t0 < 2000; i++) await ok('trace.why', why(ids[(50 + 97 * i) % ids.length]))
      whysDone = true
    })()
    const lat: number[] = []
    let state: JobProgress = job
    let sawProgress = false
    while (state.state === 'running' || !whysDone) {
      // A request due now (a client elsewhere would send it now): answered when this thread gets to it.
      const due = performance.now() + 50
      await new Promise((r) => setTimeout(r, 50))
      await ok('app.info', {})
      lat.push(performance.now() - due)
      state = await ok<JobProgress>('jobs.get', { jobId: job.jobId })
      if (state.done > 0) sawProgress = true
      if (performance.now() - t0 > 120_000) throw new Error('tune did not finish in 2 min')
    }
    await whys
    const took = performance.now() - t0
    expect(state.state, state.error?.message).toBe('done')
    // The check means something only if the work was long (the why-nots above see to it).
    expect(took).toBeGreaterThanOrEqual(2000)
    expect(sawProgress).toBe(true)
    expect(lat.length).toBeGreaterThan(20)
    expect(Math.max(...lat)).toBeLessThanOrEqual(200)
  })

  it('the worker and the in-thread path give the same eval run, tune report and why-not', async () => {
    const evalIn: TaskInputs['eval'] = { preset: 'fieldguide', k: 10, embedder: 'hashing', now: FIXTURE_NOW, createdAt: 0 }
    const tuneIn: TaskInputs['tune'] = { embedder: 'hashing', embedderOptions: {}, now: FIXTURE_NOW, metric: 'ndcg@10', trials: 150, seed: 9 }
    const ids = (await ok<{ rows: { id: string }[] }>('memories.page', { limit: 3 })).rows.map((r) => r.id)
    const whyIn: TaskInputs['why'] = { memoryId: ids[2], query: 'what did we plan for the trip', now: FIXTURE_NOW, embedder: 'hashing' }

    const viaWorker = {
      eval: await app.offThread('eval', evalIn, { fresh: true }),
      tune: await app.offThread('tune', tuneIn, { fresh: true }),
      why: await app.offThread('why', whyIn),
    }
    const store = openSource({ path: db })
    try {
      const ctl = () => ({ signal: new AbortController().signal, progress: () => {}, cache: new GatherCache(store) })
      const inThread = {
        eval: await runTask(store, 'eval', evalIn, ctl()),
        tune: await runTask(store, 'tune', tuneIn, ctl()),
        why: await runTask(store, 'why', whyIn, ctl()),
      }
      expect(viaWorker.eval.perCase.length).toBeGreaterThan(100)
      expect(viaWorker.tune.trials).toBeGreaterThan(0)
      expect(withoutTimings(viaWorker.eval)).toEqual(withoutTimings(inThread.eval))
      expect(withoutTimings(viaWorker.tune)).toEqual(withoutTimings(inThread.tune))
      expect(withoutTimings(viaWorker.why)).toEqual(withoutTimings(inThread.why))
    } finally {
      store.close()
    }
  })

  it('a cancelled eval stops in the worker, typed; a bad task input is a typed error; closing the store fails a running task', async () => {
    const job = await ok<JobProgress>('eval.run', { preset: 'fieldguide', embedder: 'hashing', fresh: true, now: FIXTURE_NOW })
    await ok('jobs.cancel', { jobId: job.jobId })
    let p = job
    for (let i = 0; i < 200 && p.state === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 25))
      p = await ok<JobProgress>('jobs.get', { jobId: job.jobId })
    }
    expect(p.state).toBe('cancelled')
    expect(p.error?.code).toBe('CANCELLED')

    await expect(app.offThread('why', { memoryId: 'nope', now: FIXTURE_NOW })).rejects.toMatchObject({ code: 'BAD_INPUT' })
    // A cancelled tune hands back its best so far, as in-thread (the handler saves it as "cancelled").
    const ac = new AbortController()
    const tuning = app.offThread(
      'tune',
      { embedder: 'hashing', embedderOptions: {}, now: FIXTURE_NOW, trials: 50_000, seed: 2 },
      { signal: ac.signal, progress: (_d, _t, message) => void (message?.includes('configs') && ac.abort()) }, // once it searches
    )
    const partial = await tuning
    expect(partial.cancelled).toBe(true)
    expect(partial.trials).toBeLessThan(50_000)
    const running = app.offThread('tune', { embedder: 'hashing', embedderOptions: {}, now: FIXTURE_NOW, trials: 50_000, seed: 1 }, { fresh: true })
    await new Promise((r) => setTimeout(r, 300))
    app.close()
    await expect(running).rejects.toMatchObject({ code: 'NO_DB' })
    app.open(db)
  })
})
