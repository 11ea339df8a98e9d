/**
 * Recall playground: query (or cue), scope, time travel, preset; every config
 * knob; the ranked candidates with their score breakdown and gates; the exact
 * context block. Slider moves re-rank locally from cached features.
 */
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react'
import type { RecallConfig, RecallTrace } from '../../../../shared/types'
import { flushSync } from 'react-dom'
import { mergeConfig } from '../../../../shared/config'
import { explainEmpty } from '../../../../shared/explainEmpty'
import { EmptyNotice } from './EmptyNotice'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtDate, fmtNum, staleDbNow } from '../../lib/format'
import { useApp } from '../../app/context'
import { ConfigPanel, type ConfigFollowers, type ConfigUpdate } from './ConfigPanel'
import { weightsForMode } from './weights'
import { withSubject } from '../../../../shared/subject'
import type { EmbedStatus } from '../../../../shared/contract'
import { ContextPreview } from './ContextPreview'
import { ResultsList, toRows, GATE_TEXT, FEATURE_COLORS, type ResultsListHandle } from './ResultsList'
import { recallRunInput, useRecall, whenIdleTimes, type RecallRequest, type RecallView } from './useRecall'
import { DragFastPath } from './dragFastPath'
import { changesFromPinned, useBaselineRanks, type Baseline, type RankChange } from './baseline'
import { SavedConfigs } from './SavedConfigs'
import type { SavedConfig } from '../../../../shared/savedConfigs'
import { presetOptions, type PresetOption } from './presetOptions'
import { RequestPanel, type RequestEditing } from './RequestPanel'
import { CaseFromRecallButton } from '../eval/CaseFromRecall'
import { ExportButtons } from '../../components/ExportButtons'
import { listSource } from '../../lib/exportTable'
import { rememberRecallSettings } from '../../lib/recallSettings'
import { candidatesExport } from './candidatesExport'
import { SidePane } from '../../components/SidePane'
import { configFromParams, decodeBaseline, decodeRequest, diffConfig, encodeBaseline, encodeRecall } from './recallRoute'
import { ContextWindow } from '../context/ContextWindow'
import { useFrameCoalesced } from '../../lib/useFrameCoalesced'
import { URL_WRITE_MS, useQuietTimer } from '../../lib/quietTimer'
import { writeText } from '../../lib/writeText'
import { parsePatch, serializePatch } from '../../lib/router'
import './recall.css'
import { CreatedAt } from '../../components/CreatedAt'

/** The config as overrides over its preset (compact in a URL), or whole when the preset is unknown. */
function diffOverPreset(options: PresetOption[], preset: string, config: RecallConfig): object {
  const base = options.find((o) => o.value === preset)?.config
  return base ? (diffConfig(base, config) ?? {}) : config
}

/** Two config edits as one: `earlier`, then `later` on its result. */
function composeUpdates(earlier: ConfigUpdate, later: ConfigUpdate): ConfigUpdate {
  return (c) => later(earlier(c))
}

/** Keep the user's scope picks when switching presets. */
function withScope(config: RecallConfig, scope: RecallConfig['scope']): RecallConfig {
  const keep = { agentId: scope.agentId, userId: scope.userId, sessionId: scope.sessionId, tenantId: scope.tenantId }
  return { ...config, scope: { ...config.scope, ...Object.fromEntries(Object.entries(keep).filter(([, v]) => v !== undefined)) } }
}

/**
 * The preset's config made to work on a store the dense arm cannot search (no vectors, or none for the embedder,
 * or no embedder): lexical mode (BM25 on the raw utterance) with the similarity weight moved onto lexical and
 * minSimilarity off (there is no cosine to compare). Modes that need no vectors are left as they are.
 */
function lexicalize(c: RecallConfig): RecallConfig {
  if (c.mode !== 'dense' && c.mode !== 'hybrid') return c
  return { ...c, mode: 'lexical', weights: weightsForMode(c.weights, 'lexical'), minSimilarity: null }
}

