/**
 * The map's pure geometry: what class each point is drawn as, fitting a layout
 * into the canvas, the zoom/pan view on top of that fit, the grid that finds
 * the point under the cursor among 20,000 in microseconds, and lasso
 * hit-testing (in data coordinates, so it means the same at any zoom).
 */
import type { MapPoint } from '../../../../shared/map'

/** How a point is drawn (and listed), in drawing order: later classes are drawn on top. */
export const CLASSES = ['other', 'dropped', 'injected', 'hit', 'missed'] as const
export type PointClass = (typeof CLASSES)[number]

/** A point's class: with an eval case, relevance decides hit / missed; otherwise what the recall did. */
export function classify(p: MapPoint): PointClass {
  if (p.relevant) return p.mark === 'injected' ? 'hit' : 'missed'
  if (p.mark === 'injected') return 'injected'
  if (p.mark === 'dropped') return 'dropped'
  return 'other'
}

/** Layout units → canvas pixels (same scale on both axes, so distances are not distorted). */
export interface Fit {
  scale: number
  ox: number
  oy: number
}

/** Fit the points (and the query) into w × h with `pad` pixels around. */
export function fitFrame(coords: ArrayLike<number>, query: [number, number] | null, w: number, h: number, pad = 16): Fit {
  let minX = Infinity
  let minY = Infinity
  let maxX = -Infinity
  let maxY = -Infinity
  const take = (x: number, y: number) => {
    if (!Number.isFinite(x) || !Number.isFinite(y)) return
    if (x < minX) minX = x
    if (x > maxX) maxX = x
    if (y < minY) minY = y
    if (y > maxY) maxY = y
  }
  for (let i = 0; i + 1 < coords.length; i += 2) take(coords[i], coords[i + 1])
  if (query) take(query[0], query[1])
  if (minX === Infinity) return { scale: 1, ox: w / 2, oy: h / 2 }
  const spanX = Math.max(maxX - minX, 1e-9)
  const spanY = Math.max(maxY - minY, 1e-9)
  const scale = Math.min((w - 2 * pad) / spanX, (h - 2 * pad) / spanY)
  // Centre the drawing; y grows downwards on a canvas, so flip it (up is up, as on a plot).
  return { scale, ox: w / 2 - ((minX + maxX) / 2) * scale, oy: h / 2 + ((minY + maxY) / 2) * scale }
}

/** Canvas position of layout point (x, y). */
export function toScreen(f: Fit, x: number, y: number): [number, number] {
  return [f.ox + x * f.scale, f.oy - y * f.scale]
}

/** Layout point under canvas position (sx, sy): the inverse of `toScreen`. */
export function toData(f: Fit, sx: number, sy: number): [number, number] {
  return [(sx - f.ox) / f.scale, (f.oy - sy) / f.scale]
}

/**
 * The user's zoom and pan, in screen terms on top of the fit: a point the fit puts at
 * (x, y) is drawn at (k·x + tx, k·y + ty). Kept apart from the fit so a resize or a new
 * layout refits without losing the meaning of "zoom 1 = everything in view".
 */
export interface View {
  k: number
  tx: number
  ty: number
}

/** Everything in view (zoom 1, no pan). */
export const HOME_VIEW: View = { k: 1, tx: 0, ty: 0 }
/** Zoom limits: out to half size (some room around the layout), in to 200× (single memories of a dense cluster). */
export const ZOOM_MIN = 0.5
export const ZOOM_MAX = 200

/** The fit as seen through the view: still layout units → canvas pixels, so `toScreen`/`toData` work on it. */
export function applyView(f: Fit, v: View): Fit {
  return { scale: f.scale * v.k, ox: v.k * f.ox + v.tx, oy: v.k * f.oy + v.ty }
}

/** Zoom by `factor` about canvas position (sx, sy): whatever is under that position stays there. */
export function zoomAbout(v: View, sx: number, sy: number, factor: number): View {
  const k = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, v.k * factor))
  if (!Number.isFinite(k) || k === v.k) return v
  const r = k / v.k
  return { k, tx: sx - (sx - v.tx) * r, ty: sy - (sy - v.ty) * r }
}

/** Move the drawing by (dx, dy) pixels. */
export function panBy(v: View, dx: number, dy: number): View {
  return { k: v.k, tx: v.tx + dx, ty: v.ty + dy }
}

/** The wheel's zoom factor: a notch (100 px, or 3 lines) zooms by about 1.22×; up zooms in. */
export function zoomForWheel(deltaY: number, deltaMode = 0): number {
  const px = deltaMode === 1 ? deltaY * 33 : deltaMode === 2 ? deltaY * 400 : deltaY
  return Math.exp(-Math.max(-500, Math.min(500, px)) * 0.002)
}

