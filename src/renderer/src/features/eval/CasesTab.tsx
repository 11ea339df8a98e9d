/**
 * Eval cases: a virtualised table (filters: split, kind, tag, search), import
 * (JSONL, LoCoMo QA) and export (JSONL download), and an editor that creates a
 * case by running the recall and grading what comes back.
 */
import { useMemo, useRef, useState } from 'react'
import type { CasesImportReport, CasesPage, EvalCaseRow } from '../../../../shared/eval'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtDate } from '../../lib/format'
import { DataTable, type Columns } from '../../components/DataTable'
import { GradeList, parseTags } from './CaseFromRecall'
import { parseOverrides, type EvalSettings } from './settings'

export function downloadText(name: string, text: string, type = 'application/x-ndjson') {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 1000)
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

export function CasesTab({ settings, dbVersion }: { settings: EvalSettings; dbVersion: number }) {
  const [split, setSplit] = useState<'all' | 'train' | 'test'>('all')
  const [kind, setKind] = useState<'' | 'graded' | 'expectEmpty' | 'unjudged'>('')
  const [tag, setTag] = useState('')
  const [search, setSearch] = useState('')
  const [version, setVersion] = useState(0)
  const [selected, setSelected] = useState<EvalCaseRow | null>(null)
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
            empty={<span className="muted">No cases yet. Create one (“New case”), save one from the Recall view, or import LoCoMo QA / JSONL.</span>}
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
        ) : (
          <div className="muted small">
            Select a case to edit it, or create a new one: type a query, find candidates with the recall engine, and grade them.
          </div>
        )}
      </aside>
    </div>
  )
}

function toLocalInput(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().slice(0, 16)
}

