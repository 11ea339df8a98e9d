/**
 * The map itself: two stacked canvases — the points (redrawn when the layout,
 * the size, the theme or the view changes: 20,000 points in a few ms) and an
 * overlay for the hover ring and the lasso (redrawn on every pointer move,
 * cheap). Hover finds the nearest point through a grid; a click opens it.
 *
 * Zoom and pan follow the usual map conventions: the wheel zooms about the
 * cursor, a drag pans, Shift-drag (or the Lasso toggle) draws a lasso whose
 * points are handed to `onSelect`, a double-click or "Reset view" shows
 * everything again; with the map focused, + / − / 0 and the arrows do the
 * same. Markers keep their screen size; hit-testing maps the cursor back
 * through the view (mapGeometry), so it is right at any zoom.
 */
import { useEffect, useMemo, useRef, useState } from 'react'
import type { MapPoint } from '../../../../shared/map'
import {
  CLASSES,
  classify,
  fitFrame,
  HOME_VIEW,
  selectInLasso,
  panBy,
  pickThrough,
  PointGrid,
  toScreen,
  applyView,
  zoomForWheel,
  zoomAbout,
  type PointClass,
  type View,
} from './mapGeometry'

/** Colours (CSS variables, so dark mode follows) and sizes per class. */
export const CLASS_STYLE: Record<PointClass | 'query', { color: string; label: string; size: number }> = {
  other: { color: '--muted', label: 'in scope, not a candidate', size: 2 },
  dropped: { color: '--warn', label: 'dropped by a gate', size: 5 },
  injected: { color: '--accent', label: 'injected', size: 4.5 },
  hit: { color: '--ok', label: 'relevant, injected (hit)', size: 5 },
  missed: { color: '--danger', label: 'relevant, not injected (missed)', size: 6 },
  query: { color: '--text', label: 'query', size: 9 },
}

/** Draw one class's marker: each has its own shape, so the map reads without colour too. */
export function drawMarker(ctx: CanvasRenderingContext2D, cls: PointClass | 'query', x: number, y: number, s: number): void {
  switch (cls) {
    case 'other':
      ctx.rect(x - s / 2, y - s / 2, s, s)
      return
    case 'injected':
      ctx.moveTo(x + s, y)
      ctx.arc(x, y, s, 0, Math.PI * 2)
      return
    case 'hit':
      ctx.moveTo(x + s, y)
      ctx.arc(x, y, s, 0, Math.PI * 2)
      ctx.moveTo(x + s * 0.45, y)
      ctx.arc(x, y, s * 0.45, 0, Math.PI * 2, true) // a ring: the hole punches through (non-zero winding)
      return
    case 'dropped':
      ctx.moveTo(x, y - s)
      ctx.lineTo(x + s * 0.9, y + s * 0.7)
      ctx.lineTo(x - s * 0.9, y + s * 0.7)
      ctx.closePath()
      return
    case 'missed':
      ctx.moveTo(x, y - s)
      ctx.lineTo(x + s, y)
      ctx.lineTo(x, y + s)
      ctx.lineTo(x - s, y)
      ctx.closePath()
      return
    case 'query':
      for (let k = 0; k < 10; k++) {
        const r = k % 2 === 0 ? s : s * 0.45
        const a = -Math.PI / 2 + (k * Math.PI) / 5
        if (k === 0) ctx.moveTo(x + r * Math.cos(a), y + r * Math.sin(a))
        else ctx.lineTo(x + r * Math.cos(a), y + r * Math.sin(a))
      }
      ctx.closePath()
  }
}

function cssColor(el: Element, v: string): string {
  return getComputedStyle(el).getPropertyValue(v).trim() || '#888'
}

/** The overlay canvas: a ring around the hovered point and the lasso being drawn (cheap: redrawn on every pointer move). */
function paintOverlay(c: HTMLCanvasElement, w: number, h: number, ring: [number, number] | null, path: [number, number][] | null): void {
  const dpr = window.devicePixelRatio || 1
  if (c.width !== w * dpr || c.height !== h * dpr) {
    c.width = w * dpr
    c.height = h * dpr
  }
  const ctx = c.getContext('2d')
  if (!ctx) return
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0)
  ctx.clearRect(0, 0, w, h)
  if (ring) {
    ctx.beginPath()
    ctx.arc(ring[0], ring[1], 9, 0, Math.PI * 2)
    ctx.lineWidth = 2
    ctx.strokeStyle = cssColor(c, '--text')
    ctx.stroke()
  }
  if (path && path.length > 1) {
    ctx.beginPath()
    ctx.moveTo(path[0][0], path[0][1])
    for (const [x, y] of path) ctx.lineTo(x, y)
    ctx.closePath()
    ctx.globalAlpha = 0.12
    ctx.fillStyle = cssColor(c, '--accent')
    ctx.fill()
    ctx.globalAlpha = 1
    ctx.setLineDash([4, 3])
    ctx.lineWidth = 1.5
    ctx.strokeStyle = cssColor(c, '--accent')
    ctx.stroke()
    ctx.setLineDash([])
  }
}

