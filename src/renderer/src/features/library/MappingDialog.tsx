/**
 * "Any table by mapping": a SQLite file or a Postgres database recallscope has no
 * layout for opens here instead of failing. Pick the table whose rows are memories
 * and which column is which (pre-filled from the suggestion), watch 20 rows decode
 * live as a select changes, then Open: the store is read in place, the mapping saved
 * in its workspace. One dialog for both: the source is a prop.
 */
import { useRef, useState } from 'react'
import type { OpenInfo, PgTarget } from '../../../../shared/contract'
import type { Mapping, PreviewRow, TableInfo } from '../../../../shared/mapping'
// the lists without the schema: the Library needs no zod (docs/guide/workbench.md, "First paint and bundle sizes")
import { MAPPED_FIELDS, TIME_UNITS, type MappedField, type TimeUnit, type VectorEncoding } from '../../../../shared/mappingFields'
import { call } from '../../lib/api'
import { fmtDate } from '../../lib/format'
import { useAsync } from '../../lib/useAsync'
import './mapping.css'
import { useDialog } from '../../lib/useDialog'

const FIELD_LABEL: Record<MappedField, string> = {
  id: 'id',
  content: 'content',
  created: 'created',
  lastUsed: 'last used',
  role: 'role',
  kind: 'kind',
  tier: 'tier',
  session: 'session',
  user: 'user',
  agent: 'agent',
  salience: 'salience',
}
const UNIT_LABEL: Record<TimeUnit, string> = { iso: 'ISO text', unix_s: 'unix seconds', unix_ms: 'unix ms' }
/** The vector encodings each kind of store can hold, and how the dialog names them. */
const ENCODINGS: Record<'sqlite' | 'pg', VectorEncoding[]> = { sqlite: ['f32', 'json', 'vec0'], pg: ['pgvector', 'f32'] }
const ENCODING_LABEL: Record<'sqlite' | 'pg', Record<VectorEncoding, string>> = {
  sqlite: { f32: 'BLOB float32', json: 'JSON text array', vec0: 'sqlite-vec vec0', pgvector: 'pgvector' },
  pg: { f32: 'bytea float32', json: 'JSON text array', vec0: 'sqlite-vec vec0', pgvector: 'pgvector / real[]' },
}

/**
 * What the dialog reads: a SQLite file that opened as "unknown layout", or a Postgres database
 * whose schema holds no known layout, named as pg.connect names one (the form's fields or a saved
 * connection). `label` shows it until main answers (never with a password); `saveAs` saves the
 * connection once it opened, as the Connect form's "save as" asked.
 */
export type MapSource = { path: string } | { pg: PgTarget; label: string; saveAs?: string }

export interface MappingDialogProps {
  source: MapSource
  onOpened: (info: OpenInfo) => void
  onClose: () => void
}

