/**
 * The embedding map (issue 12): the memories in a recall's scope laid out in
 * 2-D — PCA first (exact, fast), then UMAP refining it as a background job —
 * with the query, the injected, the dropped (by gate) and, for an eval case,
 * the relevant and the missed memories marked. Hover shows text and score
 * parts, a click opens the memory, a lasso (Shift-drag) lists a region's
 * memories; the wheel zooms and a drag pans (MapCanvas).
 */
import { useEffect, useMemo, useRef, useState } from 'react'
import type { MapData, MapPoint, MapRefinement } from '../../../../shared/map'
import type { RecallConfig } from '../../../../shared/types'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { useJob } from '../../lib/jobs'
import { fmtDate, fmtNum, staleDbNow } from '../../lib/format'
import { useApp } from '../../app/context'
import { currentRecallSettings } from '../../lib/recallSettings'
import type { RouteParams } from '../../lib/router'
import { presetOptions } from '../recall/presetOptions'
import { CLASS_STYLE, drawMarker, MapCanvas } from './MapCanvas'
import { CLASSES, classify, type PointClass } from './mapGeometry'
import './map.css'
import { PresetOptionList } from '../recall/PresetOptionList'

const GATE_WORDS: Record<string, string> = {
  scope: 'out of scope',
  dedupe: 'already in the transcript',
  minSimilarity: 'below minimum similarity',
  floor: 'below the score floor',
  topK: 'beyond topK',
  budget: 'over the token budget',
}

/** A legend swatch drawn with the map's own marker code, so legend and map cannot disagree. */
function Swatch({ cls }: { cls: PointClass | 'query' }) {
  return (
    <canvas
      className="map-swatch"
      width={32}
      height={32}
      aria-hidden="true"
      ref={(c) => {
        const ctx = c?.getContext('2d')
        if (!c || !ctx) return
        ctx.clearRect(0, 0, 32, 32)
        ctx.beginPath()
        drawMarker(ctx, cls, 16, 16, cls === 'other' ? 6 : 11)
        ctx.fillStyle = getComputedStyle(c).getPropertyValue(CLASS_STYLE[cls].color).trim() || '#888'
        ctx.fill()
      }}
    />
  )
}

interface Request {
  source: 'query' | 'case'
  query: string
  preset: string
  caseId: string
  cap: number
  umap: boolean
}

/** The map request a URL names, or else the current recall settings (the Recall screen's query, preset, config and moment). */
function initialRequest(params: RouteParams): { req: Request; config: Partial<RecallConfig> | undefined; now: number | undefined; fromRecall: boolean } {
  const cfg = parseConfig(params.config)
  const now = params.now && Number.isFinite(Number(params.now)) ? Number(params.now) : undefined
  const cap = Number(params.cap)
  const base = { cap: Number.isInteger(cap) && cap >= 10 && cap <= 200_000 ? cap : 20_000, umap: params.umap !== '0' }
  const r = currentRecallSettings()
  if (params.query || params.caseId || !r)
    return {
      req: { ...base, source: params.caseId ? 'case' : 'query', query: params.query ?? '', preset: params.preset ?? 'fieldguide', caseId: params.caseId ?? '' },
      config: cfg,
      now,
      fromRecall: false,
    }
  return { req: { ...base, source: 'query', query: r.query, preset: r.preset, caseId: '' }, config: r.config, now: r.now ?? undefined, fromRecall: true }
}

function parseConfig(raw: string | undefined): Partial<RecallConfig> | undefined {
  try {
    return raw ? (JSON.parse(raw) as Partial<RecallConfig>) : undefined
  } catch {
    return undefined
  }
}

