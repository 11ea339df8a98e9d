/**
 * The slider bench's reading of a Chromium trace (bench/uiTrace.ts): what counts as the app's work for a drag
 * step and what is the bench's own (docs/internals/performance.md, "Recall sliders"). Built from a hand-made
 * trace whose every slice is known, so each figure below is the sum of the slices it should hold.
 */
import { describe, expect, it } from 'vitest'
import { otherThreadsCpu, stepWork, type TraceEvent } from '../bench/uiTrace'

const MAIN = { pid: 1, tid: 7 }
const APP = 'http://127.0.0.1:4000/assets/RecallView-abc.js'
/** A complete slice on the main thread: `at` and `ms` in milliseconds (traces count µs). */
const slice = (name: string, at: number, ms: number, args?: Record<string, unknown>): TraceEvent => ({
  name,
  ph: 'X',
  ts: at * 1000,
  dur: ms * 1000,
  ...MAIN,
  ...(args ? { args } : {}),
})
const mark = (i: number, at: number): TraceEvent => ({ name: `bench-step-${i}`, ph: 'R', ts: at * 1000, ...MAIN })
const call = (at: number, ms: number, url: string) => slice('FunctionCall', at, ms, { data: { url, functionName: '' } })
const isApp = (url: string) => url.includes('/assets/')

