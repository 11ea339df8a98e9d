/**
 * The only module that knows how the renderer reaches main: the preload bridge
 * (`window.recallscope`, Electron) when present, else the loopback HTTP bridge
 * (browser mode) with the per-run token from the URL fragment.
 */
import type { JobProgress, RecallscopeApi } from '../../../shared/api'
import type { Channel, Input, Output } from '../../../shared/contract'
import type { Result, ResultError } from '../../../shared/result'

declare global {
  interface Window {
    recallscope?: RecallscopeApi
  }
}

const TOKEN_KEY = 'recallscope.token'

/**
 * Read `#token=…` once and take it out of the address bar. The rest of the hash stays: a route
 * (`#/recall?…&token=…`, lib/router.ts) opens that screen. The token is kept for this tab
 * (sessionStorage) and for this browser (localStorage, same origin = same server address), so a
 * link copied from one tab opens in another tab of the same browser. A server started again gets a
 * new token: the stale one is then refused and the page says how to get the new one
 * (isTokenError).
 */
function httpToken(): string {
  const re = /([#&?])token=([^&]+)&?/
  const m = re.exec(window.location.hash)
  if (m) {
    const token = decodeURIComponent(m[2])
    sessionStorage.setItem(TOKEN_KEY, token)
    try {
      localStorage.setItem(TOKEN_KEY, token)
    } catch {
      /* storage disabled: this tab still works */
    }
    const rest = window.location.hash.replace(re, '$1').replace(/[?&]$/, '')
    history.replaceState(null, '', window.location.pathname + window.location.search + (rest === '#' ? '' : rest))
  }
  let stored: string | null = null
  try {
    stored = localStorage.getItem(TOKEN_KEY)
  } catch {
    /* storage disabled */
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? stored ?? ''
}

/** A call refused for its token (none, or one of an earlier server run): forget it so the next link's token is used. */
export function isTokenError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code
  const msg = e instanceof Error ? e.message : ''
  if (code !== 'FORBIDDEN' || !/token/i.test(msg)) return false
  sessionStorage.removeItem(TOKEN_KEY)
  try {
    localStorage.removeItem(TOKEN_KEY)
  } catch {
    /* storage disabled */
  }
  return true
}

function createHttpApi(): RecallscopeApi {
  const token = httpToken()
  const call = async (channel: string, input: unknown): Promise<Result<unknown>> => {
    try {
      const res = await fetch(`/api/${channel}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(input ?? {}),
      })
      return (await res.json()) as Result<unknown>
    } catch (e) {
      return { ok: false, error: { code: 'INTERNAL', message: `The recallscope server is not answering (${(e as Error).message})` } }
    }
  }
  const listeners = new Set<(p: JobProgress) => void>()
  let streaming = false
  const stream = async () => {
    if (streaming) return
    streaming = true
    for (;;) {
      try {
        const res = await fetch('/api/progress', { headers: { authorization: `Bearer ${token}` } })
        const reader = res.body!.getReader()
        const dec = new TextDecoder()
        let buf = ''
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          buf += dec.decode(value, { stream: true })
          let i
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const frame = buf.slice(0, i)
            buf = buf.slice(i + 2)
            if (frame.startsWith('data: ')) {
              const p = JSON.parse(frame.slice(6)) as JobProgress
              for (const l of listeners) l(p)
            }
          }
        }
      } catch {
        /* server restarting: retry below */
      }
      await new Promise((r) => setTimeout(r, 2000))
    }
  }
  return new Proxy({} as RecallscopeApi, {
    get(_t, key: string) {
      if (key === 'onJobProgress')
        return (l: (p: JobProgress) => void) => {
          listeners.add(l)
          void stream()
          return () => listeners.delete(l)
        }
      return (input: unknown) => call(key, input)
    },
  })
}

/** The HTTP bridge, made at load in browser mode: it takes the token out of the address bar at once. */
let httpApi: RecallscopeApi | null = typeof window !== 'undefined' && window.recallscope ? null : createHttpApi()

/**
 * The bridge to main: the preload's (Electron) when there is one, else the HTTP one. Read on each use, not kept from
 * load: the preload defines it before the page's first script, so in the app the answer never changes, and the
 * renderer tests give each file its own fake preload bridge while their files share one module registry
 * (docs/internals/testing.md, "Isolation").
 */
export function getBridge(): RecallscopeApi {
  return window.recallscope ?? (httpApi ??= createHttpApi())
}

/** `electron` with the preload's bridge, `browser` over the loopback HTTP bridge. */
export function getBridgeMode(): 'electron' | 'browser' {
  return window.recallscope ? 'electron' : 'browser'
}

/** An error from main, with its stable code. */
class ApiError extends Error {
  override name = 'ApiError'
  constructor(readonly error: ResultError) {
    super(error.message)
  }
  get code() {
    return this.error.code
  }
}

/** Call a channel and unwrap its Result (throws ApiError). */
export async function call<C extends Channel>(channel: C, input: Input<C>): Promise<Output<C>> {
  const fn = getBridge()[channel] as (i: Input<C>) => Promise<Result<Output<C>>>
  const r = await fn(input)
  if (!r.ok) throw new ApiError(r.error)
  return r.data
}
