import { useEffect, useRef, useState } from 'react'

/**
 * Open/close state for a popover: a click outside `ref` or Escape closes it.
 * Escape gives focus back to the popover's trigger (the first button in `ref`).
 * While open, focus moves into the popover's `[role="dialog"]` panel, if it has one.
 */
export function usePopover<T extends HTMLElement = HTMLDivElement>() {
  const [open, setOpen] = useState(false)
  const ref = useRef<T>(null)
  useEffect(() => {
    if (!open) return
    const root = ref.current
    const panel = root?.querySelector<HTMLElement>('[role="dialog"]')
    const target = panel?.querySelector<HTMLElement>('button:not([disabled]), input, select, textarea, [href]')
    if (panel) (target ?? Object.assign(panel, { tabIndex: -1 })).focus()
    const close = (e: MouseEvent) => root && !root.contains(e.target as Node) && setOpen(false)
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return
      // Handled here: an outer layer (a side drawer) must not close as well.
      e.preventDefault()
      e.stopPropagation()
      setOpen(false)
      root?.querySelector<HTMLElement>('button')?.focus()
    }
    document.addEventListener('mousedown', close)
    document.addEventListener('keydown', onKey, true)
    return () => {
      document.removeEventListener('mousedown', close)
      document.removeEventListener('keydown', onKey, true)
    }
  }, [open])
  return { open, setOpen, ref }
}
