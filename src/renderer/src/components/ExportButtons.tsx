import { useRef, useState } from 'react'
import { ExportCancelledError, exportTable, type ExportFormat, type ExportSpec, type PageSource } from '../lib/exportTable'

/**
 * "Export CSV / JSONL" for a table view: the whole view (every page of the current
 * filter), with a running row count and a cancel while pages stream in.
 */
export function ExportButtons<T>({ base, spec, source, label }: { base: string; spec: ExportSpec<T>; source: PageSource<T>; label: string }) {
  const [busy, setBusy] = useState<{ format: ExportFormat; rows: number } | null>(null)
  const [note, setNote] = useState<{ error: boolean; text: string } | null>(null)
  const abort = useRef<AbortController | null>(null)
  const run = async (format: ExportFormat) => {
    const ctl = new AbortController()
    abort.current = ctl
    setNote(null)
    setBusy({ format, rows: 0 })
    try {
      const n = await exportTable(base, format, spec, source, { signal: ctl.signal, onProgress: (rows) => setBusy({ format, rows }) })
      setNote({ error: false, text: `${n.toLocaleString('en-US')} rows exported` })
    } catch (e) {
      setNote(e instanceof ExportCancelledError ? { error: false, text: 'Export cancelled' } : { error: true, text: `Export failed: ${(e as Error).message}` })
    } finally {
      setBusy(null)
      abort.current = null
    }
  }
  return (
    <span className="export-buttons" role="group" aria-label={`Export ${label}`}>
      {busy ? (
        <>
          <span className="small muted" role="status">
            exporting {busy.format.toUpperCase()}… {busy.rows.toLocaleString('en-US')} rows
          </span>
          <button type="button" className="btn small" onClick={() => abort.current?.abort()}>
            Cancel
          </button>
        </>
      ) : (
        <>
          <button type="button" className="btn small" onClick={() => void run('csv')} title={`Download every row of this ${label} view as CSV`}>
            CSV
          </button>
          <button type="button" className="btn small" onClick={() => void run('jsonl')} title={`Download every row of this ${label} view as JSONL`}>
            JSONL
          </button>
        </>
      )}
      {note && (
        <span className={`small ${note.error ? 'error' : 'muted'}`} role={note.error ? 'alert' : 'status'} data-testid="export-note">
          {note.text}
        </span>
      )}
    </span>
  )
}
