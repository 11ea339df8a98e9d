/**
 * The knob search's value order: the lazy walks (`nearestValues`, `halfLifeStream`) give every
 * value of the full sort, in its order — checked against a Set + sort written here — and the
 * half-life's crossings equal a direct grid scan + bisection per row written here (the search's
 * original form, one closure per row).
 */
import { describe, expect, it } from 'vitest'
import { rng } from '../../../test/helpers/knobCases'
import { HALF_LIFE_HI, HALF_LIFE_LO, HalfLifeGrid, halfLifeStream, halfLifeValues, nearestValues, sortedValues, type ValueStream } from './knobValues'

/** Every value a stream gives, in order. */
function drain(s: ValueStream): number[] {
  const out: number[] = []
  for (let v = s.next(); v !== undefined; v = s.next()) out.push(v)
  return out
}

/** The order every walk must give: finite values other than cur, −0 as 0, once each, by (distance, value). */
function expectedOrder(values: number[], cur: number | null, dist: (v: number) => number): number[] {
  const uniq = [...new Set(values.map((v) => v + 0).filter((v) => Number.isFinite(v) && v !== cur))]
  return uniq.sort((a, b) => dist(a) - dist(b) || a - b)
}

describe('nearestValues', () => {
  it('gives the full sort’s values in its order: duplicates, ties on both sides, −0, NaN, infinities, several batches', () => {
    const r = rng(17)
    for (let c = 0; c < 120; c++) {
      // Sizes across the batch boundaries (512, then 4× larger).
      const n = [0, 1, 7, 511, 512, 513, 3000, 12000][c % 8]
      const cur = c % 5 === 0 ? null : Math.round(r() * 8) / 8
      const values: number[] = []
      for (let i = 0; i < n; i++) {
        const x = r()
        values.push(
          x < 0.02 ? NaN : x < 0.03 ? (r() < 0.5 ? Infinity : -Infinity) : x < 0.05 ? -0 : x < 0.07 && cur !== null ? cur : Math.round((r() * 4 - 1) * 64) / 64,
        )
      }
      const lin = (v: number) => Math.abs(v - (cur ?? 0))
      const want = expectedOrder(values, cur, lin)
      expect(drain(nearestValues(values, n, cur, lin)), `case ${c}`).toEqual(want)
      expect(drain(sortedValues(values, n, cur, lin)), `case ${c}`).toEqual(want)
    }
  })

  it('orders by a log distance too, and falls back to the full sort on a non-finite distance', () => {
    const r = rng(4)
    const values = Array.from({ length: 5000 }, () => Math.round(1 + r() * 999))
    const logd = (v: number) => Math.abs(Math.log(v / 30))
    expect(drain(nearestValues(values, values.length, 30, logd))).toEqual(expectedOrder(values, 30, logd))
    // log(0 / cur) = −∞: the full sort decides
    const withZero = [...values.slice(0, 100), 0]
    expect(drain(nearestValues(withZero, withZero.length, 30, logd))).toEqual(drain(sortedValues(withZero, withZero.length, 30, logd)))
  })
})

/** Random rows for the half-life search: scores, ages (hours) and a target. */
function randomRows(r: () => number, n: number) {
  const score = Float64Array.from({ length: n }, () => Math.round(r() * 16) / 16)
  const ages = Float64Array.from({ length: n }, () => (r() < 0.1 ? 0 : Math.round(r() * 2000)))
  return { n, target: Math.floor(r() * n), score, grid: new HalfLifeGrid(ages) }
}

/** The half-life crossings as the search first computed them: a 64-point log grid per row pair, then 50 bisection steps. */
function directCrossings(rows: ReturnType<typeof randomRows>, wr: number, h0: number, floor: number | null): number[] {
  const lnLo = Math.log(HALF_LIFE_LO)
  const lnHi = Math.log(HALF_LIFE_HI)
  const ages = rows.grid.ageHours
  const fn = (i: number) => {
    const rest = rows.score[i] - wr * Math.pow(0.5, ages[i] / h0)
    return (h: number) => rest + wr * Math.pow(0.5, ages[i] / h)
  }
  const out: number[] = []
  const roots = (g: (h: number) => number) => {
    let prevX = lnLo
    let prevY = g(Math.exp(lnLo))
    for (let i = 1; i <= 64; i++) {
      const x = lnLo + ((lnHi - lnLo) * i) / 64
      const y = g(Math.exp(x))
      if (prevY === 0) out.push(Math.exp(prevX))
      else if (Math.sign(y) !== Math.sign(prevY) && y !== 0) {
        let a = prevX
        let b = x
        let ya = prevY
        for (let k = 0; k < 50; k++) {
          const m = (a + b) / 2
          const ym = g(Math.exp(m))
          if (Math.sign(ym) === Math.sign(ya)) {
            a = m
            ya = ym
          } else b = m
        }
        out.push(Math.exp(a), Math.exp(b))
      }
      prevX = x
      prevY = y
    }
  }
  const ft = fn(rows.target)
  for (let o = 0; o < rows.n; o++) {
    const fo = fn(o)
    if (o !== rows.target) roots((h) => ft(h) - fo(h))
    if (floor !== null) roots((h) => fo(h) - floor)
  }
  const all: number[] = []
  for (const h of out) all.push(h * (1 - 1e-6), h, h * (1 + 1e-6))
  all.push(HALF_LIFE_LO, HALF_LIFE_HI)
  return all.filter((h) => h >= HALF_LIFE_LO && h <= HALF_LIFE_HI)
}

describe('the half-life values', () => {
  it('are the crossings a direct scan and bisection per row finds', () => {
    const r = rng(23)
    let found = 0
    for (let c = 0; c < 60; c++) {
      const rows = randomRows(r, 2 + Math.floor(r() * 40))
      const wr = Math.round(r() * 8) / 8
      const h0 = [1, 24, 168, 1000][c % 4]
      const floor = r() < 0.5 ? null : Math.round(r() * 8) / 8
      const got = halfLifeValues(rows, wr, h0, floor, false)
      const want = directCrossings(rows, wr, h0, floor)
      expect(
        [...got].sort((a, b) => a - b),
        `case ${c}`,
      ).toEqual([...want].sort((a, b) => a - b))
      found += got.length
    }
    expect(found).toBeGreaterThan(1000)
  })

  it('walked nearest-first cell by cell: the full sort’s values in its order', () => {
    const r = rng(31)
    for (let c = 0; c < 80; c++) {
      const rows = randomRows(r, 2 + Math.floor(r() * 60))
      const wr = 0.125 + Math.round(r() * 7) / 8
      const h0 = [1, 3, 24, 168, 1000, 8760][c % 6]
      const floor = r() < 0.5 ? null : Math.round(r() * 8) / 8
      const minmax = c % 10 === 0
      const logd = (v: number) => Math.abs(Math.log(v / h0))
      const want = expectedOrder(halfLifeValues(rows, wr, h0, floor, minmax), h0, logd)
      expect(drain(halfLifeStream(rows, wr, h0, floor, minmax, h0)), `case ${c}`).toEqual(want)
    }
  })
})
