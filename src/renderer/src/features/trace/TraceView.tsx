/**
 * Decision trace: the recall log (timeline → event), one event (query/cue,
 * config, injected memories with their logged scores, the rendered block), its
 * replay diff — as logged at its own time, and "today" with the current config
 * — and, beside it, "why (not) this memory?" and which memory drove it.
 *
 * Route params: `eventId` (open an event), `memoryId` (filter the log to events
 * that injected it and explain it), `query` (+ optional `preset`, `now`,
 * `config` JSON) for an ad-hoc why-not from the recall playground.
 */
import { describeIssues } from '../../../../shared/result'
import { useMemo, useState } from 'react'
import { partialConfigSchema, type PartialRecallConfig } from '../../../../shared/config'
import type { TraceReplay } from '../../../../shared/trace'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { useJobs } from '../../lib/jobs'
import { fmtDate, fmtNum, staleDbNow } from '../../lib/format'
import { useApp } from '../../app/context'
import { DriversPanel } from './DriversPanel'
import { CounterfactualPanel } from './EvidencePanel'
import { EventLog, PresetTag, type LogFilters } from './EventLog'
import { ReplayDiff } from './ReplayDiff'
import { WhyPicker, WhyResult, type WhyCandidate } from './WhyPanel'
import { activeGates, oneLine } from './traceFormat'
import { DecisionView, OriginLine, ReturnedTable, UnmatchedTable } from './EventParts'
import { SidePane } from '../../components/SidePane'
import './trace.css'

type Side = 'why' | 'drivers'

export function TraceView() {
  const { nav, navigate, setParams } = useApp()
  const p = nav.params
  // Arriving with a memory (its detail pane, "Recalled in N events"): the log shows the events that injected it.
  // The log's filters are in the URL too (`log`, JSON): a reload shows the same slice of the log.
  const [filters, setFiltersState] = useState<LogFilters>(() => parseLogParam(p.log) ?? (p.memoryId && !p.query ? { memoryId: p.memoryId } : {}))
  const setFilters = (f: LogFilters) => {
    setFiltersState(f)
    const set = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined && v !== ''))
    setParams({ log: Object.keys(set).length ? JSON.stringify(set) : '{}' }, 'replace')
  }
  const [picked, setPicked] = useState<string | null>(p.eventId ?? null)
  const [whyId, setWhyIdState] = useState<string | null>(p.why ?? p.memoryId ?? null)
  const [adhoc, setAdhoc] = useState<{ query: string; preset?: string; now?: number; config?: PartialRecallConfig } | null>(() =>
    p.query && !p.eventId ? { query: p.query, preset: p.preset, now: p.now ? Number(p.now) : undefined, config: parseConfigParam(p.config) } : null,
  )
  const [side, setSideState] = useState<Side>(p.side === 'drivers' ? 'drivers' : 'why')
  // Picks are recorded in the URL (#/trace?eventId=…&why=…): reload restores them, back steps through them.
  const setWhyId = (id: string | null) => {
    setWhyIdState(id)
    setParams({ why: id ?? undefined })
  }
  const setSide = (s: Side) => {
    setSideState(s)
    setParams({ side: s === 'why' ? undefined : s }, 'replace')
  }

  // With a memory but no event: open the newest event that injected it.
  const firstForMemory = useAsync(() => call('events.page', { memoryId: p.memoryId!, limit: 1 }), [p.memoryId], {
    enabled: !!p.memoryId && !p.eventId && !p.query,
  })
  // Derived, not copied into state by an effect: the user's pick wins once there is one.
  const eventId = picked ?? firstForMemory.data?.rows[0]?.id ?? null

  // A live OTLP post updates the receiver's standing job entry (pushed by main): the log reloads within a second.
  const liveTick = useJobs().find((j) => j.kind === 'otlp')?.updatedAt ?? 0
  const [logTick, setLogTick] = useState(0)

  const select = (id: string) => {
    setPicked(id)
    setAdhoc(null)
    // A logged event replaces an ad-hoc why-not: its query params go with it.
    setParams({ eventId: id, query: undefined, preset: undefined, now: undefined, config: undefined, from: undefined, patch: undefined })
  }

  return (
    <div className="trace">
      <EventLog
        filters={filters}
        onFilters={setFilters}
        selected={eventId}
        onSelect={select}
        refresh={liveTick + logTick}
        onChanged={() => setLogTick((n) => n + 1)}
      />
      <main className="tr-main" aria-label="Event">
        {adhoc ? (
          <AdhocHeader q={adhoc} from={p.from} />
        ) : eventId ? (
          <EventPane
            key={eventId}
            eventId={eventId}
            whyId={whyId}
            onWhy={(id) => (setWhyId(id), setSide('why'))}
            onOpenMemory={(id) => navigate('browse', { memoryId: id })}
            onSession={(s) => setFilters({ ...filters, sessionId: s })}
          />
        ) : (
          <div className="tr-empty">
            Pick a recall event on the left to see what came back, what the agent did next, and why: replay it at its own time, ask why a memory was not
            recalled, and see which memory the decision used.
            <br />
            From a memory’s detail pane, “Recalled in N events” opens its events here.
          </div>
        )}
      </main>
      <SidePane className="tr-side" side="right" label="Explain" openOn={whyId}>
        <div className="tr-tabs" role="tablist">
          <button role="tab" aria-selected={side === 'why'} onClick={() => setSide('why')}>
            Why (not)?
          </button>
          <button role="tab" aria-selected={side === 'drivers'} onClick={() => setSide('drivers')} disabled={!eventId || !!adhoc}>
            Drivers
          </button>
        </div>
        <div className="tr-pane">
          {side === 'why' ? (
            <WhyPane
              key={`${adhoc ? 'adhoc' : eventId}`}
              eventId={adhoc ? null : eventId}
              adhoc={adhoc}
              whyId={whyId}
              onWhy={setWhyId}
              onOpenMemory={(id) => navigate('browse', { memoryId: id })}
            />
          ) : eventId ? (
            <DriversPane eventId={eventId} onPick={(id) => (setWhyId(id), setSide('why'))} />
          ) : null}
        </div>
      </SidePane>
    </div>
  )
}

