/**
 * Trust round 3, bounded resources (docs/guide/safety.md): every map worker (PCA of `map.build`,
 * UMAP of `map.refine`) runs in one bounded pool (src/main/jobs/cpuPool.ts). Before, 40
 * concurrent map jobs started 40 worker threads (~2 GB, OOM-killed under a 3 GB cap).
 *
 * The bound is observed from outside the pool: the process's OS threads (/proc/self/task: one
 * per live worker thread) and its resident memory are sampled every 10 ms during 40 concurrent
 * `map.build` and 40 concurrent `map.refine`, and the jobs list is read for refinements that
 * run (not waiting). Every request ends done, cancelled (superseded) or typed BUSY; none INTERNAL.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../../src/main/api/app'
import { QUEUED_MESSAGE } from '../../src/main/api/handlers/map'
import type { Dispatch } from '../../src/main/api/register'
import { cpuPool } from '../../src/main/jobs/cpuPool'
import type { JobProgress } from '../../src/shared/jobs'
import type { MapData } from '../../src/shared/map'
import type { Result } from '../../src/shared/result'
import { tmpDir } from '../helpers/tmp'
import { writeDemoDb } from '../helpers/demoDb'
import { openTestApp } from '../helpers/testApp'

const BURST = 40
/**
 * Live threads as the OS counts them: a worker whose job has ended may still be listed while its thread is joined
 * (measured: +4 at most with 2 slots), so up to twice the pool's slots. Without the pool: +40 (measured).
 */
const threadBound = () => 2 * cpuPool.size

let t: ReturnType<typeof tmpDir>
let app: App
let call: Dispatch
let now: number

const threads = () => fs.readdirSync('/proc/self/task').length
/** A running refinement that holds a pool slot: it has said what it computes, and that is not "waiting". */
const inWorker = (j: JobProgress) => j.message !== undefined && !j.message.startsWith(QUEUED_MESSAGE)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Sample the thread count and RSS every 10 ms until `stop` settles. */
function sample(stop: Promise<unknown>): Promise<{ maxThreads: number; maxRss: number }> {
  let done = false
  void stop.finally(() => (done = true)).catch(() => undefined)
  return (async () => {
    let maxThreads = 0
    let maxRss = 0
    while (!done) {
      maxThreads = Math.max(maxThreads, threads())
      maxRss = Math.max(maxRss, process.memoryUsage.rss())
      await sleep(10)
    }
    return { maxThreads, maxRss }
  })()
}

/** Wait (by time, generously) until the thread count is back to at most `n`: workers exit asynchronously. */
async function settleThreads(n: number): Promise<number> {
  const until = Date.now() + 20_000
  while (threads() > n && Date.now() < until) await sleep(50)
  return threads()
}