describe("a step's main-thread work", () => {
  it("counts the app's tasks by kind and leaves out the bench's scripts and the tasks that are only the bench's", () => {
    const events: TraceEvent[] = [
      mark(0, 0),
      // The step's frame: input, the app's animation-frame callback (with the bench's probe inside the frame),
      // style, layout of 40 objects, paint.
      slice('ThreadControllerImpl::RunTask', 1, 20),
      slice('EventDispatch', 1.5, 1, { data: { type: 'input' } }),
      call(1.6, 0.5, APP),
      slice('FireAnimationFrame', 3, 9),
      call(3, 6, APP),
      call(9.5, 2, ''),
      slice('UpdateLayoutTree', 12, 2),
      slice('Layout', 14, 3, { beginData: { dirtyObjects: 40 } }),
      slice('PrePaint', 17, 1),
      slice('Paint', 18, 1.5),
      // The bench's settle: its own timer, a frame with nothing to draw, a CDP message.
      slice('ThreadControllerImpl::RunTask', 30, 2),
      slice('TimerFire', 30.1, 1.5),
      call(30.2, 1.2, ''),
      slice('ThreadControllerImpl::RunTask', 40, 0.6),
      slice('PrePaint', 40.1, 0.2),
      slice('Layerize', 40.3, 0.2),
      slice('ThreadControllerImpl::RunTask', 50, 0.8),
      slice('Receive mojo message', 50, 0.7),
      // A scavenge the step's allocations set off.
      slice('ThreadControllerImpl::RunTask', 60, 4),
      slice('MinorGC', 60, 3.5),
      mark(1, 100),
      // Step 1: the app's work deferred to a timer still counts.
      slice('ThreadControllerImpl::RunTask', 110, 5),
      slice('TimerFire', 110, 5),
      call(110, 4.5, APP),
      mark(2, 200),
    ]
    const [s0, s1] = stepWork(events, 2, isApp)
    // Step 0: the frame's 20 ms less the bench's 2 ms probe, and the 4 ms scavenge task.
    expect(s0.total).toBeCloseTo(20 - 2 + 4, 9)
    // Script: the input dispatch and its handler (1 ms), the animation frame (9 ms) less the probe (2 ms).
    expect(s0.script).toBeCloseTo(1 + 9 - 2, 9)
    expect(s0.style).toBeCloseTo(2, 9)
    expect(s0.layout).toBeCloseTo(3, 9)
    expect(s0.paint).toBeCloseTo(1 + 1.5, 9)
    expect(s0.gc).toBeCloseTo(3.5, 9)
    // The frame task's own time outside its slices (20 − 1 − 9 − 2 − 3 − 1 − 1.5) and the GC task's (0.5).
    expect(s0.other).toBeCloseTo(2.5 + 0.5, 9)
    expect(s0.dirtyObjects).toBe(40)
    // Every task, the bench's included.
    expect(s0.allTasks).toBeCloseTo(20 + 2 + 0.6 + 0.8 + 4, 9)
    expect(s1.total).toBeCloseTo(5, 9)
    expect(s1.script).toBeCloseTo(5, 9)
  })

  it('refuses a trace without the step marks', () => {
    expect(() => stepWork([mark(0, 0), slice('ThreadControllerImpl::RunTask', 1, 1)], 1, isApp)).toThrow(/mark of step 1/)
    expect(() => stepWork([], 1, isApp)).toThrow(/no step marks/)
  })

  it("sums the other threads' top-level CPU time per step, by process and thread name", () => {
    /** A top-level slice on another thread: `at`, `ms` (wall) and `cpu` (thread time) in milliseconds. */
    const top = (pid: number, tid: number, at: number, ms: number, cpu: number, name = 'ThreadControllerImpl::RunTask'): TraceEvent => ({
      name,
      cat: 'toplevel',
      ph: 'X',
      ts: at * 1000,
      dur: ms * 1000,
      tdur: cpu * 1000,
      pid,
      tid,
    })
    const meta = (name: string, pid: number, tid: number, value: string): TraceEvent => ({ name, ph: 'M', ts: 0, pid, tid, args: { name: value } })
    const events: TraceEvent[] = [
      meta('process_name', 1, 0, 'Renderer'),
      meta('thread_name', 1, 7, 'CrRendererMain'),
      meta('thread_name', 1, 8, 'Compositor'),
      meta('thread_name', 1, 9, 'Worker'),
      meta('thread_name', 1, 10, 'Worker'),
      meta('process_name', 2, 0, 'GPU Process'),
      meta('thread_name', 2, 3, 'VizCompositorThread'),
      mark(0, 0),
      // The main thread's own task: not another thread's.
      slice('ThreadControllerImpl::RunTask', 1, 5),
      // Compositor: a task with a top-level slice inside it (counted once), and a task of its own.
      top(1, 8, 2, 3, 2),
      top(1, 8, 2.5, 1, 0.8, 'Receive mojo message'),
      top(1, 8, 10, 1, 0.5),
      // Two workers of one pool: summed under one name.
      top(1, 9, 3, 2, 1.5, 'TaskGraphRunner::RunTask'),
      top(1, 10, 3, 2, 1.25, 'TaskGraphRunner::RunTask'),
      // A slice not in the toplevel category: not a task.
      { ...top(1, 10, 20, 5, 5, 'RasterTask'), cat: 'cc' },
      // Viz in another process, and a thread without a name.
      top(2, 3, 12, 4, 3),
      top(2, 4, 13, 1, 1),
      mark(1, 100),
      top(1, 8, 110, 2, 1.5),
      top(2, 3, 150, 1, 0.25),
      mark(2, 200),
      // After the last mark: no step's.
      top(1, 8, 210, 9, 9),
    ]
    const got = Object.fromEntries(otherThreadsCpu(events, 2))
    expect(Object.keys(got).sort()).toEqual(['GPU Process/VizCompositorThread', 'GPU Process/tid 4', 'Renderer/Compositor', 'Renderer/Worker'])
    expect(got['Renderer/Compositor'][0]).toBeCloseTo(2 + 0.5, 9)
    expect(got['Renderer/Compositor'][1]).toBeCloseTo(1.5, 9)
    expect(got['Renderer/Worker'][0]).toBeCloseTo(1.5 + 1.25, 9)
    expect(got['Renderer/Worker'][1]).toBe(0)
    expect(got['GPU Process/VizCompositorThread']).toEqual([3, 0.25])
    expect(got['GPU Process/tid 4']).toEqual([1, 0])
  })
})
