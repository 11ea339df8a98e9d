/**
 * Preset comparison: one query through 2–5 presets/configs at the same `now`
 * with the same query vector, side by side, with pairwise overlap (Jaccard,
 * rank-biased overlap) and each memory's rank per run. A run can be "my
 * current Recall settings" (the Recall screen's preset and edited config).
 * Memories are named by id as well as text (copies of one text are told
 * apart); an empty run says which gate or scope emptied it, in the engine's words.
 */
import { describeIssues } from '../../../../shared/result'
import { useEffect, useMemo, useRef, useState } from 'react'
import type { RecallCompare } from '../../../../shared/contract'
import type { RecallConfig, RecallScope } from '../../../../shared/types'
import { partialConfigSchema, type PartialRecallConfig } from '../../../../shared/config'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtDate, staleDbNow } from '../../lib/format'
import { useApp } from '../../app/context'
import { presetOptions } from '../recall/presetOptions'
import { currentRecallSettings, type RecallSettings } from '../../lib/recallSettings'
import './compare.css'
import { PresetOptionList } from '../recall/PresetOptionList'

interface Slot {
  preset: string
  patch: string
  /** the Recall screen's whole config (the preset's, with the user's edits); the patch goes over it */
  recall?: RecallConfig
}

const RECALL_LABEL = 'my Recall settings'

/** A slot holding the Recall screen's settings. */
function recallSlot(r: RecallSettings): Slot {
  return { preset: r.preset, patch: '', recall: r.config }
}

const DEFAULT_SLOTS: Slot[] = [
  { preset: 'fieldguide', patch: '' },
  { preset: 'fieldguide:hybrid', patch: '' },
]

function parsePatch(text: string): { ok: true; value: PartialRecallConfig | undefined } | { ok: false; error: string } {
  if (!text.trim()) return { ok: true, value: undefined }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (e) {
    return { ok: false, error: `not JSON: ${(e as Error).message}` }
  }
  const p = partialConfigSchema.safeParse(raw)
  if (!p.success) return { ok: false, error: describeIssues(p.error, 'config') }
  return { ok: true, value: p.data }
}

/** The runs from the URL (`slots` JSON), or the default pair. */
function slotsFromParam(raw: string | undefined): Slot[] {
  try {
    const v: unknown = raw ? JSON.parse(raw) : null
    const isSlot = (x: unknown): x is Slot => !!x && typeof (x as Slot).preset === 'string' && typeof (x as Slot).patch === 'string'
    if (Array.isArray(v) && v.length && v.every(isSlot)) return v.map((x) => ({ preset: x.preset, patch: x.patch }))
  } catch {
    /* a hand-edited URL: the default runs */
  }
  return DEFAULT_SLOTS
}

