/**
 * The Recall screen's sliders in a real browser (docs/internals/performance.md, "Recall sliders"): browser
 * mode (`recallscope serve`) on a generated demo store, a recall with ≥ 1,000 candidates, and Debian's
 * Chromium (playwright-core) dragging the Recency weight slider through 21 steps. For each step:
 *  - main-thread work: the app's work on the renderer main thread from the step's input to the next step,
 *    summed from a Chromium trace and split into script, style, layout, paint and GC; the bench's own probes
 *    are not counted (bench/uiTrace.ts says how they are told apart) (the goal: ≤ 16 ms, one frame);
 *  - input to painted: from the input event to the end of the frame that shows it (measured in the page);
 *  - the engine's re-rank time the page itself reports ("re-ranked locally in … ms");
 * and long tasks (> 50 ms) seen by a PerformanceObserver over the whole drag; then the release (pointer up to
 * the screen rendered with the state the drag left) as a figure of its own, not one of the steps.
 * Builds the app first when `out/` is missing or older than `src/`. In smoke mode it drags 3 steps over 100
 * candidates, and without a build (or a Chromium) says so and stops: a build is a minute, smoke is seconds.
 */
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { chromium, type Page } from 'playwright-core'
import { SMOKE, scaled } from './scale'
import { GOALS } from './goals'
import { measure, skipBench, verdict } from './report'
import { demoDb, fmtMs, loadLine, median, percentile } from './util'
import { otherThreadsCpu, stepWork, type StepWork, type TraceEvent } from './uiTrace'
import { DRAG_REST_MS, SETTLE_MARK } from '../src/renderer/src/features/recall/dragTiming'

const ROOT = path.resolve(__dirname, '..')
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => fs.existsSync(p))
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run']

