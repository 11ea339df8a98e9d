/**
 * The store host (issue 21 item 1), before and after: `app.info` latency polled every
 * 50 ms while a slow recall, a big open or a stuck store call runs, with the store on
 * the calling thread (the in-thread App: before) and in a store host worker (HostedApp:
 * after), and the per-call cost of the hop for memories.page and recall.run.
 */
import { scaled, SMOKE } from './scale'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { HostedApp } from '../src/main/host/hostedApp'
import { createHostedDispatcher } from '../src/main/host/dispatch'
import { makeWedgeDb } from '../test/helpers/wedgeDb'
import { GOALS } from './goals'
import { measure, verdict } from './report'
import { demoDb, fmtMs, median, percentile } from './util'

const NOW = Date.UTC(2026, 9, 20, 12)

/**
 * app.info latencies while `work` runs, polled on a fixed 50 ms schedule; each latency runs from
 * the moment its poll was due, so a poll held up by a busy thread counts in full.
 */
async function pollInfo(call: Dispatch, work: () => Promise<unknown>): Promise<{ lat: number[]; tookMs: number }> {
  let settled = false
  const lat: number[] = []
  const t0 = performance.now()
  let workMs = 0
  const poller = (async () => {
    for (let due = t0; !settled || due < t0 + workMs; due += 50) {
      const wait = due - performance.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      if (settled && due >= t0 + workMs) break
      await call('app.info', {})
      lat.push(performance.now() - due)
      // Polls that fell due while the thread was blocked are one late poll, not many.
      due = Math.max(due, performance.now() - 50)
    }
  })()
  await new Promise((r) => setImmediate(r))
  await work().finally(() => {
    settled = true
    workMs = performance.now() - t0
  })
  await poller
  return { lat, tookMs: workMs }
}

type Polled = { lat: number[]; tookMs: number }

/**
 * Print one case and record its slowest poll: with the store on the calling thread (`hosted` false, no goal), or
 * in the store host (the goal, as a ratio to the same case on the calling thread when there is one).
 */
function line(label: string, r: Polled, hosted = false, before: Polled | null = null): Polled {
  const fig = measure({
    name: `app.info slowest poll: ${label}`,
    value: Math.max(...r.lat),
    unit: 'ms',
    goal: hosted ? GOALS['storehost.info'] : undefined,
    peer: before ? { name: 'store on the calling thread', value: Math.max(...before.lat) } : null,
  })
  console.log(
    `  ${label.padEnd(44)} work ${fmtMs(r.tookMs).padStart(8)}   app.info: ${r.lat.length} polls, median ${fmtMs(median(r.lat))}, max ${fmtMs(Math.max(...r.lat))}  ${verdict(fig)}`,
  )
  return r
}

/** Per-call times of `channel` through both dispatchers, calls interleaved so both see the same machine load. */
async function timeCalls(a: Dispatch, b: Dispatch, channel: string, input: unknown, n: number): Promise<[number[], number[]]> {
  for (let i = 0; i < 10; i++) await Promise.all([a(channel, input), b(channel, input)]) // warm
  const xs: number[][] = [[], []]
  for (let i = 0; i < n; i++) {
    for (const [k, call] of [a, b].entries()) {
      const t0 = performance.now()
      const r = await call(channel, input)
      xs[k].push(performance.now() - t0)
      if (!r.ok) throw new Error(`${channel}: ${r.error.message}`)
    }
  }
  return [xs[0], xs[1]]
}

export async function runStoreHost(): Promise<void> {
  const db = demoDb(scaled(3000, 300))
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-hostbench-'))
  // Smoke: the "big" open is a copy of the small demo at another path (the same open of a second DB, no numbers
  // meant; generating a 1,000-memory demo for it cost ~0.8 s of the smoke run's CPU).
  const big = SMOKE ? path.join(dir, 'big.db') : demoDb(20000)
  if (SMOKE) fs.copyFileSync(db, big)
  const wedge = makeWedgeDb(db, path.join(dir, 'wedge.db'))

  const local = new App({ mode: 'browser', dataDir: path.join(dir, 'local') })
  const direct = createDispatcher(createHandlers(local))
  const hosted = new HostedApp({ mode: 'browser', dataDir: path.join(dir, 'hosted'), callTimeoutMs: 3000 })
  const call = createHostedDispatcher(hosted)
  const slow = {
    query: 'deploy staging database migration release',
    now: NOW,
    runs: [24, 168, 720].map((h) => ({
      preset: 'fieldguide',
      config: { candidatePool: 3000, floor: null, topK: 3000, tokenBudget: null, recency: { halfLifeHours: h } },
    })),
  }
  try {
    await direct('store.open', { path: db })
    await call('store.open', { path: db })

    console.log('app.info while the store works (polled every 50 ms; before = store on the calling thread, after = store host):')
    const slowBefore = line('slow recall (compare, 3 × pool 3,000), before', await pollInfo(direct, () => direct('recall.compare', slow)))
    line('slow recall (compare, 3 × pool 3,000), after', await pollInfo(call, () => call('recall.compare', slow)), true, slowBefore)
    const openBefore = line('open 20,000 memories, before', await pollInfo(direct, () => direct('store.open', { path: big })))
    line('open 20,000 memories, after', await pollInfo(call, () => call('store.open', { path: big })), true, openBefore)
    // Not in smoke mode: the stuck worker keeps spinning until the process is killed (the end of this bench).
    if (!SMOKE) {
      await call('store.open', { path: wedge })
      console.log('  stuck call (events.page over a never-ending VIEW), before: app.info never answers (the thread spins in SQLite)')
      line('stuck call, after (deadline 3 s → DB_TIMEOUT)', await pollInfo(call, () => call('events.page', { limit: 5 })), true)
    }

    await direct('store.open', { path: db })
    await call('store.open', { path: db })
    console.log('\nper-call cost (demo DB, 3,000 memories; 300 calls each):')
    for (const [channel, input] of [
      ['memories.page', { limit: 50 }],
      ['recall.run', { query: 'deploy to staging', preset: 'fieldguide', now: NOW }],
    ] as const) {
      const [a, b] = await timeCalls(direct, call, channel, input, scaled(300, 20))
      measure({
        name: `${channel} through the store host, median`,
        value: median(b),
        unit: 'ms',
        peer: { name: 'store on the calling thread', value: median(a) },
      })
      console.log(
        `  ${channel.padEnd(14)} before median ${fmtMs(median(a))}, p99 ${fmtMs(percentile(a, 0.99))}   after median ${fmtMs(median(b))}, p99 ${fmtMs(percentile(b, 0.99))}   hop +${fmtMs(median(b) - median(a))} (median)`,
      )
    }
  } finally {
    local.close()
    const stuck = await hosted.dispose(500)
    fs.rmSync(dir, { recursive: true, force: true })
    // A worker still spinning in the wedge VIEW's CTE holds the exit: end the bench process by signal.
    if (stuck > 0) setTimeout(() => process.kill(process.pid, 'SIGKILL'), 100)
  }
}
