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
  'DB_CORRUPT', // the file is SQLite but damaged ("database disk image is malformed")
  'DB_UNREACHABLE', // a database server could not be reached, or the connection dropped
  'AUTH_FAILED', // a database server refused the credentials
  'DB_TIMEOUT', // a statement ran past the statement timeout
  'DISK_FULL', // the disk (or the database's size limit) is full: a write could not be made
  'BUSY', // too much CPU work queued (the bounded worker pool is full): try again when a job ends
  'EMBEDDER_UNAVAILABLE', // model server down, model missing, timeout
  'CHAT_UNAVAILABLE', // the chat model (counterfactual) is down, missing, or timed out
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
  // extended codes too: SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED_SHAREDCACHE… (before: INTERNAL)
  if (/^SQLITE_(BUSY|LOCKED)/.test(String(anyE?.code ?? ''))) return { code: 'DB_BUSY', message }
  if (anyE?.code === 'SQLITE_FULL' || anyE?.code === 'ENOSPC') return { code: 'DISK_FULL', message }
  if (anyE?.code === 'SQLITE_READONLY') return { code: 'READ_ONLY', message }
  if (anyE?.code === 'SQLITE_NOTADB') return { code: 'NOT_SQLITE', message }
  if (anyE?.code === 'SQLITE_CORRUPT' || anyE?.code?.startsWith('SQLITE_CORRUPT_')) return { code: 'DB_CORRUPT', message }
  if (anyE?.code === 'ENOENT') return { code: 'NOT_FOUND', message }
  return { code: 'INTERNAL', message }
}

/** The shape of a schema error (zod's `error`), without importing zod here. */
export interface SchemaIssues {
  issues: readonly { path: readonly PropertyKey[]; message: string }[]
}

/** Every issue as `{path, message}` with a dotted path (what `details.issues` carries). */
function listIssues(e: SchemaIssues): { path: string; message: string }[] {
  return e.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }))
}

/** One line naming the first failing field: `scope.tiers: expected array`. `what` stands in for an empty path. */
export function describeIssues(e: SchemaIssues, what = '(input)'): string {
  const first = listIssues(e)[0]
  return first ? `${first.path || what}: ${first.message}` : 'rejected'
}

/** The one way a schema error becomes a typed error: BAD_INPUT, `prefix: field: message`, all issues in details. */
export function badInput(prefix: string, e: SchemaIssues, what?: string): RecallscopeError {
  return new RecallscopeError('BAD_INPUT', `${prefix}: ${describeIssues(e, what)}`, { issues: listIssues(e) })
}