/** Why the dense arm can find nothing in this store with this embedder, in words; null when it can. */
function noVectorsReason(s: EmbedStatus | undefined): string | null {
  if (!s) return null
  if (s.state === 'off') return 'no embedder is set (the dense arm is off)'
  if (s.state === 'unavailable') return `the embedder ${s.spec} is unreachable`
  if (s.storedVectors === 0 || s.storedVectors === null) return `this store has no ${s.model ?? s.spec} vectors`
  return null
}

export function RecallView() {
  const { navigate, nav, setParams } = useApp()
  const presets = useAsync(() => call('recall.presets', {}), [])
  const options = useMemo(() => (presets.data ? presetOptions(presets.data) : []), [presets.data])
  // The request comes from the URL (a reload, a shared link, "Try this change" from why-not, an eval case's moment)
  // and is written back to it as it is edited (below).
  const [req, setReq] = useState<RecallRequest>(() => decodeRequest(nav.params))
  // Until the user edits it: the default preset's config, or a config handed over (e.g. "Open in Recall" from a
  // tune). Derived from the loaded presets, not copied into state by an effect.
  // Does the dense arm have anything to search? A store with no vectors (an MCP memory graph, a JSONL without
  // embeddings) or none under the embedder's model opens in a working lexical configuration, and says so.
  const vectors = useAsync(() => call('embed.status', { embedder: req.embedder ?? undefined }), [req.embedder])
  const noVectors = noVectorsReason(vectors.data)
  const vectorsKnown = vectors.data !== undefined || vectors.error !== undefined
  const initialConfig = useMemo(() => {
    if (!options.length || !vectorsKnown) return null
    const base = options.find((o) => o.value === req.preset)?.config ?? options[0].config
    // A config in the URL is the user's (or a link's): taken as it is.
    return noVectors && !nav.params.config ? lexicalize(base) : configFromParams(base, nav.params)
  }, [options, req.preset, nav.params, noVectors, vectorsKnown])
  const [edited, setConfig] = useState<RecallConfig | null>(null)
  const config = edited ?? initialConfig
  // Edits from the panels are updaters of the config as it is then (stable, so the memoised panels keep theirs).
  const configNow = useRef(config)
  useLayoutEffect(() => {
    configNow.current = config
  })
  const updateConfig = useCallback(
    (update: ConfigUpdate) =>
      setConfig((prev) => {
        const base = prev ?? configNow.current
        return base ? update(base) : prev
      }),
    [],
  )
  const [live, setLive] = useState(true)
  // A memory handed over to look at (why-not's "Try this change"): selected and marked in the list.
  const [selected, setSelectedState] = useState<string | null>(nav.params.sel ?? nav.params.highlight ?? null)
  const highlight = nav.params.highlight ?? null
  const setSelected = useCallback(
    (id: string | null) => {
      setSelectedState(id)
      setParams({ sel: id ?? undefined })
    },
    [setParams],
  )

  // First load: the default preset's config, or a config handed over (e.g. "Open in Recall" from a tune).
  // A DB whose newest memory is days old (an export, the demo) is explored at the time of its last write:
  // recency against today's clock would be ~0 for everything. Said on screen; "real now" undoes it.
  const facets = useAsync(() => call('memories.facets', {}), [])
  const [autoNow, setAutoNow] = useState(false)
  // Once, when the facets arrive (React's "adjust state when a value changes" pattern, during render: no effect).
  const [facetsSeen, setFacetsSeen] = useState(facets.data)
  if (facets.data !== facetsSeen) {
    setFacetsSeen(facets.data)
    const stale = staleDbNow(facets.data?.timeRange?.max)
    if (stale !== null && req.now === null && !autoNow) {
      setAutoNow(true)
      setReq((r) => ({ ...r, now: stale }))
    }
  }

  // The request as it stands, in the URL (in place: typing is not a back step). `now` only when the user set it:
  // the automatic time travel is worked out again on load.
  const presetBase = options.find((o) => o.value === req.preset)?.config
  const autoLexical = !!noVectors && !!config && config.mode === 'lexical' && presetBase?.mode !== 'lexical'
  // Written once the edits pause (URL_WRITE_MS): history.replaceState and the route update it sets off cost
  // more than a local re-rank, and a slider drag would pay them every frame (docs/internals/performance.md).
  // Encoded then too, not on every render of a drag.
  const urlTimer = useQuietTimer(URL_WRITE_MS)
  useEffect(() => {
    if (!config) return
    urlTimer.poke(() =>
      setParams(parsePatch(serializePatch({ ...encodeRecall(req, config, presetBase, !autoNow), lexical: autoLexical ? 'auto' : undefined })), 'replace'),
    )
  }, [req, config, presetBase, autoNow, autoLexical, setParams, urlTimer])

  const choosePreset = useCallback(
    (value: string) => {
      const o = options.find((x) => x.value === value)
      if (!o) return
      setReq((r) => ({ ...r, preset: value }))
      setConfig((prev) => withScope(noVectors ? lexicalize(o.config) : o.config, (prev ?? configNow.current)?.scope ?? o.config.scope))
    },
    [options, noVectors],
  )

  if (presets.error) return <div className="page error">{presets.error.message}</div>
  if (!config) return <div className="page muted">Loading presets…</div>
  // Said for as long as the config is the lexical one it was opened in (the URL keeps the note: `lexical=auto`).
  const lexicalNote =
    (noVectors || nav.params.lexical === 'auto') && config.mode === 'lexical'
      ? `Opened in lexical mode: ${noVectors ?? 'the dense arm has nothing to search here'}. The preset's similarity weight is on lexical (BM25 on the query's words) and minSimilarity is off.`
      : null
  const timeTravelNote =
    autoNow && req.now !== null ? `Time-travelled to the newest memory (${fmtDate(req.now)} UTC): this DB's last write is in the past.` : null
  return (
    <Playground
      {...{
        req,
        setReq,
        config,
        setConfig,
        updateConfig,
        options,
        choosePreset,
        live,
        setLive,
        selected,
        setSelected,
        navigate,
        timeTravelNote,
        lexicalNote,
        highlight,
        changeNote: nav.params.change ?? null,
      }}
    />
  )
}

