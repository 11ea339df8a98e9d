import { useEffect, useEffectEvent, useMemo, useState } from 'react'
import { createColumnHelper } from '@tanstack/react-table'
import type { MemoryRow } from '../../../../shared/contract'
import type { Session } from '../../../../shared/types'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtDay, fmtInt, fmtNum, hasCreatedTime } from '../../lib/format'
import { useApp } from '../../app/context'
import { subjectOf } from '../../../../shared/subject'
import type { RouteParams } from '../../lib/router'
import { DataTable, tableFeatureSet } from '../../components/DataTable'
import { ExportButtons } from '../../components/ExportButtons'
import type { ExportSpec } from '../../lib/exportTable'
import { MemoryDetailPane } from './MemoryDetailPane'
import { SidePane } from '../../components/SidePane'
import { useRoving } from '../../lib/useRoving'
import { SEARCH_QUIET_MS, useQuietTimer } from '../../lib/quietTimer'
import { CreatedAt } from '../../components/CreatedAt'

const helper = createColumnHelper<typeof tableFeatureSet, MemoryRow>()
// Default widths fit their longest usual value at 13 px ("2026-03-04 12:34", "procedural", "assistant");
// Content takes the spare width. Tier, last used, user and turn start hidden (the Columns chooser shows them).
const columns = helper.columns([
  helper.accessor('createdAt', { id: 'created_at', header: 'Created', size: 142, minSize: 142, cell: (c) => <CreatedAt ms={c.getValue()} /> }),
  helper.accessor('kind', {
    id: 'kind',
    header: 'Kind',
    size: 100,
    // "procedural" / "episodic" whole: narrower, the pill is cut
    minSize: 84,
    enableSorting: false,
    cell: (c) => <span className="pill-kind">{c.getValue() ?? '—'}</span>,
  }),
  helper.accessor('role', { id: 'role', header: 'Role', size: 86, minSize: 84, enableSorting: false, cell: (c) => c.getValue() ?? '—' }),
  helper.accessor('content', {
    id: 'content',
    header: 'Content',
    size: 260,
    minSize: 150,
    enableSorting: false,
    cell: (c) => {
      const snip = c.row.original.snippet
      // a graph store's observation is about an entity: the row names it first
      const subject = subjectOf(c.row.original.metadata)
      return (
        <>
          {subject && <strong className="subject">{subject}: </strong>}
          {snip ? snip.map((s, i) => (s.hit ? <mark key={i}>{s.text}</mark> : <span key={i}>{s.text}</span>)) : c.getValue()}
        </>
      )
    },
  }),
  helper.accessor('salience', { id: 'salience', header: 'Salience', size: 82, minSize: 76, cell: (c) => fmtNum(c.getValue(), 2) }),
  helper.accessor('tier', { id: 'tier', header: 'Tier', size: 90, minSize: 50, enableSorting: false, cell: (c) => c.getValue() ?? '—' }),
  helper.accessor('lastUsedAt', { id: 'last_used_at', header: 'Last used', size: 142, minSize: 90, cell: (c) => <CreatedAt ms={c.getValue()} /> }),
  helper.accessor('userId', { id: 'user', header: 'User', size: 100, minSize: 50, enableSorting: false, cell: (c) => c.getValue() ?? '—' }),
  helper.accessor('turn', { id: 'turn', header: 'Turn', size: 60, minSize: 44, cell: (c) => c.getValue() ?? '—' }),
])
const HIDDEN_AT_FIRST = ['tier', 'last_used_at', 'user', 'turn']

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())
/** The memories export: every field a person filters or reads by, content last (it is the long one). */
const EXPORT: ExportSpec<MemoryRow> = {
  columns: [
    { header: 'id', value: (m) => m.id },
    { header: 'created_at', value: (m) => (hasCreatedTime(m.createdAt) ? iso(m.createdAt) : null) },
    { header: 'agent_id', value: (m) => m.agentId },
    { header: 'user_id', value: (m) => m.userId },
    { header: 'session_id', value: (m) => m.sessionId },
    { header: 'tenant_id', value: (m) => m.tenantId },
    { header: 'turn', value: (m) => m.turn },
    { header: 'role', value: (m) => m.role },
    { header: 'kind', value: (m) => m.kind },
    { header: 'tier', value: (m) => m.tier },
    { header: 'salience', value: (m) => m.salience },
    { header: 'last_used_at', value: (m) => iso(m.lastUsedAt) },
    { header: 'use_count', value: (m) => m.useCount },
    { header: 'source', value: (m) => m.source },
    { header: 'content', value: (m) => m.content },
  ],
  // JSONL keeps the memory as the API returns it, without the search highlight
  toJson: ({ snippet: _snippet, ...m }) => m,
}

