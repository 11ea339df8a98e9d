/**
 * The embedder status indicator (top bar): is the model server reachable, is
 * the model pulled, will recall run degraded (lexical arm only)? Click to pick
 * the embedder (models from Ollama's /api/tags) and the server address.
 */
import { useEffect, useEffectEvent, useState } from 'react'
import { usePopover } from '../lib/usePopover'
import type { EmbedStatus as Status } from '../../../shared/contract'
import { call } from '../lib/api'
import { useAsync } from '../lib/useAsync'
import { useJobs } from '../lib/jobs'
import { JobBar } from './Jobs'

const STATE_TEXT: Record<Status['state'], string> = {
  ok: 'embedder ready',
  lexical: 'hashing (lexical-level)',
  off: 'dense recall off',
  unavailable: 'embedder unavailable: recall is lexical only',
}
const STATE_CLASS: Record<Status['state'], string> = { ok: 'ok', lexical: 'accent', off: '', unavailable: 'danger' }

export function EmbedStatus({ dbVersion }: { dbVersion: number }) {
  const { open, setOpen, ref } = usePopover()
  const [tick, setTick] = useState(0)
  // The status (a server round trip) waits a moment: the first page of memories goes first.
  const [ready, setReady] = useState(false)
  useEffect(() => {
    const t = setTimeout(() => setReady(true), 600)
    return () => clearTimeout(t)
  }, [])
  const status = useAsync(() => call('embed.status', {}), [dbVersion, tick], { enabled: ready })
  // Re-check every 30 s: a model server may come up or go down while the app is open.
  useEffect(() => {
    const t = setInterval(() => setTick((x) => x + 1), 30_000)
    return () => clearInterval(t)
  }, [])
  const s = status.data
  return (
    <div className="embedstatus" ref={ref}>
      <button
        className={`badge ${s ? STATE_CLASS[s.state] : ''}`}
        aria-haspopup="dialog"
        aria-expanded={open}
        aria-label="Embedder status"
        title={s ? `${s.spec}: ${STATE_TEXT[s.state]}${s.health.error ? ` — ${s.health.error}` : ''}` : 'checking the embedder…'}
        onClick={() => setOpen((o) => !o)}
      >
        <span className={`dot ${s?.state ?? ''}`} />
        {s ? `${s.spec} · ${s.state}` : status.error ? 'embedder ?' : 'checking…'}
        {s && s.warnings.length > 0 ? ' ⚠' : ''}
      </button>
      {open && <EmbedPanel status={s} onChanged={() => setTick((x) => x + 1)} />}
    </div>
  )
}

