/**
 * A value shown as it changes, except within a burst of changes (a slider drag): then the value shown last stays,
 * marked `pending`, until the changes have rested for `ms`, and the latest is shown then. The first change after
 * a rest is shown at once (in the same frame), so a single edit (a click, a new query) is never delayed. For
 * output that costs more to lay out and paint than a drag step may spend, and that nobody reads mid-drag
 * (docs/internals/performance.md, "Recall sliders").
 */
import { useLayoutEffect, useRef, useState } from 'react'
import { useQuietTimer } from './quietTimer'

export function useRestingValue<T>(value: T, ms: number): { shown: T; pending: boolean } {
  const [shown, setShown] = useState(value)
  const timer = useQuietTimer(ms)
  const latest = useRef(value)
  const lastChange = useRef(-Infinity)
  useLayoutEffect(() => {
    if (Object.is(latest.current, value)) return
    latest.current = value
    const now = performance.now()
    const resting = now - lastChange.current >= ms
    lastChange.current = now
    if (resting) setShown(value)
    else timer.poke(() => setShown(latest.current))
  }, [value, ms, timer])
  return { shown, pending: !Object.is(shown, value) }
}