export async function runUiBench(): Promise<void> {
  console.log(loadLine())
  if (!CHROMIUM) return skipBench('no Chromium found (/usr/bin/chromium)')
  if (!ensureBuilt()) return skipBench('smoke mode without a build (out/ missing or stale): `npm run build` to include it')
  const pool = scaled(1000, 100)
  const steps = scaled(21, 3)
  const db = demoDb(scaled(3000, 300))
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-bench-ui-'))
  const srv = await serve(db, home)
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-bench-ui-profile-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1440, height: 900 },
  })
  try {
    const page = context.pages()[0] ?? (await context.newPage())
    await page.goto(srv.url)
    const base = srv.url.replace(/#.*$/, '')
    const config = JSON.stringify({ mode: 'hybrid', candidatePool: pool, topK: 10 })
    await page.goto(`${base}#/recall?query=${encodeURIComponent('deploy the tier migration plan')}&preset=fieldguide&config=${encodeURIComponent(config)}`)
    await page.locator('.result').first().waitFor({ timeout: 120_000 })
    await page
      .getByTestId('rerank-status')
      .filter({ hasText: /query \d+ ms/ })
      .waitFor({ timeout: 120_000 })
    const candidates = Number(await page.locator('.results > li').first().getAttribute('aria-setsize'))
    const inDom = await page.locator('.results > li').count()
    console.log(`${candidates.toLocaleString('en-US')} candidates (pool ${pool}, hybrid), ${inDom} rows in the DOM (virtualised)`)

    const { steps: r, release, otherThreads } = await dragSlider(page, 'Recency', steps)
    const work = r.map((s) => s.mainMs)
    const paint = r.map((s) => s.paintMs)
    const stat = (xs: number[]) => `p50 ${fmtMs(median(xs))} · p95 ${fmtMs(percentile(xs, 0.95))} · max ${fmtMs(Math.max(...xs))}`
    measure({ name: 'candidates', value: candidates, unit: 'count' })
    const rerank = r.map((s) => s.rerankMs).filter((x): x is number => x !== null)
    // The engine's re-rank is the peer: what the page's work per step is compared with.
    const rerankPeer = rerank.length ? { name: 'engine re-rank (page-reported), p95', value: percentile(rerank, 0.95) } : null
    const step = measure({ name: 'main-thread work per step, p95', value: percentile(work, 0.95), unit: 'ms', goal: GOALS['ui.step'], peer: rerankPeer })
    measure({ name: 'main-thread work per step, p50', value: median(work), unit: 'ms' })
    const painted = paint.filter((x) => Number.isFinite(x))
    if (painted.length) measure({ name: 'input → painted per step, p50', value: median(painted), unit: 'ms' })
    if (rerank.length) measure({ name: 'engine re-rank (page-reported), p50', value: median(rerank), unit: 'ms' })
    const all = r.map((s) => s.work.allTasks)
    measure({ name: "every main-thread task per step (the bench's own included), p50", value: median(all), unit: 'ms' })
    console.log(`slider drag, ${steps} steps:`)
    console.log(`  main-thread work per step   ${stat(work)}   ${verdict(step)} (p95)`)
    // Where a step's time goes: the median of each kind over the steps (they need not add up to the median total).
    const kinds = ['script', 'style', 'layout', 'paint', 'gc', 'other'] as const
    console.log(`    of which (p50)            ${kinds.map((k) => `${k} ${fmtMs(median(r.map((s) => s.work[k])))}`).join(' · ')}`)
    for (const k of ['script', 'layout', 'paint'] as const) measure({ name: `${k} per step, p50`, value: median(r.map((s) => s.work[k])), unit: 'ms' })
    console.log(`    objects laid out again     p50 ${median(r.map((s) => s.work.dirtyObjects))} per step`)
    // CPU time: without the waits for a core, so runs at different loads compare.
    const cpu = r.map((s) => s.cpu.total)
    measure({ name: 'main-thread CPU time per step, p95', value: percentile(cpu, 0.95), unit: 'ms' })
    measure({ name: 'main-thread CPU time per step, p50', value: median(cpu), unit: 'ms' })
    console.log(`  main-thread CPU per step    ${stat(cpu)}`)
    console.log(`    of which (p50)            ${kinds.map((k) => `${k} ${fmtMs(median(r.map((s) => s.cpu[k])))}`).join(' · ')}`)
    console.log(`  every task, bench's own too ${stat(all)}`)
    // The other threads' CPU a step causes (compositor, raster, viz…): they share the cores with the main thread.
    const others = [...otherThreads.entries()].map(([name, ms]) => ({ name, ms: ms.slice(0, steps) })).filter((t) => median(t.ms) >= 0.1)
    others.sort((a, b) => median(b.ms) - median(a.ms))
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
    console.log(`  other threads' CPU per step (p50, mean; the bench's input and probes included):`)
    for (const t of others) console.log(`    ${t.name.padEnd(40)} ${fmtMs(median(t.ms)).padStart(9)} ${fmtMs(mean(t.ms)).padStart(9)}`)
    measure({ name: 'release (pointer up → the screen rendered), main-thread work', value: release.mainMs, unit: 'ms' })
    measure({ name: 'release, main-thread CPU time', value: release.cpu.total, unit: 'ms' })
    console.log(
      `  release (pointer up → screen rendered): ${fmtMs(release.mainMs)} (CPU ${fmtMs(release.cpu.total)}: ${kinds.map((k) => `${k} ${fmtMs(release.cpu[k])}`).join(' · ')})`,
    )
    console.log(`  input → painted per step    ${stat(paint)}`)
    console.log(`  engine re-rank (page-reported, ${rerank.length} updates)  ${rerank.length ? stat(rerank) : 'not shown'}`)
    const long = await page.evaluate<number[]>('window.__longTasks')
    measure({ name: 'long tasks (> 50 ms) during the drag', value: long.length, unit: 'count' })
    console.log(`  long tasks (> 50 ms) during the drag: ${long.length}${long.length ? ` (${long.map((x) => x.toFixed(0)).join(', ')} ms)` : ''}`)
    console.log(`  per step (main ms / painted ms): ${r.map((s) => `${s.mainMs.toFixed(1)}/${s.paintMs.toFixed(1)}`).join('  ')}`)
    console.log(`  per step, CPU ms: ${r.map((s) => `${s.cpu.total.toFixed(1)}${s.settles ? '*' : ''}`).join('  ')}`)
    const rested = r.filter((s) => s.settles > 0).length
    console.log(
      `  steps with a render of the screen (* above: the drag rested ≥ ${DRAG_REST_MS} ms before it, under load): ${rested}; the release rendered it ${release.settles} time(s)`,
    )
    if (process.argv.includes('--profile'))
      for (const [i, s] of r.entries())
        console.log(
          `    step ${String(i).padStart(2)}: ${fmtMs(s.mainMs).padStart(9)} = ${kinds.map((k) => `${k} ${s.work[k].toFixed(1)}`).join(' + ')}; ${s.work.dirtyObjects} laid out`,
        )
  } finally {
    await context.close()
    await srv.stop()
    fs.rmSync(profile, { recursive: true, force: true })
    fs.rmSync(home, { recursive: true, force: true })
  }
}

/** True when out/ holds a renderer built after the last change under src/ (building it when not, except in smoke mode). */
function ensureBuilt(): boolean {
  if (isBuildFresh()) return true
  if (SMOKE) return false
  console.log('building the app (out/ is missing or older than src/)…')
  const b = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' })
  if (b.status !== 0) throw new Error('npm run build failed')
  return true
}

