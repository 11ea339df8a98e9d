/**
 * Postgres connection URLs: recognising them, taking our own query parameters
 * off (pg would pass unknown ones to the server), and redacting the password
 * wherever a URL is shown (path, errors, recent files, the renderer).
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { RecallscopeError } from '../../../shared/result'
import { readRegularFile } from '../safeFiles'

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
  /** shown everywhere (path, recent files, errors): the URL without its password (userinfo or `?password=`) */
  redacted: string
  /** the URL's password: its userinfo, else its `?password=` parameter (libpq and pg read both) */
  password: string | null
  /** every password this connection may use (the URL's, PGPASSWORD, the passfile's): scrubbed from every message */
  secrets: string[]
  /** host:port/db, for the workspace file name */
  identity: string
  options: PgUrlOptions
}

const OURS = ['schema', 'ann', 'ef_search', 'probes', 'statement_timeout_ms']
/** Query parameters that carry a password (libpq's `password`; pg-connection-string passes it on). */
const SECRET_PARAMS = ['password']

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
  for (const k of SECRET_PARAMS) shown.searchParams.delete(k)
  for (const k of OURS) u.searchParams.delete(k)
  const password = u.password ? decodeURIComponent(u.password) : get('password') || null
  const connectionString = u.toString()
  const db = decodeURIComponent(u.pathname.replace(/^\//, '')) || process.env.PGDATABASE || ''
  const identity = `${u.hostname || process.env.PGHOST || 'localhost'}:${u.port || process.env.PGPORT || '5432'}/${db}${options.schema ? `#${options.schema}` : ''}`
  const secrets = [password, process.env.PGPASSWORD, ...passfilePasswords(get('passfile'))].filter((x): x is string => !!x)
  return { connectionString, redacted: shown.toString(), password, secrets: [...new Set(secrets)], identity, options }
}

/** Longest passfile read (a real one is a few lines). */
const PASSFILE_MAX_BYTES = 64 * 1024

/**
 * The passwords in the passfile pg would read (`passfile=`, PGPASSFILE, else ~/.pgpass): only so that
 * none can appear in a message. Only a regular file is read (a FIFO planted there must not hang us);
 * anything unreadable gives none.
 */
export function passfilePasswords(given: string | null = null): string[] {
  const file = given || process.env.PGPASSFILE || path.join(os.homedir(), '.pgpass')
  let text: string
  try {
    const st = fs.statSync(file)
    if (!st.isFile() || st.size > PASSFILE_MAX_BYTES) return []
    text = readRegularFile(file, 'passfile').toString('utf8')
  } catch {
    return []
  }
  const out: string[] = []
  for (const line of text.split(/\r?\n/)) {
    if (!line || line.startsWith('#')) continue
    // hostname:port:database:username:password, with \: and \\ escaped; the password is the fifth field onwards.
    const fields = splitPassfileLine(line)
    if (fields.length === 5 && fields[4]) out.push(fields[4])
  }
  return out
}

/** One passfile line's fields (`:` separates, `\` escapes `:` and itself). */
function splitPassfileLine(line: string): string[] {
  const fields: string[] = []
  let cur = ''
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (c === '\\' && i + 1 < line.length) cur += line[++i]
    else if (c === ':' && fields.length < 4) {
      fields.push(cur)
      cur = ''
    } else cur += c
  }
  fields.push(cur)
  return fields
}

/** `text` with every secret replaced by *** (error messages, logs). */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of secrets) if (s) out = out.split(s).join('***')
  return out
}

/** A URL with its password replaced (for anything a person or a log sees). Tolerates malformed input. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw.trim())
    if (u.password) u.password = '***'
    for (const k of SECRET_PARAMS) if (u.searchParams.has(k)) u.searchParams.set(k, '***')
    return u.toString()
  } catch {
    return raw.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@').replace(/([?&]password=)[^&#]*/gi, '$1***')
  }
}

/** A short stable hash of a store's identity (workspace file names). */
export function identityHash(identity: string): string {
  return crypto.createHash('sha1').update(identity).digest('hex').slice(0, 12)
}
