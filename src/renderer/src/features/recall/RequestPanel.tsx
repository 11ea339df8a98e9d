/** What to recall: preset, query or cue, scope, `now` (time travel) and the embedder. */
import { memo, useId } from 'react'
import type { RecallConfig } from '../../../../shared/types'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtDate } from '../../lib/format'
import { Toggle } from '../../components/controls'
import { EmbedderWarnings } from '../../app/EmbedStatus'
import type { RecallRequest } from './useRecall'
import type { PresetOption } from './presetOptions'
import { PresetOptionList } from './PresetOptionList'

const EXAMPLES = ['deploy the tier migration', 'what does the user eat?', 'refund for a duplicate charge', 'flaky tests in CI']

/** yyyy-MM-ddTHH:mm in UTC for <input type=datetime-local>, and back. */
function toLocalInput(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16)
}
function fromLocalInput(s: string): number | null {
  const t = Date.parse(`${s}:00Z`)
  return Number.isNaN(t) ? null : t
}

/** What the playground hands its editing panels. */
export interface RequestEditing {
  req: RecallRequest
  setReq: (f: (r: RecallRequest) => RecallRequest) => void
  /** the config's scope (the panel edits it) */
  scope: RecallConfig['scope']
  /** edits the config from its current value (stable: the panel is memoised and a slider step leaves it alone) */
  updateConfig: (update: (c: RecallConfig) => RecallConfig) => void
  options: PresetOption[]
  choosePreset: (v: string) => void
  live: boolean
  setLive: (v: boolean) => void
}