export function CompareView() {
  const { nav, navigate, setParams } = useApp()
  const presets = useAsync(() => call('recall.presets', {}), [])
  const facets = useAsync(() => call('memories.facets', {}), [])
  const options = useMemo(() => (presets.data ? presetOptions(presets.data) : []), [presets.data])
  // "Compare presets →" on the Recall screen hands over its settings as run 1.
  const [fromRecall] = useState(() => currentRecallSettings())
  const [query, setQuery] = useState(nav.params.query ?? fromRecall?.query ?? 'deploy the tier migration')
  const [scope, setScope] = useState<Partial<RecallScope>>(() =>
    Object.fromEntries((['agentId', 'userId', 'sessionId'] as const).filter((k) => nav.params[k]).map((k) => [k, nav.params[k]])),
  )
  const [slots, setSlots] = useState<Slot[]>(() =>
    nav.params.withRecall && fromRecall
      ? [recallSlot(fromRecall), ...DEFAULT_SLOTS.filter((d) => d.preset !== fromRecall.preset).slice(0, 1)]
      : slotsFromParam(nav.params.slots),
  )
  const [result, setResult] = useState<RecallCompare | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const sessions = useAsync(
    () => call('sessions.page', { agentId: scope.agentId, userId: scope.userId, limit: 200, includeArchived: true }),
    [scope.agentId, scope.userId],
  )

  // The inputs in the URL (in place), and whether they were run: a reload runs them again.
  const slotsParam = JSON.stringify(slots) === JSON.stringify(DEFAULT_SLOTS) ? undefined : JSON.stringify(slots)
  useEffect(() => {
    setParams({ query, agentId: scope.agentId, userId: scope.userId, sessionId: scope.sessionId, slots: slotsParam }, 'replace')
  }, [query, scope.agentId, scope.userId, scope.sessionId, slotsParam, setParams])
  const rerun = useRef(nav.params.ran === '1')

  const run = async () => {
    setError(null)
    setParams({ ran: '1' }, 'replace')
    const runs = []
    for (const [i, s] of slots.entries()) {
      const p = parsePatch(s.patch)
      if (!p.ok) return setError(`Run ${i + 1}: ${p.error}`)
      const cleanScope = Object.fromEntries(Object.entries(scope).filter(([, v]) => v !== undefined && v !== ''))
      const base: PartialRecallConfig = s.recall ?? {}
      runs.push({
        label: s.recall ? `${RECALL_LABEL} (${s.preset})` : s.preset,
        preset: s.preset,
        config: { ...base, ...(p.value ?? {}), scope: { ...(base.scope ?? {}), ...(p.value?.scope ?? {}), ...cleanScope } },
      })
    }
    setBusy(true)
    try {
      // Same clock as the playground: a DB whose last write is in the past is compared at that time.
      const now = staleDbNow(facets.data?.timeRange?.max) ?? undefined
      setResult(await call('recall.compare', { query, runs, now }))
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  // A preset that recalls within one session (or agent + user) needs it in the scope; said before running.
  const missingScope = (s: Slot) => {
    const req = options.find((o) => o.value === s.preset)?.requires ?? []
    const have = { ...(s.recall?.scope ?? {}), ...Object.fromEntries(Object.entries(scope).filter(([, v]) => v)) } as Record<string, unknown>
    return req.filter((k) => !have[k])
  }

  useEffect(() => {
    // Once, when the clock source (facets) is known: the same comparison as before the reload.
    if (!rerun.current || !facets.data) return
    rerun.current = false
    void run()
  })

  return (
    <div className="page compare">
      <section className="card">
        <h2>Compare presets</h2>
        <div className="compare-form">
          <input
            className="input"
            style={{ flex: '1 1 320px' }}
            aria-label="Compare query"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            placeholder="query"
          />
          <select
            className="input"
            aria-label="Compare agent"
            value={scope.agentId ?? ''}
            onChange={(e) => setScope({ ...scope, agentId: e.target.value || undefined, sessionId: undefined })}
          >
            <option value="">any agent</option>
            {facets.data?.agents.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
          <select
            className="input"
            aria-label="Compare user"
            value={scope.userId ?? ''}
            onChange={(e) => setScope({ ...scope, userId: e.target.value || undefined, sessionId: undefined })}
          >
            <option value="">any user</option>
            {facets.data?.users.map((u) => (
              <option key={u}>{u}</option>
            ))}
          </select>
          <select
            className="input"
            aria-label="Compare session"
            value={scope.sessionId ?? ''}
            onChange={(e) => setScope({ ...scope, sessionId: e.target.value || undefined })}
          >
            <option value="">any session</option>
            {sessions.data?.rows.map((s) => (
              <option key={s.id} value={s.id}>
                {s.id} · {(s.summary ?? '').slice(0, 40)}
              </option>
            ))}
          </select>
        </div>
        <div className="slots">
          {slots.map((s, i) => (
            <div className="slot" key={i}>
              <div className="slot-head">
                <strong>Run {i + 1}</strong>
                {s.recall ? (
                  <span className="slot-recall" title="The Recall screen's preset with every knob as you left it there">
                    {RECALL_LABEL} · {s.preset}
                  </span>
                ) : (
                  <select
                    className="input"
                    aria-label={`Run ${i + 1} preset`}
                    value={s.preset}
                    onChange={(e) => setSlots(slots.map((x, j) => (j === i ? { ...x, preset: e.target.value } : x)))}
                  >
                    <PresetOptionList options={options} trim />
                  </select>
                )}
                {slots.length > 2 && (
                  <button
                    className="btn small slot-remove"
                    aria-label={`Remove run ${i + 1}`}
                    title="Remove this run"
                    onClick={() => setSlots(slots.filter((_, j) => j !== i))}
                  >
                    ×
                  </button>
                )}
              </div>
              {missingScope(s).length > 0 && (
                <div className="notice small" role="status">
                  {s.preset} recalls within one {missingScope(s).join(' and ')}: pick {missingScope(s).length > 1 ? 'them' : 'it'} above.
                </div>
              )}
              <textarea
                className="input mono"
                rows={2}
                aria-label={`Run ${i + 1} config patch`}
                placeholder='optional partial config, e.g. {"weights": {"recency": 0.5}}'
                value={s.patch}
                onChange={(e) => setSlots(slots.map((x, j) => (j === i ? { ...x, patch: e.target.value } : x)))}
              />
            </div>
          ))}
        </div>
        <div className="row">
          <button className="btn" disabled={slots.length >= 5} onClick={() => setSlots([...slots, { preset: 'portal-semantic', patch: '' }])}>
            + Add run
          </button>
          <button
            className="btn"
            disabled={slots.length >= 5 || !currentRecallSettings()}
            title={
              currentRecallSettings()
                ? "Add a run with the Recall screen's preset and config as you left them"
                : 'Open the Recall screen first: its settings are what this adds'
            }
            onClick={() => {
              const r = currentRecallSettings()
              if (r) setSlots([...slots, recallSlot(r)])
            }}
          >
            + My current Recall settings
          </button>
          <button className="btn primary" disabled={busy || slots.length < 2} onClick={() => void run()}>
            {busy ? 'Comparing…' : 'Run comparison'}
          </button>
          {error && (
            <span className="error" role="alert">
              {error}
            </span>
          )}
        </div>
      </section>
      {result && <CompareResult result={result} onOpen={(id) => navigate('browse', { memoryId: id })} />}
    </div>
  )
}

function CompareResult({ result, onOpen }: { result: RecallCompare; onOpen: (id: string) => void }) {
  const n = result.runs.length
  const units = Object.assign({}, ...result.runs.map((r) => r.trace.units)) as RecallCompare['runs'][number]['trace']['units']
  const pair = (a: number, b: number) => result.overlap.find((o) => (o.a === a && o.b === b) || (o.a === b && o.b === a))
  return (
    <>
      <section className="card" aria-label="Overlap">
        <h3>Overlap of injected memories at {fmtDate(result.now)} UTC</h3>
        <table className="overlap">
          <thead>
            <tr>
              <th />
              {result.runs.map((r, i) => (
                <th key={i}>
                  {i + 1}. {r.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {result.runs.map((r, i) => (
              <tr key={i}>
                <th>
                  {i + 1}. {r.label}
                </th>
                {result.runs.map((_, j) => {
                  if (i === j)
                    return (
                      <td key={j} className="muted">
                        —
                      </td>
                    )
                  const o = pair(i, j)
                  return (
                    <td key={j} title="Jaccard of the injected sets · rank-biased overlap (p = 0.9)">
                      J {o?.jaccard.toFixed(2)} · RBO {o?.rbo.toFixed(2)}
                    </td>
                  )
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <div className="sbs" style={{ gridTemplateColumns: `repeat(${n}, minmax(0, 1fr))` }}>
        {result.runs.map((r, i) => (
          <section className="card" key={i} aria-label={`Run ${i + 1} results`}>
            <h3>
              {i + 1}. {r.label}
            </h3>
            <div className="small muted">
              {r.trace.results.length} injected · {r.trace.contextTokens} tokens · mode {r.trace.mode}
              {r.trace.degraded ? ` · degraded: ${r.trace.degradedReason}` : ''}
            </div>
            {r.trace.results.length === 0 ? (
              <div className="notice small warn" role="status" aria-label={`Run ${i + 1}: why nothing was injected`} data-testid="compare-empty">
                <strong>Nothing injected.</strong> {r.trace.empty?.message ?? 'The engine gave no reason.'}
                {r.trace.empty?.suggestion && <> Try: {r.trace.empty.suggestion.label}.</>}
              </div>
            ) : (
              <ol className="sbs-list">
                {r.trace.results.map((x) => (
                  <li key={x.id} data-id={x.id}>
                    <div className="sbs-head">
                      <a href="#" onClick={(e) => (e.preventDefault(), onOpen(x.id))} className="mono" title={`Open memory ${x.id}`}>
                        {x.id}
                      </a>
                      <span className="mono muted">{x.score.toFixed(3)}</span>
                    </div>
                    <div className="sbs-text">{(units[x.id]?.content ?? '').slice(0, 160)}</div>
                  </li>
                ))}
              </ol>
            )}
          </section>
        ))}
      </div>
      <section className="card" aria-label="Rank deltas">
        <h3>Rank per run (Δ vs run 1)</h3>
        <table className="compare-ranks">
          <colgroup>
            <col className="c-id" />
            <col />
            {result.runs.map((_, i) => (
              <col key={i} className="c-rank" />
            ))}
          </colgroup>
          <thead>
            <tr>
              <th>id</th>
              <th>memory</th>
              {result.runs.map((r, i) => (
                <th key={i} title={r.label}>
                  run {i + 1}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {result.ranks.map((row) => (
              <tr key={row.id} data-id={row.id}>
                <td className="mono">
                  <a href="#" onClick={(e) => (e.preventDefault(), onOpen(row.id))}>
                    {row.id}
                  </a>
                </td>
                <td className="c-text" title={units[row.id]?.content ?? row.id}>
                  {units[row.id]?.content ?? row.id}
                </td>
                {row.ranks.map((rk, i) => (
                  <td key={i} className="mono">
                    {rk ?? '—'}
                    {i > 0 && row.deltas[i] !== null && row.deltas[i] !== 0 && (
                      <span className={row.deltas[i] < 0 ? 'up' : 'down'}>
                        {' '}
                        ({row.deltas[i] > 0 ? '+' : ''}
                        {row.deltas[i]})
                      </span>
                    )}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  )
}