export function MapView() {
  const { nav, navigate, setParams } = useApp()
  const presets = useAsync(() => call('recall.presets', {}), [])
  const options = useMemo(() => (presets.data ? presetOptions(presets.data) : []), [presets.data])
  const cases = useAsync(() => call('cases.list', { limit: 1000 }), [])
  // The request: the URL's (a reload, a link, "Map →" from Recall, an eval case), else the current recall settings.
  const [start] = useState(() => initialRequest(nav.params))
  const handedConfig = start.config
  // As on the Recall screen: a DB whose newest memory is days old (an export, the demo) is mapped at the time of its
  // last write, else recency against today's clock would be ~0 and the gates would drop everything.
  const facets = useAsync(() => call('memories.facets', {}), [])
  const handedNow = start.now ?? staleDbNow(facets.data?.timeRange?.max) ?? undefined
  const [req, setReq] = useState<Request>(start.req)
  const [map, setMap] = useState<MapData | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [building, setBuilding] = useState(false)
  const [umap, setUmap] = useState<MapRefinement | null>(null)
  const [frame, setFrameState] = useState<'pca' | 'umap'>('pca')
  // The user's choice of frame is in the URL (`frame=pca`); UMAP is shown when it arrives unless they chose PCA.
  const wantPca = useRef(nav.params.frame === 'pca')
  const setFrame = (f: 'pca' | 'umap') => {
    wantPca.current = f === 'pca'
    setFrameState(f)
    setParams({ frame: f === 'pca' ? 'pca' : undefined }, 'replace')
  }
  const [hover, setHover] = useState<{ i: number; x: number; y: number; flip: boolean; up: boolean } | null>(null)
  const [selection, setSelectionState] = useState<number[] | null>(null)
  // The lasso's memories are in the URL (`lasso=` ids): a copied link or a reload selects them again once the
  // same map is built (ids, not a drawn region: the frame and zoom may differ).
  const pendingLasso = useRef(nav.params.lasso ? nav.params.lasso.split(',').filter(Boolean) : null)
  const setSelection = (ix: number[] | null, m = map) => {
    setSelectionState(ix)
    setParams({ lasso: ix && ix.length && m ? ix.map((i) => m.points[i].id).join(',') : undefined }, 'replace')
  }
  const refine = useJob<'map'>((r) => {
    setUmap(r)
    if (!wantPca.current) setFrameState('umap')
  })

  const build = async () => {
    setBuilding(true)
    setError(null)
    setSelectionState(null)
    setUmap(null)
    setFrameState('pca')
    refine.reset()
    // A map is built at one explicit moment (the handed one, else now) and that moment goes in the URL: the same
    // request again (a reload, the Map revisited) is the same map and the same UMAP job in main, not a new one.
    const now = handedNow ?? Date.now()
    try {
      const m = await call('map.build', {
        ...(req.source === 'case' ? { caseId: req.caseId } : { query: req.query, now, config: handedConfig }),
        preset: req.preset,
        cap: req.cap,
      })
      setMap(m)
      const want = pendingLasso.current ? new Set(pendingLasso.current) : null
      pendingLasso.current = null
      const restored = want ? m.points.flatMap((p, i) => (want.has(p.id) ? [i] : [])) : []
      setSelectionState(restored.length ? restored : null)
      setParams({
        lasso: restored.length ? restored.map((i) => m.points[i].id).join(',') : undefined,
        query: req.source === 'query' ? req.query : undefined,
        caseId: req.source === 'case' ? req.caseId : undefined,
        preset: req.preset === 'fieldguide' ? undefined : req.preset,
        cap: req.cap === 20_000 ? undefined : String(req.cap),
        umap: req.umap ? undefined : '0',
        now: req.source === 'query' ? String(m.now) : undefined,
        config: req.source === 'query' && handedConfig ? JSON.stringify(handedConfig) : undefined,
      })
      if (req.umap && m.shown >= 8) void refine.start(() => call('map.refine', { mapId: m.mapId }))
    } catch (e) {
      setError((e as Error).message)
      setMap(null)
    } finally {
      setBuilding(false)
    }
  }

  // Handed a query or a case (from Recall, Evaluate, a link, or the current recall settings): build it right away,
  // once, when the moment is known (the DB's last write for an old DB needs the facets).
  const autoBuilt = useRef(false)
  const canAuto =
    !!(start.req.source === 'case' ? start.req.caseId : start.req.query.trim()) &&
    (start.now !== undefined || facets.data !== undefined || facets.error !== undefined)
  useEffect(() => {
    if (autoBuilt.current || !canAuto) return
    autoBuilt.current = true
    void build()
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once, on arrival with a handed-over request
  }, [canAuto])

  const live = umap && map && umap.mapId === map.mapId && frame === 'umap' ? umap : null
  const coords = live ? live.coords : (map?.pca.coords ?? [])
  const queryAt = live ? live.query : (map?.pca.query ?? null)
  const selectedIds = useMemo(() => new Set(selection && map ? selection.map((i) => map.points[i].id) : []), [selection, map])
  const canBuild = !building && (req.source === 'case' ? req.caseId !== '' : req.query.trim() !== '')
  const hovered = hover && map ? map.points[hover.i] : null
  const stage = useRef<HTMLDivElement>(null)

  return (
    <div className="page map-page">
      <form
        className="map-controls row"
        aria-label="Map request"
        onSubmit={(e) => {
          e.preventDefault()
          if (canBuild) void build()
        }}
      >
        <label className="selectfield">
          <span className="small muted">Map</span>
          <select value={req.source} onChange={(e) => setReq({ ...req, source: e.target.value as Request['source'] })} aria-label="Map source">
            <option value="query">a recall query</option>
            <option value="case">an eval case</option>
          </select>
        </label>
        {req.source === 'query' ? (
          <label className="map-query">
            <span className="small muted">Query</span>
            <input value={req.query} onChange={(e) => setReq({ ...req, query: e.target.value })} aria-label="Map query" placeholder="what the agent is asked" />
          </label>
        ) : (
          <label className="selectfield">
            <span className="small muted">Eval case</span>
            <select value={req.caseId} onChange={(e) => setReq({ ...req, caseId: e.target.value })} aria-label="Eval case">
              <option value="">{cases.data?.rows.length ? 'choose a case…' : 'no eval cases in this workspace'}</option>
              {cases.data?.rows.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name || c.id} — {c.query.slice(0, 60)}
                </option>
              ))}
            </select>
          </label>
        )}
        <label className="selectfield">
          <span className="small muted">Preset</span>
          <select value={req.preset} onChange={(e) => setReq({ ...req, preset: e.target.value })} aria-label="Map preset">
            <PresetOptionList options={options} />
          </select>
        </label>
        <label className="selectfield">
          <span className="small muted">Points at most</span>
          <input
            type="number"
            min={10}
            max={200000}
            value={req.cap}
            onChange={(e) => setReq({ ...req, cap: Math.max(10, Math.min(200_000, Number(e.target.value) || 20_000)) })}
            aria-label="Points at most"
            className="map-cap"
          />
        </label>
        <label className="toggle small">
          <input type="checkbox" checked={req.umap} onChange={(e) => setReq({ ...req, umap: e.target.checked })} /> refine with UMAP
        </label>
        <button className="btn primary" type="submit" disabled={!canBuild}>
          {building ? 'Building…' : 'Build map'}
        </button>
        {handedConfig && req.source === 'query' && (
          <span className="badge accent" title={start.fromRecall ? 'The current recall settings (the Recall screen as you left it)' : undefined}>
            with the Recall screen's config
          </span>
        )}
      </form>

      {error && (
        <div className="error" role="alert">
          {error}
        </div>
      )}

      {map && (
        <div className="map-status small" role="status" data-testid="map-status">
          <span>
            Showing <strong>{map.shown.toLocaleString('en-US')}</strong> of {map.withVector.toLocaleString('en-US')} memories with a{' '}
            <span className="mono">{map.model}</span> vector
            {map.sampled ? <strong> (sampled: a seeded random sample above {map.cap.toLocaleString('en-US')}, every marked memory kept)</strong> : ''}
            {' · '}
            {map.inScope.toLocaleString('en-US')}
            {map.inScopeCapped ? '+' : ''} in scope at {fmtDate(map.now)} UTC
            {map.caseName ? ` · case ${map.caseName}` : ''}
          </span>
          <span className="map-frames" role="group" aria-label="Layout">
            <button type="button" className="btn small" aria-pressed={frame === 'pca'} onClick={() => setFrame('pca')}>
              PCA
            </button>
            <button
              type="button"
              className="btn small"
              aria-pressed={frame === 'umap'}
              disabled={!umap || umap.mapId !== map.mapId}
              onClick={() => setFrame('umap')}
            >
              UMAP
            </button>
          </span>
          {frame === 'pca' || !live ? (
            <span className="muted">
              PCA: axes explain {(100 * map.pca.explained[0]).toFixed(1)}% + {(100 * map.pca.explained[1]).toFixed(1)}% of the variance
              {map.pca.converged ? '' : ' (flat spectrum: stopped at the iteration cap)'}; query projected exactly
            </span>
          ) : (
            <span className="muted">
              UMAP ({live.nNeighbors} neighbours, {live.epochs} epochs, {(live.tookMs / 1000).toFixed(1)} s, started from the PCA frame); query placed by the
              mean of its 5 nearest memories
            </span>
          )}
          {refine.running && refine.job && (
            <span className="map-progress">
              UMAP {refine.job.total ? `${Math.round((100 * refine.job.done) / refine.job.total)}%` : '…'} {refine.job.message ? `(${refine.job.message})` : ''}{' '}
              <button type="button" className="btn small" onClick={refine.cancel}>
                Stop
              </button>
            </span>
          )}
          {refine.error && <span className="badge warn">{refine.error}</span>}
          {refine.cancelled && <span className="badge">Layout cancelled</span>}
          {map.queryNote && <span className="badge warn">{map.queryNote}</span>}
        </div>
      )}

      <div className="map-body">
        <div className="map-stage" ref={stage}>
          {map && map.shown > 0 ? (
            <MapCanvas
              points={map.points}
              coords={coords}
              query={queryAt}
              selected={selectedIds}
              onHover={(i, at) =>
                setHover(
                  i === null || !at
                    ? null
                    : { i, ...at, flip: at.x > (stage.current?.clientWidth ?? 0) - 370, up: at.y > (stage.current?.clientHeight ?? 0) - 240 },
                )
              }
              onOpen={(i) => navigate('browse', { memoryId: map.points[i].id })}
              onSelect={(ix) => setSelection(ix)}
            />
          ) : (
            <div className="muted map-empty">
              {map
                ? `No memory in this scope has a ${map.model} vector.`
                : building
                  ? 'Running the recall and laying out the scope…'
                  : 'Pick a query (or an eval case) and build the map of the memories in its scope.'}
            </div>
          )}
          {hovered && hover && <HoverCard p={hovered} x={hover.x} y={hover.y} flip={hover.flip} up={hover.up} />}
        </div>
        <aside className="map-side" aria-label="Legend and selection">
          <Legend map={map} />
          {selection && map && (
            <Selection map={map} indices={selection} onOpen={(id) => navigate('browse', { memoryId: id })} onClear={() => setSelection(null)} />
          )}
          {!selection && map && <p className="small muted">Shift-drag on the map (or turn on Lasso) to select a region and list its memories.</p>}
        </aside>
      </div>
    </div>
  )
}