/** The log filters from the URL; null when absent or not a filter object (a hand-edited link). */
function parseLogParam(s: string | undefined): LogFilters | null {
  if (!s) return null
  try {
    const v: unknown = JSON.parse(s)
    if (!v || typeof v !== 'object' || Array.isArray(v)) return null
    const out: LogFilters = {}
    for (const k of ['agentId', 'userId', 'sessionId', 'memoryId', 'search'] as const) {
      const x = (v as Record<string, unknown>)[k]
      if (typeof x === 'string') out[k] = x
    }
    for (const k of ['after', 'before'] as const) {
      const x = (v as Record<string, unknown>)[k]
      if (typeof x === 'number' && Number.isFinite(x)) out[k] = x
    }
    return out
  } catch {
    return null
  }
}

function parseConfigParam(s: string | undefined): PartialRecallConfig | undefined {
  if (!s) return undefined
  try {
    const r = partialConfigSchema.safeParse(JSON.parse(s))
    return r.success ? r.data : undefined
  } catch {
    return undefined
  }
}

function AdhocHeader({ q, from }: { q: { query: string; preset?: string; now?: number }; from?: string }) {
  return (
    <div className="tr-head">
      <h2>Ad-hoc why-not</h2>
      <div className="tr-query">{q.query}</div>
      <div className="tr-meta">
        <span>
          preset <b>{q.preset ?? 'fieldguide'}</b>
        </span>
        <span>
          now <b>{q.now ? fmtDate(q.now) : 'the clock in main'}</b>
        </span>
      </div>
      <p className="muted small">
        {from ?? 'From the recall playground'}: the memory is explained for this query. Pick a logged event on the left to trace a real recall instead.
      </p>
    </div>
  )
}

