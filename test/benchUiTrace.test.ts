/**
 * The slider bench's reading of a Chromium trace (bench/uiTrace.ts): what counts as the app's work for a drag
 * step and what is the bench's own (docs/internals/performance.md, "Recall sliders"). Built from a hand-made
 * trace whose every slice is known, so each figure below is the sum of the slices it should hold.
 */
import { describe, expect, it } from 'vitest'
import { stepWork, type TraceEvent } from '../bench/uiTrace'

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
})
