/**
 * Postgres connections from the Library's Connect form: a URL built from the
 * form's fields, and saved connections.
 *
 * Passwords: the form sends one to main (the renderer typed it); nothing sends
 * one back. A saved connection keeps its URL without the password
 * (`connections.json` beside the settings) and, in the desktop app, the
 * password encrypted by the OS keychain (Electron `safeStorage`, passed in as a
 * SecretBox; only ciphertext is written). Browser mode has no keychain: a
 * password comes from PGPASSWORD (pg reads it) or from a URL given on the
 * command line, never from the form.
 */
import fs from 'node:fs'
import crypto from 'node:crypto'
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'
import type { PgConnectionInput, SavedPgConnection } from '../../shared/contract'
import { writeFileAtomic } from '../safety/atomicWrite'
import { parsePgUrl, redactUrl } from '../store/postgres/url'

/** Encryption at rest for saved passwords (the desktop app: Electron safeStorage). */
export interface SecretBox {
  encrypt(plain: string): Buffer
  decrypt(cipher: Buffer): string
}

/** The URL to connect with (password included when given) and how it is shown (never with one). BAD_INPUT when it cannot be one. */
export function pgUrlOf(input: PgConnectionInput): { url: string; redacted: string; password: string | null } {
  try {
    return buildPgUrl(input)
  } catch (e) {
    if (e instanceof RecallscopeError) throw e
    // encodeURIComponent / decodeURIComponent refuse lone surrogates and broken %-escapes (URIError)
    throw new RecallscopeError('BAD_INPUT', `Not a valid Postgres connection: ${(e as Error).message}`)
  }
}

function buildPgUrl(input: PgConnectionInput): { url: string; redacted: string; password: string | null } {
  let u: URL
  if ('url' in input) {
    try {
      u = new URL(input.url.trim())
    } catch {
      throw new RecallscopeError('BAD_INPUT', `Not a valid Postgres URL: ${redactUrl(input.url)}`)
    }
    if (!/^postgres(ql)?:$/i.test(u.protocol)) throw new RecallscopeError('BAD_INPUT', `Not a Postgres URL: ${redactUrl(input.url)}`)
  } else {
    u = new URL('postgres://localhost')
    try {
      u.hostname = input.host.includes(':') && !input.host.startsWith('[') ? `[${input.host}]` : input.host
    } catch {
      throw new RecallscopeError('BAD_INPUT', `Not a valid host name: ${input.host}`)
    }
    if (input.port !== undefined) u.port = String(input.port)
    u.pathname = `/${encodeURIComponent(input.database)}`
    if (input.user) u.username = encodeURIComponent(input.user)
    if (input.sslmode) u.searchParams.set('sslmode', input.sslmode)
    if (input.schema) u.searchParams.set('schema', input.schema)
  }
  if (input.password) u.password = encodeURIComponent(input.password)
  const url = u.toString()
  const parsed = parsePgUrl(url) // BAD_INPUT for our own parameters gone wrong, with the URL redacted
  return { url, redacted: parsed.redacted, password: parsed.password }
}

interface StoredConnection {
  id: string
  name: string
  /** without the password */
  url: string
  /** base64 of the SecretBox's ciphertext; absent: no saved password */
  secret?: string
  savedAt: number
}

/** Saved Postgres connections in `<dataDir>/connections.json`. */
export class SavedConnections {
  constructor(
    private readonly dataDir: string,
    private readonly box: SecretBox | null,
  ) {}

  private get file(): string {
    return path.join(this.dataDir, 'connections.json')
  }

  private read(): StoredConnection[] {
    try {
      const raw = JSON.parse(fs.readFileSync(this.file, 'utf8')) as unknown
      return Array.isArray(raw) ? raw.filter((c): c is StoredConnection => !!c && typeof (c as StoredConnection).url === 'string') : []
    } catch {
      return [] // none yet, or unreadable: never fatal
    }
  }

  private write(list: StoredConnection[]): void {
    writeFileAtomic(this.file, JSON.stringify(list, null, 2), { what: 'saved connections', overwrite: true })
  }

  /** What the renderer may see: no password, no ciphertext. */
  list(): SavedPgConnection[] {
    const env = !!process.env.PGPASSWORD
    return this.read().map((c) => ({
      id: c.id,
      name: c.name,
      url: c.url,
      password: c.secret ? 'keychain' : env ? 'environment' : 'none',
    }))
  }

  /** BAD_INPUT when this password could not be saved (no keychain to encrypt it with): checked before connecting. */
  assertCanSave(password: string | null): void {
    if (password && !this.box)
      throw new RecallscopeError(
        'BAD_INPUT',
        'This system offers no keychain to encrypt the password with: save the connection without it (PGPASSWORD then supplies it)',
      )
  }

  /** Save (or replace, by name) a connection; its password only encrypted, and only with a SecretBox. */
  save(name: string, url: string, password: string | null, now = Date.now()): SavedPgConnection {
    this.assertCanSave(password)
    const { redacted } = parsePgUrl(url)
    const list = this.read().filter((c) => c.name !== name)
    const entry: StoredConnection = {
      id: crypto.randomBytes(6).toString('hex'),
      name,
      url: redacted,
      ...(password && this.box ? { secret: this.box.encrypt(password).toString('base64') } : {}),
      savedAt: now,
    }
    this.write([entry, ...list].slice(0, 50))
    return this.list().find((c) => c.id === entry.id)!
  }

  /** The URL to connect with for a saved connection (its password decrypted here, in main). */
  urlOf(id: string): string {
    const c = this.read().find((x) => x.id === id)
    if (!c) throw new RecallscopeError('NOT_FOUND', `No saved connection ${id}`)
    if (!c.secret) return c.url
    if (!this.box) throw new RecallscopeError('BAD_INPUT', `${c.name}: its password was saved in the desktop app's keychain; set PGPASSWORD here`)
    let password: string
    try {
      password = this.box.decrypt(Buffer.from(c.secret, 'base64'))
    } catch {
      throw new RecallscopeError('AUTH_FAILED', `${c.name}: the saved password cannot be decrypted on this system (forget the connection and save it again)`)
    }
    const u = new URL(c.url)
    u.password = encodeURIComponent(password)
    return u.toString()
  }

  forget(id: string): boolean {
    const list = this.read()
    const next = list.filter((c) => c.id !== id)
    if (next.length === list.length) return false
    this.write(next)
    return true
  }
}
