/**
 * A setter that applies at most once per animation frame: a slider dragged fires input events faster
 * than the screen refreshes (several per frame on a fast mouse), and each applied value costs a re-rank
 * and a render. The value is applied inside the frame's requestAnimationFrame callback, synchronously
 * (flushSync), so it is painted in that same frame. Values given within one frame are combined by
 * `combine` (the last one wins without it; for updater functions, compose them so no edit is lost).
 * docs/internals/performance.md ("Recall sliders") has the numbers.
 */
import { useCallback, useEffect, useLayoutEffect, useRef } from 'react'
import { flushSync } from 'react-dom'

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
    if (frame.current) return
    frame.current = requestAnimationFrame(() => {
      frame.current = 0
      const p = pending.current
      pending.current = null
      if (p) flushSync(() => latest.current.apply(p.value))
    })
  }, [])
}
