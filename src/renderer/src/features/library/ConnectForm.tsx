import { useState } from 'react'
import type { OpenInfo, PgConnectionInput, PgTestInfo } from '../../../../shared/contract'
import { getBridgeMode, call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtInt } from '../../lib/format'
import type { MapSource } from './MappingDialog'

/** What each typed error means for someone filling in the form. */
const ERROR_TITLES: Record<string, string> = {
  DB_UNREACHABLE: 'Cannot reach the server',
  AUTH_FAILED: 'The server refused the user or password',
  NOT_FOUND: 'No such database (or saved connection)',
  UNKNOWN_LAYOUT: 'No memory store recallscope knows in this schema',
  DB_TIMEOUT: 'The server did not answer in time',
  BAD_INPUT: 'Check the connection details',
  READ_ONLY: 'Read-only',
}

const SSL_MODES = ['prefer', 'disable', 'require', 'verify-ca', 'verify-full'] as const

interface Fields {
  host: string
  port: string
  database: string
  user: string
  password: string
  sslmode: (typeof SSL_MODES)[number]
  schema: string
  url: string
}

/** The form's fields as the channel's input (empty optional fields left out). */
function connectionOf(f: Fields, useUrl: boolean): PgConnectionInput {
  const password = f.password ? { password: f.password } : {}
  if (useUrl) return { url: f.url.trim(), ...password }
  const port = f.port.trim() ? Number(f.port) : undefined
  return {
    host: f.host.trim(),
    ...(port !== undefined ? { port } : {}),
    database: f.database.trim(),
    ...(f.user.trim() ? { user: f.user.trim() } : {}),
    ...password,
    sslmode: f.sslmode,
    ...(f.schema.trim() ? { schema: f.schema.trim() } : {}),
  }
}

/** How the form's fields are shown in the mapping dialog until main answers with the URL (never a password). */
function labelOf(f: Fields, useUrl: boolean): string {
  if (useUrl) return f.url.trim().replace(/\/\/([^/@:]*):[^/@]*@/, '//$1@')
  return `postgres://${f.user.trim() ? `${f.user.trim()}@` : ''}${f.host.trim()}${f.port.trim() ? `:${f.port.trim()}` : ''}/${f.database.trim()}${f.schema.trim() ? ` (schema ${f.schema.trim()})` : ''}`
}

/**
 * Connect to a Postgres (+ pgvector) memory store: the fields or a URL, Test (connects, detects the layout,
 * disconnects) and Connect, saved connections. In the desktop app the password is typed here and, when saved,
 * encrypted by the OS keychain in main; in browser mode it comes from PGPASSWORD or the command line only.
 * No password ever comes back from main. A schema with no known layout (UNKNOWN_LAYOUT) offers "Map a table…":
 * `onMap` opens the mapping dialog over the same connection.
 */