export const RequestPanel = memo(function RequestPanel({
  req,
  setReq,
  scope,
  updateConfig,
  options,
  choosePreset,
  live,
  setLive,
  onRun,
}: RequestEditing & { onRun: () => void }) {
  const facets = useAsync(() => call('memories.facets', {}), [])
  const sessions = useAsync(
    () => call('sessions.page', { agentId: scope.agentId, userId: scope.userId, limit: 200, includeArchived: true }),
    [scope.agentId, scope.userId],
  )
  const models = useAsync(() => call('embed.models', {}), [])
  const setScope = (patch: Partial<RecallConfig['scope']>) => {
    const next = { ...scope, ...patch }
    for (const k of Object.keys(next) as (keyof typeof next)[]) if (next[k] === undefined || next[k] === '') delete next[k]
    updateConfig((c) => ({ ...c, scope: next }))
  }
  const ids = { preset: useId(), query: useId(), now: useId(), emb: useId() }
  const tiers = ['working', 'long_term', 'archived']
  const kinds = facets.data?.kinds ?? []

  return (
    <div className="request">
      <div className="selectfield">
        <label htmlFor={ids.preset}>Preset</label>
        <select id={ids.preset} className="input" value={req.preset} onChange={(e) => choosePreset(e.target.value)}>
          <PresetOptionList options={options} />
        </select>
      </div>
      <label htmlFor={ids.query} className="field-label">
        Query (the raw utterance)
      </label>
      <textarea
        id={ids.query}
        className="input"
        rows={2}
        placeholder="What the user just said…"
        value={req.query}
        onChange={(e) => setReq((r) => ({ ...r, query: e.target.value }))}
      />
      {!req.query && (
        <div className="row small">
          {EXAMPLES.map((q) => (
            <button key={q} className="chip" onClick={() => setReq((r) => ({ ...r, query: q }))}>
              {q}
            </button>
          ))}
        </div>
      )}
      <Toggle
        label="Use a cue (seed 003: goal / current step / open questions)"
        checked={req.useCue}
        onChange={(v) => {
          setReq((r) => ({ ...r, useCue: v }))
          // The dense arm embeds the cue; the lexical arm keeps the raw utterance.
          if (v) updateConfig((c) => ({ ...c, cueUse: { dense: 'cue', lexical: 'utterance' } }))
        }}
      />
      {req.useCue && (
        <div className="cue">
          <input
            className="input"
            aria-label="Goal"
            placeholder="Goal"
            value={req.cue.goal ?? ''}
            onChange={(e) => setReq((r) => ({ ...r, cue: { ...r.cue, goal: e.target.value } }))}
          />
          <input
            className="input"
            aria-label="Current step"
            placeholder="Current step"
            value={req.cue.currentStep ?? ''}
            onChange={(e) => setReq((r) => ({ ...r, cue: { ...r.cue, currentStep: e.target.value } }))}
          />
          <textarea
            className="input"
            aria-label="Open questions"
            rows={2}
            placeholder="Open questions, one per line"
            value={(req.cue.openQuestions ?? []).join('\n')}
            onChange={(e) => setReq((r) => ({ ...r, cue: { ...r.cue, openQuestions: e.target.value.split('\n').filter((x) => x.trim()) } }))}
          />
        </div>
      )}

      <div className="scope" role="group" aria-label="Scope">
        <select
          className="input"
          aria-label="Scope agent"
          value={scope.agentId ?? ''}
          onChange={(e) => setScope({ agentId: e.target.value || undefined, sessionId: undefined })}
        >
          <option value="">any agent</option>
          {facets.data?.agents.map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
        <select
          className="input"
          aria-label="Scope user"
          value={scope.userId ?? ''}
          onChange={(e) => setScope({ userId: e.target.value || undefined, sessionId: undefined })}
        >
          <option value="">any user</option>
          {facets.data?.users.map((u) => (
            <option key={u}>{u}</option>
          ))}
        </select>
        <select
          className="input"
          aria-label="Scope session"
          value={scope.sessionId ?? ''}
          onChange={(e) => setScope({ sessionId: e.target.value || undefined })}
        >
          <option value="">any session</option>
          {sessions.data?.rows.map((s) => (
            <option key={s.id} value={s.id}>
              {s.id} · {fmtDate(s.startedAt).slice(0, 10)} · {(s.summary ?? '').slice(0, 40)}
            </option>
          ))}
        </select>
        <input
          className="input"
          aria-label="Scope tenant"
          placeholder="tenant"
          value={scope.tenantId ?? ''}
          onChange={(e) => setScope({ tenantId: e.target.value || undefined })}
        />
        <div className="checks" aria-label="Tiers">
          {tiers.map((t) => (
            <label key={t}>
              <input
                type="checkbox"
                checked={scope.tiers.includes(t)}
                onChange={(e) => setScope({ tiers: e.target.checked ? [...scope.tiers, t] : scope.tiers.filter((x) => x !== t) })}
              />
              {t}
            </label>
          ))}
        </div>
        {kinds.length > 0 && (
          <div className="checks" aria-label="Kinds">
            {kinds.map((k) => (
              <label key={k}>
                <input
                  type="checkbox"
                  checked={!scope.kinds || scope.kinds.includes(k)}
                  onChange={(e) => {
                    const cur = scope.kinds ?? kinds
                    const next = e.target.checked ? [...cur, k] : cur.filter((x) => x !== k)
                    setScope({ kinds: next.length === kinds.length ? undefined : next })
                  }}
                />
                {k}
              </label>
            ))}
          </div>
        )}
      </div>

      <div className="selectfield">
        <label htmlFor={ids.now}>Now (UTC)</label>
        <div className="row" style={{ gap: 4 }}>
          <input
            id={ids.now}
            className="input"
            type="datetime-local"
            value={req.now === null ? '' : toLocalInput(req.now)}
            onChange={(e) => setReq((r) => ({ ...r, now: e.target.value ? fromLocalInput(e.target.value) : null }))}
          />
          <button className="btn small" title="Use the real clock" onClick={() => setReq((r) => ({ ...r, now: null }))} disabled={req.now === null}>
            real now
          </button>
          <button
            className="btn small"
            title="Time travel to just after the newest memory"
            disabled={!facets.data?.timeRange}
            onClick={() => setReq((r) => ({ ...r, now: (facets.data!.timeRange!.max ?? Date.now()) + 60_000 }))}
          >
            latest memory
          </button>
        </div>
      </div>

      <div className="selectfield">
        <label htmlFor={ids.emb}>Embedder</label>
        <select id={ids.emb} className="input" value={req.embedder ?? ''} onChange={(e) => setReq((r) => ({ ...r, embedder: e.target.value || null }))}>
          <option value="">auto (matches the DB's stored vectors)</option>
          <option value="hashing">hashing (offline, lexical-level)</option>
          <option value="none">none (dense arm off)</option>
          {models.data?.models.map((m) => (
            <option key={m.name} value={`ollama:${m.name}`}>
              ollama:{m.name}
              {m.dim ? ` (${m.dim})` : ''}
            </option>
          ))}
        </select>
        <EmbedderWarnings spec={req.embedder ?? null} />
      </div>

      <div className="row">
        <button className="btn primary" onClick={onRun}>
          Run recall
        </button>
        <Toggle label="live" hint="Re-run automatically as you type; sliders always re-rank instantly" checked={live} onChange={setLive} />
      </div>
    </div>
  )
})
