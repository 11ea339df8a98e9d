/**
 * Eval cases: a virtualised table (filters: split, kind, tag, search), import
 * (JSONL, LoCoMo QA) and export (JSONL download), and an editor that creates a
 * case by running the recall and grading what comes back.
 */
import { useRef, useState } from 'react'
import type { CasesImportReport, CasesPage, EvalCaseRow } from '../../../../shared/eval'
import { call } from '../../lib/api'
import { DataTable, type Columns } from '../../components/DataTable'
import { ExportButtons } from '../../components/ExportButtons'
import { downloadParts, type ExportSpec } from '../../lib/exportTable'
import { CaseEditor } from './CaseEditor'
import { useAsync } from '../../lib/useAsync'
import { useOptionalApp } from '../../app/context'
import type { EvalSettings } from './settings'

/** Offer text as a file download (the export helper's blob download). */
export function downloadText(name: string, text: string, type = 'application/x-ndjson') {
  downloadParts(name, [text], type)
}

const columns: Columns<EvalCaseRow> = [
  { id: 'id', accessorKey: 'id', header: 'id', size: 130, cell: (c) => <span className="mono">{c.getValue() as string}</span> },
  { id: 'name', accessorKey: 'name', header: 'question', size: 380 },
  {
    id: 'relevant',
    header: 'judged',
    size: 120,
    accessorFn: (r) => r,
    cell: (c) => {
      const r = c.row.original
      if (r.expectEmpty) return <span className="badge warn">expect empty</span>
      if (r.relevant.length === 0) return <span className="badge">unjudged</span>
      return <span className="badge accent">{r.relevant.length} relevant</span>
    },
  },
  { id: 'split', accessorKey: 'split', header: 'split', size: 70 },
  {
    id: 'tags',
    header: 'tags',
    size: 220,
    enableSorting: false,
    accessorFn: (r) => r.tags.join(', '),
    cell: (c) => <span className="small muted">{c.getValue() as string}</span>,
  },
]

/** The cases export (CSV / JSONL of the table view); JSONL rows are whole cases, as cases.list returns them. */
const EXPORT: ExportSpec<EvalCaseRow> = {
  columns: [
    { header: 'id', value: (c) => c.id },
    { header: 'name', value: (c) => c.name },
    { header: 'query', value: (c) => c.query },
    { header: 'split', value: (c) => c.split },
    { header: 'agent_id', value: (c) => c.scope.agentId },
    { header: 'user_id', value: (c) => c.scope.userId },
    { header: 'session_id', value: (c) => c.scope.sessionId },
    { header: 'now', value: (c) => (c.now === null ? null : new Date(c.now).toISOString()) },
    { header: 'expect_empty', value: (c) => c.expectEmpty },
    { header: 'relevant', value: (c) => c.relevant.map((r) => `${r.id}:${r.grade}`) },
    { header: 'tags', value: (c) => c.tags },
    { header: 'note', value: (c) => c.note },
  ],
  toJson: (c) => c,
}

