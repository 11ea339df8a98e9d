/**
 * The map's pure geometry: what class each point is drawn as, fitting a layout
 * into the canvas, the grid that finds the point under the cursor among 20,000
 * in microseconds, and lasso hit-testing.
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

  /** The index of the point nearest to (x, y) within `radius` pixels; -1 when none. Ties: the later-drawn (higher `rank`) wins. */
  nearest(x: number, y: number, radius: number, rank?: (i: number) => number): number {
    let best = -1
    let bestD = radius * radius
    const r = Math.ceil(radius / this.cell)
    const cx = Math.floor(x / this.cell)
    const cy = Math.floor(y / this.cell)
    for (let gx = cx - r; gx <= cx + r; gx++)
      for (let gy = cy - r; gy <= cy + r; gy++) {
        const list = this.cells.get(this.key(gx, gy))
        if (!list) continue
        for (const i of list) {
          const d = (this.xs[i] - x) ** 2 + (this.ys[i] - y) ** 2
          if (d < bestD || (d === bestD && best >= 0 && rank && rank(i) > rank(best))) {
            bestD = d
            best = i
          }
        }
      }
    return best
  }
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