export function MappingDialog({ source, onOpened, onClose }: MappingDialogProps) {
  const pg = 'pg' in source
  const kind = pg ? 'pg' : 'sqlite'
  // What every channel is given to name the store; its JSON keys the async effects.
  const target = 'pg' in source ? { pg: source.pg } : { path: source.path }
  const targetKey = JSON.stringify(target)
  const info = useAsync(() => call('store.tables', target), [targetKey])
  const tables = (info.data?.tables ?? []).filter((t) => !t.shadow && t.kind !== 'vec0')
  const [edited, setMapping] = useState<Mapping | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const ref = useRef<HTMLDivElement>(null)
  useDialog(ref, onClose) // Escape closes, focus moves in and back, Tab stays inside
  // Until the user picks something: the saved mapping, else the suggestion for the biggest table.
  const biggest = [...tables].sort((a, b) => b.rows - a.rows)[0]?.name
  const initial = useAsync(
    () => (info.data?.saved ? Promise.resolve(info.data.saved) : call('store.suggestMapping', { ...target, table: biggest })),
    [info.data, biggest],
    { enabled: !!info.data && (!!info.data.saved || !!biggest) },
  )
  const mapping = edited ?? initial.data ?? null

  async function pickTable(name: string) {
    setError(null)
    try {
      setMapping(await call('store.suggestMapping', { ...target, table: name }))
    } catch (e) {
      setError((e as Error).message)
    }
  }

  const key = mapping ? JSON.stringify(mapping) : ''
  const preview = useAsync(() => call('store.previewMapping', { ...target, mapping: mapping! }), [targetKey, key], {
    enabled: !!mapping && mapping.columns.content !== '',
  })
  const table = tables.find((t) => t.name === mapping?.table)
  const vec0Tables = (info.data?.tables ?? []).filter((t) => t.kind === 'vec0' && !t.shadow)

  const setColumn = (f: MappedField, col: string) => {
    if (!mapping) return
    const columns = { ...mapping.columns }
    if (col === '') delete columns[f]
    else columns[f] = col
    setMapping({ ...mapping, columns: { ...columns, content: f === 'content' ? col : mapping.columns.content } })
  }
  const setVector = (value: string) => {
    if (!mapping) return
    const { vector: _old, ...rest } = mapping
    if (value === '') return setMapping(rest)
    // "vec0:<table>.<column>" is a vec0 table beside the mapped one, keyed by rowid.
    const m = /^vec0:(.*)\.([^.]*)$/.exec(value)
    const vector = m ? { column: m[2], encoding: 'vec0' as const, table: m[1] } : { column: value, encoding: guessEncoding(table, value, pg) }
    setMapping({ ...rest, vector: _old?.model ? { ...vector, model: _old.model } : vector })
  }
  const vectorValue = mapping?.vector ? (mapping.vector.table ? `vec0:${mapping.vector.table}.${mapping.vector.column}` : mapping.vector.column) : ''

  const problems = preview.data?.problems ?? []
  const canOpen = !!mapping && mapping.columns.content !== '' && !!preview.data && problems.length === 0 && !preview.loading && !busy

  const open = async () => {
    if (!mapping) return
    setBusy(true)
    setError(null)
    try {
      onOpened(await call('store.openMapped', { ...target, mapping, ...('pg' in source && source.saveAs ? { saveAs: source.saveAs } : {}) }))
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="modal-back" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="modal mapdlg" role="dialog" aria-modal="true" aria-label="Open a table by mapping" ref={ref}>
        <h3>Open a table by mapping</h3>
        {pg ? (
          <p className="small muted">
            <span className="mono">{info.data?.path ?? source.label}</span> holds no memory store recallscope knows in this schema. Pick the table whose rows
            are memories and the column for each field; the server is only read (SELECT), and the mapping is saved in the local workspace for the next connect.
          </p>
        ) : (
          <p className="small muted">
            <span className="mono">{source.path}</span>{' '}
            {info.data?.format === 'lancedb'
              ? 'is a LanceDB folder with no table recallscope reads by itself (none has a text column it knows by name).'
              : 'is SQLite, but not a memory store recallscope knows.'}{' '}
            Pick the table whose rows are memories and the column for each field; the {info.data?.format === 'lancedb' ? 'folder' : 'file'} is only read, and
            the mapping is saved in its workspace for the next open.
          </p>
        )}
        {info.error && (
          <div className="error" role="alert">
            {info.error.message}
          </div>
        )}
        <div className="mapdlg-grid">
          <label className="selectfield">
            <span>table</span>
            <select className="input" aria-label="Table" value={mapping?.table ?? ''} onChange={(e) => void pickTable(e.target.value)}>
              {!mapping && <option value="">…</option>}
              {tables.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.name} ({t.rows.toLocaleString('en-US')}
                  {t.rowsCapped ? '+' : ''} rows{t.kind === 'view' ? ', view' : ''})
                </option>
              ))}
            </select>
          </label>
          {MAPPED_FIELDS.map((f) => (
            <label key={f} className="selectfield">
              <span>
                {FIELD_LABEL[f]}
                {f === 'content' ? ' *' : ''}
              </span>
              <select
                className="input"
                aria-label={`Column for ${FIELD_LABEL[f]}`}
                value={mapping?.columns[f] ?? ''}
                onChange={(e) => setColumn(f, e.target.value)}
              >
                <option value="">{f === 'id' ? (pg ? '— row position (ctid) —' : '— rowid —') : f === 'content' ? '— pick —' : '— none —'}</option>
                {table?.columns.map((c) => (
                  <option key={c.name} value={c.name}>
                    {c.name}
                    {c.type ? ` (${c.type})` : ''}
                  </option>
                ))}
              </select>
            </label>
          ))}
          <label className="selectfield">
            <span>times are</span>
            <select
              className="input"
              aria-label="Time unit"
              value={mapping?.timeUnit ?? ''}
              onChange={(e) => mapping && setMapping({ ...mapping, timeUnit: (e.target.value || undefined) as TimeUnit | undefined })}
            >
              <option value="">guess per value</option>
              {TIME_UNITS.map((u) => (
                <option key={u} value={u}>
                  {UNIT_LABEL[u]}
                </option>
              ))}
            </select>
          </label>
          <label className="selectfield">
            <span>vector</span>
            <select className="input" aria-label="Column for vector" value={vectorValue} onChange={(e) => setVector(e.target.value)}>
              <option value="">— none —</option>
              {table?.columns.map((c) => (
                <option key={c.name} value={c.name}>
                  {c.name}
                  {c.constantLength !== null ? ` (${c.seen.includes('blob') ? `${c.constantLength} bytes` : `${c.constantLength} values`})` : ''}
                </option>
              ))}
              {vec0Tables.flatMap((t) =>
                t.columns
                  .filter((c) => /\[/.test(c.type))
                  .map((c) => (
                    <option key={`${t.name}.${c.name}`} value={`vec0:${t.name}.${c.name}`}>
                      {t.name}.{c.name} (vec0, by rowid)
                    </option>
                  )),
              )}
            </select>
          </label>
          {mapping?.vector && !mapping.vector.table && (
            <label className="selectfield">
              <span>vector encoding</span>
              <select
                className="input"
                aria-label="Vector encoding"
                value={mapping.vector.encoding}
                onChange={(e) => setMapping({ ...mapping, vector: { ...mapping.vector!, encoding: e.target.value as VectorEncoding } })}
              >
                {ENCODINGS[kind].map((x) => (
                  <option key={x} value={x}>
                    {ENCODING_LABEL[kind][x]}
                  </option>
                ))}
              </select>
            </label>
          )}
        </div>
        {problems.length > 0 && (
          <ul className="mapdlg-problems" role="alert" aria-label="Mapping problems">
            {problems.map((p) => (
              <li key={`${p.field}:${p.column}:${p.message}`} className="error small">
                {p.message}
              </li>
            ))}
          </ul>
        )}
        {preview.error && <div className="error small">{preview.error.message}</div>}
        <PreviewTable rows={preview.data?.rows ?? []} loading={preview.loading} vector={preview.data?.vector ?? null} />
        {error && (
          <div className="error" role="alert">
            {error}
          </div>
        )}
        <div className="row end">
          <button className="btn" onClick={onClose}>
            Cancel
          </button>
          <button className="btn primary" disabled={!canOpen} onClick={() => void open()}>
            Open
          </button>
        </div>
      </div>
    </div>
  )
}