export function ConnectForm({ onOpened, onMap, version }: { onOpened: (info: OpenInfo) => void; onMap: (source: MapSource) => void; version: number }) {
  const desktop = getBridgeMode() === 'electron'
  const [f, setF] = useState<Fields>({ host: 'localhost', port: '5432', database: '', user: '', password: '', sslmode: 'prefer', schema: '', url: '' })
  const [useUrl, setUseUrl] = useState(false)
  const [save, setSave] = useState(false)
  const [name, setName] = useState('')
  const [busy, setBusy] = useState<'test' | 'connect' | null>(null)
  const [error, setError] = useState<{ code: string; message: string } | null>(null)
  const [tested, setTested] = useState<PgTestInfo | null>(null)
  /** the connection the last error was about: what "Map a table…" opens */
  const [failedOn, setFailedOn] = useState<MapSource | null>(null)
  const [savedVersion, setSavedVersion] = useState(0)
  const saved = useAsync(() => call('pg.saved', {}), [version, savedVersion])
  const set = (k: keyof Fields) => (e: { target: { value: string } }) => {
    setF({ ...f, [k]: e.target.value })
    setTested(null)
  }
  const ready = useUrl ? f.url.trim() !== '' : f.host.trim() !== '' && f.database.trim() !== ''

  const run = async <T,>(what: 'test' | 'connect', fn: () => Promise<T>, on: MapSource | null = null): Promise<T | null> => {
    setBusy(what)
    setError(null)
    setFailedOn(on)
    try {
      return await fn()
    } catch (e) {
      const x = e as { code?: string; message: string }
      setError({ code: x.code ?? 'INTERNAL', message: x.message })
      return null
    } finally {
      setBusy(null)
    }
  }
  /** The form's connection as the mapping dialog's source (with the "save as" name, saved once the mapping opens). */
  const fromFields = (): MapSource => ({
    pg: { conn: connectionOf(f, useUrl) },
    label: labelOf(f, useUrl),
    ...(save && name.trim() ? { saveAs: name.trim() } : {}),
  })
  const test = async () => {
    setTested(null)
    const r = await run('test', () => call('pg.test', { conn: connectionOf(f, useUrl) }), fromFields())
    if (r) setTested(r)
  }
  const connect = async () => {
    const saveAs = save && name.trim() ? { saveAs: name.trim() } : {}
    const r = await run('connect', () => call('pg.connect', { conn: connectionOf(f, useUrl), ...saveAs }), fromFields())
    if (r) {
      setF((x) => ({ ...x, password: '' })) // not kept in the page once used
      setSavedVersion((v) => v + 1)
      onOpened(r)
    }
  }

  return (
    <section className="card" aria-labelledby="connect-h" style={{ marginTop: 14 }}>
      <h2 id="connect-h">Connect to Postgres</h2>
      <form
        aria-label="Postgres connection"
        onSubmit={(e) => {
          e.preventDefault()
          if (ready) void connect()
        }}
      >
        <label className="toggle small">
          <input type="checkbox" checked={useUrl} onChange={(e) => setUseUrl(e.target.checked)} /> use a URL instead of the fields
        </label>
        {useUrl ? (
          <label className="selectfield" style={{ marginTop: 6 }}>
            <span className="field-label">URL</span>
            <input
              className="input mono"
              aria-label="Connection URL"
              placeholder="postgres://user@host:5432/db?sslmode=require&schema=public"
              value={f.url}
              onChange={set('url')}
            />
          </label>
        ) : (
          <div className="row" style={{ marginTop: 6, alignItems: 'flex-end' }}>
            <label className="selectfield" style={{ flex: 2, minWidth: 160 }}>
              <span className="field-label">Host</span>
              <input className="input mono" aria-label="Host" value={f.host} onChange={set('host')} />
            </label>
            <label className="selectfield" style={{ width: 80 }}>
              <span className="field-label">Port</span>
              <input className="input mono" aria-label="Port" inputMode="numeric" value={f.port} onChange={set('port')} />
            </label>
            <label className="selectfield" style={{ flex: 1, minWidth: 120 }}>
              <span className="field-label">Database</span>
              <input className="input mono" aria-label="Database" value={f.database} onChange={set('database')} />
            </label>
            <label className="selectfield" style={{ flex: 1, minWidth: 120 }}>
              <span className="field-label">User</span>
              <input className="input mono" aria-label="User" autoComplete="username" value={f.user} onChange={set('user')} />
            </label>
            <label className="selectfield" style={{ width: 120 }}>
              <span className="field-label">sslmode</span>
              <select className="input" aria-label="sslmode" value={f.sslmode} onChange={(e) => setF({ ...f, sslmode: e.target.value as Fields['sslmode'] })}>
                {SSL_MODES.map((m) => (
                  <option key={m}>{m}</option>
                ))}
              </select>
            </label>
            <label className="selectfield" style={{ flex: 1, minWidth: 110 }}>
              <span className="field-label">Schema</span>
              <input className="input mono" aria-label="Schema" placeholder="search_path" value={f.schema} onChange={set('schema')} />
            </label>
          </div>
        )}
        {desktop ? (
          <label className="selectfield" style={{ marginTop: 6, maxWidth: 320 }}>
            <span className="field-label">Password</span>
            <input className="input" type="password" aria-label="Password" autoComplete="current-password" value={f.password} onChange={set('password')} />
          </label>
        ) : (
          <p className="notice small" style={{ marginTop: 8 }}>
            Browser mode takes no password from this page: set <code>PGPASSWORD</code> before starting recallscope, or give the URL on the command line (
            <code>npm start -- postgres://user:…@host/db</code>).
          </p>
        )}
        <div className="row" style={{ marginTop: 8 }}>
          <button className="btn" type="button" disabled={!ready || busy !== null} onClick={() => void test()}>
            {busy === 'test' ? 'Testing…' : 'Test'}
          </button>
          <button className="btn primary" type="submit" disabled={!ready || busy !== null}>
            {busy === 'connect' ? 'Connecting…' : 'Connect'}
          </button>
          <label className="toggle small">
            <input type="checkbox" checked={save} onChange={(e) => setSave(e.target.checked)} /> save as
          </label>
          <input
            className="input"
            style={{ width: 160 }}
            aria-label="Connection name"
            placeholder="name"
            disabled={!save}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        {save && (
          <p className="muted small">
            {desktop
              ? 'Saved without the password in the connection list; the password, if any, is encrypted by your system keychain.'
              : 'Saved without a password: PGPASSWORD supplies it when you connect.'}
          </p>
        )}
      </form>
      <p className="muted small">
        Read-only: every session sets <code>default_transaction_read_only</code> and a statement timeout. A role with SELECT only is enough.
      </p>
      {tested && (
        <div className="notice small" role="status" aria-label="Connection test">
          <strong>Connected.</strong> {tested.layout} store, {fmtInt(tested.memories)} memories. {tested.detectedBecause}
          {tested.denseInDatabase ? (
            <div>Dense recall runs in the database (pgvector).</div>
          ) : tested.vectorModels > 0 ? (
            <div>No pgvector here: the vectors are loaded and ranked locally (slower on big stores).</div>
          ) : (
            <div>No vectors found: recall is lexical until you backfill vectors (they stay in the local workspace).</div>
          )}
        </div>
      )}
      {error && (
        <div className="error" role="alert" data-code={error.code} style={{ marginTop: 8 }}>
          <strong>{ERROR_TITLES[error.code] ?? 'Could not connect'}</strong> <span className="mono small">({error.code})</span>
          <div className="small">{error.message}</div>
          {error.code === 'UNKNOWN_LAYOUT' && failedOn && (
            <div className="row" style={{ marginTop: 6 }}>
              <button className="btn" type="button" onClick={() => onMap(failedOn)}>
                Map a table…
              </button>
              <span className="small muted">open one of its tables by choosing which column is which</span>
            </div>
          )}
        </div>
      )}
      {saved.data && saved.data.length > 0 && (
        <table className="kv" aria-label="Saved connections" style={{ marginTop: 10 }}>
          <tbody>
            {saved.data.map((c) => (
              <tr key={c.id}>
                <td style={{ width: 140 }}>{c.name}</td>
                <td className="mono small" style={{ width: 'auto', wordBreak: 'break-all' }}>
                  {c.url}
                </td>
                <td className="small muted" style={{ width: 110 }}>
                  {c.password === 'keychain' ? 'password in keychain' : c.password === 'environment' ? 'PGPASSWORD' : 'no password'}
                </td>
                <td style={{ width: 190, whiteSpace: 'nowrap' }}>
                  <button
                    className="btn"
                    type="button"
                    disabled={busy !== null}
                    onClick={async () => {
                      const r = await run('connect', () => call('pg.connect', { savedId: c.id }), { pg: { savedId: c.id }, label: c.url })
                      if (r) onOpened(r)
                    }}
                  >
                    Connect
                  </button>{' '}
                  <button
                    className="btn"
                    type="button"
                    aria-label={`Forget ${c.name}`}
                    onClick={async () => {
                      await run('connect', () => call('pg.forget', { id: c.id }))
                      setSavedVersion((v) => v + 1)
                    }}
                  >
                    Forget
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
