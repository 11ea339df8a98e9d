import { describe, expect, it } from 'vitest'
import { classify, fitFrame, insidePolygon, PointGrid, toScreen } from './mapGeometry'
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
})