/** True when out/ holds a renderer built after the last change under src/ (test files aside). */
export function isBuildFresh(): boolean {
  const index = path.join(ROOT, 'out/renderer/index.html')
  return fs.existsSync(index) && fs.statSync(index).mtimeMs >= newestMtime(path.join(ROOT, 'src'))
}

function newestMtime(dir: string): number {
  let m = 0
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile() && !/\.test\.tsx?$/.test(e.name)) m = Math.max(m, fs.statSync(path.join(e.parentPath, e.name)).mtimeMs)
  return m
}

/** `recallscope serve` on `db`, its URL once it prints it. */
async function serve(db: string, home: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin/recallscope.cjs'), 'serve', '--json', '--db', db], {
    cwd: ROOT,
    env: { ...process.env, RECALLSCOPE_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  proc.stderr.on('data', (d) => (err += d))
  const url = await new Promise<string>((resolve, reject) => {
    let buf = ''
    proc.stdout.on('data', (d) => {
      buf += d
      const line = buf.split('\n').find((l) => l.startsWith('{'))
      if (line) resolve((JSON.parse(line) as { url: string }).url)
    })
    proc.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)))
  })
  return {
    url,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM')
        await new Promise((r) => proc.once('exit', r))
      }
    },
  }
}

/**
 * Installed in the page before the drag (page JavaScript, a string: this file is compiled without the DOM's
 * types): long tasks; the page's own re-rank time as it shows it after each step (read there: a query from
 * the bench per step would add its own main-thread work to the steps); and input → the end of the frame
 * that paints it (the first rAF after the input runs in that frame, and a message posted from it is handled
 * after the frame's work and paint).
 */
const PAGE_PROBES = `(() => {
  window.__longTasks = []
  window.__paint = []
  window.__rerank = []
  const status = document.querySelector('[data-testid="rerank-status"]')
  new MutationObserver(() => window.__rerank.push(status.textContent || '')).observe(status, { childList: true, characterData: true, subtree: true })
  new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__longTasks.push(e.duration))).observe({ type: 'longtask' })
  document.addEventListener('input', (ev) => {
    const t0 = ev.timeStamp
    requestAnimationFrame(() => {
      const ch = new MessageChannel()
      ch.port1.onmessage = () => window.__paint.push(performance.now() - t0)
      ch.port2.postMessage(0)
    })
  }, true)
})()`

interface Step {
  /** the app's main-thread work for the step (bench/uiTrace.ts) */
  mainMs: number
  work: StepWork
  /** the same in thread (CPU) time */
  cpu: StepWork
  paintMs: number
  rerankMs: number | null
  /** renders of the screen with the drag's state within the step (a rest of the drag), or at the release */
  settles: number
}

/**
 * Drag the slider named `name` with the mouse from 20 % to 80 % of its track in `steps` moves, one move per
 * step, waiting after each for the page to settle. Chromium traces the renderer meanwhile; each step's
 * main-thread work is the sum of the renderer main thread's top-level tasks between its mark and the next.
 */
