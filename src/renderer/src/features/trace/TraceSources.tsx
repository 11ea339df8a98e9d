/**
 * Where the Decision trace's events come from: the store's own records, the trace logs
 * the user added ("Add a trace log…": the system dialog in the desktop app, a path field
 * in browser mode; remembered in the workspace) and the live OTLP endpoint an
 * instrumented agent posts to (URL and token, with the two environment variables to set).
 */
import { useState } from 'react'
import type { TraceLogs } from '../../../../shared/contract'
import { getBridgeMode, call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'

export function TraceSources({ refresh, onChanged }: { refresh: number; onChanged: () => void }) {
  const [tick, setTick] = useState(0)
  const logs = useAsync(() => call('trace.logs', {}), [refresh, tick])
  const [path, setPath] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const apply = async (run: () => Promise<TraceLogs>) => {
    setBusy(true)
    setError(null)
    try {
      await run()
      setTick((n) => n + 1)
      onChanged()
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }
  const browserMode = getBridgeMode() === 'browser'
  const add = async () => {
    if (!browserMode) {
      const picked = (await call('store.pick', { purpose: 'logIn' })).path
      if (picked) await apply(() => call('trace.addLog', { path: picked }))
    } else if (path.trim()) await apply(() => call('trace.addLog', { path: path.trim() }))
  }
  const d = logs.data
  const files = (d?.sources ?? []).filter((s) => s.file)
  const live = d?.live
  const liveEvents = d?.sources.find((s) => s.kind === 'otlp-live')?.events ?? 0
  return (
    <details className="tr-sources">
      <summary>Sources: {(d?.sources ?? []).map((s) => `${s.label} (${s.events})`).join(' · ') || 'none yet'}</summary>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault()
          void add()
        }}
      >
        {browserMode && (
          <input
            className="input"
            aria-label="Trace log path"
            placeholder="~/.claude/projects/…/session.jsonl, an OTLP .json/.jsonl, or a folder"
            value={path}
            onChange={(e) => setPath(e.target.value)}
          />
        )}
        <button className="btn small" type="submit" disabled={busy || (browserMode && !path.trim())}>
          Add a trace log…
        </button>
      </form>
      {error && (
        <div className="small error" role="alert">
          {error}
        </div>
      )}
      {files.length > 0 && (
        <ul className="tr-source-list">
          {files.map((s) => (
            <li key={s.key} className="small">
              <span title={s.file ?? ''}>{s.label}</span> — {s.events} event{s.events === 1 ? '' : 's'}
              {s.stats.skipped ? `, ${s.stats.skipped} skipped (${s.stats.problems[0]?.why ?? ''})` : ''}
              {s.error ? <span className="error"> {s.error}</span> : null}
              {d?.remembered.includes(s.file!) && (
                <button className="btn small" type="button" onClick={() => void apply(() => call('trace.removeLog', { path: s.file! }))}>
                  Remove
                </button>
              )}
            </li>
          ))}
          {(d?.remembered ?? [])
            .filter((r) => !files.some((f) => f.file === r))
            .map((r) => (
              <li key={r} className="small">
                {r}{' '}
                <button className="btn small" type="button" onClick={() => void apply(() => call('trace.removeLog', { path: r }))}>
                  Remove
                </button>
              </li>
            ))}
        </ul>
      )}
      {live ? (
        <div className="small tr-live" aria-label="Live OTLP">
          <div>
            Live OTLP: <code>{live.url}</code> · {liveEvents} event{liveEvents === 1 ? '' : 's'} received
          </div>
          <div className="muted">
            An instrumented agent sends its traces here with <code>OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={live.url}</code>,{' '}
            <code>OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json</code> and <code>OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20{live.token}</code>
          </div>
        </div>
      ) : null}
    </details>
  )
}