interface Filters {
  agentId?: string
  userId?: string
  sessionId?: string
  kinds?: string[]
  tiers?: string[]
  roles?: string[]
  hasEmbedding?: boolean
  search?: string
  after?: number
  before?: number
}

/** The filters in the URL, one readable key each (`#/browse?q=deploy&kind=semantic&vec=no&sort=-salience`). */
type FilterKey = 'q' | 'agent' | 'user' | 'session' | 'kind' | 'tier' | 'role' | 'vec' | 'after' | 'before'

/** The filters a URL names; malformed values (a hand-edited address) are left out, never thrown. */
function filtersFromParams(p: RouteParams): Filters {
  const ms = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined)
  return {
    search: p.q || undefined,
    agentId: p.agent,
    userId: p.user,
    sessionId: p.session,
    kinds: p.kind ? [p.kind] : undefined,
    tiers: p.tier ? [p.tier] : undefined,
    roles: p.role ? [p.role] : undefined,
    hasEmbedding: p.vec === 'yes' ? true : p.vec === 'no' ? false : undefined,
    after: ms(p.after),
    before: ms(p.before),
  }
}

/** The URL parameters for these filters (undefined removes a key). */
function paramsFromFilters(f: Filters): Record<FilterKey, string | undefined> {
  return {
    q: f.search,
    agent: f.agentId,
    user: f.userId,
    session: f.sessionId,
    kind: f.kinds?.[0],
    tier: f.tiers?.[0],
    role: f.roles?.[0],
    vec: f.hasEmbedding === undefined ? undefined : f.hasEmbedding ? 'yes' : 'no',
    after: f.after === undefined ? undefined : String(f.after),
    before: f.before === undefined ? undefined : String(f.before),
  }
}

/** `sort=created_at` ascending, `sort=-salience` descending; the default (newest first) is no key. */
function sortFromParam(v: string | undefined): { id: string; desc: boolean } {
  const id = v?.replace(/^-/, '')
  return id && SORTABLE.includes(id) ? { id, desc: v!.startsWith('-') } : { id: 'created_at', desc: true }
}
const SORTABLE = ['created_at', 'salience', 'last_used_at', 'turn']