async function dragSlider(page: Page, name: string, steps: number): Promise<{ steps: Step[]; release: Step; otherThreads: Map<string, number[]> }> {
  const slider = page.getByRole('slider', { name, exact: true })
  await slider.scrollIntoViewIfNeeded()
  const box = (await slider.boundingBox())!
  await page.evaluate(PAGE_PROBES)
  const cdp = await page.context().newCDPSession(page)
  // The trace is kept in the browser and read once the drag is over (ReturnAsStream): sent while it runs
  // (ReportEvents), its chunks cost the browser and this process CPU during the steps it measures, on 2 cores.
  await cdp.send('Tracing.start', { categories: 'toplevel,blink.user_timing,devtools.timeline', transferMode: 'ReturnAsStream' })
  // `--profile`: where the steps' time goes, by function (self time), from a CPU profile of the drag.
  const profile = process.argv.includes('--profile')
  if (profile) {
    await cdp.send('Profiler.enable')
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 })
    await cdp.send('Profiler.start')
  }
  const y = box.y + box.height / 2
  const at = (f: number) => box.x + 8 + f * (box.width - 16)
  await page.mouse.move(at(0.2), y)
  await page.mouse.down()
  await settle(page)
  for (let s = 0; s < steps; s++) {
    await page.evaluate((i) => performance.mark(`bench-step-${i}`), s)
    await page.mouse.move(at(0.2 + (0.6 * (s + 1)) / steps), y)
    await settle(page)
  }
  await page.evaluate((i) => performance.mark(`bench-step-${i}`), steps)
  // The release: the slider let go, and the screen's render of the state the drag left (its own figure: the steps
  // are shown without a render of the screen, the release renders it; docs/internals/performance.md, "Round 5: a held slider without React").
  await page.mouse.up()
  await settle(page)
  await page.evaluate((i) => performance.mark(`bench-step-${i}`), steps + 1)
  if (profile) {
    const cpu = ((await cdp.send('Profiler.stop')) as { profile: CpuProfile }).profile
    printProfile(cpu)
    // `--cpuprofile=FILE`: the drag's CPU profile, for DevTools' Performance panel (Load profile…).
    const cpuFile = process.argv.find((a) => a.startsWith('--cpuprofile='))?.slice('--cpuprofile='.length)
    if (cpuFile) fs.writeFileSync(cpuFile, JSON.stringify(cpu))
  }
  const done = new Promise<{ stream?: string }>((r) => cdp.once('Tracing.tracingComplete', r))
  await cdp.send('Tracing.end')
  const { stream } = await done
  let json = ''
  for (let eof = false; !eof;) {
    const chunk = await cdp.send('IO.read', { handle: stream!, size: 1 << 20 })
    json += chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString('utf8') : chunk.data
    eof = chunk.eof
  }
  await cdp.send('IO.close', { handle: stream! })
  const parsed = JSON.parse(json) as { traceEvents?: TraceEvent[] } | TraceEvent[]
  const events = Array.isArray(parsed) ? parsed : (parsed.traceEvents ?? [])
  const paint = await page.evaluate<number[]>('window.__paint')
  const shown = await page.evaluate<string[]>('window.__rerank')
  const rerank = shown.map((t) => /re-ranked locally in ([\d.]+) ms/.exec(t)).map((m) => (m ? Number(m[1]) : null))
  // The app's scripts are the served bundle's (`/assets/…`); the bench's own are evaluated without a URL.
  const isApp = (url: string) => url.includes('/assets/')
  const work = stepWork(events, steps + 1, isApp)
  const cpu = stepWork(events, steps + 1, isApp, 'thread')
  if (profile) printTraceBreakdown(events)
  // `--trace=FILE`: the drag's Chromium trace, for DevTools' Performance panel (Load profile…) or chrome://tracing.
  const traceFile = process.argv.find((a) => a.startsWith('--trace='))?.slice('--trace='.length)
  if (traceFile) {
    fs.writeFileSync(traceFile, JSON.stringify({ traceEvents: events }))
    console.log(`  trace written to ${traceFile}`)
  }
  // The renders of the screen with the drag's state (dragFastPath.ts marks each): at a rest (a step more than
  // DRAG_REST_MS after the last) or at the release. Counted per step: such a render is inside that step's figure.
  const marks = events.filter((e) => /^bench-step-\d+$/.test(e.name)).map((e) => e.ts)
  const settles = events.filter((e) => e.name === SETTLE_MARK).map((e) => e.ts)
  const settledIn = (i: number) => settles.filter((t) => t >= marks[i] && t < marks[i + 1]).length
  const all = work.map((w, i) => ({ mainMs: w.total, work: w, cpu: cpu[i], paintMs: paint[i] ?? NaN, rerankMs: rerank[i] ?? null, settles: settledIn(i) }))
  return { steps: all.slice(0, steps), release: all[steps], otherThreads: otherThreadsCpu(events, steps + 1) }
}

/** Until two frames have passed and the task queue has drained once more (a render scheduled by an input has run). */
async function settle(page: Page): Promise<void> {
  await page.evaluate(`new Promise((resolve) =>
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        const ch = new MessageChannel()
        ch.port1.onmessage = () => setTimeout(resolve, 30)
        ch.port2.postMessage(0)
      })))`)
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[]
  samples: number[]
  timeDeltas: number[]
}

/** The 15 functions with the most self time in the profile. */
function printProfile(p: CpuProfile): void {
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const self = new Map<string, number>()
  p.samples.forEach((id, i) => {
    const f = byId.get(id)!.callFrame
    const key = `${f.functionName || '(anonymous)'} ${path.basename(f.url)}:${f.lineNumber}`
    self.set(key, (self.get(key) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000)
  })
  console.log('  profile, self time:')
  for (const [k, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`    ${fmtMs(ms).padStart(9)}  ${k}`)
}

/** Main-thread time by trace event (style, layout, paint, script…) over the drag: self time of the nested slices. */
function printTraceBreakdown(events: TraceEvent[]): void {
  const mark = events.find((e) => e.name === 'bench-step-0')
  if (!mark) return
  const mine = events.filter((e) => e.pid === mark.pid && e.tid === mark.tid && e.ph === 'X' && e.ts >= mark.ts && e.dur !== undefined)
  const by = new Map<string, number>()
  for (const e of mine) by.set(e.name, (by.get(e.name) ?? 0) + e.dur! / 1000)
  console.log('  trace, total time by event (nested slices overlap):')
  for (const [k, ms] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`    ${fmtMs(ms).padStart(9)}  ${k}`)
}
