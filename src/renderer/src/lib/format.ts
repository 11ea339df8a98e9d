/** Display helpers. Dates are shown in UTC so the numbers match the DB and the CLI. */

export function fmtDate(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—'
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ')
}

/**
 * A memory's created time. Stores decode a missing or unreadable `created_at`
 * as 0 (the engine needs a number to age by), so 0 means "no time", never
 * 1970-01-01: a mapped table without a created column has none.
 */
export function hasCreatedTime(ms: number | null | undefined): ms is number {
  return ms !== null && ms !== undefined && Number.isFinite(ms) && ms !== 0
}

/** What to show for a created time: the date, or "no time". */
export function fmtCreated(ms: number | null | undefined): string {
  return hasCreatedTime(ms) ? fmtDate(ms) : NO_TIME
}

export const NO_TIME = 'no time'
/** The tooltip beside "no time". */
export const NO_TIME_TITLE = 'This row has no created time (its store or mapping has no created column, or the value is empty)'

export function fmtDay(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—'
  return new Date(ms).toISOString().slice(0, 10)
}

export function fmtInt(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toLocaleString('en-US')
}

export function fmtNum(n: number | null | undefined, digits = 3): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(digits)
}

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`
  return `${(n / 1024 ** 3).toFixed(2)} GiB`
}

/**
 * The clock to explore a DB at: just after its newest memory when that is more
 * than a day old (an export, the demo — recency against today's clock would be
 * ~0 for everything), else null (the real clock).
 */
export function staleDbNow(newest: number | undefined, clock = Date.now()): number | null {
  return newest !== undefined && clock - newest > 86_400_000 ? newest + 60_000 : null
}
