/**
 * Runs a function once `ms` have passed without another `poke`: a debounce for edits that come every frame (a slider
 * drag). One timer is armed and re-armed for the time left when it fires, instead of one cleared and set per
 * edit: clearing and setting a timer on every step of a drag cost more main-thread time than the work
 * debounced (docs/internals/performance.md, "Recall sliders").
 */
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
