import { useEffect, useRef, useState, type ReactNode } from 'react'

/**
 * A screen's side pane. Beside the main column when there is room; when the
 * shell folds the panes (`.panes-collapsed`, see app/panes.ts) it is a narrow
 * tab at the edge that opens as a drawer over the main column, so the main
 * column keeps its width. CSS decides which of the two shows: the same markup
 * serves both, and nothing unmounts when the window is resized.
 *
 * The drawer opens on its tab, or when `openOn` changes to a non-empty value
 * (e.g. a row was picked whose detail this pane shows); Escape or × closes it
 * and gives focus back to the tab.
 */
export function SidePane({
  className,
  label,
  side,
  openOn,
  children,
}: {
  className: string
  /** the pane's name: its aria-label and the tab's text */
  label: string
  side: 'left' | 'right'
  openOn?: string | null
  children: ReactNode
}) {
  // Arriving with a pick (e.g. a deep link to a memory), the drawer starts open.
  const [open, setOpen] = useState(!!openOn)
  const [seen, setSeen] = useState(openOn)
  // React's "adjust state when a value changes" pattern: a new pick opens the drawer, no effect needed.
  if (openOn !== seen) {
    setSeen(openOn)
    if (openOn) setOpen(true)
  }
  const tab = useRef<HTMLButtonElement>(null)
  const close = useRef<HTMLButtonElement>(null)
  const wasOpen = useRef(false)
  useEffect(() => {
    // Focus follows the drawer only when it is one (the tab is visible when folded); beside the main column nothing moves.
    const folded = !!tab.current && tab.current.offsetParent !== null
    if (open && !wasOpen.current && close.current?.offsetParent) close.current.focus()
    if (!open && wasOpen.current && folded) tab.current?.focus()
    wasOpen.current = open
    if (!open) return
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented) setOpen(false)
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [open])
  return (
    <aside className={`${className} side-pane side-${side}`} data-open={open} aria-label={label}>
      <button ref={tab} type="button" className="side-tab" aria-expanded={open} onClick={() => setOpen(true)}>
        {label}
      </button>
      <button ref={close} type="button" className="side-close" aria-label={`Close ${label}`} title="Close (Esc)" onClick={() => setOpen(false)}>
        ×
      </button>
      <div className="side-body">{children}</div>
    </aside>
  )
}