function Legend({ map }: { map: MapData | null }) {
  const counts = useMemo(() => {
    const c: Record<PointClass, number> = { other: 0, dropped: 0, injected: 0, hit: 0, missed: 0 }
    for (const p of map?.points ?? []) c[classify(p)]++
    return c
  }, [map])
  const withCase = !!map?.caseId
  const shown = CLASSES.filter((k) => withCase || (k !== 'hit' && k !== 'missed'))
  return (
    <section aria-label="Legend" className="map-legend">
      <h4>Legend</h4>
      <ul>
        <li>
          <Swatch cls="query" /> {CLASS_STYLE.query.label}
          {map && !map.pca.query ? <span className="muted"> (not placed)</span> : null}
        </li>
        {[...shown].reverse().map((k) => (
          <li key={k} data-class={k}>
            <Swatch cls={k} /> {CLASS_STYLE[k].label}
            {map ? <span className="muted mono"> {counts[k].toLocaleString('en-US')}</span> : null}
          </li>
        ))}
      </ul>
      <p className="small muted map-keys" data-testid="map-keys">
        Scroll: zoom about the cursor · drag: pan · Shift-drag: lasso · double-click or <kbd>0</kbd>: reset. Focused: <kbd>+</kbd> <kbd>−</kbd> and the arrows.
      </p>
      {map && withCase && map.counts.relevant > map.counts.relevantOnMap && (
        <p className="small muted">
          {map.counts.relevant - map.counts.relevantOnMap} relevant memor{map.counts.relevant - map.counts.relevantOnMap === 1 ? 'y is' : 'ies are'} not on the
          map (out of scope or without a {map.model} vector).
        </p>
      )}
    </section>
  )
}

