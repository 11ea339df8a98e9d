import { useState } from 'react'
import type { DbFacts } from '../../../../shared/types'
import type { ImportReportInfo, PickPurpose } from '../../../../shared/contract'
import { getBridgeMode, call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtBytes, fmtDate, fmtInt } from '../../lib/format'
import { useApp } from '../../app/context'
import { JobBar } from '../../app/Jobs'
import { useJobs } from '../../lib/jobs'
import { ConnectForm } from './ConnectForm'
import { MappingDialog, type MapSource } from './MappingDialog'
import { SnapshotNote } from '../../app/SnapshotNote'

/**
 * Ask main to show its native dialog for `purpose`; main keeps the chosen path and accepts it
 * (only it) for that use. Null when cancelled. Desktop app only (safety/pathGrants in main).
 */
async function pickPath(purpose: PickPurpose, defaultPath?: string): Promise<string | null> {
  const r = await call('store.pick', { purpose, ...(defaultPath ? { defaultPath } : {}) })
  return r.path
}

/** Library: open a DB (path field; a dialog in the desktop app), recent files, the demo DB, facts about what is open. */
export function LibraryView() {
  const { db, setDb, navigate, dbVersion } = useApp()
  const desktop = getBridgeMode() === 'electron'
  const [path, setPath] = useState('')
  const [write, setWrite] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  /** Which mode an open ended in when it was not the one asked for (write mode declined in main's confirmation). */
  const [modeNote, setModeNote] = useState<string | null>(null)
  const recent = useAsync(() => call('store.recent', {}), [dbVersion])

  // A SQLite file (or a Postgres URL) of no known layout: the mapping dialog opens on it instead of an error.
  const [mapSource, setMapSource] = useState<MapSource | null>(null)
  const open = async (fn: () => Promise<Awaited<ReturnType<typeof call<'store.open'>>>>, mappable?: string) => {
    setBusy(true)
    setError(null)
    setModeNote(null)
    try {
      const info = await fn()
      setDb(info)
      // Stay here and say so: the user asked for write mode and must see that it is read-only.
      if (info.writeDeclined)
        setModeNote(
          `Opened read-only: write mode was not allowed in the confirmation dialog, so nothing changes in ${info.path}. Open it again with write mode on to be asked again.`,
        )
      else navigate('browse')
    } catch (e) {
      if (mappable && (e as { code?: string }).code === 'UNKNOWN_LAYOUT')
        setMapSource(
          /^postgres(ql)?:\/\//i.test(mappable)
            ? { pg: { conn: { url: mappable } }, label: mappable.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1@') }
            : { path: mappable },
        )
      else setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="page">
      <div className="grid2">
        <section className="card" aria-labelledby="open-h">
          <h2 id="open-h">Open a memory database</h2>
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault()
              if (path.trim()) void open(() => call('store.open', { path: path.trim(), write }), path.trim())
            }}
          >
            <input
              className="input mono"
              style={{ flex: 1 }}
              aria-label="Database path"
              placeholder={
                desktop
                  ? 'postgres://user@host/db — files and folders: Browse… or Folder…'
                  : '/path/to/agent.db, a mem0 / LangGraph / CrewAI / Letta store or its folder, memory.jsonl, or postgres://user@host/db'
              }
              value={path}
              onChange={(e) => setPath(e.target.value)}
            />
            <button className="btn primary" type="submit" disabled={busy || !path.trim()}>
              Open
            </button>
            {desktop &&
              (['db', 'dbFolder'] as const).map((purpose) => (
                <button
                  key={purpose}
                  className="btn"
                  type="button"
                  disabled={busy}
                  onClick={async () => {
                    setError(null)
                    const picked = await pickPath(purpose).catch((e: Error) => (setError(e.message), null))
                    if (picked) void open(() => call('store.open', { path: picked, write }), picked)
                  }}
                >
                  {purpose === 'db' ? 'Browse…' : 'Folder…'}
                </button>
              ))}
          </form>
          {desktop && (
            <p className="muted small" data-testid="dialog-note">
              Files and folders are chosen with the system dialog: the app reads and writes only files you pick there (or name on the command line).
            </p>
          )}
          {db?.snapshot && <SnapshotNote />}
          <label
            className="toggle"
            title="Write mode lets the Recall screen write refreshOnRecall's last_used_at to the agent DB. Everything else stays read-only."
          >
            <input type="checkbox" checked={write} onChange={(e) => setWrite(e.target.checked)} /> write mode (allow writing last_used_at on refresh-on-recall)
          </label>
          {write && (
            <div className="notice small">
              Write mode: the agent DB can be changed (only by “Write refresh” in Recall). Leave it off to inspect safely.
              {desktop && ' The app asks you to confirm in a system dialog before it opens a file for writing (once per file per run).'}
            </div>
          )}
          <p className="muted small">
            Opened read-only unless write mode is on: recallscope never writes to the agent's DB on its own. Its own state (eval cases, runs, caches, the search
            index when the DB has none) lives in a workspace file beside it.
          </p>
          <div className="row">
            <button className="btn" disabled={busy} onClick={() => void open(() => call('store.openDemo', {}))}>
              Open the demo DB
            </button>
            <span className="muted small">3 agents · 8 users · ~6,000 memories · logged recall events</span>
          </div>
          {modeNote && (
            <div className="notice small" role="status" data-testid="mode-note" style={{ marginTop: 10 }}>
              {modeNote}
            </div>
          )}
          {error && (
            <div className="error" role="alert" style={{ marginTop: 10 }}>
              {error}
            </div>
          )}
        </section>
        <section className="card" aria-labelledby="recent-h">
          <h2 id="recent-h">Recent</h2>
          {recent.data?.length ? (
            <table className="kv">
              <tbody>
                {recent.data.map((r) => (
                  <tr key={r.path}>
                    <td className="mono" style={{ width: 'auto', whiteSpace: 'normal', wordBreak: 'break-all' }}>
                      {r.exists ? (
                        <a href="#" onClick={(e) => (e.preventDefault(), void open(() => call('store.open', { path: r.path }), r.path))}>
                          {r.path}
                        </a>
                      ) : (
                        <span className="muted" title="File no longer exists">
                          {r.path}
                        </span>
                      )}
                    </td>
                    <td className="small" style={{ width: 150 }}>
                      {fmtDate(r.openedAt)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="muted">Nothing opened yet.</p>
          )}
        </section>
      </div>
      <ConnectForm
        version={dbVersion}
        onMap={setMapSource}
        onOpened={(info) => {
          setDb(info)
          navigate('browse')
        }}
      />
      <ImportCard onOpen={(p) => void open(() => call('store.open', { path: p }))} />
      {db && <Facts />}
      {mapSource && (
        <MappingDialog
          source={mapSource}
          onClose={() => setMapSource(null)}
          onOpened={(info) => {
            setMapSource(null)
            setDb(info)
            navigate('browse')
          }}
        />
      )}
    </div>
  )
}

const IMPORT_HINTS: Record<'engram' | 'jsonl' | 'locomo', string> = {
  engram: 'an Engram SQLite file (v0.2, v0.5 or v1.0); to only look at it, open it directly instead',
  jsonl: 'one memory per line with the canonical fields (camelCase or snake_case)',
  locomo: 'LoCoMo conversations JSON: turns become memories, QA items become eval cases',
}

/** Import a foreign file into a new canonical DB, as a background job with progress and cancel. */
function ImportCard({ onOpen }: { onOpen: (path: string) => void }) {
  const [kind, setKind] = useState<'engram' | 'jsonl' | 'locomo'>('jsonl')
  const [input, setInput] = useState('')
  const [out, setOut] = useState('')
  const [force, setForce] = useState(false)
  const [jobId, setJobId] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const jobs = useJobs()
  const job = jobs.find((j) => j.jobId === jobId)
  const report = job?.state === 'done' ? (job.result as ImportReportInfo | undefined) : undefined
  const desktop = getBridgeMode() === 'electron'
  const outPath = out.trim() || (input.trim() ? `${input.trim().replace(/\.[^./\\]+$/, '')}.canonical.db` : '')
  /** Desktop app: main writes only where the Save dialog said, so the suggested output is confirmed there first. */
  const chooseOut = async (): Promise<string | null> => {
    const p = await pickPath('importOut', outPath || undefined)
    if (p) setOut(p)
    return p
  }
  return (
    <section className="card" style={{ marginTop: 14 }} aria-labelledby="import-h">
      <h2 id="import-h">Import into a new memory DB</h2>
      <form
        className="row"
        onSubmit={async (e) => {
          e.preventDefault()
          setError(null)
          try {
            const target = desktop && !out.trim() ? await chooseOut() : outPath
            if (!target) return // the Save dialog was cancelled
            setJobId((await call('import.start', { kind, in: input.trim(), out: target, force })).jobId)
          } catch (err) {
            setError((err as Error).message)
          }
        }}
      >
        <select className="input" aria-label="Import format" value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
          <option value="jsonl">JSONL</option>
          <option value="engram">Engram</option>
          <option value="locomo">LoCoMo</option>
        </select>
        <input
          className="input mono"
          style={{ flex: '2 1 260px' }}
          aria-label="Import from"
          placeholder={desktop ? 'input file: Choose…' : 'input file'}
          value={input}
          readOnly={desktop}
          onChange={(e) => setInput(e.target.value)}
        />
        {desktop && (
          <button
            className="btn"
            type="button"
            onClick={async () => {
              setError(null)
              const p = await pickPath('importIn').catch((err: Error) => (setError(err.message), null))
              if (p) {
                setInput(p)
                setOut('') // a new input suggests a new output, confirmed in the Save dialog
              }
            }}
          >
            Choose…
          </button>
        )}
        <input
          className="input mono"
          style={{ flex: '2 1 260px' }}
          aria-label="Import to"
          placeholder={outPath || 'output .db'}
          value={out}
          readOnly={desktop}
          onChange={(e) => setOut(e.target.value)}
        />
        {desktop && (
          <button className="btn" type="button" disabled={!input.trim()} onClick={() => void chooseOut().catch((err: Error) => setError(err.message))}>
            Save as…
          </button>
        )}
        <label className="toggle">
          <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> overwrite
        </label>
        <button className="btn" type="submit" disabled={!input.trim() || job?.state === 'running'}>
          Import
        </button>
      </form>
      <p className="muted small">
        {kind}: {IMPORT_HINTS[kind]}. The input is only read; the output is written through a temp file and appears only when complete.
      </p>
      {error && <div className="error">{error}</div>}
      {job && <JobBar job={job} onCancel={() => void call('jobs.cancel', { jobId: job.jobId })} />}
      {report && (
        <div className="import-report" role="status">
          <div className="row">
            <span className="small">
              Wrote{' '}
              {Object.entries(report.written)
                .map(([k, n]) => `${n.toLocaleString('en-US')} ${k}`)
                .join(', ')}{' '}
              in {(report.tookMs / 1000).toFixed(1)} s · {report.skipped} skipped · {report.repaired} repaired
            </span>
            <button className="btn small primary" onClick={() => onOpen(report.output)}>
              Open it
            </button>
          </div>
          {report.reasons.length > 0 && (
            <ul className="small muted" style={{ margin: '4px 0 0', paddingLeft: 18 }}>
              {report.reasons.map((r) => (
                <li key={`${r.action}:${r.reason}`}>
                  {r.action} {r.count}: {r.reason}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  )
}

function Breakdown({ title, rows }: { title: string; rows: { key: string; count: number }[] }) {
  const max = Math.max(1, ...rows.map((r) => r.count))
  return (
    <div>
      <h3>{title}</h3>
      <table className="kv">
        <tbody>
          {rows.slice(0, 12).map((r) => (
            <tr key={r.key}>
              <td>{r.key}</td>
              <td>
                <div style={{ display: 'flex', alignItems: 'center', gap: 6 }}>
                  <div style={{ height: 6, borderRadius: 3, background: 'var(--accent)', width: `${(60 * r.count) / max}%`, minWidth: 2 }} />
                  <span>{fmtInt(r.count)}</span>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function Facts() {
  const { dbVersion } = useApp()
  const facts = useAsync(() => call('store.facts', {}), [dbVersion])
  if (facts.error) return <div className="error">{facts.error.message}</div>
  const f: DbFacts | undefined = facts.data
  if (!f) return <p className="muted">Reading facts…</p>
  const bad = Object.entries(f.malformed).filter(([, n]) => n > 0)
  return (
    <section className="card" style={{ marginTop: 14 }} aria-label="Database facts">
      <h2>
        {f.path.split(/[\\/]/).pop()} <span className="badge">{f.layout}</span>{' '}
        {f.readOnly ? <span className="badge ok">read-only</span> : <span className="badge danger">write mode</span>}
      </h2>
      <table className="kv" style={{ marginBottom: 12 }}>
        <tbody>
          <tr>
            <td>File</td>
            <td className="mono">
              {f.path} ({fmtBytes(f.sizeBytes)})
            </td>
          </tr>
          {f.detectedBecause && (
            <tr>
              <td>Detected</td>
              <td>{f.detectedBecause}</td>
            </tr>
          )}
          <tr>
            <td>Workspace</td>
            <td className="mono">{f.workspacePath}</td>
          </tr>
          <tr>
            <td>Contents</td>
            <td>
              {fmtInt(f.counts.memories)} memories · {fmtInt(f.counts.sessions)} sessions · {fmtInt(f.counts.embeddings)} vectors ·{' '}
              {fmtInt(f.counts.recallEvents)} recall events · {fmtInt(f.counts.evalCases)} eval cases
            </td>
          </tr>
          <tr>
            <td>Time range</td>
            <td>{f.timeRange ? `${fmtDate(f.timeRange.min)} → ${fmtDate(f.timeRange.max)} (UTC)` : '—'}</td>
          </tr>
          <tr>
            <td>Embedding models</td>
            <td>
              {f.models.length
                ? f.models.map((m) => (
                    <div key={`${m.ownerType}:${m.model}`}>
                      <span className="mono">{m.model}</span> · {m.ownerType} · dim {m.dim} · {fmtInt(m.count)}
                      {m.malformed ? <span className="badge warn"> {m.malformed} malformed</span> : null}
                    </div>
                  ))
                : 'none (dense recall needs vectors: use an embedder to backfill)'}
            </td>
          </tr>
          <tr>
            <td>Full-text index</td>
            <td>{f.hasFts === 'agent' ? 'in the agent DB (memories_fts)' : f.hasFts === 'workspace' ? 'built in the workspace' : 'built on first search'}</td>
          </tr>
          <tr>
            <td>Malformed rows skipped</td>
            <td>
              {bad.length ? (
                bad.map(([k, n]) => (
                  <span key={k} className="badge warn" style={{ marginRight: 4 }}>
                    {k}: {n}
                  </span>
                ))
              ) : (
                <span className="badge ok">none</span>
              )}
            </td>
          </tr>
        </tbody>
      </table>
      <div className="grid2">
        <Breakdown title="Agents" rows={f.byAgent} />
        <Breakdown title="Users" rows={f.byUser} />
        <Breakdown title="Kinds" rows={f.byKind} />
        <Breakdown title="Tiers" rows={f.byTier} />
      </div>
      <p className="muted small">Facts computed in {Math.round(f.tookMs)} ms.</p>
    </section>
  )
}
