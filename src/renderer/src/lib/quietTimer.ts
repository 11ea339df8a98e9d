import { useEffect, useState } from 'react'

/**
 * Runs a function once `ms` have passed without another `poke`: a debounce for edits that come every frame (a slider
 * drag). One timer is armed and re-armed for the time left when it fires, instead of one cleared and set per
 * edit: clearing and setting a timer on every step of a drag cost more main-thread time than the work
 * debounced (docs/internals/performance.md, "Recall sliders").
 */
/** Search as you type: the filter follows the box this long after the last key (Enter applies it at once). */
export const SEARCH_QUIET_MS = 250
/** A screen's settings are written to the URL (in place) this long after the edits pause. */
export const URL_WRITE_MS = 250

export interface QuietTimer {
  /** Something changed: run `f` `ms` after now (unless poked again meanwhile: then the later one runs). */
  poke: (f: () => void) => void
  /** Never run (until poked again). */
  cancel: () => void
}

export function createQuietTimer(ms: number): QuietTimer {
  let run = () => undefined as void
  let due = 0
  let armed = false
  let live = false
  const check = () => {
    const wait = due - performance.now()
    if (!live) armed = false
    else if (wait > 1) setTimeout(check, wait)
    else {
      armed = false
      live = false
      run()
    }
  }
  return {
    poke: (f) => {
      run = f
      due = performance.now() + ms
      live = true
      if (armed) return
      armed = true
      setTimeout(check, ms)
    },
    cancel: () => {
      live = false
    },
  }
}

/**
 * A component's quiet timer: made once, cancelled when the component unmounts (a poke from an effect runs
 * `ms` after the last change of that effect's inputs: the URL written after a drag, a search after typing).
 */
export function useQuietTimer(ms: number): QuietTimer {
  const [timer] = useState(() => createQuietTimer(ms))
  useEffect(() => timer.cancel, [timer])
  return timer
}
