/**
 * "Save this recall as an eval case": the case editor (CaseEditor.tsx, the same one
 * the Cases tab uses) in a dialog, started from the recall's query, scope, time and
 * results to grade. The recall playground mounts `CaseFromRecallButton`.
 */
import { useRef, useState } from 'react'
import type { EvalCaseRow } from '../../../../shared/eval'
import type { Cue } from '../../../../shared/types'
import { CaseEditor } from './CaseEditor'
import { DEFAULT_SETTINGS } from './settings'
import { useDialog } from '../../lib/useDialog'

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

function CaseDialog(props: CaseFromRecallProps & { onClose: () => void; onSaved: (c: EvalCaseRow) => void }) {
  const { query, cue, scope, now, results, onClose, onSaved } = props
  // Takes focus on open, keeps Tab inside, Escape closes, focus returns to "Save as eval case".
  const ref = useRef<HTMLDivElement>(null)
  useDialog(ref, onClose)
  return (
    <div className="modal-back" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="modal" role="dialog" aria-modal="true" aria-label="New eval case" ref={ref}>
        <CaseEditor
          initial={null}
          draft={{ query, cue, scope, now, results }}
          settings={DEFAULT_SETTINGS}
          onSaved={onSaved}
          onDeleted={onClose}
          onCancel={onClose}
        />
      </div>
    </div>
  )
}
