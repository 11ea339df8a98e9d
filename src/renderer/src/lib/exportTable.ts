/**
 * CSV and JSONL export of a table view: one helper for every table (memories,
 * a recall's candidates, runs, cases). Rows are fetched page by page and the
 * file is assembled from the pages' text chunks (a Blob of parts), so a
 * filtered view of many thousands of rows never becomes one giant string, and
 * the export holds the whole view, not just the rows on screen.
 *
 * CSV follows RFC 4180: fields with a comma, quote, CR or LF are quoted, quotes
 * are doubled, records end with CRLF. Text cells that a spreadsheet would run
 * as a formula (starting with = + - @, or a tab / CR) get a leading `'`
 * (OWASP "CSV injection"); numbers are written as numbers.
 */

/** One exported column: its header and how to read its value from a row. */
export interface ExportColumn<T> {
  header: string
  value: (row: T) => unknown
}

export type ExportFormat = 'csv' | 'jsonl'

/** Characters that make a spreadsheet treat a cell as a formula (OWASP's list). */
const FORMULA_START = /^[=+\-@\t\r]/

/** A value as CSV cell text (not yet quoted): null → empty, arrays joined by "; ", objects as JSON. */
function cellText(v: unknown): string {
  if (v === null || v === undefined) return ''
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : ''
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (typeof v === 'string') return FORMULA_START.test(v) ? `'${v}` : v
  if (Array.isArray(v)) return cellText(v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join('; '))
  return cellText(JSON.stringify(v))
}

/** One CSV field per RFC 4180 (quoted when it holds a comma, quote, CR or LF), formula-guarded. */
export function csvField(v: unknown): string {
  const t = cellText(v)
  return /[",\r\n]/.test(t) ? `"${t.replaceAll('"', '""')}"` : t
}

/** CSV records (each ending in CRLF) for rows under the given columns. */
function csvRecords<T>(columns: readonly ExportColumn<T>[], rows: readonly T[]): string {
  let out = ''
  for (const r of rows) out += `${columns.map((c) => csvField(c.value(r))).join(',')}\r\n`
  return out
}

/** The CSV header record. */
function csvHeader(columns: readonly ExportColumn<unknown>[]): string {
  return `${columns.map((c) => csvField(c.header)).join(',')}\r\n`
}

/** JSONL: one JSON object per line (LF), for rows mapped by `toJson`. */
function jsonlRecords<T>(rows: readonly T[], toJson: (row: T) => unknown): string {
  let out = ''
  for (const r of rows) out += `${JSON.stringify(toJson(r))}\n`
  return out
}

/** A page fetcher: rows from `offset`, at most `limit`. Fewer than `limit` rows means the end. */
export type PageSource<T> = (offset: number, limit: number) => Promise<readonly T[]>

/** An in-memory list (runs, a trace's candidates) as export pages. */
export function listSource<T>(rows: readonly T[]): PageSource<T> {
  return (offset, limit) => Promise.resolve(rows.slice(offset, offset + limit))
}

export interface ExportSpec<T> {
  columns: readonly ExportColumn<T>[]
  /** The JSONL object for a row. @default the columns as `{ header: value }` */
  toJson?: (row: T) => unknown
}

/** Thrown when the user cancels an export. */
export class ExportCancelledError extends Error {
  override name = 'ExportCancelledError'
  readonly code = 'CANCELLED'
}

/**
 * Fetch every page of `source` and return the file's text parts (header first
 * for CSV). Pages are requested one after another, `pageSize` rows each.
 */
export async function collectExport<T>(
  spec: ExportSpec<T>,
  format: ExportFormat,
  source: PageSource<T>,
  opts: { pageSize?: number; signal?: AbortSignal; onProgress?: (rows: number) => void } = {},
): Promise<{ parts: string[]; rows: number }> {
  const pageSize = opts.pageSize ?? 1000
  const toJson = spec.toJson ?? ((r: T) => Object.fromEntries(spec.columns.map((c) => [c.header, c.value(r) ?? null])))
  const parts: string[] = format === 'csv' ? [csvHeader(spec.columns as readonly ExportColumn<unknown>[])] : []
  let rows = 0
  for (;;) {
    if (opts.signal?.aborted) throw new ExportCancelledError('Export cancelled')
    const page = await source(rows, pageSize)
    if (page.length) parts.push(format === 'csv' ? csvRecords(spec.columns, page) : jsonlRecords(page, toJson))
    rows += page.length
    opts.onProgress?.(rows)
    if (page.length < pageSize) break
  }
  return { parts, rows }
}

/** Offer `parts` as a file download (a blob URL: works in a browser tab and in Electron alike). */
export function downloadParts(name: string, parts: readonly BlobPart[], type: string): void {
  const url = URL.createObjectURL(new Blob(parts as BlobPart[], { type }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
}

/** Fetch the whole view and download it as `<base>.csv` or `<base>.jsonl`; resolves to the row count. */
export async function exportTable<T>(
  base: string,
  format: ExportFormat,
  spec: ExportSpec<T>,
  source: PageSource<T>,
  opts: { pageSize?: number; signal?: AbortSignal; onProgress?: (rows: number) => void } = {},
): Promise<number> {
  const { parts, rows } = await collectExport(spec, format, source, opts)
  // A UTF-8 BOM so spreadsheet apps read non-ASCII text in a CSV correctly.
  if (format === 'csv') downloadParts(`${base}.csv`, ['\uFEFF', ...parts], 'text/csv;charset=utf-8')
  else downloadParts(`${base}.jsonl`, parts, 'application/x-ndjson')
  return rows
}