/** The hovered point's card, beside the cursor (on its left near the right edge, above it near the bottom). */
function HoverCard({ p, x, y, flip, up }: { p: MapPoint; x: number; y: number; flip: boolean; up: boolean }) {
  const cls = classify(p)
  return (
    <div
      className="map-hover small"
      style={{ ...(flip ? { right: `calc(100% - ${x - 14}px)` } : { left: x + 14 }), ...(up ? { bottom: `calc(100% - ${y - 14}px)` } : { top: y + 14 }) }}
      role="tooltip"
      data-testid="map-hover"
    >
      <div className="row">
        <span className="mono">{p.id}</span>
        {p.kind && <span className="badge">{p.kind}</span>}
      </div>
      <div className="map-hover-text">{p.text}</div>
      <div>
        <strong>{CLASS_STYLE[cls].label}</strong>
        {p.rank ? ` · rank ${p.rank}` : ''}
        {p.gate ? ` · ${GATE_WORDS[p.gate] ?? p.gate}` : ''}
      </div>
      {p.similarity !== null && <div className="mono">cosine with the query {fmtNum(p.similarity, 3)}</div>}
      {p.features && p.contributions && (
        <table className="kv">
          <tbody>
            {(['similarity', 'lexical', 'recency', 'salience'] as const).map((k) => (
              <tr key={k}>
                <td>{k}</td>
                <td className="mono">
                  {fmtNum(p.features![k], 3)} → {fmtNum(p.contributions![k], 3)}
                </td>
              </tr>
            ))}
            <tr>
              <td>composite</td>
              <td className="mono">{fmtNum(p.score, 4)}</td>
            </tr>
          </tbody>
        </table>
      )}
    </div>
  )
}