/** "Today": the DB's last write when it is stale (a demo, an export), else the clock. */
function useToday(): { now: number; stale: boolean } {
  const facets = useAsync(() => call('memories.facets', {}), [])
  // Read the clock once, when the view mounts (not on every render): replays and ages stay put while you look.
  const [clock] = useState(() => Date.now())
  return useMemo(() => {
    const stale = staleDbNow(facets.data?.timeRange?.max)
    return stale !== null ? { now: stale, stale: true } : { now: clock, stale: false }
  }, [facets.data, clock])
}

function EventPane({
  eventId,
  whyId,
  onWhy,
  onOpenMemory,
  onSession,
}: {
  eventId: string
  whyId: string | null
  onWhy: (id: string) => void
  onOpenMemory: (id: string) => void
  onSession: (s: string) => void
}) {
  const detail = useAsync(() => call('trace.event', { eventId }), [eventId])
  const logged = useAsync(() => call('trace.replay', { eventId, mode: 'logged' }), [eventId])
  // The replay mode and the config patch applied to "today" are in the URL (`replay=current&patch=…`): a reload or a
  // copied link shows the same replay.
  const { nav, setParams } = useApp()
  const [mode, setModeState] = useState<'logged' | 'current'>(nav.params.replay === 'current' ? 'current' : 'logged')
  const setMode = (m: 'logged' | 'current') => {
    setModeState(m)
    setParams({ replay: m === 'current' ? 'current' : undefined }, 'replace')
  }
  const today = useToday()
  /** the clock read when "real clock" was ticked (never re-read on render: a replay per render otherwise) */
  const [clockNow, setClockNow] = useState<number | null>(null)
  const [applied, setAppliedState] = useState<PartialRecallConfig | undefined>(() => parseConfigParam(nav.params.patch))
  const [patchText, setPatchText] = useState(() => (applied ? JSON.stringify(applied) : ''))
  const setApplied = (c: PartialRecallConfig | undefined) => {
    setAppliedState(c)
    setParams({ patch: c ? JSON.stringify(c) : undefined }, 'replace')
  }
  const [patchError, setPatchError] = useState<string | null>(null)
  const now = clockNow ?? today.now
  const current = useAsync(() => call('trace.replay', { eventId, mode: 'current', now, config: applied }), [eventId, now, JSON.stringify(applied ?? null)], {
    enabled: mode === 'current',
  })

  if (detail.error)
    return (detail.error as { code?: string }).code === 'NOT_FOUND' ? (
      <div className="notice" role="status">
        Event <span className="mono">{eventId}</span> is not in this DB’s recall log.
      </div>
    ) : (
      <div className="error">{detail.error.message}</div>
    )
  const d = detail.data
  if (!d || d.event.id !== eventId) return <div className="muted">Loading {eventId}…</div>
  const e = d.event
  const replayById = new Map((logged.data?.rows ?? []).map((r) => [r.id, r]))
  // A 0-injected event: the gate that emptied it, from its replay at its own time.
  const emptyWhy = d.injected.length === 0 ? (logged.data?.trace.empty ?? null) : null
  const emptiedBy = emptyWhy?.gate ?? null
  const apply = () => {
    if (!patchText.trim()) {
      setApplied(undefined)
      setPatchError(null)
      return
    }
    try {
      const r = partialConfigSchema.safeParse(JSON.parse(patchText))
      if (!r.success) return setPatchError(describeIssues(r.error, 'config'))
      setApplied(r.data)
      setPatchError(null)
    } catch (err) {
      setPatchError(`not JSON: ${(err as Error).message}`)
    }
  }
  const shown: TraceReplay | undefined = mode === 'logged' ? logged.data : current.data
  const shownErr = mode === 'logged' ? logged.error : current.error
  const shownLoading = mode === 'logged' ? logged.loading : current.loading
  return (
    <>
      <header className="tr-head">
        <h2>
          <span className="mono">{e.id}</span> <PresetTag preset={e.preset} />
          {d.configSource !== 'logged' && <span className="badge warn">config {d.configSource}</span>}
          {d.loggedVector && <span className="badge accent">logged query vector ({d.loggedVector.dim}d)</span>}
        </h2>
        <div className="tr-meta">
          <span>
            <b>{fmtDate(e.at)}</b> UTC
          </span>
          <span>
            agent <b>{e.agentId ?? '—'}</b>
          </span>
          <span>
            user <b>{e.userId ?? '—'}</b>
          </span>
          <span>
            session{' '}
            {e.sessionId ? (
              <button className="tr-link" onClick={() => onSession(e.sessionId!)} title="show this session's events">
                {e.sessionId}
              </button>
            ) : (
              '—'
            )}
          </span>
          <span>
            turn <b>{e.turn ?? '—'}</b>
          </span>
        </div>
        <div className="tr-query" data-testid="event-query">
          {e.query ?? <span className="muted">(no query)</span>}
          {e.cue && (
            <dl className="tr-cue">
              <dt>goal</dt>
              <dd>{e.cue.goal ?? '—'}</dd>
              <dt>current step</dt>
              <dd>{e.cue.currentStep ?? '—'}</dd>
              <dt>open questions</dt>
              <dd>{e.cue.openQuestions?.length ? e.cue.openQuestions.join('; ') : '—'}</dd>
            </dl>
          )}
        </div>
        <OriginLine origin={e.origin} />
        {d.configNotes.map((n, i) => (
          <div key={i} className="notice small">
            {n}
          </div>
        ))}
      </header>

      <section className="tr-section">
        <header>
          <h3>
            {e.origin && e.origin.kind !== 'recall_events' ? 'Returned' : 'Injected'} ({d.injected.length})
          </h3>
          <span className="tr-gates small" aria-label="Active gates" data-testid="gate-chips">
            <span className="muted">
              {d.config.mode} · pool {d.config.candidatePool}
            </span>
            {activeGates(d.config).map((g) => (
              <span
                key={g.gate}
                className={`badge${emptiedBy === g.gate ? ' warn' : ''}`}
                title={emptiedBy === g.gate ? 'this gate emptied the recall' : undefined}
              >
                {g.text}
                {emptiedBy === g.gate ? ' — emptied it' : ''}
              </span>
            ))}
          </span>
        </header>
        {d.injected.length === 0 ? (
          <div className="notice" data-testid="emptied-by">
            Nothing was injected{e.preset === 'neo' ? ' (seed 004: no turn beyond the live transcript scored)' : ''}.{emptyWhy ? ` ${emptyWhy.message}` : ''}
          </div>
        ) : (
          <ReturnedTable detail={d} replayRank={(id) => replayById.get(id)?.replayed?.rank ?? null} whyId={whyId} onWhy={onWhy} onOpenMemory={onOpenMemory} />
        )}
      </section>

      <UnmatchedTable unmatched={e.unmatched} />

      <DecisionView decision={e.decision} event={e} />

      <section className="tr-section">
        <header>
          <h3>Replay</h3>
          <div className="tr-seg" role="group" aria-label="Replay mode">
            <button aria-pressed={mode === 'logged'} onClick={() => setMode('logged')}>
              As logged
            </button>
            <button aria-pressed={mode === 'current'} onClick={() => setMode('current')}>
              Today
            </button>
          </div>
        </header>
        {mode === 'current' && (
          <div className="tr-today">
            <span>
              now <b>{fmtDate(now)}</b> UTC
            </span>
            {today.stale && (
              <label className="toggle small">
                <input type="checkbox" checked={clockNow !== null} onChange={(x) => setClockNow(x.target.checked ? Date.now() : null)} /> real clock (this DB’s
                last write is {fmtDate(today.now - 60_000)})
              </label>
            )}
            <textarea
              className="input"
              aria-label="Config edits"
              placeholder='config edits over the logged config, e.g. {"weights": {"recency": 0.4}, "topK": 8}'
              value={patchText}
              onChange={(x) => setPatchText(x.target.value)}
            />
            <button className="btn small" onClick={apply}>
              Replay with these edits
            </button>
            {patchError && <span className="error small">{patchError}</span>}
          </div>
        )}
        {shownErr && <div className="error">{shownErr.message}</div>}
        {!shown && shownLoading && <div className="muted">Replaying…</div>}
        {shown && shown.eventId === eventId && <ReplayDiff replay={shown} selectedId={whyId} onPick={onWhy} />}
      </section>

      <details className="tr-fold">
        <summary>
          Context block ({d.context.tokens} tokens, {d.context.source})
        </summary>
        <div>
          {d.context.note && <p className="muted small">{d.context.note}</p>}
          <pre className="tr-block" data-testid="context-block">
            {d.context.text || '(empty)'}
          </pre>
        </div>
      </details>
      <details className="tr-fold">
        <summary>Config ({d.configSource})</summary>
        <div>
          <pre className="tr-block">{JSON.stringify(d.config, null, 2)}</pre>
        </div>
      </details>
    </>
  )
}

