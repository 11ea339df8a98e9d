/**
 * Hash routes: `#/<screen>?key=value&…`. The hash is the one source of where the
 * user is, so a reload restores the screen and its selection, a link can be
 * shared, and the window's back/forward walk the history.
 *
 * Own writes use history.pushState/replaceState (which fire no event); a
 * `popstate` or `hashchange` means the user went back/forward or edited the
 * address, and is reported to the listener. No dependency: the two events and
 * URLSearchParams are all it takes.
 */

/** A screen's parameters; undefined and '' are left out of the URL. */
export type RouteParams = Record<string, string | undefined>

export interface Location {
  /** the screen, '' when the hash names none */
  route: string
  params: RouteParams
}

/** Parse `#/recall?query=a%20b&preset=neo` (leading `#` optional). Unknown shapes give route ''. */
export function parseHash(hash: string): Location {
  const h = hash.replace(/^#/, '')
  if (!h.startsWith('/')) return { route: '', params: {} }
  const q = h.indexOf('?')
  const route = decodeURIComponent(h.slice(1, q < 0 ? undefined : q)).replace(/\/+$/, '')
  const params: RouteParams = {}
  if (q >= 0) for (const [k, v] of new URLSearchParams(h.slice(q + 1))) if (v !== '') params[k] = v
  return { route, params }
}

/** The hash for a screen and its parameters, keys in a stable order so equal states give equal URLs. */
export function formatHash(route: string, params: RouteParams = {}): string {
  const sp = new URLSearchParams()
  for (const k of Object.keys(params).sort()) {
    const v = params[k]
    if (v !== undefined && v !== '') sp.set(k, v)
  }
  const qs = sp.toString()
  return `#/${encodeURIComponent(route)}${qs ? `?${qs}` : ''}`
}

/**
 * A params patch as a string, for a view that writes its state to the URL after a pause (an effect keyed
 * on the string). A parameter set to undefined (back to its default) is kept as '' — JSON.stringify would
 * drop the key, and a patch without it would leave the old value in the URL. `parsePatch` reads it back.
 */
export function serializePatch(patch: RouteParams): string {
  return JSON.stringify(patch, (_k, v: unknown) => (v === undefined ? '' : v))
}

/** A `serializePatch` string as the patch again: '' is undefined (the parameter is removed, never kept as ''). */
export function parsePatch(s: string): RouteParams {
  const out: RouteParams = {}
  for (const [k, v] of Object.entries(JSON.parse(s) as Record<string, string>)) out[k] = v === '' ? undefined : v
  return out
}

/** The current window's location as a route. */
export function readLocation(): Location {
  return parseHash(window.location.hash)
}

/**
 * Write a route to the address bar: a new history entry (`push`), or in place
 * (`replace`, for edits such as typing that should not each be a back step).
 * Returns false when the URL was already that (nothing written).
 */
export function writeLocation(loc: Location, mode: 'push' | 'replace'): boolean {
  const hash = formatHash(loc.route, loc.params)
  if (hash === window.location.hash) return false
  const url = window.location.pathname + window.location.search + hash
  if (mode === 'push') history.pushState(null, '', url)
  else history.replaceState(null, '', url)
  return true
}

/** Call `onChange` when the user moves through history or edits the hash; returns the unsubscribe. */
export function listenLocation(onChange: (loc: Location) => void): () => void {
  const fire = () => onChange(readLocation())
  window.addEventListener('popstate', fire)
  window.addEventListener('hashchange', fire)
  return () => {
    window.removeEventListener('popstate', fire)
    window.removeEventListener('hashchange', fire)
  }
}

/**
 * In the desktop app the window has no back/forward buttons: Alt+←/→ (and the
 * mouse's back/forward buttons) walk the history, as in a browser. A browser
 * does this itself, so this is only installed in Electron.
 */
export function installHistoryKeys(): () => void {
  const go = (e: Event, step: -1 | 1) => {
    e.preventDefault()
    if (step < 0) history.back()
    else history.forward()
  }
  const onKey = (e: KeyboardEvent) => {
    if (!e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return
    if (e.key === 'ArrowLeft') go(e, -1)
    else if (e.key === 'ArrowRight') go(e, 1)
  }
  const onMouse = (e: MouseEvent) => {
    if (e.button === 3) go(e, -1)
    else if (e.button === 4) go(e, 1)
  }
  window.addEventListener('keydown', onKey)
  window.addEventListener('mouseup', onMouse)
  return () => {
    window.removeEventListener('keydown', onKey)
    window.removeEventListener('mouseup', onMouse)
  }
}
