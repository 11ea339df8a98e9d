/**
 * The slider bench's reading of a Chromium trace (bench/ui.ts; docs/internals/performance.md, "Recall sliders"):
 * per drag step, the main-thread work the page does for it, split into script, style, layout, paint and GC.
 *
 * A step is the time between its mark and the next. The bench itself runs code in the page between steps (the
 * marks, the settle's frames and timers, the input → painted probe, Playwright's evaluate messages): ~30 small
 * tasks, 5–15 ms a step on a loaded machine, which no user's drag has. So a task counts only when it runs the
 * app's code (a script of the app's bundle, `/assets/`), renders (style, layout, paint) or collects garbage, and
 * inside a counted task the bench's own scripts are taken out. Everything the app does for a step is counted,
 * in the input's frame or after it (a timer, an idle callback, a React task): deferring work does not hide it.
 */

/** A Chromium trace event (the subset read here). */
export interface TraceEvent {
  name: string
  ph: string
  ts: number
  dur?: number
  /** thread (CPU) time of the slice, µs: what the thread ran, without the time it waited for a core */
  tdur?: number
  pid: number
  tid: number
  /** the slice's categories, comma-separated */
  cat?: string
  args?: Record<string, unknown>
}

/** Where main-thread time goes, ms. `bench` is the bench's own work (not part of `total`). */
export interface StepWork {
  /** the app's work for the step: script + style + layout + paint + gc + other */
  total: number
  script: number
  style: number
  layout: number
  /** pre-paint, paint, layerize, commit */
  paint: number
  gc: number
  /** task and input plumbing outside any of the above */
  other: number
  /** every top-level task between the marks, the bench's included (the bench's first figure, kept for comparison) */
  allTasks: number
  /** the DOM objects the step's layouts had to lay out again (sum of `Layout` events' dirtyObjects) */
  dirtyObjects: number
}

const TASK = new Set(['RunTask', 'ThreadControllerImpl::RunTask'])
const STYLE = new Set(['UpdateLayoutTree', 'RecalculateStyles', 'ParseAuthorStyleSheet', 'ScheduleStyleRecalculation'])
const PAINT = new Set(['PrePaint', 'Paint', 'PaintImage', 'Layerize', 'Commit', 'UpdateLayer', 'CompositeLayers', 'UpdateLayerTree'])
const SCRIPT = new Set([
  'FunctionCall',
  'EventDispatch',
  'FireAnimationFrame',
  'TimerFire',
  'FireIdleCallback',
  'EvaluateScript',
  'v8.compile',
  'v8.evaluateModule',
  'RunMicrotasks',
  'BlinkScheduler_PerformMicrotaskCheckpoint',
  'XHRReadyStateChange',
])

type Kind = 'script' | 'style' | 'layout' | 'paint' | 'gc' | 'other'

function kindOf(name: string): Kind {
  if (STYLE.has(name)) return 'style'
  if (name === 'Layout') return 'layout'
  if (PAINT.has(name)) return 'paint'
  if (/GC/.test(name)) return 'gc'
  if (SCRIPT.has(name) || name.startsWith('V8.') || name.startsWith('v8.')) return 'script'
  return 'other'
}

/** The script a FunctionCall / TimerFire… runs: its URL ('' for the bench's evaluated code). */
function scriptUrl(e: TraceEvent): string | null {
  const data = e.args?.data as { url?: unknown } | undefined
  return data && typeof data.url === 'string' ? data.url : null
}

/** The renderer main thread (the thread the step marks were made on), and the marks' times, in order. */
function stepMarks(events: readonly TraceEvent[], steps: number): { pid: number; tid: number; at: number[] } {
  const marks = new Map<number, TraceEvent>()
  for (const e of events) {
    const m = /^bench-step-(\d+)$/.exec(e.name)
    if (m && !marks.has(Number(m[1]))) marks.set(Number(m[1]), e)
  }
  const first = marks.get(0)
  if (!first) throw new Error('the trace holds no step marks')
  const at: number[] = []
  for (let s = 0; s <= steps; s++) {
    const m = marks.get(s)
    if (!m) throw new Error(`the trace lacks the mark of step ${s}`)
    at.push(m.ts)
  }
  return { pid: first.pid, tid: first.tid, at }
}

/**
 * Per step (the time between mark `bench-step-i` and the next): the app's main-thread work, by kind. `isApp`
 * tells the app's scripts from the bench's by URL. `clock` 'wall' sums the slices' durations (what the user
 * waits); 'thread' their CPU time (`tdur`): the same on an idle machine, and on a loaded one without the time
 * the thread waited for a core (comparable between runs at different loads).
 */