/**
 * Indices of the layout points (`coords`: x0, y0, x1, y1, …) inside a lasso drawn on the
 * canvas through fit `f` (the view included). The lasso is mapped back to layout units
 * and tested there, so a region selects the same memories at any zoom or pan.
 */
export function selectInLasso(path: readonly [number, number][], f: Fit, coords: ArrayLike<number>): number[] {
  const poly = path.map(([x, y]) => toData(f, x, y))
  let minX = Infinity
  let minY = Infinity
  let maxX = -Infinity
  let maxY = -Infinity
  for (const [x, y] of poly) {
    minX = Math.min(minX, x)
    maxX = Math.max(maxX, x)
    minY = Math.min(minY, y)
    maxY = Math.max(maxY, y)
  }
  const inside: number[] = []
  for (let i = 0; 2 * i + 1 < coords.length; i++) {
    const x = coords[2 * i]
    const y = coords[2 * i + 1]
    // The bounding box first: a small lasso over 20,000 points tests only its neighbourhood.
    if (x < minX || x > maxX || y < minY || y > maxY) continue
    if (insidePolygon(poly, x, y)) inside.push(i)
  }
  return inside
}

/** Points bucketed by canvas cell, for nearest-point lookups. */
export class PointGrid {
  private readonly cells = new Map<number, number[]>()
  constructor(
    readonly xs: Float32Array,
    readonly ys: Float32Array,
    private readonly cell = 16,
  ) {
    for (let i = 0; i < xs.length; i++) {
      const k = this.key(Math.floor(xs[i] / cell), Math.floor(ys[i] / cell))
      let list = this.cells.get(k)
      if (!list) this.cells.set(k, (list = []))
      list.push(i)
    }
  }

  private key(cx: number, cy: number): number {
    return (cx + 32768) * 65536 + (cy + 32768)
  }

  /**
   * The point under (x, y): what the user sees there. A point whose marker covers (x, y) (within `cover(i)`,
   * its drawn size) beats one that does not, and among covering points the later-drawn (higher `rank`, on top)
   * wins, then the nearer — so a marked memory drawn over a near-duplicate grey dot is the one hovered.
   * Otherwise the nearest within `radius`; ties: the higher `rank`. -1 when none.
   */
  nearest(x: number, y: number, radius: number, rank?: (i: number) => number, cover?: (i: number) => number): number {
    let best = -1
    let bestD = radius * radius
    let bestCovers = false
    const r = Math.ceil(radius / this.cell)
    const cx = Math.floor(x / this.cell)
    const cy = Math.floor(y / this.cell)
    for (let gx = cx - r; gx <= cx + r; gx++)
      for (let gy = cy - r; gy <= cy + r; gy++) {
        const list = this.cells.get(this.key(gx, gy))
        if (!list) continue
        for (const i of list) {
          const d = (this.xs[i] - x) ** 2 + (this.ys[i] - y) ** 2
          if (d >= radius * radius) continue
          const covers = cover ? d <= cover(i) ** 2 : false
          let better: boolean
          if (best < 0) better = true
          else if (covers !== bestCovers) better = covers
          else if (covers && rank && rank(i) !== rank(best)) better = rank(i) > rank(best)
          else better = d < bestD || (d === bestD && !!rank && rank(i) > rank(best))
          if (better) {
            bestD = d
            best = i
            bestCovers = covers
          }
        }
      }
    return best
  }
}

/**
 * The point under canvas position (sx, sy) through `view` (PointGrid.nearest: the marker on top first), for a grid built over the zoom-1
 * positions: the cursor is taken back through the view and the radius stays `radius` screen
 * pixels (markers keep their size). -1 when none.
 */
export function pickThrough(
  grid: PointGrid,
  view: View,
  sx: number,
  sy: number,
  radius: number,
  rank?: (i: number) => number,
  /** each point's drawn size in screen pixels (markers keep it when zooming) */
  size?: (i: number) => number,
): number {
  return grid.nearest((sx - view.tx) / view.k, (sy - view.ty) / view.k, radius / view.k, rank, size && ((i) => size(i) / view.k))
}

/** Whether (x, y) is inside the polygon (even–odd rule; the lasso closes itself). */
export function insidePolygon(poly: readonly [number, number][], x: number, y: number): boolean {
  let inside = false
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i]
    const [xj, yj] = poly[j]
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside
  }
  return inside
}
