import { memo, useMemo } from 'react'
import { useRestingValue } from '../../lib/useRestingValue'

/**
 * How long a slider drag must pause before the block shows its latest text. Laying out and painting the block's
 * few thousand characters cost more than the rest of a drag step (docs/internals/performance.md, "Recall
 * sliders"); a single edit shows at once.
 */
const BLOCK_REST_MS = 250

/** The exact block the agent would inject for the current template, with its token count against the budget. */
export const ContextPreview = memo(function ContextPreview(props: { text: string; tokens: number; budget: number | null; template: string }) {
  // Within a drag the block keeps the text it had when the drag began, said to be updating, until the drag rests.
  const live = useMemo(() => ({ text: props.text, tokens: props.tokens }), [props.text, props.tokens])
  const { shown, pending } = useRestingValue(live, BLOCK_REST_MS)
  const { text, tokens } = shown
  const { budget, template } = props
  const pct = budget ? Math.min(100, (100 * tokens) / Math.max(1, budget)) : 0
  const over = budget !== null && tokens > budget
  return (
    <section className="ctx" aria-label="Context preview" aria-busy={pending}>
      <div className="sec-head">
        <h4>Context block</h4>
        <span className="badge">{template}</span>
        <span className={`badge ${over ? 'warn' : ''}`} data-testid="context-tokens">
          {tokens} tokens{budget !== null ? ` / ${budget}` : ''}
        </span>
        <button className="btn small" onClick={() => void navigator.clipboard?.writeText(props.text)} disabled={!props.text}>
          Copy
        </button>
      </div>
      {budget !== null && (
        <div className="budgetbar" title={`${tokens} of ${budget} tokens`}>
          <span style={{ width: `${pct}%` }} className={over ? 'over' : ''} />
        </div>
      )}
      {text ? (
        <pre
          className="ctx-text"
          data-testid="context-text"
          data-pending={pending || undefined}
          title={pending ? 'updating when the slider rests…' : undefined}
        >
          {text}
        </pre>
      ) : (
        <p className="muted small">Nothing would be injected (an empty recall is the correct answer when nothing is relevant).</p>
      )}
      {over && (
        <p className="small" style={{ color: 'var(--warn)' }}>
          The block is over budget: the budget gate counts per-memory estimates; headers and separators add tokens.
        </p>
      )}
    </section>
  )
})