/**
 * The drag fast path's warm-ups after a trace arrives (`DragFastPath.warm`, one per idle moment): a function the JS
 * engine has run a few times more is compiled further (docs/internals/performance.md, "Round 6 (stop 34)").
 */
const DRAG_WARM_RUNS = 4

/** The summary's numbers for a view (what `writeSummary` writes). */
interface Summary {
  pool: number
  injected: number
  contextTokens: number
  injectedTokens: number
  status: string
}

function summaryOf(view: RecallView | null, trace: RecallTrace | null, loading: boolean): Summary {
  let pool = trace?.counts.pool ?? 0
  if (view?.local) {
    // Counted, not filtered: a drag step writes this.
    pool = view.results.length
    for (const d of view.dropped) if (d.gate !== 'scope') pool++
  }
  return {
    pool,
    injected: view?.results.length ?? 0,
    contextTokens: view?.contextTokens ?? 0,
    injectedTokens: view?.injectedTokens ?? 0,
    status: loading
      ? 'querying…'
      : view?.local
        ? `re-ranked locally in ${view.rerankMs.toFixed(2)} ms`
        : `query ${(trace?.timings.totalMs ?? 0).toFixed(0)} ms`,
  }
}

/**
 * Writes the summary's numbers (pool, injected, the block's tokens, the re-rank status) into the summary `root`:
 * their only writer, after every render of the screen and by the drag fast path without one.
 */
function writeSummary(root: HTMLElement | null, v: Summary): void {
  if (!root) return
  writeText(root.querySelector('.n-pool'), String(v.pool))
  writeText(root.querySelector('.n-injected'), String(v.injected))
  writeText(root.querySelector('.block-tokens'), String(v.contextTokens))
  const block = root.querySelector('[data-testid="block-tokens"]')
  const title = `The context block: ${v.injectedTokens} tokens of memory text (what the token budget counts) plus the template's header and per-memory labels.`
  if (block && block.getAttribute('title') !== title) block.setAttribute('title', title)
  writeText(root.querySelector('[data-testid="rerank-status"]'), v.status)
}

