/**
 * Postgres connection URLs: recognising them, taking our own query parameters
 * off (pg would pass unknown ones to the server), and redacting the password
 * wherever a URL is shown (path, errors, recent files, the renderer).
 */
import crypto from 'node:crypto'
import { RecallscopeError } from '../../../shared/result'

export function isPostgresUrl(s: unknown): s is string {
  return typeof s === 'string' && /^postgres(ql)?:\/\//i.test(s.trim())
}

/** Our parameters (not libpq's): the schema to read and the ANN choice. */
export interface PgUrlOptions {
  schema: string | null
  /** 'exact' (default) or the index kind the user allows */
  ann: 'exact' | 'hnsw' | 'ivfflat'
  efSearch: number | null
  probes: number | null
  statementTimeoutMs: number | null
}

export interface ParsedPgUrl {
  /** for pg: the URL without our parameters (password kept) */
  connectionString: string
  /** shown everywhere (path, recent files, errors): the URL without its password */
  redacted: string
  password: string | null
  /** host:port/db, for the workspace file name */
  identity: string
  options: PgUrlOptions
}

const OURS = ['schema', 'ann', 'ef_search', 'probes', 'statement_timeout_ms']

/** Parse a postgres:// URL (BAD_INPUT when it is not one). */
export function parsePgUrl(raw: string): ParsedPgUrl {
  let u: URL
  try {
    u = new URL(raw.trim())
  } catch {
    throw new RecallscopeError('BAD_INPUT', `Not a valid Postgres URL: ${redactUrl(raw)}`)
  }
  if (!/^postgres(ql)?:$/i.test(u.protocol)) throw new RecallscopeError('BAD_INPUT', `Not a Postgres URL: ${redactUrl(raw)}`)
  const get = (k: string) => u.searchParams.get(k)
  const int = (k: string): number | null => {
    const v = get(k)
    if (v === null) return null
    const n = Number(v)
    if (!Number.isInteger(n) || n <= 0) throw new RecallscopeError('BAD_INPUT', `${k} must be a positive integer (got ${v})`)
    return n
  }
  const ann = (get('ann') ?? 'exact').toLowerCase()
  if (!['exact', 'hnsw', 'ivfflat'].includes(ann)) throw new RecallscopeError('BAD_INPUT', `ann must be exact, hnsw or ivfflat (got ${ann})`)
  const options: PgUrlOptions = {
    schema: get('schema'),
    ann: ann as PgUrlOptions['ann'],
    efSearch: int('ef_search'),
    probes: int('probes'),
    statementTimeoutMs: int('statement_timeout_ms'),
  }
  // Shown (and kept in recent files) with our parameters, so reopening it opens the same view; never the password.
  const shown = new URL(u.toString())
  shown.password = ''
  for (const k of OURS) u.searchParams.delete(k)
  const password = u.password ? decodeURIComponent(u.password) : null
  const connectionString = u.toString()
  const db = decodeURIComponent(u.pathname.replace(/^\//, '')) || process.env.PGDATABASE || ''
  const identity = `${u.hostname || process.env.PGHOST || 'localhost'}:${u.port || process.env.PGPORT || '5432'}/${db}${options.schema ? `#${options.schema}` : ''}`
  return { connectionString, redacted: shown.toString(), password, identity, options }
}

/** A URL with its password replaced (for anything a person or a log sees). Tolerates malformed input. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw.trim())
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return raw.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@')
  }
}

/** A short stable hash of a store's identity (workspace file names). */
export function identityHash(identity: string): string {
  return crypto.createHash('sha1').update(identity).digest('hex').slice(0, 12)
}