function Selection({ map, indices, onOpen, onClear }: { map: MapData; indices: number[]; onOpen: (id: string) => void; onClear: () => void }) {
  const rows = indices.map((i) => map.points[i])
  const by: Record<PointClass, number> = { other: 0, dropped: 0, injected: 0, hit: 0, missed: 0 }
  for (const p of rows) by[classify(p)]++
  const LIMIT = 300
  return (
    <section aria-label="Selected region" className="map-selection">
      <div className="sec-head">
        <h4>{rows.length.toLocaleString('en-US')} in the region</h4>
        <button className="btn small" onClick={onClear}>
          Clear
        </button>
      </div>
      <p className="small muted">
        {CLASSES.filter((k) => by[k] > 0)
          .map((k) => `${by[k]} ${CLASS_STYLE[k].label}`)
          .join(' · ') || 'nothing'}
      </p>
      <ul className="map-list">
        {rows.slice(0, LIMIT).map((p) => (
          <li key={p.id}>
            <button className="linklike" onClick={() => onOpen(p.id)} title={p.text}>
              <Swatch cls={classify(p)} />
              <span className="mono">{p.id}</span> <span className="map-list-text">{p.text}</span>
            </button>
          </li>
        ))}
      </ul>
      {rows.length > LIMIT && <p className="small muted">First {LIMIT} shown; lasso a smaller region to see the rest.</p>}
    </section>
  )
}