interface PlaygroundProps extends Omit<RequestEditing, 'scope'> {
  config: RecallConfig
  setConfig: (c: RecallConfig) => void
  selected: string | null
  setSelected: (id: string | null) => void
  navigate: ReturnType<typeof useApp>['navigate']
  timeTravelNote: string | null
  /** the config was made lexical because the dense arm has nothing to search (why, in words) */
  lexicalNote: string | null
  /** a memory to point out (handed over by why-not) */
  highlight: string | null
  /** the change that was applied on the way here, in words */
  changeNote: string | null
}

/** refreshOnRecall: simulated in the trace; written only in write mode, on request. Re-rendered when the ids change, not per slider step. */
const RefreshBox = memo(
  function RefreshBox({ ids, now }: { ids: string[]; now: number }) {
    const { db } = useApp()
    const [msg, setMsg] = useState<string | null>(null)
    return (
      <section className="refresh small" aria-label="Refresh on recall">
        <div>
          refreshOnRecall: {ids.length} memor{ids.length === 1 ? 'y' : 'ies'} would get last_used_at = {fmtDate(now)} UTC
          {db?.readOnly ? ' (simulated: the DB is open read-only).' : '.'}
        </div>
        {db && !db.readOnly && (
          <div className="row">
            <button
              className="btn small"
              onClick={async () => {
                try {
                  const r = await call('recall.refresh', { ids, now })
                  setMsg(`Wrote last_used_at for ${r.updated} memories.`)
                } catch (e) {
                  setMsg((e as Error).message)
                }
              }}
            >
              Write refresh to the agent DB
            </button>
            {msg && <span role="status">{msg}</span>}
          </div>
        )}
      </section>
    )
  },
  (a, b) => a.now === b.now && a.ids.length === b.ids.length && a.ids.every((id, i) => id === b.ids[i]),
)