export function CasesTab({ settings, dbVersion }: { settings: EvalSettings; dbVersion: number }) {
  const [split, setSplit] = useState<'all' | 'train' | 'test'>('all')
  const [kind, setKind] = useState<'' | 'graded' | 'expectEmpty' | 'unjudged'>('')
  const [tag, setTag] = useState('')
  const [search, setSearch] = useState('')
  const [version, setVersion] = useState(0)
  // The open case is in the URL (#/eval?tab=cases&case=…); on a reload it is fetched by id.
  const app = useOptionalApp()
  const linked = app?.nav.params.case
  const [picked, setPicked] = useState<EvalCaseRow | null>(null)
  const linkedCase = useAsync(() => call('cases.get', { id: linked! }), [linked], { enabled: !!linked && picked?.id !== linked })
  const selected = picked ?? (linkedCase.data && linkedCase.data.id === linked ? linkedCase.data : null)
  const setSelected = (c: EvalCaseRow | null) => {
    setPicked(c)
    app?.setParams({ case: c?.id })
  }
  const filtered = split !== 'all' || kind !== '' || tag !== '' || search !== ''
  const [creating, setCreating] = useState(false)
  const [facets, setFacets] = useState<CasesPage['facets'] | null>(null)
  const [importReport, setImportReport] = useState<CasesImportReport | null>(null)
  const [error, setError] = useState<string | null>(null)
  const fileRef = useRef<HTMLInputElement>(null)
  const [importFormat, setImportFormat] = useState<'jsonl' | 'locomo'>('jsonl')

  const listPage = (offset: number, limit: number, sort: { id: string; desc: boolean } | null) =>
    call('cases.list', {
      split,
      kind: kind || undefined,
      tag: tag || undefined,
      search: search || undefined,
      offset,
      limit,
      sort: (sort?.id as 'id' | 'name' | 'split' | 'relevant' | undefined) ?? 'id',
      dir: sort?.desc ? 'desc' : 'asc',
    })
  const fetchPage = async (offset: number, limit: number, sort: { id: string; desc: boolean } | null) => {
    const p = await listPage(offset, limit, sort)
    setFacets(p.facets)
    return p
  }
  const queryKey = JSON.stringify([split, kind, tag, search, version, dbVersion])
  const refresh = () => setVersion((v) => v + 1)

  const onFile = async (f: File) => {
    setError(null)
    setImportReport(null)
    try {
      const text = await f.text()
      const r = await call('cases.import', { format: importFormat, text })
      setImportReport(r)
      refresh()
    } catch (e) {
      setError((e as Error).message)
    }
  }
  const exportAll = async () => {
    setError(null)
    try {
      const r = await call('cases.export', { split, tag: tag || undefined })
      downloadText(`eval-cases${split === 'all' ? '' : `-${split}`}.jsonl`, r.text)
    } catch (e) {
      setError((e as Error).message)
    }
  }

  return (
    <div className="cases">
      <div className="cases-main">
        <div className="toolbar">
          <input
            className="input"
            type="search"
            placeholder="Search id, name, query"
            aria-label="Search cases"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <select className="input" aria-label="Split" value={split} onChange={(e) => setSplit(e.target.value as typeof split)}>
            <option value="all">all splits</option>
            <option value="train">train</option>
            <option value="test">test</option>
          </select>
          <select className="input" aria-label="Judgment" value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
            <option value="">any judgment</option>
            <option value="graded">graded</option>
            <option value="expectEmpty">expect empty</option>
            <option value="unjudged">unjudged</option>
          </select>
          <select className="input" aria-label="Tag" value={tag} onChange={(e) => setTag(e.target.value)}>
            <option value="">any tag</option>
            {facets?.tags.map((t) => (
              <option key={t.tag} value={t.tag}>
                {t.tag} ({t.count})
              </option>
            ))}
          </select>
          <span className="spacer" />
          <button
            className="btn primary"
            onClick={() => {
              setSelected(null)
              setCreating(true)
            }}
          >
            New case
          </button>
          <select className="input" aria-label="Import format" value={importFormat} onChange={(e) => setImportFormat(e.target.value as 'jsonl' | 'locomo')}>
            <option value="jsonl">JSONL</option>
            <option value="locomo">LoCoMo QA</option>
          </select>
          <button className="btn" onClick={() => fileRef.current?.click()}>
            Import…
          </button>
          <input
            ref={fileRef}
            type="file"
            hidden
            aria-label="Import file"
            accept=".jsonl,.json,.ndjson,application/json"
            onChange={(e) => {
              const f = e.target.files?.[0]
              e.target.value = ''
              if (f) void onFile(f)
            }}
          />
          <button className="btn" onClick={exportAll}>
            Export JSONL
          </button>
        </div>
        {facets && (
          <div className="small muted facts-line" data-testid="case-facets">
            {facets.total} cases · {facets.train} train / {facets.test} test · {facets.expectEmpty} expect-empty · {facets.unjudged} unjudged
          </div>
        )}
        {importReport && (
          <div className="notice small" role="status">
            Imported {importReport.format}: {importReport.added} added, {importReport.updated} updated, {importReport.skipped} skipped
            {importReport.issues.length > 0 && (
              <details>
                <summary>{importReport.issues.length} issues</summary>
                <ul>
                  {importReport.issues.slice(0, 50).map((i, n) => (
                    <li key={n}>
                      {i.where}: {i.reason}
                    </li>
                  ))}
                </ul>
              </details>
            )}
          </div>
        )}
        {error && <div className="error">{error}</div>}
        <div className="cases-table">
          <DataTable
            label="Eval cases"
            columns={columns}
            fetchPage={fetchPage}
            queryKey={queryKey}
            rowId={(r) => r.id}
            selectedId={selected?.id ?? null}
            onSelect={(r) => {
              setCreating(false)
              setSelected(r)
            }}
            empty={
              filtered ? (
                <span className="muted">No case matches these filters.</span>
              ) : (
                <span className="muted">
                  This DB has no eval cases yet. Create one (“New case”), save one from the Recall view, or import LoCoMo QA / JSONL.
                </span>
              )
            }
            grow="name"
            tools={
              <ExportButtons base="eval-cases-view" spec={EXPORT} source={async (offset, limit) => (await listPage(offset, limit, null)).rows} label="cases" />
            }
          />
        </div>
      </div>
      <aside className="cases-side" aria-label="Case editor">
        {creating || selected ? (
          <CaseEditor
            key={selected?.id ?? 'new'}
            initial={selected}
            settings={settings}
            onSaved={(c) => {
              setCreating(false)
              setSelected(c)
              refresh()
            }}
            onDeleted={() => {
              setSelected(null)
              refresh()
            }}
            onCancel={() => {
              setCreating(false)
              setSelected(null)
            }}
          />
        ) : linked && linkedCase.error ? (
          <div className="notice small" role="status">
            Case <span className="mono">{linked}</span> is not in this DB.
          </div>
        ) : (
          <div className="muted small">
            Select a case to edit it, or create a new one: type a query, find candidates with the recall engine, and grade them.
          </div>
        )}
      </aside>
    </div>
  )
}