function EmbedPanel({ status, onChanged }: { status: Status | undefined; onChanged: () => void }) {
  const settings = useAsync(() => call('settings.get', {}), [])
  const [host, setHost] = useState<string>('')
  const [spec, setSpec] = useState<string>('')
  const [error, setError] = useState<string | null>(null)
  const [saving, setSaving] = useState(false)
  // Fill the form once the saved settings arrive (adjusted during render, React's pattern for this: no effect).
  const [settingsSeen, setSettingsSeen] = useState(settings.data)
  if (settings.data !== settingsSeen) {
    setSettingsSeen(settings.data)
    if (settings.data) {
      setHost(settings.data.ollamaHost ?? '')
      setSpec(settings.data.embedder)
    }
  }
  const models = useAsync(() => call('embed.models', { kind: 'ollama', ...(host ? { host } : {}) }), [host])
  const save = async () => {
    setSaving(true)
    setError(null)
    try {
      await call('settings.set', { embedder: spec, ollamaHost: host.trim() ? host.trim() : null })
      onChanged()
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setSaving(false)
    }
  }
  return (
    <div className="popover" role="dialog" aria-label="Embedder settings">
      {status && (
        <>
          <div className="row">
            <strong>{status.spec}</strong>
            <span className={`badge ${STATE_CLASS[status.state]}`}>{STATE_TEXT[status.state]}</span>
          </div>
          <table className="kv small">
            <tbody>
              <tr>
                <td>server</td>
                <td className="mono">{status.health.host ?? 'in-process'}</td>
              </tr>
              <tr>
                <td>reachable</td>
                <td>{status.health.reachable ? 'yes' : 'no'}</td>
              </tr>
              <tr>
                <td>model pulled</td>
                <td>{status.health.modelAvailable ? 'yes' : 'no'}</td>
              </tr>
              <tr>
                <td>dimension</td>
                <td>
                  {status.health.dim ?? '—'}
                  {status.storedDim !== null ? ` (DB vectors: ${status.storedDim})` : ''}
                </td>
              </tr>
              <tr>
                <td>stored vectors</td>
                <td>{status.storedVectors ?? '—'}</td>
              </tr>
            </tbody>
          </table>
          {status.health.note && <p className="small muted">{status.health.note}</p>}
          {status.health.error && <div className="error small">{status.health.error}</div>}
          {status.warnings.map((w) => (
            <div key={w} className="notice small">
              {w}
            </div>
          ))}
        </>
      )}
      <div className="selectfield">
        <label htmlFor="emb-spec">Embedder</label>
        <select id="emb-spec" className="input" value={spec} onChange={(e) => setSpec(e.target.value)}>
          <option value="hashing">hashing (offline, lexical-level)</option>
          <option value="none">none (dense arm off)</option>
          {models.data?.models.map((m) => (
            <option key={m.name} value={`ollama:${m.name}`}>
              ollama:{m.name}
              {m.dim ? ` · ${m.dim} dims` : ''}
            </option>
          ))}
          {spec && !['hashing', 'none'].includes(spec) && !models.data?.models.some((m) => `ollama:${m.name}` === spec) && <option value={spec}>{spec}</option>}
        </select>
      </div>
      <div className="selectfield">
        <label htmlFor="emb-host">Ollama host</label>
        <input
          id="emb-host"
          className="input mono"
          placeholder={settings.data?.effective.ollamaHost ?? 'http://127.0.0.1:11434'}
          value={host}
          onChange={(e) => setHost(e.target.value)}
        />
        <span className="small muted">
          {models.data
            ? models.data.reachable
              ? `${models.data.models.length} models on ${models.data.host}`
              : (models.data.error ?? 'not reachable')
            : 'asking…'}
        </span>
      </div>
      <div className="row">
        <button className="btn primary small" disabled={saving || !spec} onClick={() => void save()}>
          Save
        </button>
        {error && <span className="error small">{error}</span>}
      </div>
      {status && status.enabled && status.state !== 'unavailable' && <Backfill spec={status.spec} onDone={onChanged} />}
    </div>
  )
}

/** Embed the memories that lack a vector for this model, in the background (vectors go to the workspace). */
function Backfill({ spec, onDone }: { spec: string; onDone: () => void }) {
  const jobs = useJobs()
  const [jobId, setJobId] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const job = jobs.find((j) => j.jobId === jobId) ?? jobs.find((j) => j.kind === 'embed.backfill' && j.state === 'running')
  // New vectors change what the status reports (stored count, warnings): ask again when the job ends.
  const state = job?.state
  const done = useEffectEvent(onDone)
  useEffect(() => {
    if (state && state !== 'running') done()
  }, [state])
  return (
    <div className="backfill">
      <div className="row">
        <button
          className="btn small"
          disabled={job?.state === 'running'}
          title="Embed every memory without a vector for this model; the vectors go to the workspace, never to the agent DB"
          onClick={async () => {
            setError(null)
            try {
              setJobId((await call('embed.backfill', { embedder: spec })).jobId)
            } catch (e) {
              setError((e as Error).message)
            }
          }}
        >
          Backfill missing vectors ({spec})
        </button>
      </div>
      {error && <div className="error small">{error}</div>}
      {job && <JobBar job={job} onCancel={() => void call('jobs.cancel', { jobId: job.jobId })} />}
    </div>
  )
}

/**
 * Beside an embedder picker: what embed.status warns about the picked embedder against the
 * open DB (a dimension that does not match the stored vectors', no vectors under its model),
 * before any recall runs. Nothing while no embedder is picked (auto) or it is `none`.
 */
export function EmbedderWarnings({ spec, dbVersion }: { spec: string | null; dbVersion?: number }) {
  const status = useAsync(() => call('embed.status', { embedder: spec!, probeDim: true }), [spec, dbVersion], { enabled: !!spec && spec !== 'none' })
  if (!spec || spec === 'none' || !status.data) return null
  return (
    <>
      {status.data.warnings.map((w) => (
        <div key={w} className="notice small" role="status">
          {w}
        </div>
      ))}
    </>
  )
}