export interface MapCanvasProps {
  points: MapPoint[]
  coords: number[]
  query: [number, number] | null
  /** ids currently selected by the lasso (outlined) */
  selected: ReadonlySet<string>
  onHover: (i: number | null, at: { x: number; y: number } | null) => void
  onOpen: (i: number) => void
  onSelect: (indices: number[]) => void
}

/** Hover / click radius around a marker, in screen pixels (markers keep their size when zooming). */
const PICK_RADIUS = 8
/** A press that moves less than this is a click, not a drag. */
const CLICK_SLOP = 5
/** Keyboard steps: one + / − press, one arrow press (Shift: four). */
const KEY_ZOOM = 1.25
const KEY_PAN = 40

/** One press on the map: a pan (the default) or a lasso (Shift held, or the Lasso toggle on). */
interface Drag {
  kind: 'pan' | 'lasso'
  x0: number
  y0: number
  view0: View
  path: [number, number][]
  travel: number
}

export function MapCanvas({ points, coords, query, selected, onHover, onOpen, onSelect }: MapCanvasProps) {
  const box = useRef<HTMLDivElement>(null)
  const base = useRef<HTMLCanvasElement>(null)
  const over = useRef<HTMLCanvasElement>(null)
  const [size, setSize] = useState({ w: 600, h: 400 })
  const [scheme, setScheme] = useState(0)
  const [hover, setHover] = useState<number | null>(null)
  const [view, setView] = useState<View>(HOME_VIEW)
  const [lassoMode, setLassoMode] = useState(false)
  const [panning, setPanning] = useState(false)
  const drag = useRef<Drag | null>(null)
  const classes = useMemo(() => points.map(classify), [points])

  useEffect(() => {
    const el = box.current
    if (!el) return
    const ro = new ResizeObserver(([e]) => {
      const w = Math.max(200, Math.floor(e.contentRect.width))
      const h = Math.max(200, Math.floor(e.contentRect.height))
      setSize((s) => (s.w === w && s.h === h ? s : { w, h }))
    })
    ro.observe(el)
    // Redraw in the other theme's colours when the OS switches.
    const mq = window.matchMedia?.('(prefers-color-scheme: dark)')
    const onScheme = () => setScheme((x) => x + 1)
    mq?.addEventListener?.('change', onScheme)
    return () => {
      ro.disconnect()
      mq?.removeEventListener?.('change', onScheme)
    }
  }, [])

  // A new layout (another map, PCA ↔ UMAP) is another picture: show all of it (adjusted while rendering, not in an effect).
  const [viewOf, setViewOf] = useState({ coords, query })
  if (viewOf.coords !== coords || viewOf.query !== query) {
    setViewOf({ coords, query })
    setView(HOME_VIEW)
  }

  // Where the fit puts every point at zoom 1 (the view's frame), and the grid over them for hit-testing.
  const fit = useMemo(() => fitFrame(coords, query, size.w, size.h, 18), [coords, query, size])
  const home = useMemo(() => {
    const xs = new Float32Array(points.length)
    const ys = new Float32Array(points.length)
    for (let i = 0; i < points.length; i++) [xs[i], ys[i]] = toScreen(fit, coords[2 * i], coords[2 * i + 1])
    return { xs, ys, grid: new PointGrid(xs, ys) }
  }, [coords, points.length, fit])
  // Screen positions through the view (a multiply-add per point: cheap enough for every pan step).
  const screen = useMemo(() => {
    const xs = new Float32Array(home.xs.length)
    const ys = new Float32Array(home.ys.length)
    for (let i = 0; i < xs.length; i++) {
      xs[i] = view.k * home.xs[i] + view.tx
      ys[i] = view.k * home.ys[i] + view.ty
    }
    const f = applyView(fit, view)
    return { xs, ys, f, q: query ? toScreen(f, query[0], query[1]) : null }
  }, [home, fit, view, query])

  // The points layer: one path per class (a handful of fills for 20,000 points), drawn bottom to top.
  useEffect(() => {
    const c = base.current
    if (!c) return
    const t0 = performance.now()
    const dpr = window.devicePixelRatio || 1
    c.width = size.w * dpr
    c.height = size.h * dpr
    const ctx = c.getContext('2d')
    if (!ctx) return
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0)
    ctx.clearRect(0, 0, size.w, size.h)
    const { xs, ys, q } = screen
    // Zoomed in, most points are off the canvas: skip them (a marker is at most 2·6 px wide).
    const onCanvas = (i: number) => xs[i] > -12 && ys[i] > -12 && xs[i] < size.w + 12 && ys[i] < size.h + 12
    for (const cls of CLASSES) {
      const st = CLASS_STYLE[cls]
      ctx.beginPath()
      for (let i = 0; i < classes.length; i++) if (classes[i] === cls && onCanvas(i)) drawMarker(ctx, cls, xs[i], ys[i], st.size)
      ctx.globalAlpha = cls === 'other' ? 0.45 : 0.95
      ctx.fillStyle = cssColor(c, st.color)
      ctx.fill()
      if (cls !== 'other') {
        ctx.globalAlpha = 1
        ctx.lineWidth = 1
        ctx.strokeStyle = cssColor(c, '--panel')
        ctx.stroke()
      }
    }
    ctx.globalAlpha = 1
    if (selected.size) {
      ctx.beginPath()
      for (let i = 0; i < points.length; i++)
        if (selected.has(points[i].id) && onCanvas(i)) {
          ctx.moveTo(xs[i] + 6, ys[i])
          ctx.arc(xs[i], ys[i], 6, 0, Math.PI * 2)
        }
      // A light halo: a lasso over thousands of points must not bury their marks.
      ctx.globalAlpha = 0.35
      ctx.lineWidth = 1
      ctx.strokeStyle = cssColor(c, '--text')
      ctx.stroke()
      ctx.globalAlpha = 1
    }
    if (q) {
      ctx.beginPath()
      drawMarker(ctx, 'query', q[0], q[1], CLASS_STYLE.query.size)
      ctx.fillStyle = cssColor(c, '--text')
      ctx.fill()
      ctx.lineWidth = 1.5
      ctx.strokeStyle = cssColor(c, '--panel')
      ctx.stroke()
    }
    // How long the points layer took (the README's measured number; visible in dev tools).
    c.dataset.drawMs = (performance.now() - t0).toFixed(1)
  }, [screen, classes, points, selected, size, scheme])

  /** Redraw the overlay: the ring around point `hi`, and the lasso while one is being drawn. */
  const drawOverlay = (hi: number | null) => {
    if (!over.current) return
    const ring: [number, number] | null = hi !== null && hi < screen.xs.length ? [screen.xs[hi], screen.ys[hi]] : null
    paintOverlay(over.current, size.w, size.h, ring, drag.current?.kind === 'lasso' ? drag.current.path : null)
  }
  // The hover ring follows its point when the view changes under a still cursor (wheel, keys).
  useEffect(() => {
    if (!over.current) return
    const ring: [number, number] | null = hover !== null && hover < screen.xs.length ? [screen.xs[hover], screen.ys[hover]] : null
    paintOverlay(over.current, size.w, size.h, ring, null)
  }, [screen, hover, size])

  const pos = (e: React.PointerEvent) => {
    const r = (e.currentTarget as HTMLElement).getBoundingClientRect()
    return [e.clientX - r.left, e.clientY - r.top] as [number, number]
  }
  const rank = (i: number) => CLASSES.indexOf(classes[i])
  const markerSize = (i: number) => CLASS_STYLE[classes[i]].size
  /** The point under canvas position (x, y): the cursor is taken back through the view, the radius stays in screen pixels. */
  const pick = (x: number, y: number) => {
    const i = pickThrough(home.grid, view, x, y, PICK_RADIUS, rank, markerSize)
    return i < 0 ? null : i
  }
  const hoverAt = (x: number, y: number) => {
    const i = pick(x, y)
    if (i !== hover) setHover(i)
    onHover(i, i === null ? null : { x, y })
  }
  const clearHover = () => {
    setHover(null)
    onHover(null, null)
  }

  // The wheel zooms about the cursor. A native listener: React's onWheel is passive and cannot keep the page from scrolling.
  // The hover card is dropped (its point moves away from the cursor as the zoom grows); the next pointer move picks again.
  const clearHoverRef = useRef(clearHover)
  useEffect(() => {
    clearHoverRef.current = clearHover
  })
  useEffect(() => {
    const c = over.current
    if (!c) return
    const onWheel = (e: WheelEvent) => {
      e.preventDefault()
      if (drag.current) return // mid-drag, a zoom would be undone by the pan's next step (it pans from the view it started at)
      const r = c.getBoundingClientRect()
      const [x, y] = [e.clientX - r.left, e.clientY - r.top]
      clearHoverRef.current()
      setView((v) => zoomAbout(v, x, y, zoomForWheel(e.deltaY, e.deltaMode)))
    }
    c.addEventListener('wheel', onWheel, { passive: false })
    return () => c.removeEventListener('wheel', onWheel)
  }, [])

  const zoomCentre = (factor: number) => setView((v) => zoomAbout(v, size.w / 2, size.h / 2, factor))
  const reset = () => setView(HOME_VIEW)
  const onKey = (e: React.KeyboardEvent) => {
    const step = e.shiftKey ? 4 * KEY_PAN : KEY_PAN
    const keys: Record<string, () => void> = {
      '+': () => zoomCentre(KEY_ZOOM),
      '=': () => zoomCentre(KEY_ZOOM),
      '-': () => zoomCentre(1 / KEY_ZOOM),
      _: () => zoomCentre(1 / KEY_ZOOM),
      '0': reset,
      // An arrow moves the view that way (the drawing slides the other way), as in map apps.
      ArrowLeft: () => setView((v) => panBy(v, step, 0)),
      ArrowRight: () => setView((v) => panBy(v, -step, 0)),
      ArrowUp: () => setView((v) => panBy(v, 0, step)),
      ArrowDown: () => setView((v) => panBy(v, 0, -step)),
    }
    const act = e.ctrlKey || e.metaKey || e.altKey ? undefined : keys[e.key]
    if (!act) return
    e.preventDefault()
    clearHover()
    act()
  }

  const zoomed = view.k !== 1 || view.tx !== 0 || view.ty !== 0
  return (
    <div className={`map-canvas${lassoMode ? ' lasso-mode' : ''}${panning ? ' panning' : ''}`} ref={box}>
      <canvas ref={base} style={{ width: size.w, height: size.h }} aria-hidden="true" data-testid="map-points" />
      <canvas
        ref={over}
        style={{ width: size.w, height: size.h }}
        role="img"
        tabIndex={0}
        aria-label={`Embedding map: ${points.length.toLocaleString('en-US')} memories${query ? ' and the query' : ''}. Hover a point for its text, click to open it; scroll to zoom, drag to pan, Shift-drag to lasso a region; + / − / 0 and the arrows when focused.`}
        data-testid="map-overlay"
        data-zoom={view.k.toFixed(3)}
        onKeyDown={onKey}
        onDoubleClick={reset}
        onPointerDown={(e) => {
          if (e.button !== 0) return
          ;(e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId)
          const [x, y] = pos(e)
          drag.current = { kind: e.shiftKey || lassoMode ? 'lasso' : 'pan', x0: x, y0: y, view0: view, path: [[x, y]], travel: 0 }
        }}
        onPointerMove={(e) => {
          const [x, y] = pos(e)
          const d = drag.current
          if (!d) return hoverAt(x, y)
          const [px, py] = d.path[d.path.length - 1]
          d.travel += Math.hypot(x - px, y - py)
          d.path.push([x, y])
          if (d.kind === 'lasso') return drawOverlay(null)
          if (d.travel < CLICK_SLOP) return
          if (!panning) {
            setPanning(true)
            clearHover()
          }
          setView(panBy(d.view0, x - d.x0, y - d.y0))
        }}
        onPointerLeave={() => {
          if (drag.current) return
          clearHover()
        }}
        onPointerCancel={() => {
          drag.current = null
          setPanning(false)
          drawOverlay(null)
        }}
        onPointerUp={(e) => {
          const d = drag.current
          drag.current = null
          setPanning(false)
          if (!d) return
          const [x, y] = pos(e)
          if (d.travel < CLICK_SLOP) {
            // A click, not a drag: open the point under the cursor.
            const i = pick(x, y)
            drawOverlay(i)
            if (i !== null) onOpen(i)
            return
          }
          if (d.kind === 'pan') return hoverAt(x, y)
          drawOverlay(null)
          onSelect(selectInLasso(d.path, screen.f, coords))
        }}
      />
      <div className="map-tools" role="toolbar" aria-label="Map view">
        <button type="button" className="btn small" onClick={() => zoomCentre(KEY_ZOOM)} aria-label="Zoom in" title="Zoom in (+, or scroll)">
          +
        </button>
        <button type="button" className="btn small" onClick={() => zoomCentre(1 / KEY_ZOOM)} aria-label="Zoom out" title="Zoom out (−, or scroll)">
          −
        </button>
        <span className="map-zoom mono small" data-testid="map-zoom" title="Zoom (1× shows every point)">
          {view.k < 10 ? view.k.toFixed(1) : Math.round(view.k)}×
        </span>
        <button type="button" className="btn small" onClick={reset} disabled={!zoomed} title="Show every point again (0, or double-click the map)">
          Reset view
        </button>
        <button
          type="button"
          className="btn small"
          aria-pressed={lassoMode}
          onClick={() => setLassoMode((m) => !m)}
          title="Lasso: a drag selects a region instead of panning (or hold Shift while dragging)"
        >
          Lasso
        </button>
      </div>
    </div>
  )
}