function Playground({
  req,
  setReq,
  config,
  setConfig,
  updateConfig,
  options,
  choosePreset,
  live,
  setLive,
  selected,
  setSelected,
  navigate,
  timeTravelNote,
  lexicalNote,
  highlight,
  changeNote,
}: PlaygroundProps) {
  const r = useRecall(req, config, { auto: live })
  const configNow = useRef(config)
  useLayoutEffect(() => {
    configNow.current = config
  })
  const getConfig = useCallback(() => configNow.current, [])
  const trace = r.trace
  const view = r.view
  // While a slider is held, its steps are shown without a render of the screen (dragFastPath.ts); every other edit,
  // and the held one when let go, goes through React's state.
  const root = useRef<HTMLDivElement>(null)
  const summary = useRef<HTMLDivElement>(null)
  const listHandle = useRef<ResultsListHandle>(null)
  const [followers] = useState<ConfigFollowers>(() => new Set())
  const [fast] = useState(() => new DragFastPath())
  useEffect(() => () => fast.stop(), [fast])
  // A slider held: a pointer or a stepping key down on a range input of the left column, until the pointer or key
  // comes up or the input loses focus (native listeners: the pointer may come up anywhere on the page).
  const left = useRef<HTMLElement>(null)
  useEffect(() => {
    const el = left.current
    if (!el) return
    const begin = (e: Event) => fast.begin(e)
    const release = () => fast.release()
    const focusLeft = (e: Event) => fast.focusLeft(e)
    el.addEventListener('pointerdown', begin, true)
    el.addEventListener('keydown', begin, true)
    el.addEventListener('keyup', release, true)
    el.addEventListener('focusout', focusLeft, true)
    document.addEventListener('pointerup', release, true)
    document.addEventListener('pointercancel', release, true)
    return () => {
      el.removeEventListener('pointerdown', begin, true)
      el.removeEventListener('keydown', begin, true)
      el.removeEventListener('keyup', release, true)
      el.removeEventListener('focusout', focusLeft, true)
      document.removeEventListener('pointerup', release, true)
      document.removeEventListener('pointercancel', release, true)
    }
  }, [fast])
  // A dragged slider fires faster than the screen refreshes: one re-rank per frame, the last value.
  // Updaters given within one frame are composed: two knobs moved in the same frame both count.
  const applyEdit = useCallback((u: ConfigUpdate) => fast.apply(u), [fast])
  const updateConfigPerFrame = useFrameCoalesced(applyEdit, composeUpdates)
  // "Pin baseline": the markers compare with a pinned config instead of the previous change.
  // In the URL (`pin=`): a copied link or a reload keeps comparing with the same pinned config.
  const app = useApp()
  const [baseline, setBaselineState] = useState<Baseline | null>(() => decodeBaseline(app.nav.params))
  const appSetParams = app.setParams
  const setBaseline = useCallback(
    (b: Baseline | null) => {
      setBaselineState(b)
      appSetParams({ pin: encodeBaseline(b) }, 'replace')
    },
    [appSetParams],
  )
  const loadSaved = useCallback(
    (c: SavedConfig) => {
      if (c.preset && options.some((o) => o.value === c.preset)) setReq((x) => ({ ...x, preset: c.preset! }))
      setConfig(c.config)
    },
    [options, setReq, setConfig],
  )
  // Sessions have no memory page to open.
  const sessionUnits = trace?.unit === 'session'
  const openRow = useCallback((id: string) => (sessionUnits ? undefined : navigate('browse', { memoryId: id })), [sessionUnits, navigate])
  const pinned = useBaselineRanks(req, trace, baseline)
  const changes = useMemo(
    () => (!baseline ? r.changes : view ? changesFromPinned(pinned.ranks, view.results) : new Map<string, RankChange>()),
    [baseline, r.changes, pinned.ranks, view],
  )
  const rows = useMemo(() => (view ? toRows(view.results, view.dropped) : []), [view])
  const pinnedRanks = pinned.ranks
  const tracker = r.tracker
  // The rank changes of a view shown without a render: through the same tracker (or pinned baseline) as a render's.
  const changesOf = useCallback(
    (v: RecallView) => {
      const t = tracker.changesFor(v)
      return !baseline ? t : changesFromPinned(pinnedRanks, v.results)
    },
    [tracker, baseline, pinnedRanks],
  )
  // Compare's "my current Recall settings" starts from what is on this screen.
  useEffect(
    () => rememberRecallSettings({ preset: req.preset, config, query: req.query, now: trace?.now ?? req.now, embedder: req.embedder }),
    [req.preset, req.query, req.now, req.embedder, config, trace?.now],
  )
  // Nothing injected: which gate dropped everything and the knob to move (recomputed after every local re-rank).
  const empty = useMemo(
    () =>
      view && trace
        ? explainEmpty({
            results: view.results,
            dropped: view.dropped,
            candidates: trace.candidates,
            config,
            mode: trace.mode,
            inScope: trace.counts.inScopeCapped ? undefined : trace.counts.inScope,
            degradedReason: trace.degradedReason,
          })
        : null,
    [view, trace, config],
  )
  // A suggestion the local re-rank could not check (no arm ran, so there are no candidates to re-score) is checked
  // by running the recall with it before it is offered: offered with what it injects, or not offered at all.
  const unchecked = empty?.suggestion && empty.suggestion.wouldInject === 0 ? empty.suggestion : null
  const check = useAsync(() => call('recall.run', recallRunInput(req, mergeConfig(config, unchecked!.patch))), [JSON.stringify(unchecked), trace], {
    enabled: !!unchecked && !!trace,
  })
  const checkedEmpty = useMemo(() => {
    if (!empty || !unchecked) return null
    const n = check.data?.results.length
    if (n === undefined) return { ...empty, suggestion: null, message: `${empty.message} (checking a fix…)` }
    return n > 0
      ? { ...empty, suggestion: { ...unchecked, wouldInject: n } }
      : { ...empty, suggestion: null, message: `${empty.message} (Checked: ${unchecked.label} would still inject nothing.)` }
  }, [empty, unchecked, check.data])
  // The engine stops counting the scope at its scan threshold (5,000+); the exact count (the decay chart's total) is
  // fetched only when the engine's is a lower bound, and once per scope and time, not per recall: at a million
  // memories counting takes ~0.25 s, and the next recall waited behind it in the store's queue. Main keeps the count
  // until the DB changes, for any later time once no memory is newer (the real clock's recalls).
  const capped = !!trace?.counts.inScopeCapped
  const scopeAt = trace ? JSON.stringify({ scope: trace.config.scope, now: trace.now }) : ''
  const exactScope = useAsync(() => call('recall.scopeCount', { scope: trace!.config.scope, now: trace!.now }), [scopeAt], { enabled: capped })
  const inScope = capped && exactScope.data ? { n: exactScope.data.total, exact: true } : { n: trace?.counts.inScope ?? 0, exact: !capped }
  const stale = !!trace && (r.loading || !!r.pendingReason)
  // The centre shows the ranking, or the whole context window the agent would assemble around it (context.css hides the ranking).
  // In the URL (`tab=window`): a reload or a copied link opens the same tab.
  const { nav, setParams } = useApp()
  const [tab, setTabState] = useState<'ranking' | 'window'>(nav.params.tab === 'window' ? 'window' : 'ranking')
  // The summary's numbers are written, not rendered (writeSummary): the drag fast path writes them without a render.
  useLayoutEffect(() => writeSummary(summary.current, summaryOf(view, trace, r.loading)))
  useLayoutEffect(() =>
    fast.connect({
      context: { enabled: !!view && !stale && tab === 'ranking', trace, config, selectedId: selected, changesOf, tracker },
      list: listHandle.current,
      followers,
      writeSummary: (v) => writeSummary(summary.current, summaryOf(v, trace, false)),
      root: root.current,
      commit: (c) => flushSync(() => setConfig(c)),
      update: updateConfig,
    }),
  )
  // The fast path's steps run with the screen's own state while the page is idle after a trace arrives: the first
  // steps of a drag then run code already compiled (docs/internals/performance.md, "Round 6 (stop 34)").
  const warmState = useRef({ view, changes })
  useLayoutEffect(() => {
    warmState.current = { view, changes }
  })
  useEffect(() => {
    if (!trace) return
    return whenIdleTimes(DRAG_WARM_RUNS, () => {
      const w = warmState.current
      if (w.view) fast.warm({ view: w.view, changes: w.changes })
    })
  }, [trace, fast])
  const nowText = useMemo(() => fmtDate(trace?.now), [trace?.now])
  const hl =
    highlight && view
      ? { id: highlight, rank: view.results.find((x) => x.id === highlight)?.rank ?? null, gate: view.dropped.find((x) => x.id === highlight)?.gate ?? null }
      : null
  const requires = options.find((o) => o.value === req.preset)?.requires ?? []
  const missing = requires.filter((k) => !(config.scope as unknown as Record<string, unknown>)[k])
  // Looked up only when a row is selected: each is a scan of every candidate, on every slider step.
  const sel = selected === null ? null : (rows.find((x) => x.id === selected) ?? null)
  const selCand = selected === null ? undefined : trace?.candidates.find((c) => c.id === selected)
  const selUnit = selected ? trace?.units[selected] : undefined
  // Before the first trace, ages are previewed against the clock as of mounting (read once, not every render).
  const [mountedAt] = useState(() => Date.now())
  const now = req.now ?? trace?.now ?? mountedAt
  const setTab = (t: 'ranking' | 'window') => {
    setTabState(t)
    setParams({ tab: t === 'window' ? 'window' : undefined }, 'replace')
  }

  return (
    <div className="recall" ref={root}>
      <aside className="recall-left" aria-label="Query and configuration" ref={left}>
        <RequestPanel
          req={req}
          setReq={setReq}
          scope={config.scope}
          updateConfig={updateConfig}
          options={options}
          choosePreset={choosePreset}
          live={live}
          setLive={setLive}
          onRun={r.run}
        />
        {timeTravelNote && (
          <div className="notice small" role="status">
            {timeTravelNote}
          </div>
        )}
        {lexicalNote && (
          <div className="notice small" role="status" data-testid="lexical-note">
            {lexicalNote}
          </div>
        )}
        {missing.length > 0 && (
          <div className="notice small" role="status">
            This preset needs {missing.join(' and ')} in the scope (its seed recalls within one {missing.includes('sessionId') ? 'session' : 'agent + user'}).
          </div>
        )}
        <SavedConfigs preset={req.preset} getConfig={getConfig} baseline={baseline} onPin={setBaseline} onLoad={loadSaved} />
        {pinned.error && <div className="error small">Baseline: {pinned.error}</div>}
        <ConfigPanel config={config} onChange={updateConfigPerFrame} now={now} followers={followers} />
      </aside>

      <section className={`recall-center${tab === 'window' ? ' cw-shown' : ''}`} aria-label="Ranking">
        <div className="recall-summary" ref={summary}>
          {r.error && (
            <div className="error" role="alert">
              {r.error}
            </div>
          )}
          {trace?.degraded && (
            <div className="badge warn" role="status" title={trace.degradedReason ?? ''}>
              degraded: {trace.degradedReason}
            </div>
          )}
          {trace && (
            // Until the edit that needs a new query has run, these are the last run's numbers: said so, greyed.
            <span className="recall-counts" data-stale={stale || undefined} data-testid="recall-counts">
              {stale && (
                <span className="badge warn" title={`These numbers are from the last run; ${r.pendingReason ?? 'a new query is on its way'}.`}>
                  last run
                </span>
              )}
              <span className="badge">mode {view?.mode ?? trace.mode ?? config.mode}</span>
              <span className="badge">
                {trace.embedder.name}
                {trace.embedder.model ? `:${trace.embedder.model}` : ''}
              </span>
              <span className="small muted">
                <span data-testid="in-scope" title={inScope.exact ? 'memories in scope at this time (the decay chart counts the same)' : 'counting…'}>
                  {inScope.n.toLocaleString('en-US')}
                  {inScope.exact ? '' : '+'}
                </span>{' '}
                in scope · <span className="n-pool" /> in pool · <span className="n-injected" /> injected ·{' '}
                <span data-testid="block-tokens">
                  {/* its own fixed box: the count changes during a drag (recall.css) */}
                  <span className="block-tokens" /> tok block
                </span>{' '}
                · at {nowText} UTC
              </span>
            </span>
          )}
          {trace && (
            <>
              {/* its own fixed box: the text changes on every slider step (recall.css) */}
              <span className="small muted rerank-status">
                <span data-testid="rerank-status" />
              </span>
              {r.pendingReason && !r.loading && <span className="badge accent">needs a new query: {r.pendingReason}</span>}
            </>
          )}
          {!trace && !r.loading && <span className="muted">Type a query (or a cue) to see what this agent would recall.</span>}
          <span className="spacer" style={{ flex: 1 }} />
          {trace && view && (
            <CaseFromRecallButton
              query={req.query}
              cue={req.useCue ? req.cue : null}
              scope={config.scope}
              now={trace.now}
              // The injected memories first, then the best dropped ones: a relevant memory the gates cut is worth grading too.
              results={rows.slice(0, 25).map((x) => ({ id: x.id, content: trace.units[x.id]?.content ?? x.id }))}
            />
          )}
          {trace && view && <ExportButtons base="recall-candidates" spec={candidatesExport(trace.units)} source={listSource(rows)} label="candidates" />}
          <button className="btn small" onClick={() => navigate('compare', { query: req.query, agentId: config.scope.agentId, withRecall: '1' })}>
            Compare presets →
          </button>
          <button
            className="btn small"
            disabled={!req.query.trim()}
            title="The memories in this scope on a 2-D map, with the query, the injected and the dropped marked"
            onClick={() =>
              navigate('map', { query: req.query, preset: req.preset, config: JSON.stringify(config), now: trace ? String(trace.now) : undefined })
            }
          >
            Map →
          </button>
        </div>
        <div className="recall-tabs" role="tablist" aria-label="Centre view">
          <button role="tab" className="btn small" aria-selected={tab === 'ranking'} onClick={() => setTab('ranking')}>
            Ranking
          </button>
          <button role="tab" className="btn small" aria-selected={tab === 'window'} onClick={() => setTab('window')}>
            Context window
          </button>
        </div>
        {tab === 'window' &&
          (view && trace ? (
            <ContextWindow trace={trace} view={view} config={config} query={req.query} embedder={req.embedder} />
          ) : (
            <p className="cw muted">Run a recall to see the context window it fills.</p>
          ))}
        <div className="legend small">
          {(['similarity', 'lexical', 'recency', 'salience'] as const).map((k) => (
            <span key={k}>
              <span className="swatch" style={{ background: FEATURE_COLORS[k] }} /> {k}
            </span>
          ))}
          <span className="muted">bar = weighted contributions; dropped rows greyed with their gate</span>
        </div>
        {hl && (
          <div className={`notice small ${hl.rank ? 'ok' : 'warn'}`} role="status" aria-label="Highlighted memory" data-testid="highlight-status">
            {changeNote ? `Applied: ${changeNote}. ` : ''}
            Memory <span className="mono">{hl.id}</span>{' '}
            {hl.rank ? (
              <strong>is injected at rank {hl.rank}</strong>
            ) : hl.gate ? (
              <strong>is still dropped ({hl.gate})</strong>
            ) : (
              <strong>is not in the candidate pool</strong>
            )}
            .
          </div>
        )}
        {empty && !stale && <EmptyNotice empty={checkedEmpty ?? empty} onApply={(patch) => setConfig(mergeConfig(config, patch))} />}
        {view && trace && (
          <ResultsList
            rows={rows}
            units={trace.units}
            config={config}
            changes={changes}
            selectedId={selected}
            onSelect={setSelected}
            onOpen={openRow}
            handle={listHandle}
          />
        )}
      </section>

      <SidePane className="recall-right" side="right" label="Context and detail" openOn={selected}>
        {view && <ContextPreview text={view.context} tokens={view.contextTokens} budget={config.tokenBudget} template={config.template} />}
        {view && trace && view.refreshed.length > 0 && <RefreshBox ids={view.refreshed} now={trace.now} />}
        {sel && (
          <section className="cand" aria-label="Candidate detail">
            <div className="sec-head">
              <h4>{sel.rank ? `Rank ${sel.rank}` : `Dropped (${sel.gate})`}</h4>
              <span className="mono small">{sel.id}</span>
            </div>
            {sel.gate && <p className="small">Why dropped: {GATE_TEXT[sel.gate]}.</p>}
            <div className="content-block small">{selUnit ? withSubject(selUnit.content, selUnit.metadata) : null}</div>
            <table className="kv feat">
              <thead>
                <tr>
                  <td>feature</td>
                  <td>value × weight = contribution</td>
                </tr>
              </thead>
              <tbody>
                {(['similarity', 'lexical', 'recency', 'salience'] as const).map((k) => (
                  <tr key={k}>
                    <td>
                      <span className="swatch" style={{ background: FEATURE_COLORS[k] }} /> {k}
                    </td>
                    <td className="mono">
                      {fmtNum(sel.features[k], 3)} × {fmtNum(config.weights[k], 2)} = {fmtNum(sel.contributions[k], 3)}
                    </td>
                  </tr>
                ))}
                <tr>
                  <td>composite</td>
                  <td className="mono">{fmtNum(sel.score, 4)}</td>
                </tr>
                <tr>
                  <td>arm ranks</td>
                  <td className="mono">
                    dense {selCand?.denseRank ?? '—'} · lexical {selCand?.lexicalRank ?? '—'}
                    {selCand?.bm25 != null ? ` (bm25 ${selCand.bm25.toFixed(2)})` : ''}
                  </td>
                </tr>
                <tr>
                  <td>created · last used</td>
                  <td className="small">
                    <CreatedAt ms={selUnit?.createdAt} /> · {fmtDate(selUnit?.lastUsedAt)}
                  </td>
                </tr>
                <tr>
                  <td>tokens</td>
                  <td className="mono">{sel.tokens}</td>
                </tr>
              </tbody>
            </table>
            <div className="row" style={{ marginTop: 8 }}>
              {trace?.unit !== 'session' && (
                <button className="btn small" onClick={() => navigate('browse', { memoryId: sel.id })}>
                  Open memory
                </button>
              )}
              <button
                className="btn small"
                onClick={() =>
                  navigate('trace', {
                    memoryId: sel.id,
                    query: req.query,
                    preset: req.preset,
                    now: String(trace?.now ?? now),
                    config: JSON.stringify(diffOverPreset(options, req.preset, config)),
                  })
                }
              >
                Why (not)? →
              </button>
            </div>
          </section>
        )}
      </SidePane>
    </div>
  )
}