/** SQLite: BLOB columns are float32 vectors, text ones JSON arrays, a vec0 table's own column vec0. Postgres: bytea is float32, the rest pgvector. */
function guessEncoding(table: TableInfo | undefined, column: string, pg: boolean): VectorEncoding {
  if (table?.kind === 'vec0') return 'vec0'
  const c = table?.columns.find((x) => x.name === column)
  const blob = !!c && (c.seen.includes('blob') || /blob|bytea/i.test(c.type))
  if (pg) return blob ? 'f32' : 'pgvector'
  return blob ? 'f32' : 'json'
}

const COLS: { key: keyof PreviewRow; field: MappedField | 'vector'; label: string; show: (r: PreviewRow) => string }[] = [
  { key: 'id', field: 'id', label: 'id', show: (r) => r.id },
  { key: 'content', field: 'content', label: 'content', show: (r) => r.content },
  { key: 'createdAt', field: 'created', label: 'created', show: (r) => fmtDate(r.createdAt) },
  { key: 'lastUsedAt', field: 'lastUsed', label: 'last used', show: (r) => fmtDate(r.lastUsedAt) },
  { key: 'role', field: 'role', label: 'role', show: (r) => r.role ?? '—' },
  { key: 'kind', field: 'kind', label: 'kind', show: (r) => r.kind ?? '—' },
  { key: 'sessionId', field: 'session', label: 'session', show: (r) => r.sessionId ?? '—' },
  { key: 'userId', field: 'user', label: 'user', show: (r) => r.userId ?? '—' },
  { key: 'agentId', field: 'agent', label: 'agent', show: (r) => r.agentId ?? '—' },
  { key: 'salience', field: 'salience', label: 'salience', show: (r) => (r.salience === null ? '—' : String(r.salience)) },
  { key: 'dim', field: 'vector', label: 'vector', show: (r) => (r.dim === null ? '—' : `${r.dim}-d`) },
]

function PreviewTable({ rows, loading, vector }: { rows: PreviewRow[]; loading: boolean; vector: { dim: number; model: string } | null }) {
  return (
    <div className="mapdlg-preview" aria-label="Mapping preview" aria-busy={loading}>
      <div className="small muted">
        Preview: first {rows.length} rows as recallscope will read them{vector ? ` · vectors ${vector.dim}-d, labelled ${vector.model}` : ''}
        {loading ? ' · updating…' : ''}
      </div>
      <table className="mapdlg-table">
        <thead>
          <tr>
            {COLS.map((c) => (
              <th key={c.key}>{c.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              {COLS.map((c) => {
                const err = r.errors[c.field]
                return (
                  <td key={c.key} className={err ? 'bad' : undefined} title={err ?? undefined}>
                    {err ? `⚠ ${err}` : c.show(r)}
                  </td>
                )
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
