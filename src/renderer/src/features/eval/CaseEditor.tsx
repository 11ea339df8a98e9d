/**
 * The one eval-case editor, used by the Cases tab (edit, new) and by the Recall
 * screen's "Save as eval case" (a new case from a recall's query and results).
 */
import { useMemo, useState } from 'react'
import type { EvalCaseRow } from '../../../../shared/eval'
import type { Cue } from '../../../../shared/types'
import { call } from '../../lib/api'
import { fmtDate } from '../../lib/format'
import { useAsync } from '../../lib/useAsync'
import { GradeList, parseTags } from './GradeList'
import { parseOverrides, type EvalSettings } from './settings'
// The editor opens from the Recall screen too (a case from a recall): its styles come with it, not only with Evaluate.
import './eval.css'

function toLocalInput(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().slice(0, 16)
}

/** What a new case starts from when it is made from a recall (the Recall screen's "Save as eval case"). */
export interface CaseDraft {
  query: string
  cue?: Cue | null
  scope: { agentId?: string; userId?: string; sessionId?: string; tenantId?: string }
  /** the recall's `now` (epoch ms): the case replays at this moment */
  now: number | null
  /** what the recall returned, to grade */
  results: readonly { id: string; content: string }[]
}

/**
 * The one eval-case editor: edit a case, create one from scratch ("Find candidates"
 * runs the recall under the Evaluate settings: wide, topK 20, no floor), or create
 * one from a recall (`draft`: its query, scope, time and results to grade).
 */
