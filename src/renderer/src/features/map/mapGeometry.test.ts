import { describe, expect, it } from 'vitest'
import {
  classify,
  fitFrame,
  HOME_VIEW,
  insidePolygon,
  selectInLasso,
  panBy,
  pickThrough,
  PointGrid,
  toData,
  toScreen,
  applyView,
  zoomForWheel,
  ZOOM_MAX,
  ZOOM_MIN,
  zoomAbout,
  type View,
} from './mapGeometry'
import type { MapPoint } from '../../../../shared/map'

const pt = (over: Partial<MapPoint>): MapPoint => ({ id: 'm', text: '', kind: null, mark: 'none', similarity: null, ...over })

describe('map geometry', () => {
  it('classifies: relevance decides hit / missed, else what the recall did', () => {
    expect(classify(pt({ mark: 'injected', relevant: true }))).toBe('hit')
    expect(classify(pt({ mark: 'dropped', gate: 'floor', relevant: true }))).toBe('missed')
    expect(classify(pt({ mark: 'none', relevant: true }))).toBe('missed')
    expect(classify(pt({ mark: 'injected', relevant: false }))).toBe('injected')
    expect(classify(pt({ mark: 'dropped', gate: 'topK' }))).toBe('dropped')
    expect(classify(pt({}))).toBe('other')
  })

  it('fits the layout inside the padding with equal scales, y up', () => {
    const f = fitFrame([0, 0, 10, 5], null, 220, 120, 10)
    // x span 10 over 200 px → 20 px/unit; y span 5 over 100 px → 20 px/unit.
    expect(f.scale).toBeCloseTo(20)
    expect(toScreen(f, 0, 0)).toEqual([10, 110])
    expect(toScreen(f, 10, 5)).toEqual([210, 10])
  })

  it('finds the nearest point within a radius', () => {
    const xs = Float32Array.from([10, 50, 52, 300])
    const ys = Float32Array.from([10, 50, 50, 300])
    const g = new PointGrid(xs, ys)
    expect(g.nearest(49, 50, 8)).toBe(1)
    expect(g.nearest(53, 50, 8)).toBe(2)
    expect(g.nearest(150, 150, 8)).toBe(-1)
    expect(g.nearest(299, 301, 8)).toBe(3)
  })

  it('picks the marker drawn on top when markers overlap under the cursor, else the nearest', () => {
    // 0: a grey dot (rank 0, drawn 1 px wide); 1: a marked diamond (rank 5, drawn 6 px) 1.5 px away, over it.
    const g = new PointGrid(Float32Array.from([100, 101.5, 200]), Float32Array.from([100, 100, 100]))
    const rank = (i: number) => [0, 5, 0][i]
    const cover = (i: number) => [1, 6, 1][i]
    // On the dot itself: both markers cover the cursor, the one on top wins though the dot is nearer.
    expect(g.nearest(100, 100, 8, rank, cover)).toBe(1)
    // Without sizes: the nearest, as before.
    expect(g.nearest(100, 100, 8, rank)).toBe(0)
    // 7 px left of the diamond: only the dot's pick radius reaches, neither marker covers it: the nearest.
    expect(g.nearest(94.5, 100, 8, rank, cover)).toBe(0)
    // A covering marker beats a nearer one that does not cover the cursor.
    const h = new PointGrid(Float32Array.from([10, 14]), Float32Array.from([10, 10]))
    expect(
      h.nearest(
        11.5,
        10,
        8,
        () => 0,
        (i) => [1, 6][i],
      ),
    ).toBe(1)
    // Exactly at the radius is outside.
    expect(g.nearest(208, 100, 8, rank, cover)).toBe(-1)
  })

  it('tests points against a lasso polygon', () => {
    const square: [number, number][] = [
      [0, 0],
      [10, 0],
      [10, 10],
      [0, 10],
    ]
    expect(insidePolygon(square, 5, 5)).toBe(true)
    expect(insidePolygon(square, 15, 5)).toBe(false)
    const vee: [number, number][] = [
      [0, 0],
      [5, 8],
      [10, 0],
      [10, 10],
      [0, 10],
    ]
    expect(insidePolygon(vee, 5, 2)).toBe(false)
    expect(insidePolygon(vee, 5, 9)).toBe(true)
  })

  it('zooming about a canvas position keeps the layout point under it fixed; pan moves by pixels', () => {
    const f = fitFrame([-3, -2, 5, 4, 1, 1], null, 400, 300, 10)
    // Zoom 2× about (100, 50) from home: a zoom-1 position s goes to 2s + t, and 100 → 100 needs t = −100 (y: −50).
    const v1 = zoomAbout(HOME_VIEW, 100, 50, 2)
    expect(v1).toEqual({ k: 2, tx: -100, ty: -50 })
    // From an arbitrary zoomed-and-panned view, about an arbitrary position, in and out.
    let v: View = { k: 1.7, tx: 33, ty: -12 }
    for (const [sx, sy, factor] of [
      [250, 80, 3],
      [17, 290, 0.4],
      [399, 0, 1.22],
    ]) {
      const before = toData(applyView(f, v), sx, sy)
      const next = zoomAbout(v, sx, sy, factor)
      expect(next.k).toBeCloseTo(v.k * factor, 12)
      const after = toData(applyView(f, next), sx, sy)
      expect(after[0]).toBeCloseTo(before[0], 9)
      expect(after[1]).toBeCloseTo(before[1], 9)
      // ... and toScreen of that layout point is still the cursor.
      const [x, y] = toScreen(applyView(f, next), before[0], before[1])
      expect(x).toBeCloseTo(sx, 9)
      expect(y).toBeCloseTo(sy, 9)
      v = next
    }
    // Clamped at the limits: no further change, nothing jumps.
    const maxed = zoomAbout({ k: ZOOM_MAX, tx: 5, ty: 6 }, 10, 10, 4)
    expect(maxed).toEqual({ k: ZOOM_MAX, tx: 5, ty: 6 })
    // Out past the minimum: stops at it, still about the cursor (200 → 200 at k = ZOOM_MIN: t = 200 − 200·ZOOM_MIN).
    expect(zoomAbout(HOME_VIEW, 200, 100, 0.01)).toEqual({ k: ZOOM_MIN, tx: 200 - 200 * ZOOM_MIN, ty: 100 - 100 * ZOOM_MIN })
    expect(panBy({ k: 3, tx: 1, ty: 2 }, 10, -20)).toEqual({ k: 3, tx: 11, ty: -18 })
    // The wheel: up (negative deltaY) zooms in, down zooms out, by reciprocal amounts.
    expect(zoomForWheel(-100)).toBeGreaterThan(1)
    expect(zoomForWheel(100) * zoomForWheel(-100)).toBeCloseTo(1, 12)
    expect(zoomForWheel(-3, 1)).toBeCloseTo(zoomForWheel(-99), 12) // 3 lines ≈ 99 px
  })

  it('a lasso selects the same memories at zoom 3 (panned) as the same layout region at zoom 1', () => {
    // A seeded cloud of 2,000 layout points.
    let seed = 12345
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1
    const coords: number[] = []
    for (let i = 0; i < 2000; i++) coords.push(rnd() * 10, rnd() * 6)
    // The region, in layout units: an L-shaped polygon (concave, so the even–odd test matters).
    const region: [number, number][] = [
      [-2, -1],
      [3, -1],
      [3, 0.5],
      [0, 0.5],
      [0, 2.5],
      [-2, 2.5],
    ]
    // What it must select, computed on the layout coordinates directly.
    const expected: number[] = []
    for (let i = 0; i < 2000; i++) if (insidePolygon(region, coords[2 * i], coords[2 * i + 1])) expected.push(i)
    expect(expected.length).toBeGreaterThan(50)
    expect(expected.length).toBeLessThan(1000)

    const f = fitFrame(coords, null, 800, 500, 18)
    const drawn = (fit: typeof f) => region.map(([x, y]) => toScreen(fit, x, y))
    const atOne = drawn(f)
    expect(selectInLasso(atOne, f, coords)).toEqual(expected)
    // Zoom 3 about a point off the region's centre, then pan: the same region is drawn 3× larger, elsewhere on screen.
    const v = panBy(zoomAbout(HOME_VIEW, 300, 200, 3), -140, 75)
    expect(v.k).toBe(3)
    const fz = applyView(f, v)
    const atThree = drawn(fz)
    const span = (p: [number, number][]) => Math.max(...p.map((q) => q[0])) - Math.min(...p.map((q) => q[0]))
    expect(span(atThree) / span(atOne)).toBeCloseTo(3, 9)
    expect(atThree[0][0]).not.toBeCloseTo(atOne[0][0], 0)
    expect(selectInLasso(atThree, fz, coords)).toEqual(expected)
    // The zoom-1 screen polygon drawn at zoom 3 is a different (smaller) layout region: not the same selection.
    expect(selectInLasso(atOne, fz, coords)).not.toEqual(expected)
  })

  it('hit-tests through the view: the same point at any zoom, within a constant screen radius', () => {
    const coords = [0, 0, 1, 0, 1.2, 0.1, 5, 5]
    const f = fitFrame(coords, null, 600, 600, 20)
    const xs = new Float32Array(4)
    const ys = new Float32Array(4)
    for (let i = 0; i < 4; i++) [xs[i], ys[i]] = toScreen(f, coords[2 * i], coords[2 * i + 1])
    const grid = new PointGrid(xs, ys)
    for (const v of [HOME_VIEW, zoomAbout(HOME_VIEW, 50, 500, 3), panBy(zoomAbout(HOME_VIEW, 0, 0, 40), -2000, -100)]) {
      const fz = applyView(f, v)
      for (let i = 0; i < 4; i++) {
        const [sx, sy] = toScreen(fz, coords[2 * i], coords[2 * i + 1])
        // 3 px above a point (its neighbours are ≥ 22 px away even at zoom 1): that point, whatever the zoom.
        expect(pickThrough(grid, v, sx, sy - 3, 8)).toBe(i)
      }
      // 20 screen pixels from the lone point is a miss at every zoom (the radius does not grow with it).
      const [lx, ly] = toScreen(fz, 5, 5)
      expect(pickThrough(grid, v, lx + 20, ly, 8)).toBe(-1)
    }
  })
})
