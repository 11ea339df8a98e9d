/**
 * A setter that applies at most once per animation frame, with the last value it was given: a slider
 * dragged fires input events faster than the screen refreshes (several per frame on a fast mouse), and
 * each applied value costs a re-rank and a render. The value is applied inside the frame's
 * requestAnimationFrame callback, synchronously (flushSync), so it is painted in that same frame.
 * docs/internals/performance.md ("Recall sliders") has the numbers.
 */
import { useCallback, useEffect, useLayoutEffect, useRef } from 'react'
import { flushSync } from 'react-dom'

export function useFrameCoalesced<T>(apply: (value: T) => void): (value: T) => void {
  const latest = useRef(apply)
  useLayoutEffect(() => {
    latest.current = apply
  })
  const pending = useRef<{ value: T } | null>(null)
  const frame = useRef(0)
  useEffect(() => () => cancelAnimationFrame(frame.current), [])
  return useCallback((value: T) => {
    pending.current = { value }
    if (frame.current) return
    frame.current = requestAnimationFrame(() => {
      frame.current = 0
      const p = pending.current
      pending.current = null
      if (p) flushSync(() => latest.current(p.value))
    })
  }, [])
}
