/**
 * "Save this recall as an eval case": grade what the recall returned (1 useful,
 * 2 important, 3 essential; 0 = not relevant) or say that nothing should have
 * been recalled, then save through `cases.save`. The recall playground mounts
 * `CaseFromRecallButton`; the Cases tab uses `GradeList` the same way.
 */
import { useState } from 'react'
import type { EvalCaseRow } from '../../../../shared/eval'
import type { Cue } from '../../../../shared/types'
import { call } from '../../lib/api'

/** "a, b ,c" → ['a', 'b', 'c'] (the tag fields of the case editors). */
export function parseTags(text: string): string[] {
  return text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
}

const GRADE_LABELS = ['not relevant', 'useful', 'important', 'essential'] as const

/** A list of memories, each with a 0–3 grade picker. */
export function GradeList({
  items,
  grades,
  onGrade,
  disabled,
}: {
  items: readonly { id: string; content: string; rank?: number | null; note?: string }[]
  grades: Record<string, number>
  onGrade: (id: string, grade: number) => void
  disabled?: boolean
}) {
  if (items.length === 0) return <div className="notice">Nothing to grade.</div>
  return (
    <ol className="gradelist" aria-label="Grade the recalled memories">
      {items.map((it) => {
        const g = grades[it.id] ?? 0
        return (
          <li key={it.id} className={g > 0 ? 'graded' : undefined} data-id={it.id}>
            <span className="gl-rank">{it.rank ?? '·'}</span>
            <div className="gl-body">
              <div className="gl-text" title={it.content}>
                {it.content}
              </div>
              <div className="small muted mono">
                {it.id}
                {it.note ? ` · ${it.note}` : ''}
              </div>
            </div>
            <div className="grades" role="group" aria-label={`Grade for ${it.id}`}>
              {[0, 1, 2, 3].map((n) => (
                <button
                  key={n}
                  type="button"
                  className={`grade g${n}`}
                  aria-pressed={g === n}
                  disabled={disabled}
                  title={GRADE_LABELS[n]}
                  onClick={() => onGrade(it.id, n)}
                >
                  {n}
                </button>
              ))}
            </div>
          </li>
        )
      })}
    </ol>
  )
}

export interface CaseFromRecallProps {
  query: string
  cue?: Cue | null
  scope: { agentId?: string; userId?: string; sessionId?: string; tenantId?: string }
  /** the recall's `now` (epoch ms): the case replays at this moment */
  now: number | null
  results: readonly { id: string; content: string }[]
  /** called with the saved case */
  onSaved?: (c: EvalCaseRow) => void
  /** button text. @default 'Save as eval case' */
  label?: string
}

/** A button that opens the grading dialog for the current recall. */
export function CaseFromRecallButton(props: CaseFromRecallProps) {
  const [open, setOpen] = useState(false)
  const [saved, setSaved] = useState<EvalCaseRow | null>(null)
  return (
    <>
      <button
        type="button"
        className="btn"
        onClick={() => setOpen(true)}
        disabled={props.query.trim() === '' && !props.cue}
        title="Grade these results and keep them as an eval case"
      >
        {props.label ?? 'Save as eval case'}
      </button>
      {saved && !open && (
        <span className="small muted" role="status">
          saved {saved.id}
        </span>
      )}
      {open && (
        <CaseDialog
          {...props}
          onClose={() => setOpen(false)}
          onSaved={(c) => {
            setSaved(c)
            setOpen(false)
            props.onSaved?.(c)
          }}
        />
      )}
    </>
  )
}

function cleanScope(s: CaseFromRecallProps['scope']) {
  const out: CaseFromRecallProps['scope'] = {}
  for (const k of ['agentId', 'userId', 'sessionId', 'tenantId'] as const) if (s[k]) out[k] = s[k]
  return out
}

function CaseDialog(props: CaseFromRecallProps & { onClose: () => void; onSaved: (c: EvalCaseRow) => void }) {
  const { query, cue, scope, now, results, onClose, onSaved } = props
  const [name, setName] = useState(query.trim().slice(0, 80))
  const [grades, setGrades] = useState<Record<string, number>>({})
  const [expectEmpty, setExpectEmpty] = useState(false)
  const [tags, setTags] = useState('')
  const [split, setSplit] = useState<'auto' | 'train' | 'test'>('auto')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const relevant = Object.entries(grades)
    .filter(([, g]) => g > 0)
    .map(([id, grade]) => ({ id, grade }))
  const save = async () => {
    setBusy(true)
    setError(null)
    try {
      const c = await call('cases.save', {
        case: {
          name,
          query,
          cue: cue ?? null,
          scope: cleanScope(scope),
          now,
          relevant: expectEmpty ? [] : relevant,
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
  return (
    <div className="modal-back" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="modal" role="dialog" aria-modal="true" aria-label="New eval case">
        <h3>New eval case</h3>
        <div className="small muted">
          “{query}”{scope.agentId ? ` · agent ${scope.agentId}` : ''}
          {scope.sessionId ? ` · session ${scope.sessionId}` : ''}
          {now !== null ? ` · at ${new Date(now).toISOString().slice(0, 16).replace('T', ' ')}` : ''}
        </div>
        <div className="row">
          <label className="grow">
            <span className="field-label">Name</span>
            <input className="input wide" value={name} onChange={(e) => setName(e.target.value)} />
          </label>
        </div>
        <label className="toggle">
          <input type="checkbox" checked={expectEmpty} onChange={(e) => setExpectEmpty(e.target.checked)} />
          Nothing should be recalled for this query (expect empty)
        </label>
        <GradeList items={results} grades={grades} onGrade={(id, g) => setGrades((x) => ({ ...x, [id]: g }))} disabled={expectEmpty} />
        <div className="row">
          <label>
            <span className="field-label">Tags (comma-separated)</span>
            <input className="input" value={tags} onChange={(e) => setTags(e.target.value)} placeholder="billing, regression" />
          </label>
          <label>
            <span className="field-label">Split</span>
            <select className="input" value={split} onChange={(e) => setSplit(e.target.value as 'auto' | 'train' | 'test')}>
              <option value="auto">auto (by id)</option>
              <option value="train">train</option>
              <option value="test">test</option>
            </select>
          </label>
        </div>
        {!expectEmpty && relevant.length === 0 && (
          <div className="notice small">
            Grade at least one result 1–3, or mark the case expect-empty. An ungraded case is kept but only counts for tokens and the LoCoMo score.
          </div>
        )}
        {error && <div className="error">{error}</div>}
        <div className="row end">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="btn primary" onClick={save} disabled={busy}>
            {busy ? 'Saving…' : 'Save case'}
          </button>
        </div>
      </div>
    </div>
  )
}
