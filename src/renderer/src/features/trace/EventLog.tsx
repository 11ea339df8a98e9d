/**
 * The recall log: filters (agent, user, session, injected memory, text), a
 * timeline of events by preset (click a bar to zoom into its window), and the
 * events newest first, paged.
 */
import { useEffect, useEffectEvent, useMemo, useState, type KeyboardEvent } from 'react'
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'
import type { Page, RecallEvent } from '../../../../shared/types'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { SEARCH_QUIET_MS, useQuietTimer } from '../../lib/quietTimer'
import { TraceSources } from './TraceSources'
import { fmtDate, fmtInt } from '../../lib/format'
import { oneLine } from './traceFormat'

export interface LogFilters {
  agentId?: string
  userId?: string
  sessionId?: string
  memoryId?: string
  search?: string
  after?: number
  before?: number
}

/**
 * Preset colours: a palette of their own (cyan, olive, brown, pink, gold, grey,
 * defined in trace.css for light and dark), apart from the four feature colours
 * (blue similarity, orange lexical, green recency, purple salience) that the
 * drivers and why panels show on the same screen.
 */
const KNOWN_PRESETS = ['fieldguide', 'neo', 'engram', 'portal-episodic', 'portal-semantic'] as const
const presetBase = (p: string | null) => {
  const base = p?.split(':')[0] ?? ''
  return (KNOWN_PRESETS as readonly string[]).includes(base) ? base : 'other'
}
/** A preset's colour (a CSS variable of trace.css). */
const presetColor = (p: string | null) => `var(--pst-${presetBase(p)})`

export function PresetTag({ preset }: { preset: string | null }) {
  return <span className={`tr-pst tr-pst-${presetBase(preset)}`}>{preset ?? 'no preset'}</span>
}

const PAGE = 100