function WhyPane({
  eventId,
  adhoc,
  whyId,
  onWhy,
  onOpenMemory,
}: {
  eventId: string | null
  adhoc: { query: string; preset?: string; now?: number; config?: PartialRecallConfig } | null
  whyId: string | null
  onWhy: (id: string) => void
  onOpenMemory: (id: string) => void
}) {
  const { navigate } = useApp()
  const today = useToday()
  const logged = useAsync(() => call('trace.replay', { eventId: eventId!, mode: 'logged' }), [eventId], { enabled: !!eventId })
  const candidates: WhyCandidate[] = useMemo(() => {
    const t = logged.data?.trace
    if (!t) return []
    const rows = [
      ...t.results.map((r) => ({ id: r.id, score: r.score, tag: `injected #${r.rank}`, sr: r.scoreRank ?? r.rank })),
      ...t.dropped.map((d) => ({ id: d.id, score: d.score, tag: d.gate, sr: d.scoreRank ?? 1e9 })),
    ]
    rows.sort((a, b) => a.sr - b.sr)
    return rows.slice(0, 60).map((r) => ({ id: r.id, label: `${r.id} · ${fmtNum(r.score, 3)} · ${r.tag} · ${oneLine(t.units[r.id]?.content ?? '', 40)}` }))
  }, [logged.data])
  const ready = !!whyId && (!!eventId || !!adhoc)
  const why = useAsync(
    () =>
      eventId
        ? call('trace.why', { memoryId: whyId!, eventId })
        : call('trace.why', { memoryId: whyId!, query: adhoc!.query, preset: adhoc!.preset, config: adhoc!.config, now: adhoc!.now ?? today.now }),
    [whyId, eventId, adhoc ? JSON.stringify(adhoc) : '', adhoc ? today.now : 0],
    { enabled: ready },
  )
  return (
    <>
      <WhyPicker value={whyId} candidates={candidates} onExplain={onWhy} busy={why.loading} />
      {!whyId && (
        <div className="tr-empty">
          Pick a memory — from the injected list, the replay diff, the drivers, or any id — to see its scope, arm ranks, score, the gate that dropped it, and
          the smallest single change that would inject it.
        </div>
      )}
      {why.error && <div className="error">{why.error.message}</div>}
      {why.loading && !why.data && <div className="muted">Explaining…</div>}
      {ready && why.data && why.data.memoryId === whyId && (
        <WhyResult
          why={why.data}
          onOpenMemory={onOpenMemory}
          onTryChange={(p) => navigate('recall', p)}
          preset={eventId ? (logged.data?.trace.preset ?? null) : (adhoc?.preset ?? null)}
        />
      )}
    </>
  )
}

function DriversPane({ eventId, onPick }: { eventId: string; onPick: (id: string) => void }) {
  const d = useAsync(() => call('trace.drivers', { eventId }), [eventId])
  if (d.error) return <div className="error">{d.error.message}</div>
  if (!d.data || d.data.eventId !== eventId) return <div className="muted">Computing leave-one-out…</div>
  return (
    <>
      <DriversPanel drivers={d.data} onPick={onPick} />
      <CounterfactualPanel eventId={eventId} />
    </>
  )
}
