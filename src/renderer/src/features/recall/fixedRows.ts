/**
 * The window of a long candidate list that is in the DOM (docs/internals/performance.md, "Recall sliders").
 * Every row has the same fixed height and every cut line too (recall.css), so where a row sits and which rows
 * are in view is arithmetic over the few cut lines: nothing is measured, and a slider step costs the rows in
 * view, not one entry per candidate (a general virtualiser rebuilt its 1,452 measurements on every step).
 */
import { useLayoutEffect, useState, type RefObject } from 'react'
import { flushSync } from 'react-dom'

/** A list of `count` rows of `rowPx`, with cut lines of `cutPx` drawn above some of them. */
export interface FixedRows {
  count: number
  rowPx: number
  cutPx: number
  /** the row each cut line is drawn above, ascending (a row with two lines above it is listed twice) */
  cutsAt: readonly number[]
}

/** Where row `i`'s slot starts: the top of its first cut line, or of the row itself when it has none. */
export function slotStart(g: FixedRows, i: number): number {
  let before = 0
  while (before < g.cutsAt.length && g.cutsAt[before] < i) before++
  return i * g.rowPx + before * g.cutPx
}

/** Where row `i` itself starts (below the cut lines drawn above it). */
export function rowStart(g: FixedRows, i: number): number {
  let through = 0
  while (through < g.cutsAt.length && g.cutsAt[through] <= i) through++
  return i * g.rowPx + through * g.cutPx
}

/** The height of the whole list. */
export function listHeight(g: FixedRows): number {
  return g.count * g.rowPx + g.cutsAt.length * g.cutPx
}

/**
 * The rows that show in a viewport of `height` scrolled to `top`, plus `overscan` either side:
 * first and last index, inclusive (last < first when the list is empty).
 */
export function rowsInView(g: FixedRows, top: number, height: number, overscan: number): { first: number; last: number } {
  if (g.count === 0) return { first: 0, last: -1 }
  // The first row whose bottom is below the top, and the last whose top is above the bottom (binary searches).
  let lo = 0
  let hi = g.count - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (rowStart(g, mid) + g.rowPx > top) hi = mid
    else lo = mid + 1
  }
  const first = lo
  hi = g.count - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (slotStart(g, mid) < top + height) lo = mid
    else hi = mid - 1
  }
  return { first: Math.max(0, first - overscan), last: Math.min(g.count - 1, Math.max(lo, first) + overscan) }
}

/** The scroll offset that brings row `i` fully into view, scrolling as little as possible (none when it is). */
export function scrollToShow(g: FixedRows, i: number, top: number, height: number): number {
  const start = rowStart(g, i)
  if (start < top) return start
  if (start + g.rowPx > top + height) return start + g.rowPx - height
  return top
}

/**
 * The scroll position and height of `ref`'s element while `enabled`, kept current: read when it mounts, on
 * every scroll (rendered in the same frame, so no blank rows show while scrolling) and when it is resized.
 */
export function useScrollBox(ref: RefObject<HTMLElement | null>, enabled: boolean): { top: number; height: number } {
  const [box, setBox] = useState({ top: 0, height: 0 })
  useLayoutEffect(() => {
    const el = ref.current
    if (!enabled || !el) return
    const read = () => setBox((b) => (b.top === el.scrollTop && b.height === el.clientHeight ? b : { top: el.scrollTop, height: el.clientHeight }))
    read()
    const onScroll = () => flushSync(read)
    el.addEventListener('scroll', onScroll, { passive: true })
    const resize = typeof ResizeObserver === 'function' ? new ResizeObserver(read) : null
    resize?.observe(el)
    return () => {
      el.removeEventListener('scroll', onScroll)
      resize?.disconnect()
    }
  }, [ref, enabled])
  return box
}
