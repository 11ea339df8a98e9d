import { useEffect, type RefObject } from 'react'

const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])'

/** The first thing a keyboard user can act on inside `el` (or `el` itself, made focusable). */
function firstFocusable(el: HTMLElement): HTMLElement {
  const f = el.querySelector<HTMLElement>(FOCUSABLE)
  if (f) return f
  if (!el.hasAttribute('tabindex')) el.tabIndex = -1
  return el
}

/**
 * Keyboard behaviour of a modal dialog while it is mounted and `active`: it takes
 * focus when it opens, Tab stays inside it, Escape calls `onClose`, and focus
 * goes back to what had it before (the button that opened it) when it closes.
 *
 * Escape is caught in the capture phase and marked handled (preventDefault), so
 * an outer layer (a side drawer, see components/SidePane.tsx) does not close too.
 */
export function useDialog(ref: RefObject<HTMLElement | null>, onClose: () => void, active = true): void {
  useEffect(() => {
    const el = ref.current
    if (!active || !el) return
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null
    if (!el.contains(document.activeElement)) firstFocusable(el).focus()
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault()
        e.stopPropagation()
        onClose()
      } else if (e.key === 'Tab') {
        const all = [...el.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((x) => x.offsetParent !== null)
        if (!all.length) return
        const first = all[0]
        const last = all[all.length - 1]
        const wrapTo = e.shiftKey ? (document.activeElement === first ? last : null) : document.activeElement === last ? first : null
        if (wrapTo) {
          e.preventDefault()
          wrapTo.focus()
        }
      }
    }
    document.addEventListener('keydown', onKey, true)
    return () => {
      document.removeEventListener('keydown', onKey, true)
      // Back to the opener, unless the user has since put focus somewhere else on purpose.
      if (before && before.isConnected && (!document.activeElement || document.activeElement === document.body || el.contains(document.activeElement)))
        before.focus()
    }
    // onClose is read when a key is pressed; a new function identity each render must not re-run the focus move.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- see above
  }, [ref, active])
}
