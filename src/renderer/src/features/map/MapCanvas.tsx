/**
 * The map itself: two stacked canvases — the points (redrawn only when the
 * layout, the size or the theme changes: 20,000 points in a few ms) and an
 * overlay for the hover ring and the lasso (redrawn on every pointer move,
 * cheap). Hover finds the nearest point through a grid; a click opens it; a
 * drag draws a lasso whose points are handed to `onSelect`.
 */
import { useEffect, useMemo, useRef, useState } from 'react'
import type { MapPoint } from '../../../../shared/map'
import { CLASSES, classify, fitFrame, insidePolygon, PointGrid, toScreen, type PointClass } from './mapGeometry'

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

export function MapCanvas({ points, coords, query, selected, onHover, onOpen, onSelect }: MapCanvasProps) {
  const box = useRef<HTMLDivElement>(null)
  const base = useRef<HTMLCanvasElement>(null)
  const over = useRef<HTMLCanvasElement>(null)
  const [size, setSize] = useState({ w: 600, h: 400 })
  const [scheme, setScheme] = useState(0)
  const [hover, setHover] = useState<number | null>(null)
  const lasso = useRef<[number, number][] | null>(null)
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

  // Screen positions of every point, and the grid over them.
  const screen = useMemo(() => {
    const f = fitFrame(coords, query, size.w, size.h, 18)
    const xs = new Float32Array(points.length)
    const ys = new Float32Array(points.length)
    for (let i = 0; i < points.length; i++) [xs[i], ys[i]] = toScreen(f, coords[2 * i], coords[2 * i + 1])
    return { xs, ys, q: query ? toScreen(f, query[0], query[1]) : null, grid: new PointGrid(xs, ys) }
  }, [coords, query, points.length, size])

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
    for (const cls of CLASSES) {
      const st = CLASS_STYLE[cls]
      ctx.beginPath()
      for (let i = 0; i < classes.length; i++) if (classes[i] === cls) drawMarker(ctx, cls, xs[i], ys[i], st.size)
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
        if (selected.has(points[i].id)) {
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

  const drawOverlay = (hi: number | null) => {
    const c = over.current
    if (!c) return
    const dpr = window.devicePixelRatio || 1
    if (c.width !== size.w * dpr) {
      c.width = size.w * dpr
      c.height = size.h * dpr
    }
    const ctx = c.getContext('2d')
    if (!ctx) return
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0)
    ctx.clearRect(0, 0, size.w, size.h)
    if (hi !== null) {
      ctx.beginPath()
      ctx.arc(screen.xs[hi], screen.ys[hi], 9, 0, Math.PI * 2)
      ctx.lineWidth = 2
      ctx.strokeStyle = cssColor(c, '--text')
      ctx.stroke()
    }
    const path = lasso.current
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

  const pos = (e: React.PointerEvent) => {
    const r = (e.currentTarget as HTMLElement).getBoundingClientRect()
    return [e.clientX - r.left, e.clientY - r.top] as [number, number]
  }
  const rank = (i: number) => CLASSES.indexOf(classes[i])
  const pick = (x: number, y: number) => {
    const i = screen.grid.nearest(x, y, 8, rank)
    return i < 0 ? null : i
  }

  return (
    <div className="map-canvas" ref={box}>
      <canvas ref={base} style={{ width: size.w, height: size.h }} aria-hidden="true" data-testid="map-points" />
      <canvas
        ref={over}
        style={{ width: size.w, height: size.h }}
        role="img"
        aria-label={`Embedding map: ${points.length.toLocaleString('en-US')} memories${query ? ' and the query' : ''}. Hover a point for its text, click to open it, drag to lasso a region.`}
        data-testid="map-overlay"
        onPointerDown={(e) => {
          ;(e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId)
          lasso.current = [pos(e)]
        }}
        onPointerMove={(e) => {
          const [x, y] = pos(e)
          if (lasso.current) {
            lasso.current.push([x, y])
            drawOverlay(null)
            return
          }
          const i = pick(x, y)
          if (i !== hover) setHover(i)
          onHover(i, i === null ? null : { x, y })
          drawOverlay(i)
        }}
        onPointerLeave={() => {
          if (lasso.current) return
          setHover(null)
          onHover(null, null)
          drawOverlay(null)
        }}
        onPointerUp={(e) => {
          const path = lasso.current
          lasso.current = null
          if (!path) return
          let travel = 0
          for (let k = 1; k < path.length; k++) travel += Math.hypot(path[k][0] - path[k - 1][0], path[k][1] - path[k - 1][1])
          if (travel < 5) {
            // A click, not a drag: open the point under the cursor.
            const [x, y] = pos(e)
            const i = pick(x, y)
            drawOverlay(i)
            if (i !== null) onOpen(i)
            return
          }
          const inside: number[] = []
          for (let i = 0; i < points.length; i++) if (insidePolygon(path, screen.xs[i], screen.ys[i])) inside.push(i)
          drawOverlay(null)
          onSelect(inside)
        }}
      />
    </div>
  )
}
