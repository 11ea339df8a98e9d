/**
 * Opening a 1,000,000-memory demo DB and showing the first page of the memories
 * table (the browser's default sort) in a fresh process: goal ≤ 500 ms, RSS ≤ 1 GB.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { GOALS } from './goals'
import { measure, verdict } from './report'
import { scaled } from './scale'
import { demoDb, median } from './util'

export async function runFirstPage(): Promise<void> {
  // smoke: the demo size the other smoke benches use (generated once per run), and one fresh process, not three
  const db = demoDb(scaled(1_000_000, 300))
  const n = scaled(3, 1)
  // A fresh process, so module caches and a warm store do not flatter the number.
  const script = `
    const { openSource } = require(${JSON.stringify(path.resolve(__dirname, '../src/main/store/registry.ts'))})
    const t0 = performance.now()
    const s = openSource({ path: ${JSON.stringify(db)} })
    const page = s.memoriesPage({ limit: 100 })
    const sessions = s.sessionsPage({ limit: 100 })
    const t1 = performance.now()
    console.log(JSON.stringify({ ms: t1 - t0, pageMs: page.tookMs, sessionsMs: sessions.tookMs, rows: page.rows.length, total: page.total, rss: process.memoryUsage().rss }))
    s.close()
  `
  const runs: { ms: number; pageMs: number; sessionsMs: number; rows: number; total: number; rss: number }[] = []
  for (let i = 0; i < n; i++) {
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { encoding: 'utf8' })
    runs.push(JSON.parse(out.trim().split('\n').pop()!) as (typeof runs)[number])
  }
  const ms = median(runs.map((r) => r.ms))
  const rss = Math.max(...runs.map((r) => r.rss)) / 2 ** 20
  console.log(`1,000,000 memories: open + first page (100 rows of ${runs[0].total.toLocaleString('en-US')}) + first sessions page`)
  const open = measure({
    name: `open + first page + first sessions page, median of ${n} fresh processes`,
    value: ms,
    unit: 'ms',
    goal: GOALS['firstpage.open'],
  })
  console.log(
    `  median of ${n} fresh processes: ${ms.toFixed(0)} ms  (memories page ${runs[n >> 1].pageMs.toFixed(0)} ms, sessions page ${runs[n >> 1].sessionsMs.toFixed(0)} ms)  ${verdict(open)}`,
  )
  const peak = measure({ name: 'peak RSS', value: rss, unit: 'MiB', goal: GOALS['firstpage.rss'] })
  console.log(`  peak RSS: ${rss.toFixed(0)} MiB  ${verdict(peak)}`)
}