/** Edit or create a case; "Find candidates" runs the recall under the Evaluate settings (wide: topK 20, no floor). */
function CaseEditor({
  initial,
  settings,
  onSaved,
  onDeleted,
  onCancel,
}: {
  initial: EvalCaseRow | null
  settings: EvalSettings
  onSaved: (c: EvalCaseRow) => void
  onDeleted: () => void
  onCancel: () => void
}) {
  const facts = useAsync(() => call('memories.facets', {}), [])
  const [query, setQuery] = useState(initial?.query ?? '')
  const [name, setName] = useState(initial?.name ?? '')
  const [agentId, setAgentId] = useState(initial?.scope.agentId ?? '')
  const [userId, setUserId] = useState(initial?.scope.userId ?? '')
  const [sessionId, setSessionId] = useState(initial?.scope.sessionId ?? '')
  const [nowText, setNowText] = useState(toLocalInput(initial?.now ?? null))
  const [split, setSplit] = useState<'auto' | 'train' | 'test'>(initial?.split ?? 'auto')
  const [tags, setTags] = useState((initial?.tags ?? []).join(', '))
  const [expectEmpty, setExpectEmpty] = useState(initial?.expectEmpty ?? false)
  const [grades, setGrades] = useState<Record<string, number>>(() => Object.fromEntries((initial?.relevant ?? []).map((r) => [r.id, r.grade])))
  const [found, setFound] = useState<{ id: string; content: string; rank: number | null }[]>([])
  const [addId, setAddId] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)

  // The default `now`: the newest memory (a DB explored after its last write), like the recall view.
  const defaultNow = facts.data?.timeRange ? facts.data.timeRange.max + 60_000 : null
  const now = nowText ? Date.parse(`${nowText}:00Z`) : null
  const scope = useMemo(() => {
    const s: Record<string, string> = {}
    if (agentId) s.agentId = agentId
    if (userId) s.userId = userId
    if (sessionId) s.sessionId = sessionId
    return s
  }, [agentId, userId, sessionId])

  // Content of graded ids that the last recall did not show (one paged query).
  const gradedIds = Object.keys(grades).filter((id) => (grades[id] ?? 0) > 0)
  const missing = gradedIds.filter((id) => !found.some((f) => f.id === id))
  const extra = useAsync(
    () => (missing.length ? call('memories.page', { ids: missing, limit: Math.min(1000, missing.length) }) : Promise.resolve(null)),
    [missing.join('\u0000')],
  )
  const items = [
    ...found,
    ...missing.map((id) => ({ id, content: extra.data?.rows.find((m) => m.id === id)?.content ?? (extra.loading ? '…' : '(not in this DB)'), rank: null })),
  ]

  const findCandidates = async () => {
    setError(null)
    const o = parseOverrides(settings.overrides)
    if (!o.ok) return setError(`Evaluate config: ${o.error}`)
    setBusy(true)
    try {
      const trace = await call('recall.run', {
        query,
        preset: settings.preset,
        config: { ...(o.config ?? {}), topK: 20, floor: null, minSimilarity: null, tokenBudget: null, scope: { ...(o.config?.scope ?? {}), ...scope } },
        now: now ?? defaultNow ?? undefined,
      })
      if (now === null && trace.now) setNowText(toLocalInput(trace.now))
      setFound(trace.results.map((r) => ({ id: r.id, content: trace.units[r.id]?.content ?? r.id, rank: r.rank })))
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  const save = async () => {
    setError(null)
    setBusy(true)
    try {
      const c = await call('cases.save', {
        case: {
          ...(initial ? { id: initial.id } : {}),
          name,
          query,
          cue: initial?.cue ?? null,
          scope,
          now: now ?? defaultNow,
          relevant: expectEmpty ? [] : gradedIds.map((id) => ({ id, grade: grades[id] })),
          expectEmpty,
          tags: parseTags(tags),
          ...(split === 'auto' ? {} : { split }),
        },
      })
      onSaved(c)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }
  const remove = async () => {
    if (!initial) return
    setBusy(true)
    try {
      await call('cases.delete', { ids: [initial.id] })
      onDeleted()
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="editor">
      <h3>{initial ? `Case ${initial.id}` : 'New case'}</h3>
      {initial?.note && <div className="notice small">{initial.note}</div>}
      <label>
        <span className="field-label">Query</span>
        <textarea className="input wide" rows={2} value={query} onChange={(e) => setQuery(e.target.value)} aria-label="Case query" />
      </label>
      <label>
        <span className="field-label">Name</span>
        <input className="input wide" value={name} placeholder="(the query)" onChange={(e) => setName(e.target.value)} />
      </label>
      <div className="grid3">
        <label>
          <span className="field-label">Agent</span>
          <select className="input" aria-label="Case agent" value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            <option value="">any</option>
            {(facts.data?.agents ?? []).map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="field-label">User</span>
          <input className="input" value={userId} onChange={(e) => setUserId(e.target.value)} />
        </label>
        <label>
          <span className="field-label">Session</span>
          <input className="input" value={sessionId} onChange={(e) => setSessionId(e.target.value)} />
        </label>
      </div>
      <div className="grid3">
        <label>
          <span className="field-label">Now (UTC)</span>
          <input
            className="input"
            type="datetime-local"
            value={nowText}
            onChange={(e) => setNowText(e.target.value)}
            title={defaultNow ? `empty: ${fmtDate(defaultNow)} (newest memory)` : ''}
          />
        </label>
        <label>
          <span className="field-label">Split</span>
          <select className="input" value={split} onChange={(e) => setSplit(e.target.value as typeof split)}>
            <option value="auto">auto (by id)</option>
            <option value="train">train</option>
            <option value="test">test</option>
          </select>
        </label>
        <label>
          <span className="field-label">Tags</span>
          <input className="input" value={tags} onChange={(e) => setTags(e.target.value)} />
        </label>
      </div>
      <label className="toggle">
        <input type="checkbox" checked={expectEmpty} onChange={(e) => setExpectEmpty(e.target.checked)} />
        Nothing should be recalled (expect empty)
      </label>
      <div className="row">
        <button className="btn" onClick={findCandidates} disabled={busy || query.trim() === ''}>
          Find candidates
        </button>
        <span className="small muted">runs {settings.preset} with topK 20, no floor</span>
      </div>
      <GradeList items={items} grades={grades} onGrade={(id, g) => setGrades((x) => ({ ...x, [id]: g }))} disabled={expectEmpty} />
      <div className="row">
        <input className="input" placeholder="memory id" aria-label="Add memory id" value={addId} onChange={(e) => setAddId(e.target.value)} />
        <button
          className="btn"
          disabled={addId.trim() === ''}
          onClick={() => {
            setGrades((x) => ({ ...x, [addId.trim()]: Math.max(1, x[addId.trim()] ?? 0) }))
            setAddId('')
          }}
        >
          Add as relevant
        </button>
      </div>
      {error && <div className="error">{error}</div>}
      <div className="row end">
        {initial && (
          <button className="btn danger" onClick={remove} disabled={busy}>
            Delete
          </button>
        )}
        <span className="spacer" />
        <button className="btn" onClick={onCancel}>
          Close
        </button>
        <button className="btn primary" onClick={save} disabled={busy || (query.trim() === '' && !initial?.cue)}>
          Save case
        </button>
      </div>
    </div>
  )
}