export function EventLog({
  filters,
  onFilters,
  selected,
  onSelect,
  refresh = 0,
  onChanged,
}: {
  filters: LogFilters
  onFilters: (f: LogFilters) => void
  selected: string | null
  onSelect: (id: string) => void
  /** changes when events arrived (a live OTLP post, a trace log added): the log and timeline reload in place */
  refresh?: number
  /** a trace log was added or removed */
  onChanged?: () => void
}) {
  const key = JSON.stringify(filters)
  const timeline = useAsync(() => call('trace.timeline', { ...filters, bins: 48 }), [key, refresh])
  // Pages belong to the filters they were fetched for: new filters show nothing until their first page arrives.
  // Derived from the key here, so there is no reset-in-an-effect and no page of the previous filters on screen.
  const [loaded, setLoaded] = useState<{ key: string; pages: Page<RecallEvent>[]; error: string | null }>({ key: '', pages: [], error: null })
  const current = loaded.key === key
  const pages = useMemo(() => (current ? loaded.pages : []), [current, loaded.pages])
  const error = current ? loaded.error : null
  const [searchText, setSearchText] = useState(filters.search ?? '')

  useEffect(() => {
    let live = true
    // The filters from the key itself, so the key is this effect's whole input.
    const f = JSON.parse(key) as LogFilters
    call('events.page', { ...f, limit: PAGE, offset: 0 }).then(
      (p) => live && setLoaded({ key, pages: [p], error: null }),
      (e: Error) => live && setLoaded({ key, pages: [], error: e.message }),
    )
    return () => {
      live = false
    }
  }, [key, refresh])

  // Debounced text search. Typing restarts the timer; the latest filters are read when it fires.
  const commitSearch = useEffectEvent((text: string) => {
    if ((filters.search ?? '') !== text) onFilters({ ...filters, search: text || undefined })
  })
  const searchTimer = useQuietTimer(SEARCH_QUIET_MS)
  useEffect(() => searchTimer.poke(() => commitSearch(searchText)), [searchText, searchTimer])

  const events = useMemo(() => pages.flatMap((p) => p.rows), [pages])
  const total = pages[0]?.total ?? 0
  const more = () => {
    call('events.page', { ...filters, limit: PAGE, offset: events.length }).then(
      (p) => setLoaded((s) => (s.key === key ? { ...s, pages: [...s.pages, p] } : s)),
      (e: Error) => setLoaded((s) => (s.key === key ? { ...s, error: e.message } : s)),
    )
  }

  const tl = timeline.data
  const presets = tl?.presets ?? []
  const data = useMemo(() => (tl?.bins ?? []).map((b) => ({ start: b.start, ...b.byPreset })), [tl])

  // Click a bar: the log zooms into its time window.
  const zoom = (bar: unknown) => {
    const start = Number((bar as { payload?: { start?: number } })?.payload?.start)
    if (Number.isFinite(start) && tl) onFilters({ ...filters, after: start, before: start + tl.binMs - 1 })
  }

  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return
    e.preventDefault()
    const i = events.findIndex((x) => x.id === selected)
    const next = events[Math.max(0, Math.min(events.length - 1, i + (e.key === 'ArrowDown' ? 1 : -1)))]
    if (next) {
      onSelect(next.id)
      document.getElementById(`ev-${next.id}`)?.focus()
    }
  }

  return (
    <aside className="tr-log" aria-label="Recall log">
      <TraceSources refresh={refresh} onChanged={onChanged ?? (() => undefined)} />
      <div className="tr-filters">
        <select
          className="input"
          aria-label="Agent"
          value={filters.agentId ?? ''}
          onChange={(e) => onFilters({ ...filters, agentId: e.target.value || undefined })}
        >
          <option value="">agent: all</option>
          {(tl?.agents ?? []).map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
        <select
          className="input"
          aria-label="User"
          value={filters.userId ?? ''}
          onChange={(e) => onFilters({ ...filters, userId: e.target.value || undefined })}
        >
          <option value="">user: all</option>
          {(tl?.users ?? []).map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
        <input
          className="input wide"
          type="search"
          aria-label="Search queries"
          placeholder="search queries and cues"
          value={searchText}
          onChange={(e) => setSearchText(e.target.value)}
        />
        {(filters.sessionId || filters.memoryId || filters.after !== undefined) && (
          <div className="wide row" style={{ gap: 4 }}>
            {filters.sessionId && (
              <span className="tr-chip">
                session {filters.sessionId}
                <button aria-label="Clear session filter" onClick={() => onFilters({ ...filters, sessionId: undefined })}>
                  ×
                </button>
              </span>
            )}
            {filters.memoryId && (
              <span className="tr-chip" title="events that injected this memory">
                injected {filters.memoryId}
                <button aria-label="Clear memory filter" onClick={() => onFilters({ ...filters, memoryId: undefined })}>
                  ×
                </button>
              </span>
            )}
            {filters.after !== undefined && (
              <span className="tr-chip">
                {fmtDate(filters.after)} → {fmtDate(filters.before)}
                <button aria-label="Clear time window" onClick={() => onFilters({ ...filters, after: undefined, before: undefined })}>
                  ×
                </button>
              </span>
            )}
          </div>
        )}
      </div>
      <div className="tr-chart" aria-label="Events over time">
        {data.length > 0 && (
          <ResponsiveContainer width="100%" height="100%">
            <BarChart data={data} margin={{ top: 6, right: 6, bottom: 0, left: 0 }}>
              <CartesianGrid vertical={false} stroke="var(--border)" strokeDasharray="2 3" />
              <YAxis
                allowDecimals={false}
                tick={{ fontSize: 10, fill: 'var(--muted)' }}
                width={34}
                tickCount={3}
                axisLine={false}
                tickLine={false}
                label={{ value: 'events', angle: -90, position: 'insideLeft', offset: 12, fontSize: 9, fill: 'var(--muted)' }}
              />
              <XAxis
                dataKey="start"
                tickFormatter={(v: number) => new Date(v).toISOString().slice(5, 10)}
                tick={{ fontSize: 10 }}
                minTickGap={28}
                height={16}
                tickLine={false}
                axisLine={false}
              />
              <Tooltip
                labelFormatter={(v) => `${fmtDate(Number(v))} UTC`}
                contentStyle={{ fontSize: 11, background: 'var(--panel)', border: '1px solid var(--border)' }}
                cursor={{ fill: 'var(--accent-soft)' }}
              />
              {presets.map((p) => (
                <Bar key={p} dataKey={p} stackId="a" fill={presetColor(p)} isAnimationActive={false} cursor="zoom-in" onClick={zoom} />
              ))}
            </BarChart>
          </ResponsiveContainer>
        )}
      </div>
      {presets.length > 0 && (
        <ul className="tr-legend" aria-label="Presets in the timeline">
          {presets.map((p) => (
            <li key={p}>
              <i style={{ background: presetColor(p) }} />
              {p}
            </li>
          ))}
        </ul>
      )}
      <div className="tr-count">
        <span data-testid="event-count">
          {fmtInt(total)} event{total === 1 ? '' : 's'}
        </span>
        <span>{tl?.range ? `${fmtDate(tl.range.min).slice(0, 10)} → ${fmtDate(tl.range.max).slice(0, 10)}` : ''}</span>
      </div>
      {error && <div className="error">{error}</div>}
      <ul className="tr-events" role="listbox" aria-label="Events" onKeyDown={onKey}>
        {events.map((e) => (
          <li
            key={e.id}
            id={`ev-${e.id}`}
            role="option"
            tabIndex={selected === e.id || (!selected && e === events[0]) ? 0 : -1}
            aria-selected={selected === e.id}
            className="tr-ev"
            onClick={() => onSelect(e.id)}
            data-id={e.id}
            data-agent={e.agentId ?? ''}
          >
            <div className="tr-ev-top">
              <span>{fmtDate(e.at)}</span>
              <PresetTag preset={e.preset} />
              <span className="spacer" />
              <span title={`${e.agentId ?? 'no agent'} · ${e.results.length} memories injected`}>{e.results.length} injected</span>
            </div>
            <div className="tr-ev-q" title={`${e.agentId ?? ''} · ${e.userId ?? ''}`}>
              {oneLine(e.query ?? e.cue?.currentStep ?? '(no query)', 80)}
            </div>
          </li>
        ))}
        {pages.length > 0 && events.length === 0 && (
          <li className="tr-empty">
            {Object.values(filters).some((v) => v !== undefined && v !== '')
              ? 'No logged recall matches these filters.'
              : 'No recall events here yet. They come from the agent’s own records: read in place from the store (Letta messages, LangGraph checkpoints, OpenAI Agents SDK sessions, a recall_events table), from files added with --log (Claude Code transcripts, OTLP/HTTP JSON trace files), or live from an instrumented agent posting OTLP to /v1/traces.'}
          </li>
        )}
        {events.length < total && (
          <li>
            <button className="btn small tr-more" onClick={more}>
              Load {Math.min(PAGE, total - events.length)} more
            </button>
          </li>
        )}
      </ul>
    </aside>
  )
}
