import { memo } from 'react'

/** The exact block the agent would inject for the current template, with its token count against the budget. */
export const ContextPreview = memo(function ContextPreview({
  text,
  tokens,
  budget,
  template,
}: {
  text: string
  tokens: number
  budget: number | null
  template: string
}) {
  const pct = budget ? Math.min(100, (100 * tokens) / Math.max(1, budget)) : 0
  const over = budget !== null && tokens > budget
  return (
    <section className="ctx" aria-label="Context preview">
      <div className="sec-head">
        <h4>Context block</h4>
        <span className="badge">{template}</span>
        <span className={`badge ${over ? 'warn' : ''}`} data-testid="context-tokens">
          {tokens} tokens{budget !== null ? ` / ${budget}` : ''}
        </span>
        <button className="btn small" onClick={() => void navigator.clipboard?.writeText(text)} disabled={!text}>
          Copy
        </button>
      </div>
      {budget !== null && (
        <div className="budgetbar" title={`${tokens} of ${budget} tokens`}>
          <span style={{ width: `${pct}%` }} className={over ? 'over' : ''} />
        </div>
      )}
      {text ? (
        <pre className="ctx-text" data-testid="context-text">
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
