/** Grading memories for an eval case (0 = not relevant, 1 useful, 2 important, 3 essential). */

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
