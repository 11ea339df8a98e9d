/**
 * The one error shape that crosses every boundary (IPC, HTTP, CLI --json).
 * Nothing throws across a boundary: handlers return a Result.
 */

/** Stable error codes. Renderer and CLI switch on these, never on messages. */
export const ERROR_CODES = [
  'BAD_INPUT', // input failed schema validation
  'NOT_FOUND', // a file, memory, session, event, case or run that does not exist
  'NO_DB', // a channel that needs an open database was called before store.open
  'NOT_SQLITE', // the file exists but is not a SQLite database
  'UNKNOWN_LAYOUT', // SQLite, but neither canonical nor a known foreign layout
  'READ_ONLY', // a write was attempted without write mode
  'DB_BUSY', // the database stayed locked past the busy timeout
  'DB_UNREACHABLE', // a database server could not be reached, or the connection dropped
  'AUTH_FAILED', // a database server refused the credentials
  'DB_TIMEOUT', // a statement ran past the statement timeout
  'EMBEDDER_UNAVAILABLE', // model server down, model missing, timeout
  'CANCELLED', // a job was cancelled
  'CONFLICT', // e.g. output file exists and --force was not given
  'FORBIDDEN', // sender / token / origin check failed
  'INTERNAL', // a bug: reported with a message, never swallowed
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

export interface ResultError {
  code: ErrorCode
  message: string
  details?: unknown
}

export type Result<T> = { ok: true; data: T } | { ok: false; error: ResultError }

/** An error with a stable code. Every module throws these; register.ts turns them into Results. */
export class RecallscopeError extends Error {
  override name = 'RecallscopeError'
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message)
  }
}

export function ok<T>(data: T): Result<T> {
  return { ok: true, data }
}

export function err(code: ErrorCode, message: string, details?: unknown): Result<never> {
  return { ok: false, error: details === undefined ? { code, message } : { code, message, details } }
}

/** Map anything thrown into the error shape, keeping codes of our own errors. */
export function toResultError(e: unknown): ResultError {
  if (e instanceof RecallscopeError) {
    return e.details === undefined ? { code: e.code, message: e.message } : { code: e.code, message: e.message, details: e.details }
  }
  const anyE = e as { code?: string; message?: string } | undefined
  const message = anyE?.message ?? String(e)
  if (anyE?.code === 'SQLITE_BUSY' || anyE?.code === 'SQLITE_LOCKED') return { code: 'DB_BUSY', message }
  if (anyE?.code === 'SQLITE_READONLY') return { code: 'READ_ONLY', message }
  if (anyE?.code === 'SQLITE_NOTADB') return { code: 'NOT_SQLITE', message }
  if (anyE?.code === 'ENOENT') return { code: 'NOT_FOUND', message }
  return { code: 'INTERNAL', message }
}

/** Unwrap a Result, throwing RecallscopeError on failure (for callers that prefer exceptions). */
export function unwrap<T>(r: Result<T>): T {
  if (r.ok) return r.data
  throw new RecallscopeError(r.error.code, r.error.message, r.error.details)
}