export function stepWork(events: readonly TraceEvent[], steps: number, isApp: (url: string) => boolean, clock: 'wall' | 'thread' = 'wall'): StepWork[] {
  const len = (e: TraceEvent) => (clock === 'thread' ? (e.tdur ?? e.dur!) : e.dur!)
  const { pid, tid, at } = stepMarks(events, steps)
  const slices = events
    .filter((e) => e.pid === pid && e.tid === tid && e.ph === 'X' && e.dur !== undefined && e.ts >= at[0] && e.ts < at[steps])
    .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!)
  const out: StepWork[] = Array.from({ length: steps }, () => ({
    total: 0,
    script: 0,
    style: 0,
    layout: 0,
    paint: 0,
    gc: 0,
    other: 0,
    allTasks: 0,
    dirtyObjects: 0,
  }))
  let i = 0
  while (i < slices.length) {
    const task = slices[i]
    if (!TASK.has(task.name)) {
      i++
      continue
    }
    // The task's nested slices, each with its self time and whether it is the bench's (its code or inside it).
    const end = task.ts + task.dur!
    let j = i + 1
    while (j < slices.length && slices[j].ts < end) j++
    const inner = slices.slice(i, j)
    i = j
    const step = at.findIndex((t, s) => s < steps && task.ts >= t && task.ts < at[s + 1])
    if (step < 0) continue
    const w = out[step]
    w.allTasks += len(task) / 1000
    const self = new Map<TraceEvent, number>()
    const bench = new Set<TraceEvent>()
    const stack: TraceEvent[] = []
    let counted = false
    for (const e of inner) {
      while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur! <= e.ts) stack.pop()
      const parent = stack[stack.length - 1]
      if (parent) self.set(parent, self.get(parent)! - len(e))
      self.set(e, len(e))
      const url = scriptUrl(e)
      if ((parent && bench.has(parent)) || (url !== null && !isApp(url))) bench.add(e)
      else if ((url !== null && isApp(url)) || (e !== task && ['style', 'layout', 'gc'].includes(kindOf(e.name))) || e.name === 'Paint') counted = true
      stack.push(e)
    }
    if (!counted) continue
    for (const e of inner) {
      if (bench.has(e)) continue
      const ms = self.get(e)! / 1000
      w[kindOf(e.name)] += ms
      w.total += ms
      if (e.name === 'Layout') w.dirtyObjects += Number((e.args?.beginData as { dirtyObjects?: number } | undefined)?.dirtyObjects ?? 0)
    }
  }
  return out
}

/**
 * Per step, the CPU time (thread time) of every other thread of the browser, by thread name: the renderer's
 * compositor and raster workers, the GPU process's display compositor (viz), the browser's main and IO threads.
 * They share the machine's cores with the renderer's main thread, so a step's work there can delay its main
 * thread (docs/internals/performance.md, "Round 7 (stop 34)"). Read from the top-level slices (category
 * `toplevel`, which the bench's trace records on every thread), a slice inside another on the same thread counted
 * once. Threads of the same name in one process (a pool's workers) are summed; names are `process/thread` as the
 * trace's metadata gives them. Informational: the bench's own input and probes run on some of these threads too.
 */
export function otherThreadsCpu(events: readonly TraceEvent[], steps: number): Map<string, number[]> {
  const { pid, tid, at } = stepMarks(events, steps)
  const processName = new Map<number, string>()
  const threadName = new Map<string, string>()
  for (const e of events) {
    if (e.ph !== 'M') continue
    const name = (e.args as { name?: unknown } | undefined)?.name
    if (typeof name !== 'string') continue
    if (e.name === 'process_name') processName.set(e.pid, name)
    if (e.name === 'thread_name') threadName.set(`${e.pid}:${e.tid}`, name)
  }
  const byThread = new Map<string, TraceEvent[]>()
  for (const e of events) {
    if (e.ph !== 'X' || e.dur === undefined || !(e.cat ?? '').split(',').includes('toplevel')) continue
    if (e.pid === pid && e.tid === tid) continue
    if (e.ts < at[0] || e.ts >= at[steps]) continue
    const key = `${e.pid}:${e.tid}`
    const list = byThread.get(key)
    if (list) list.push(e)
    else byThread.set(key, [e])
  }
  const out = new Map<string, number[]>()
  for (const [key, slices] of byThread) {
    const pidOf = Number(key.split(':')[0])
    const name = `${processName.get(pidOf) ?? `pid ${pidOf}`}/${threadName.get(key) ?? `tid ${key.split(':')[1]}`}`
    let perStep = out.get(name)
    if (!perStep) out.set(name, (perStep = Array.from({ length: steps }, () => 0)))
    slices.sort((a, b) => a.ts - b.ts || b.dur! - a.dur!)
    let end = -Infinity
    for (const e of slices) {
      if (e.ts < end) continue
      end = e.ts + e.dur!
      const step = at.findIndex((t, s) => s < steps && e.ts >= t && e.ts < at[s + 1])
      perStep[step] += (e.tdur ?? e.dur!) / 1000
    }
  }
  return out
}