function data<T>(r: Result<unknown>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`)
  return r.data as T
}

beforeAll(async () => {
  t = tmpDir()
  const db = path.join(t.dir, 'demo.db')
  writeDemoDb(db, { memories: 1500 })
  ;({ app, call } = openTestApp(db, path.join(t.dir, 'home')))
  now = data<{ timeRange: { max: number } }>(await call('memories.facets', {})).timeRange.max
  // Warm up: the first build starts what stays (the vector scan's helper threads) and loads the map worker's code.
  data<MapData>(await call('map.build', { query: 'warm up', now, cap: 400, seed: 999 }))
  // libuv starts its thread pool (4 threads) on the first async file call: start it now, so it is part of the baseline
  await fs.promises.readFile(db, { encoding: null, flag: 'r' }).then(() => undefined)
}, 120_000)
afterAll(() => {
  app.close()
  t.cleanup()
})

describe('one bounded pool for map workers', () => {
  it(`${BURST} concurrent map.build: at most ${cpuPool.size} map workers alive at once, all answered, memory bounded`, async () => {
    const base = await settleThreads(threads())
    const rss0 = process.memoryUsage.rss()
    const builds = Promise.all(Array.from({ length: BURST }, (_, i) => call('map.build', { query: `deploy staging ${i}`, now, cap: 1500, seed: i + 1 })))
    const seen = await sample(builds)
    const results = await builds
    const codes = results.map((r) => (r.ok ? 'ok' : r.error.code))
    // queue (64) > burst: every build is answered; a refused one would be BUSY, never anything else
    expect(codes.filter((c) => c !== 'ok' && c !== 'BUSY')).toEqual([])
    expect(codes.filter((c) => c === 'ok').length).toBe(BURST)
    expect(seen.maxThreads - base).toBeLessThanOrEqual(threadBound())
    expect(cpuPool.stats().peak).toBeLessThanOrEqual(cpuPool.size)
    // measured: +80 MB with the pool, +719 MB with 40 workers at once (this map: 1,500 memories)
    expect(seen.maxRss - rss0).toBeLessThan(400 * 2 ** 20)
    console.log(`map.build ×${BURST}: +${seen.maxThreads - base} threads at most (pool ${cpuPool.size}), RSS +${Math.round((seen.maxRss - rss0) / 2 ** 20)} MB`)
  }, 180_000)

  it(`${BURST} concurrent map.refine: at most ${cpuPool.size} run at once, the superseded ones cancelled, the last done`, async () => {
    const maps: string[] = []
    for (let i = 0; i < 3; i++) maps.push(data<MapData>(await call('map.build', { query: `refine ${i}`, now, cap: 800, seed: 100 + i })).mapId)
    const base = await settleThreads(threads())
    const rss0 = process.memoryUsage.rss()
    let maxRunning = 0
    // Fired 15 ms apart, so the early ones have started their workers when the later ones come in.
    const fired = (async () => {
      const started: Result<unknown>[] = []
      for (let i = 0; i < BURST; i++) {
        started.push(await call('map.refine', { mapId: maps[i % 3], nEpochs: 100 + i, nNeighbors: 10 }))
        const running = data<JobProgress[]>(await call('jobs.list', {})).filter((j) => j.kind === 'map' && j.state === 'running' && inWorker(j))
        maxRunning = Math.max(maxRunning, running.length)
        await sleep(15)
      }
      return started
    })()
    const started = await fired
    const jobIds = started.map((r) => data<JobProgress>(r).jobId)
    // Wait for every job to end (by time: a loaded machine computes slowly).
    const ends = (async () => {
      const until = Date.now() + 150_000
      for (;;) {
        const states = jobIds.map((id) => app.jobs.get(id))
        const running = states.filter((p) => p.state === 'running')
        maxRunning = Math.max(maxRunning, running.filter(inWorker).length)
        if (running.length === 0 || Date.now() > until) return states
        await sleep(25)
      }
    })()
    const seen = await sample(ends)
    const states = await ends
    expect(states.filter((p) => p.state === 'running')).toEqual([])
    const failed = states.filter((p) => p.state === 'failed')
    expect(failed.filter((p) => p.error?.code !== 'BUSY')).toEqual([])
    expect(states.filter((p) => p.error?.code === 'INTERNAL')).toEqual([])
    // each refinement superseded the one before it: the last is the one the screen waits for
    expect(states[BURST - 1].state).toBe('done')
    expect(states.filter((p) => p.state === 'cancelled').length).toBeGreaterThan(0)
    expect(maxRunning).toBeLessThanOrEqual(cpuPool.size)
    expect(seen.maxThreads - base).toBeLessThanOrEqual(threadBound())
    expect(cpuPool.stats().peak).toBeLessThanOrEqual(cpuPool.size)
    expect(seen.maxRss - rss0).toBeLessThan(400 * 2 ** 20)
    console.log(
      `map.refine ×${BURST}: ${states.filter((p) => p.state === 'done').length} done, ${states.filter((p) => p.state === 'cancelled').length} cancelled; ` +
        `≤ ${maxRunning} running in jobs.list, +${seen.maxThreads - base} threads at most, RSS +${Math.round((seen.maxRss - rss0) / 2 ** 20)} MB`,
    )
  }, 240_000)
})
