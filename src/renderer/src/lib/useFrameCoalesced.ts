/**
 * A setter that applies at most once per animation frame: a slider dragged fires input events faster
 * than the screen refreshes (several per frame on a fast mouse), and each applied value costs a re-rank
 * and a render. The value is applied inside the frame's requestAnimationFrame callback, synchronously
 * (flushSync), so it is painted in that same frame. Values given within one frame are combined by
 * `combine` (the last one wins without it; for updater functions, compose them so no edit is lost).
 *
 * Only a continuous event's value waits for the frame (any event of a range input, `input` as a text field
 * fires while it changes, pointer and wheel moves); any other (a checkbox's click, a select's change, a call
 * from no event) is applied at once, with a value still pending before it. A controlled checkbox or select shows
 * React's last state until React renders again: waiting for the frame, a click would show the box unticked,
 * ticked again, then unticked (and a test that reads it right after the click, ticked).
 * docs/internals/performance.md ("Recall sliders") has the numbers.
 */
import { useCallback, useEffect, useLayoutEffect, useRef } from 'react'
import { flushSync } from 'react-dom'

const CONTINUOUS = new Set(['input', 'pointermove', 'mousemove', 'touchmove', 'wheel'])

/** Whether the event being dispatched (if any) fires many times while one control changes. */
function inContinuousEvent(): boolean {
  const ev = typeof window === 'undefined' ? undefined : window.event
  if (ev === undefined) return false
  const t = ev.target
  return CONTINUOUS.has(ev.type) || (t instanceof HTMLInputElement && t.type === 'range')
}

export function useFrameCoalesced<T>(apply: (value: T) => void, combine?: (earlier: T, later: T) => T): (value: T) => void {
  const latest = useRef({ apply, combine })
  useLayoutEffect(() => {
    latest.current = { apply, combine }
  })
  const pending = useRef<{ value: T } | null>(null)
  const frame = useRef(0)
  useEffect(() => () => cancelAnimationFrame(frame.current), [])
  return useCallback((value: T) => {
    const c = latest.current.combine
    pending.current = { value: pending.current && c ? c(pending.current.value, value) : value }
    if (!inContinuousEvent()) {
      cancelAnimationFrame(frame.current)
      frame.current = 0
      const p = pending.current
      pending.current = null
      latest.current.apply(p.value)
      return
    }
    if (frame.current) return
    frame.current = requestAnimationFrame(() => {
      frame.current = 0
      const p = pending.current
      pending.current = null
      if (p) flushSync(() => latest.current.apply(p.value))
    })
  }, [])
}
