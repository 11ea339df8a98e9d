/**
 * What the HTTP embedders share: a per-request deadline that really aborts the
 * request, and a way to read the network cause out of whatever `fetch` threw.
 * Each embedder turns these into its own user-facing messages.
 */
import { RecallscopeError } from '../../shared/result'

/** seed 002: Engram gives Ollama 5 s, then falls back to keyword search. */
const DEFAULT_TIMEOUT_MS = 5000

/** Thrown by `withDeadline` when the deadline passed first. */
export class DeadlineError extends Error {
  override name = 'DeadlineError'
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`)
  }
}

/** Validate a timeout option: a positive finite number of milliseconds. */
export function checkTimeout(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_TIMEOUT_MS
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0 || ms > 600_000)
    throw new RecallscopeError('BAD_INPUT', `timeoutMs must be a number of milliseconds in (0, 600000], got ${String(ms)}`)
  return ms
}

/**
 * Run `fn` with a signal that aborts after `timeoutMs` or when `outer` aborts.
 * The race against the abort is deliberate: even if something inside ignores
 * the signal, the caller gets its answer on time (degraded recall must not wait
 * on a stuck socket). Throws DeadlineError on timeout and
 * RecallscopeError('CANCELLED') when the caller cancelled.
 */
export async function withDeadline<T>(timeoutMs: number, outer: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (outer?.aborted) throw new RecallscopeError('CANCELLED', 'Cancelled')
  const ac = new AbortController()
  let timedOut = false
  let rejectEarly: (e: unknown) => void = () => {}
  const early = new Promise<never>((_, reject) => (rejectEarly = reject))
  const timer = setTimeout(() => {
    timedOut = true
    const e = new DeadlineError(timeoutMs)
    ac.abort(e)
    rejectEarly(e)
  }, timeoutMs)
  const onOuterAbort = () => {
    const e = new RecallscopeError('CANCELLED', 'Cancelled')
    ac.abort(e)
    rejectEarly(e)
  }
  outer?.addEventListener('abort', onOuterAbort, { once: true })
  try {
    const work = fn(ac.signal)
    // The losing promise of the race must not surface as an unhandled rejection.
    work.catch(() => {})
    return await Promise.race([work, early])
  } catch (e) {
    if (timedOut) throw new DeadlineError(timeoutMs)
    if (outer?.aborted) throw new RecallscopeError('CANCELLED', 'Cancelled')
    throw e
  } finally {
    clearTimeout(timer)
    outer?.removeEventListener('abort', onOuterAbort)
  }
}

/** One HTTP request with its body read once: the response, the raw text, and the JSON (undefined when the body is not JSON). */
export async function fetchJson(url: string, init: RequestInit): Promise<{ res: Response; text: string; json: unknown }> {
  const res = await fetch(url, init)
  const text = await res.text()
  let json: unknown = undefined
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    /* callers report a non-JSON body with its text */
  }
  return { res, text, json }
}

/** A `fetch` that always uses `signal` (ollama-js 0.6.4 passes no signal for non-streaming calls). */
export function fetchWithSignal(signal: AbortSignal): typeof fetch {
  return (input, init) => fetch(input, { ...init, signal })
}

/**
 * The network cause of a failed fetch, normalised: 'ECONNREFUSED', 'ENOTFOUND',
 * 'ECONNRESET', 'EHOSTUNREACH', 'ETIMEDOUT', … or null when it was not a network error.
 * Node's fetch (undici) throws TypeError('fetch failed') with the system error in
 * `cause`; for `localhost` (IPv4 + IPv6 tried) the cause is an AggregateError
 * whose `errors` hold the codes.
 */
export function networkCode(e: unknown): string | null {
  const seen = new Set<unknown>()
  const visit = (x: unknown, depth: number): string | null => {
    if (!x || typeof x !== 'object' || seen.has(x) || depth > 6) return null
    seen.add(x)
    const o = x as { code?: unknown; errors?: unknown; cause?: unknown }
    if (typeof o.code === 'string') {
      const c = o.code
      if (c === 'UND_ERR_SOCKET' || c === 'EPIPE' || c === 'ECONNRESET' || c === 'UND_ERR_CLOSED') return 'ECONNRESET'
      if (c === 'EAI_AGAIN' || c === 'ENOTFOUND') return 'ENOTFOUND'
      if (c === 'ENETUNREACH' || c === 'EHOSTUNREACH') return 'EHOSTUNREACH'
      if (c === 'UND_ERR_CONNECT_TIMEOUT' || c === 'UND_ERR_HEADERS_TIMEOUT' || c === 'UND_ERR_BODY_TIMEOUT' || c === 'ETIMEDOUT') return 'ETIMEDOUT'
      if (/^E[A-Z0-9]+$/.test(c)) return c
    }
    if (Array.isArray(o.errors)) {
      for (const inner of o.errors) {
        const c = visit(inner, depth + 1)
        if (c) return c
      }
    }
    return visit(o.cause, depth + 1)
  }
  return visit(e, 0)
}

/** The innermost human message of an error chain (undici's "fetch failed" says little). */
export function innermostMessage(e: unknown): string {
  let cur = e as { message?: string; cause?: unknown } | undefined
  let msg = String((cur as Error | undefined)?.message ?? e)
  for (let i = 0; cur && i < 6; i++) {
    if (typeof cur.message === 'string' && cur.message) msg = cur.message
    cur = cur.cause as typeof cur
  }
  return msg
}

/** Turn a JSON number array into a Float32Array, or say what is wrong with it. */
export function toVector(raw: unknown): Float32Array | string {
  if (!Array.isArray(raw)) return 'not an array'
  if (raw.length === 0) return 'an empty vector'
  const v = new Float32Array(raw.length)
  for (let i = 0; i < raw.length; i++) {
    const x: unknown = raw[i]
    if (typeof x !== 'number' || !Number.isFinite(x)) return `a non-finite or non-numeric value at index ${i}`
    v[i] = x
    if (!Number.isFinite(v[i])) return `a value at index ${i} that overflows float32`
  }
  return v
}
