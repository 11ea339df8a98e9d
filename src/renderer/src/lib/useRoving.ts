import { useRef, useState, type KeyboardEvent } from 'react'

/**
 * Roving focus for a list of items (a listbox of cards): the list is one Tab
 * stop, and ↑/↓ (also ←/→), Home/End move between items. The item that last
 * had focus keeps the tab stop, so Tab back into the list lands where you were.
 *
 * `itemProps(i)` goes on each item; `start` is where the tab stop starts (e.g.
 * the selected item), used until the user moves.
 */
export function useRoving(count: number, start = 0) {
  const [moved, setMoved] = useState<number | null>(null)
  const refs = useRef<(HTMLElement | null)[]>([])
  const active = Math.max(0, Math.min(moved ?? start, count - 1))
  const itemProps = (i: number) => ({
    tabIndex: i === active ? 0 : -1,
    ref: (el: HTMLElement | null) => {
      refs.current[i] = el
    },
    onFocus: () => setMoved(i),
    onKeyDown: (e: KeyboardEvent<HTMLElement>) => {
      const to =
        e.key === 'ArrowDown' || e.key === 'ArrowRight'
          ? i + 1
          : e.key === 'ArrowUp' || e.key === 'ArrowLeft'
            ? i - 1
            : e.key === 'Home'
              ? 0
              : e.key === 'End'
                ? count - 1
                : null
      if (to === null) return
      e.preventDefault()
      const n = Math.max(0, Math.min(to, count - 1))
      setMoved(n)
      refs.current[n]?.focus()
    },
  })
  return { itemProps, active }
}
