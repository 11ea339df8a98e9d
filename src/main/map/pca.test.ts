import { describe, expect, it } from 'vitest'
import { computePca, covarianceOperator, covarianceTimes, projectPca } from './pca'
import { mulberry32 } from '../../shared/random'
import { allocateRows } from './rows'

/** Standard normal from a seeded uniform (Box–Muller). */
function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())
}

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((s, x, j) => s + x * b[j], 0)

describe('computePca', () => {
  it('finds the known principal axes of data spread along two orthogonal directions', () => {
    const dim = 6
    const u1 = [1, 1, 0, 0, 0, 0].map((x) => x / Math.SQRT2)
    const u2 = [0, 0, 1, -1, 1, 0].map((x) => x / Math.sqrt(3))
    const r = mulberry32(7)
    const n = 2000
    const data = new Float32Array(n * dim)
    for (let i = 0; i < n; i++) {
      const a = 5 * gauss(r)
      const b = 2 * gauss(r)
      for (let j = 0; j < dim; j++) data[i * dim + j] = 3 + a * u1[j] + b * u2[j] + 0.01 * gauss(r)
    }
    const p = computePca(data, n, dim)
    expect(Math.abs(dot(p.components[0], u1))).toBeGreaterThan(0.9999)
    expect(Math.abs(dot(p.components[1], u2))).toBeGreaterThan(0.9999)
    // Variances near 25 and 4 (sampling noise aside), and nearly all of the total.
    expect(p.variance[0]).toBeGreaterThan(22)
    expect(p.variance[0]).toBeLessThan(28)
    expect(p.variance[1]).toBeGreaterThan(3.5)
    expect(p.variance[1]).toBeLessThan(4.5)
    expect((p.variance[0] + p.variance[1]) / p.totalVariance).toBeGreaterThan(0.999)
    // Fit on a 500-row sample: the same axes to sampling error, every row projected, variances of all rows.
    const s = computePca(data, n, dim, { fitRows: 500 })
    expect(Math.abs(dot(s.components[0], u1))).toBeGreaterThan(0.999)
    expect(Math.abs(dot(s.components[1], u2))).toBeGreaterThan(0.999)
    expect(s.coords.length).toBe(2 * n)
    let v0 = 0
    for (let i = 0; i < n; i++) v0 += s.coords[2 * i] ** 2 / n
    expect(s.variance[0]).toBeCloseTo(v0, 6)
  })

  it('matches the closed-form eigen-decomposition of a 2-D sample covariance', () => {
    const r = mulberry32(11)
    const n = 500
    const data = new Float32Array(n * 2)
    for (let i = 0; i < n; i++) {
      const a = gauss(r)
      const b = gauss(r)
      data[2 * i] = 2 * a + 0.7 * b + 1
      data[2 * i + 1] = 0.5 * a - 1.2 * b - 4
    }
    // The sample covariance (1/n), computed here independently, and its eigenpairs in closed form.
    let mx = 0
    let my = 0
    for (let i = 0; i < n; i++) {
      mx += data[2 * i] / n
      my += data[2 * i + 1] / n
    }
    let sxx = 0
    let syy = 0
    let sxy = 0
    for (let i = 0; i < n; i++) {
      const x = data[2 * i] - mx
      const y = data[2 * i + 1] - my
      sxx += (x * x) / n
      syy += (y * y) / n
      sxy += (x * y) / n
    }
    const half = (sxx + syy) / 2
    const rad = Math.sqrt(((sxx - syy) / 2) ** 2 + sxy ** 2)
    const l1 = half + rad
    const l2 = half - rad
    const e1 = [sxy, l1 - sxx]
    const norm = Math.hypot(e1[0], e1[1])
    const p = computePca(data, n, 2)
    expect(p.variance[0]).toBeCloseTo(l1, 6)
    expect(p.variance[1]).toBeCloseTo(l2, 6)
    expect(Math.abs(dot(p.components[0], [e1[0] / norm, e1[1] / norm]))).toBeCloseTo(1, 9)
    expect(p.totalVariance).toBeCloseTo(sxx + syy, 6)
  })

  it('gives eigenvectors of the explicit covariance in high dimension, and coordinates that are exact projections', () => {
    const r = mulberry32(3)
    const n = 400
    const dim = 40
    // Five latent directions of decreasing scale, plus noise: a clear top-2.
    const basis = Array.from({ length: 5 }, () => Array.from({ length: dim }, () => gauss(r)))
    const data = new Float32Array(n * dim)
    for (let i = 0; i < n; i++) {
      const z = [6, 3, 1, 0.5, 0.3].map((s) => s * gauss(r))
      for (let j = 0; j < dim; j++) data[i * dim + j] = basis.reduce((s, b, k) => s + z[k] * b[j], 0) + 0.1 * gauss(r)
    }
    const p = computePca(data, n, dim)
    // C = (1/n) Σ (x−μ)(x−μ)ᵀ, formed explicitly here.
    const mean = Array.from({ length: dim }, (_, j) => {
      let s = 0
      for (let i = 0; i < n; i++) s += data[i * dim + j]
      return s / n
    })
    const C = Array.from({ length: dim }, () => new Array<number>(dim).fill(0))
    for (let i = 0; i < n; i++)
      for (let a = 0; a < dim; a++) for (let b = 0; b < dim; b++) C[a][b] += ((data[i * dim + a] - mean[a]) * (data[i * dim + b] - mean[b])) / n
    for (const k of [0, 1]) {
      const c = p.components[k]
      const Cc = C.map((row) => dot(row, c))
      const residual = Math.sqrt(Cc.reduce((s, x, j) => s + (x - p.variance[k] * c[j]) ** 2, 0))
      expect(residual / p.variance[k]).toBeLessThan(1e-5)
      expect(dot(c, c)).toBeCloseTo(1, 9)
    }
    expect(Math.abs(dot(p.components[0], p.components[1]))).toBeLessThan(1e-6)
    // No unit vector has more variance than the first axis (random probes).
    for (let t = 0; t < 50; t++) {
      const v = Array.from({ length: dim }, () => gauss(r))
      const nv = Math.sqrt(dot(v, v))
      const u = v.map((x) => x / nv)
      expect(
        dot(
          u,
          C.map((row) => dot(row, u)),
        ),
      ).toBeLessThanOrEqual(p.variance[0] * (1 + 1e-9))
    }
    // The trace of C is the total variance; each row's coordinates are its projection.
    expect(p.totalVariance).toBeCloseTo(
      C.reduce((s, row, j) => s + row[j], 0),
      6,
    )
    for (const i of [0, 17, 399]) {
      const [x, y] = projectPca(p, data.subarray(i * dim, (i + 1) * dim))
      expect(p.coords[2 * i]).toBeCloseTo(x, 4)
      expect(p.coords[2 * i + 1]).toBeCloseTo(y, 4)
    }
  })

  it("multiplies by the covariance exactly on the SIMD kernel and in JS, and the map's quick frame finds the explicit covariance's top axes", () => {
    const r = mulberry32(9)
    const n = 3000
    const dim = 96
    const basis = Array.from({ length: 4 }, () => Array.from({ length: dim }, () => gauss(r)))
    const data = new Float32Array(n * dim)
    for (let i = 0; i < n; i++) {
      const z = [5, 2.5, 1, 0.5].map((s) => s * gauss(r))
      for (let j = 0; j < dim; j++) data[i * dim + j] = 0.2 + basis.reduce((s, b, k) => s + z[k] * b[j], 0) + 0.1 * gauss(r)
    }
    // The explicit covariance of all rows, float64.
    const mean = new Float64Array(dim)
    for (let i = 0; i < n; i++) for (let j = 0; j < dim; j++) mean[j] += data[i * dim + j] / n
    const C = Array.from({ length: dim }, () => new Float64Array(dim))
    for (let i = 0; i < n; i++)
      for (let a = 0; a < dim; a++) {
        const xa = data[i * dim + a] - mean[a]
        for (let b = 0; b < dim; b++) C[a][b] += (xa * (data[i * dim + b] - mean[b])) / n
      }
    const q = Array.from({ length: 3 }, () => Float64Array.from({ length: dim }, () => gauss(r)))
    for (const y of [covarianceOperator(data, n, dim, mean)(q), covarianceTimes(data, n, dim, mean, q)])
      q.forEach((qk, k) => {
        const want = C.map((row) => dot(row, qk))
        const err = Math.sqrt(want.reduce((s, w, j) => s + (w - y[k][j]) ** 2, 0)) / Math.sqrt(dot(want, want))
        expect(err).toBeLessThan(1e-12)
      })
    // Top two eigenvectors of C by power iteration with deflation, here.
    const top: number[][] = []
    for (let k = 0; k < 2; k++) {
      let v = Array.from({ length: dim }, () => gauss(r))
      for (let it = 0; it < 500; it++) {
        for (const u of top) {
          const d = dot(v, u)
          v = v.map((x, j) => x - d * u[j])
        }
        const w = C.map((row) => dot(row, v))
        const norm = Math.sqrt(dot(w, w))
        v = w.map((x) => x / norm)
      }
      top.push(v)
    }
    // The frame as the map computes it: axes fit on 1,000 sampled rows, 6 block iterations.
    const p = computePca(data, n, dim, { fitRows: 1000, maxIterations: 6 })
    expect(Math.abs(dot(p.components[0], top[0]))).toBeGreaterThan(0.999)
    expect(Math.abs(dot(p.components[1], top[1]))).toBeGreaterThan(0.995)
    const trace = C.reduce((s, row, j) => s + row[j], 0)
    expect(p.totalVariance).toBeCloseTo(trace, 4)
    for (const k of [0, 1])
      expect(p.variance[k]).toBeCloseTo(
        dot(
          p.components[k],
          C.map((row) => dot(row, p.components[k])),
        ),
        4,
      )
  })

  it('reads rows in a shared WebAssembly memory in place (SIMD pass): exact means, total variance and projections, as the JS pass', () => {
    const r = mulberry32(21)
    // Odd sizes: the kernel's four-element steps and the JS pass's four-row blocks both leave remainders.
    for (const [n, dim, fitRows] of [
      [1203, 37, 300],
      [611, 130, undefined],
    ] as const) {
      const rows = allocateRows(n, dim)
      expect(rows.memory).not.toBeNull()
      for (let i = 0; i < n * dim; i++) rows.data[i] = 0.3 + gauss(r) * (1 + (i % dim) / dim)
      const plain = Float32Array.from(rows.data)
      const fast = computePca(rows.data, n, dim, { fitRows, maxIterations: 6, memory: rows.memory })
      const slow = computePca(plain, n, dim, { fitRows, maxIterations: 6 })
      // The column means and the trace of the covariance, computed here.
      const mean = Array.from({ length: dim }, (_, j) => {
        let m = 0
        for (let i = 0; i < n; i++) m += plain[i * dim + j] / n
        return m
      })
      let trace = 0
      for (let i = 0; i < n; i++) for (let j = 0; j < dim; j++) trace += (plain[i * dim + j] - mean[j]) ** 2 / n
      for (const p of [fast, slow]) {
        expect(Math.max(...mean.map((m, j) => Math.abs(m - p.mean[j])))).toBeLessThan(1e-9)
        expect(p.totalVariance).toBeCloseTo(trace, 8)
        for (const i of [0, 1, n - 2, n - 1]) {
          const x = plain.subarray(i * dim, (i + 1) * dim)
          expect(p.coords[2 * i]).toBeCloseTo(dot(x, p.components[0]) - dot(mean, p.components[0]), 4)
          expect(p.coords[2 * i + 1]).toBeCloseTo(dot(x, p.components[1]) - dot(mean, p.components[1]), 4)
        }
      }
      // The same fit (the axes do not depend on the pass), so the same picture.
      expect(Array.from(fast.components[0])).toEqual(Array.from(slow.components[0]))
      fast.coords.forEach((x, i) => expect(Math.abs(x - slow.coords[i])).toBeLessThan(1e-5))
    }
  })

  it('is deterministic, handles no spread and no rows, and rejects a matrix that does not fit', () => {
    const data = Float32Array.from({ length: 300 }, (_, i) => Math.sin(i))
    const a = computePca(data, 30, 10)
    const b = computePca(data, 30, 10)
    expect(Array.from(a.coords)).toEqual(Array.from(b.coords))
    const flat = computePca(new Float32Array(40).fill(2), 10, 4)
    expect(flat.variance).toEqual([0, 0])
    expect(Array.from(flat.coords).every((x) => x === 0)).toBe(true)
    expect(computePca(new Float32Array(0), 0, 3).coords.length).toBe(0)
    expect(() => computePca(new Float32Array(5), 2, 3)).toThrow(RangeError)
  })
})