export function CaseEditor({
  initial,
  draft,
  settings,
  onSaved,
  onDeleted,
  onCancel,
}: {
  initial: EvalCaseRow | null
  draft?: CaseDraft
  settings: EvalSettings
  onSaved: (c: EvalCaseRow) => void
  onDeleted: () => void
  onCancel: () => void
}) {
  const facts = useAsync(() => call('memories.facets', {}), [])
  const start = initial ?? draft ?? null
  const [query, setQuery] = useState(start?.query ?? '')
  const [name, setName] = useState(initial?.name ?? draft?.query.trim().slice(0, 80) ?? '')
  const [agentId, setAgentId] = useState(start?.scope.agentId ?? '')
  const [userId, setUserId] = useState(start?.scope.userId ?? '')
  const [sessionId, setSessionId] = useState(start?.scope.sessionId ?? '')
  const [tenantId] = useState(start?.scope.tenantId ?? '')
  const [nowText, setNowText] = useState(toLocalInput(start?.now ?? null))
  const [split, setSplit] = useState<'auto' | 'train' | 'test'>(initial?.split ?? 'auto')
  const [tags, setTags] = useState((initial?.tags ?? []).join(', '))
  const [expectEmpty, setExpectEmpty] = useState(initial?.expectEmpty ?? false)
  const [grades, setGrades] = useState<Record<string, number>>(() => Object.fromEntries((initial?.relevant ?? []).map((r) => [r.id, r.grade])))
  const [found, setFound] = useState<{ id: string; content: string; rank: number | null }[]>(() =>
    (draft?.results ?? []).map((r, i) => ({ id: r.id, content: r.content, rank: i + 1 })),
  )
  const [addId, setAddId] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)

  // The default `now`: the newest memory (a DB explored after its last write), like the recall view.
  const defaultNow = facts.data?.timeRange ? facts.data.timeRange.max + 60_000 : null
  // The input shows minutes; an untouched time keeps the exact instant it came with (a recall's `now`).
  const now = nowText ? (start?.now != null && nowText === toLocalInput(start.now) ? start.now : Date.parse(`${nowText}:00Z`)) : null
  const scope = useMemo(() => {
    const s: Record<string, string> = {}
    if (agentId) s.agentId = agentId
    if (userId) s.userId = userId
    if (sessionId) s.sessionId = sessionId
    if (tenantId) s.tenantId = tenantId
    return s
  }, [agentId, userId, sessionId, tenantId])

  // Content of graded ids that the last recall did not show (one paged query).
  const gradedIds = Object.keys(grades).filter((id) => (grades[id] ?? 0) > 0)
  const missing = gradedIds.filter((id) => !found.some((f) => f.id === id))
  const extra = useAsync(
    () => (missing.length ? call('memories.page', { ids: missing, limit: Math.min(1000, missing.length) }) : Promise.resolve(null)),
    [missing.join('\u0000')],
  )
  const items = [
    ...found,
    ...missing.map((id) => ({ id, content: extra.data?.rows.find((m) => m.id === id)?.content ?? (extra.loading ? '…' : '(not in this DB)'), rank: null })),
  ]

  const findCandidates = async () => {
    setError(null)
    const o = parseOverrides(settings.overrides)
    if (!o.ok) return setError(`Evaluate config: ${o.error}`)
    setBusy(true)
    try {
      const trace = await call('recall.run', {
        query,
        preset: settings.preset,
        config: { ...(o.config ?? {}), topK: 20, floor: null, minSimilarity: null, tokenBudget: null, scope: { ...(o.config?.scope ?? {}), ...scope } },
        now: now ?? defaultNow ?? undefined,
      })
      if (now === null && trace.now) setNowText(toLocalInput(trace.now))
      setFound(trace.results.map((r) => ({ id: r.id, content: trace.units[r.id]?.content ?? r.id, rank: r.rank })))
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  const save = async () => {
    setError(null)
    setBusy(true)
    try {
      const c = await call('cases.save', {
        case: {
          ...(initial ? { id: initial.id } : {}),
          name,
          query,
          cue: start?.cue ?? null,
          scope,
          now: now ?? defaultNow,
          relevant: expectEmpty ? [] : gradedIds.map((id) => ({ id, grade: grades[id] })),
          expectEmpty,
          tags: parseTags(tags),
          ...(split === 'auto' ? {} : { split }),
        },
      })
      onSaved(c)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }
  const remove = async () => {
    if (!initial) return
    setBusy(true)
    try {
      await call('cases.delete', { ids: [initial.id] })
      onDeleted()
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="editor">
      <h3>{initial ? `Case ${initial.id}` : 'New case'}</h3>
      {initial?.note && <div className="notice small">{initial.note}</div>}
      <label>
        <span className="field-label">Query</span>
        <textarea className="input wide" rows={2} value={query} onChange={(e) => setQuery(e.target.value)} aria-label="Case query" />
      </label>
      <label>
        <span className="field-label">Name</span>
        <input className="input wide" value={name} placeholder="(the query)" onChange={(e) => setName(e.target.value)} />
      </label>
      <div className="grid3">
        <label>
          <span className="field-label">Agent</span>
          <select className="input" aria-label="Case agent" value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            <option value="">any</option>
            {(facts.data?.agents ?? []).map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="field-label">User</span>
          <input className="input" value={userId} onChange={(e) => setUserId(e.target.value)} />
        </label>
        <label>
          <span className="field-label">Session</span>
          <input className="input" value={sessionId} onChange={(e) => setSessionId(e.target.value)} />
        </label>
      </div>
      <div className="grid3">
        <label>
          <span className="field-label">Now (UTC)</span>
          <input
            className="input"
            type="datetime-local"
            value={nowText}
            onChange={(e) => setNowText(e.target.value)}
            title={defaultNow ? `empty: ${fmtDate(defaultNow)} (newest memory)` : ''}
          />
        </label>
        <label>
          <span className="field-label">Split</span>
          <select className="input" value={split} onChange={(e) => setSplit(e.target.value as typeof split)}>
            <option value="auto">auto (by id)</option>
            <option value="train">train</option>
            <option value="test">test</option>
          </select>
        </label>
        <label>
          <span className="field-label">Tags</span>
          <input className="input" value={tags} onChange={(e) => setTags(e.target.value)} placeholder="billing, regression" />
        </label>
      </div>
      <label className="toggle">
        <input type="checkbox" checked={expectEmpty} onChange={(e) => setExpectEmpty(e.target.checked)} />
        Nothing should be recalled (expect empty)
      </label>
      <div className="row">
        <button className="btn" onClick={findCandidates} disabled={busy || query.trim() === ''}>
          Find candidates
        </button>
        <span className="small muted">runs {settings.preset} with topK 20, no floor</span>
      </div>
      <GradeList items={items} grades={grades} onGrade={(id, g) => setGrades((x) => ({ ...x, [id]: g }))} disabled={expectEmpty} />
      <div className="row">
        <input className="input" placeholder="memory id" aria-label="Add memory id" value={addId} onChange={(e) => setAddId(e.target.value)} />
        <button
          className="btn"
          disabled={addId.trim() === ''}
          onClick={() => {
            setGrades((x) => ({ ...x, [addId.trim()]: Math.max(1, x[addId.trim()] ?? 0) }))
            setAddId('')
          }}
        >
          Add as relevant
        </button>
      </div>
      {error && <div className="error">{error}</div>}
      <div className="row end">
        {initial && (
          <button className="btn danger" onClick={remove} disabled={busy}>
            Delete
          </button>
        )}
        <span className="spacer" />
        <button className="btn" onClick={onCancel}>
          Close
        </button>
        <button className="btn primary" onClick={save} disabled={busy || (query.trim() === '' && !start?.cue)}>
          Save case
        </button>
      </div>
    </div>
  )
}
