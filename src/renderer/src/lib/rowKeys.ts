import type { KeyboardEvent } from 'react'

/**
 * Props that make a clickable table row reachable by Tab and opened with Enter
 * (or Space), like the button it stands for. Spread onto the <tr>; nothing when
 * there is no action (the row stays out of the tab order).
 */
export function rowKeys(onOpen: (() => void) | undefined): { tabIndex?: number; onKeyDown?: (e: KeyboardEvent<HTMLElement>) => void } {
  if (!onOpen) return {}
  return {
    tabIndex: 0,
    onKeyDown: (e) => {
      // Only the row itself: Enter on a button inside it is that button's.
      if (e.target !== e.currentTarget) return
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault()
        onOpen()
      }
    },
  }
}
