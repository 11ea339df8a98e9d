/**
 * A memory's created time as shown everywhere (Memories table and detail,
 * Recall's selected unit, Trace's injected rows and why-not panel): the UTC
 * date, or "no time" with a tooltip when the row has none.
 */
import { fmtDate, hasCreatedTime, NO_TIME, NO_TIME_TITLE } from '../lib/format'

export function CreatedAt({ ms }: { ms: number | null | undefined }) {
  if (hasCreatedTime(ms)) return <>{fmtDate(ms)}</>
  return (
    <span className="muted" title={NO_TIME_TITLE} data-testid="no-time">
      {NO_TIME}
    </span>
  )
}