function Select({
  label,
  value,
  options,
  onChange,
}: {
  label: string
  value: string | undefined
  options: string[]
  onChange: (v: string | undefined) => void
}) {
  return (
    <select className="input" aria-label={label} value={value ?? ''} onChange={(e) => onChange(e.target.value || undefined)}>
      <option value="">{label}: all</option>
      {options.map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </select>
  )
}

/** Sessions & memories browser: sessions list, a faceted/searchable memories table, one memory's detail. */
export function BrowseView() {
  const { nav, setParams } = useApp()
  // The search, facets and sort are in the URL: a reload, a copied link or the nav item reopens the same slice.
  const [filters, setFilters] = useState<Filters>(() => filtersFromParams(nav.params))
  const [searchText, setSearchText] = useState(filters.search ?? '')
  const [initialSort] = useState(() => sortFromParam(nav.params.sort))
  // The open memory lives in the URL (#/browse?memoryId=…): reload and back/forward keep it.
  const selected = nav.params.memoryId ?? null
  const setSelected = (id: string) => setParams({ memoryId: id })
  const facets = useAsync(() => call('memories.facets', {}), [])
  const set = (patch: Partial<Filters>) => {
    const next = { ...filters, ...patch }
    setFilters(next)
    // typing a search is written in place; a facet pick is a step back/forward walks
    setParams(paramsFromFilters(next), 'search' in patch && Object.keys(patch).length === 1 ? 'replace' : 'push')
  }
  const queryKey = JSON.stringify(filters)

  const fetchPage = useMemo(
    () => (offset: number, limit: number, sort: { id: string; desc: boolean } | null) =>
      call('memories.page', {
        ...filters,
        offset,
        limit,
        sort: (sort?.id as 'created_at' | undefined) ?? (filters.search ? 'relevance' : 'created_at'),
        dir: sort ? (sort.desc ? 'desc' : 'asc') : 'desc',
      }),
    [filters],
  )
  // The export pages through the same filter in the table's order.
  const exportSource = (sort: { id: string; desc: boolean } | null) => async (offset: number, limit: number) => (await fetchPage(offset, limit, sort)).rows

  // Search as you type: the filter follows the box 250 ms after the last key (Enter applies it at once).
  const commitSearch = useEffectEvent((text: string) => {
    const next = text.trim() || undefined
    if (next !== filters.search) set({ search: next })
  })
  const searchTimer = useQuietTimer(SEARCH_QUIET_MS)
  useEffect(() => searchTimer.poke(() => commitSearch(searchText)), [searchText, searchTimer])

  return (
    <div className="browse">
      <SidePane className="browse-sessions" side="left" label="Sessions">
        <SessionsColumn agentId={filters.agentId} userId={filters.userId} selected={filters.sessionId} onSelect={(s) => set({ sessionId: s?.id })} />
      </SidePane>
      <div className="col">
        <form
          className="facets"
          onSubmit={(e) => {
            e.preventDefault()
            set({ search: searchText.trim() || undefined })
          }}
        >
          <input
            className="input"
            style={{ flex: '1 1 220px' }}
            type="search"
            aria-label="Full-text search"
            placeholder="Full-text search (FTS5) — filters as you type"
            value={searchText}
            onChange={(e) => setSearchText(e.target.value)}
          />
          <Select label="Agent" value={filters.agentId} options={facets.data?.agents ?? []} onChange={(v) => set({ agentId: v })} />
          <Select label="User" value={filters.userId} options={facets.data?.users ?? []} onChange={(v) => set({ userId: v })} />
          <Select label="Kind" value={filters.kinds?.[0]} options={facets.data?.kinds ?? []} onChange={(v) => set({ kinds: v ? [v] : undefined })} />
          <Select label="Tier" value={filters.tiers?.[0]} options={facets.data?.tiers ?? []} onChange={(v) => set({ tiers: v ? [v] : undefined })} />
          <Select label="Role" value={filters.roles?.[0]} options={facets.data?.roles ?? []} onChange={(v) => set({ roles: v ? [v] : undefined })} />
          <select
            className="input"
            aria-label="Has embedding"
            value={filters.hasEmbedding === undefined ? '' : String(filters.hasEmbedding)}
            onChange={(e) => set({ hasEmbedding: e.target.value === '' ? undefined : e.target.value === 'true' })}
          >
            <option value="">vector: any</option>
            <option value="true">has vector</option>
            <option value="false">no vector</option>
          </select>
          <DateRange
            range={facets.data?.timeRange ?? null}
            after={filters.after}
            before={filters.before}
            onChange={(after, before) => set({ after, before })}
          />
          {filters.sessionId && (
            <button type="button" className="badge accent" onClick={() => set({ sessionId: undefined })} title="Clear the session filter">
              session {filters.sessionId} ✕
            </button>
          )}
        </form>
        <DataTable<MemoryRow>
          label="Memories"
          columns={columns}
          fetchPage={fetchPage}
          queryKey={queryKey}
          rowId={(r) => r.id}
          selectedId={selected}
          onSelect={(r) => setSelected(r.id)}
          initialSorting={[initialSort]}
          onSortChange={(sort) =>
            setParams({ sort: !sort || (sort.id === 'created_at' && sort.desc) ? undefined : `${sort.desc ? '-' : ''}${sort.id}` }, 'replace')
          }
          empty={
            <span className="muted">
              {Object.values(filters).some((v) => v !== undefined) ? 'No memory matches these filters.' : 'This DB has no memories.'}
            </span>
          }
          grow="content"
          // the text is what a person reads: at least 40 % of the table at every window width
          growShare={0.4}
          defaultHidden={HIDDEN_AT_FIRST}
          tools={(sort) => <ExportButtons base="memories" spec={EXPORT} source={exportSource(sort)} label="memories" />}
        />
      </div>
      <MemoryDetailPane id={selected} onOpen={setSelected} />
    </div>
  )
}

function DateRange({
  range,
  after,
  before,
  onChange,
}: {
  range: { min: number; max: number } | null
  after?: number
  before?: number
  onChange: (after?: number, before?: number) => void
}) {
  const toMs = (s: string, end: boolean) => (s ? Date.parse(`${s}T${end ? '23:59:59.999' : '00:00:00'}Z`) : undefined)
  return (
    <span className="row" style={{ gap: 4 }}>
      <input
        className="input"
        type="date"
        aria-label="Created after"
        min={range ? fmtDay(range.min) : undefined}
        max={range ? fmtDay(range.max) : undefined}
        value={after ? fmtDay(after) : ''}
        onChange={(e) => onChange(toMs(e.target.value, false), before)}
      />
      <span className="muted">→</span>
      <input
        className="input"
        type="date"
        aria-label="Created before"
        min={range ? fmtDay(range.min) : undefined}
        max={range ? fmtDay(range.max) : undefined}
        value={before ? fmtDay(before) : ''}
        onChange={(e) => onChange(after, toMs(e.target.value, true))}
      />
    </span>
  )
}

function SessionsColumn({
  agentId,
  userId,
  selected,
  onSelect,
}: {
  agentId?: string
  userId?: string
  selected?: string
  onSelect: (s: Session | null) => void
}) {
  const [limit, setLimit] = useState(100)
  const [search, setSearch] = useState('')
  const page = useAsync(
    () => call('sessions.page', { agentId, userId, search: search || undefined, limit, includeArchived: true }),
    [agentId, userId, search, limit],
  )
  // The cards are one Tab stop; arrows move between them (120 cards were 120 Tab stops).
  const rows = page.data?.rows ?? []
  const roving = useRoving(
    rows.length,
    rows.findIndex((s) => s.id === selected),
  )
  return (
    <div className="col">
      <input
        className="input"
        type="search"
        aria-label="Filter sessions"
        placeholder="Filter sessions…"
        value={search}
        onChange={(e) => setSearch(e.target.value)}
      />
      <div className="sessions" role="listbox" aria-label="Sessions">
        {page.error && <div className="error">{page.error.message}</div>}
        {rows.map((s, i) => (
          <div
            key={s.id}
            className="session"
            role="option"
            aria-selected={selected === s.id}
            {...roving.itemProps(i)}
            onClick={() => onSelect(selected === s.id ? null : s)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' || e.key === ' ') {
                e.preventDefault()
                onSelect(selected === s.id ? null : s)
              } else roving.itemProps(i).onKeyDown(e)
            }}
          >
            <div className="row" style={{ justifyContent: 'space-between' }}>
              {/* the agent, else the session's own name (a graph store's session is an entity: "Ada") */}
              <strong className="small">{s.agentId ?? s.id}</strong>
              <span className="small muted">{fmtDay(s.startedAt)}</span>
            </div>
            <div className="row small muted" style={{ gap: 6 }}>
              <span>{s.userId ?? '—'}</span>·<span>{fmtInt(s.memoryCount)} memories</span>
              {s.isArchived && <span className="badge">archived</span>}
            </div>
            <div className="sum">{s.summary ?? <em>no summary</em>}</div>
          </div>
        ))}
        {page.data && page.data.total > page.data.rows.length && (
          <button className="btn" style={{ margin: 8 }} onClick={() => setLimit((l) => Math.min(1000, l + 100))}>
            Show more ({fmtInt(page.data.total - page.data.rows.length)} more)
          </button>
        )}
      </div>
      <div className="small muted">{page.data ? `${fmtInt(page.data.total)}${page.data.truncated ? '+' : ''} sessions` : 'loading…'}</div>
    </div>
  )
}
