import { useCallback, useState, useSyncExternalStore } from 'react'

/**
 * Below this width the side panes fold into drawers at the screen's edge, and the
 * section nav becomes a row under the top bar: at 1280 px the fixed panes left
 * the Recall results ~390 px and at 1024 px ~130 px.
 */
const NARROW_QUERY = '(max-width: 1299.98px)'
const KEY = 'recallscope.sidePanes'

type Pref = 'shown' | 'folded'

function subscribe(onChange: () => void): () => void {
  const mq = window.matchMedia(NARROW_QUERY)
  mq.addEventListener('change', onChange)
  return () => mq.removeEventListener('change', onChange)
}

function readPref(): Pref | null {
  try {
    const v = localStorage.getItem(KEY)
    return v === 'shown' || v === 'folded' ? v : null
  } catch {
    return null
  }
}

/**
 * Whether the side panes are folded: the user's last choice (remembered in
 * localStorage), else folded exactly when the window is narrow.
 */
export function usePanes(): { narrow: boolean; collapsed: boolean; toggle: () => void } {
  const narrow = useSyncExternalStore(subscribe, () => window.matchMedia(NARROW_QUERY).matches)
  const [pref, setPref] = useState<Pref | null>(readPref)
  const collapsed = pref ? pref === 'folded' : narrow
  const toggle = useCallback(() => {
    const next: Pref = collapsed ? 'shown' : 'folded'
    try {
      localStorage.setItem(KEY, next)
    } catch {
      /* storage off (private window): the choice lasts for this page only */
    }
    setPref(next)
  }, [collapsed])
  return { narrow, collapsed, toggle }
}
