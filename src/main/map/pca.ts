/**
 * Principal component analysis of a row-major float matrix, top two components,
 * for the embedding map's first frame (issue 12). Written here rather than taken
 * from a library: the map needs only two components of a tall, thin matrix
 * (20,000 × 256…1,536), which block power iteration (subspace iteration) gives
 * without ever forming the d × d covariance — each iteration is two passes over
 * the rows, O(n·d·p).
 *
 * Pure and deterministic: the start block comes from a seeded PRNG, and each
 * component's sign is fixed (its largest-magnitude entry is positive), so the
 * same input gives the same picture in the worker and in a test.
 */
import { mulberry32 } from '../../shared/random'
import { dotKernel, dotKernelAvailable, wasmMemory, type DotAll, type WasmMemory } from '../store/vectors/dotKernel'

export interface PcaResult {
  /** column means (the data is centred on them) */
  mean: Float64Array
  /** the two unit principal axes, largest variance first (zeros when the data has no spread along it) */
  components: [Float64Array, Float64Array]
  /** variance of all rows along each axis (the covariance's top eigenvalues, 1/n normalisation, when fit on all rows) */
  variance: [number, number]
  /** total variance (trace of the covariance) */
  totalVariance: number
  /** row i's coordinates at [2i, 2i+1] */
  coords: Float32Array
  /** subspace iterations run */
  iterations: number
  /** both axes settled within `tolerance` (false: stopped at `maxIterations`; the top of the spectrum is flat, any axes in it show about as much) */
  converged: boolean
}

export interface PcaOptions {
  /** PRNG seed of the start block. @default 1 */
  seed?: number
  /** @default 300 */
  maxIterations?: number
  /** stop when both Ritz values move less than this, relatively. @default 1e-10 */
  tolerance?: number
  /**
   * Fit the axes on a seeded random sample of this many rows when there are more (every row is
   * still projected, and the variances are those of all rows on the axes). @default all rows
   */
  fitRows?: number
  /**
   * The shared WebAssembly memory `data` lies in (map/rows.ts): the pass over every row then runs on the SIMD
   * kernel, in place (it grows the memory by a little scratch space of its own). @default none: the JS loop
   */
  memory?: WasmMemory | null
}

/**
 * Block size: two wanted vectors plus oversampling. Convergence goes as
 * (λ_{BLOCK+1}/λ₂)^iterations, so a wider block needs far fewer passes when the
 * spectrum is flat at the top, as it is for embeddings of many topics.
 */
const BLOCK = 10

/**
 * The top two principal components of `n` rows of length `dim` (`data[i*dim + j]`)
 * and every row's coordinates on them.
 */
export function computePca(data: Float32Array, n: number, dim: number, opts: PcaOptions = {}): PcaResult {
  if (!Number.isInteger(n) || !Number.isInteger(dim) || n < 0 || dim < 1 || data.length < n * dim)
    throw new RangeError(`computePca: ${n} rows × ${dim} columns do not fit a matrix of ${data.length} values`)
  const rand = mulberry32(opts.seed ?? 1)
  // Many rows: the axes of a uniform sample are, to sampling error, those of the whole; each iteration costs ∝ rows.
  // The sample is centred on its own mean, so the rows themselves are read once, after the fit (rowPass below).
  if (opts.fitRows !== undefined && n > opts.fitRows) {
    const fit = sampleRows(data, n, dim, opts.fitRows, rand)
    const stats = columnStats(fit.data, fit.n, dim)
    // A sample without spread says nothing about the axes: fit on every row instead.
    if (stats.total > 0) {
      const axes = fitAxes(fit.data, fit.n, dim, stats.mean, opts, rand)
      const pass = rowPass(data, n, dim, axes.c0, axes.c1, opts.memory)
      for (let j = 0; j < dim; j++) pass.sums[j] /= n
      const total = Math.max(0, pass.squares / n - dot64(pass.sums, pass.sums))
      return pcaResult(pass, n, pass.sums, total, axes)
    }
  }
  const { mean, total } = columnStats(data, n, dim)
  const axes = n > 0 && total > 0 ? fitAxes(data, n, dim, mean, opts, rand) : noAxes(dim)
  return pcaResult(rowPass(data, n, dim, axes.c0, axes.c1, opts.memory), n, mean, total, axes)
}

/** The fit's outcome: two unit axes (or zeros), and how it stopped. */
interface Axes {
  c0: Float64Array
  c1: Float64Array
  iterations: number
  converged: boolean
}

/** No spread (or no rows): zero axes, nothing to iterate. */
const noAxes = (dim: number): Axes => ({ c0: new Float64Array(dim), c1: new Float64Array(dim), iterations: 0, converged: true })

/** Column means and the total variance ((1/n)·Σ‖x‖² − ‖μ‖²) in one pass over the rows. */
function columnStats(data: Float32Array, n: number, dim: number): { mean: Float64Array; total: number } {
  const mean = new Float64Array(dim)
  let squares = 0
  for (let i = 0; i < n; i++) {
    const o = i * dim
    for (let j = 0; j < dim; j++) {
      const x = data[o + j]
      mean[j] += x
      squares += x * x
    }
  }
  if (n > 0) for (let j = 0; j < dim; j++) mean[j] /= n
  return { mean, total: n > 0 ? Math.max(0, squares / n - dot64(mean, mean)) : 0 }
}

/** The top two axes of the rows' covariance (centred on `mean`) by block subspace iteration, signs fixed. */
function fitAxes(data: Float32Array, n: number, dim: number, mean: Float64Array, opts: PcaOptions, rand: () => number): Axes {
  const p = Math.min(BLOCK, dim)
  let q: Float64Array[] = Array.from({ length: p }, () => Float64Array.from({ length: dim }, () => rand() - 0.5))
  orthonormalize(q)
  const maxIter = opts.maxIterations ?? 300
  const tol = opts.tolerance ?? 1e-10
  let vectors = q
  let iterations: number
  let converged = false
  let prev: number[] = [NaN, NaN]
  let prevVectors: Float64Array[] | null = null
  const times = covarianceOperator(data, n, dim, mean)
  for (iterations = 1; iterations <= maxIter; iterations++) {
    const y = times(q)
    // Rayleigh–Ritz on the block: the p × p projection's eigenpairs rotate q onto the best approximations.
    const b = Array.from({ length: p }, (_, a) => Array.from({ length: p }, (_, c) => dot(q[a], y[c])))
    const eig = jacobiEigen(b)
    const values = eig.values
    vectors = eig.vectors.map((v) => combine(q, v, dim))
    const cur = [values[0], values[1] ?? 0]
    const moved = Math.max(Math.abs(cur[0] - prev[0]), Math.abs(cur[1] - prev[1])) / Math.max(cur[0], Number.MIN_VALUE)
    prev = cur
    // Ritz values settle long before the vectors: also wait for both axes to stop turning (angle below ~1e-5 rad).
    const turned = prevVectors
      ? Math.max(1 - Math.abs(dot(vectors[0], prevVectors[0])), p > 1 && values[1] > tol * values[0] ? 1 - Math.abs(dot(vectors[1], prevVectors[1])) : 0)
      : 1
    prevVectors = vectors
    // The next block: C applied to the current one, re-orthonormalised (y, rotated the same way).
    q = eig.vectors.map((v) => combine(y, v, dim))
    orthonormalize(q)
    if (moved < tol && turned < 1e-10) {
      converged = true
      break
    }
  }
  return {
    c0: fixSign(vectors[0]),
    c1: dim > 1 ? fixSign(vectors[1]) : new Float64Array(dim),
    iterations: Math.min(iterations, maxIter),
    converged,
  }
}

/** What one pass over the rows gathers: x·c0 and x·c1 of row i at [2i, 2i+1], the column sums Σx, and Σ‖x‖². */
interface RowPass {
  raw: Float64Array
  sums: Float64Array
  squares: number
}

/**
 * Every row on both axes — and the column sums and the sum of squares, for the mean and the total variance
 * when the axes came from a sample — in one pass, four rows at a time: each axis element loaded once per four rows, eight
 * independent sums instead of two long chains (this pass reads all n × dim values: at 20,000 × 768 it was the
 * frame's largest cost, as a separate mean pass and a row-at-a-time projection).
 */
function rowPass(data: Float32Array, n: number, dim: number, c0: Float64Array, c1: Float64Array, memory?: WasmMemory | null): RowPass {
  const fast = memory ? rowPassSimd(data, n, dim, c0, c1, memory) : null
  if (fast) return fast
  const raw = new Float64Array(2 * n)
  const sums = new Float64Array(dim)
  let squares = 0
  let i = 0
  for (; i + 3 < n; i += 4) {
    const o0 = i * dim
    const o1 = o0 + dim
    const o2 = o1 + dim
    const o3 = o2 + dim
    let a0 = 0
    let a1 = 0
    let a2 = 0
    let a3 = 0
    let b0 = 0
    let b1 = 0
    let b2 = 0
    let b3 = 0
    let sq = 0
    for (let j = 0; j < dim; j++) {
      const x0 = data[o0 + j]
      const x1 = data[o1 + j]
      const x2 = data[o2 + j]
      const x3 = data[o3 + j]
      const u = c0[j]
      const v = c1[j]
      a0 += x0 * u
      a1 += x1 * u
      a2 += x2 * u
      a3 += x3 * u
      b0 += x0 * v
      b1 += x1 * v
      b2 += x2 * v
      b3 += x3 * v
      sq += x0 * x0 + x1 * x1 + (x2 * x2 + x3 * x3)
      sums[j] += x0 + x1 + (x2 + x3)
    }
    squares += sq
    raw[2 * i] = a0
    raw[2 * i + 1] = b0
    raw[2 * i + 2] = a1
    raw[2 * i + 3] = b1
    raw[2 * i + 4] = a2
    raw[2 * i + 5] = b2
    raw[2 * i + 6] = a3
    raw[2 * i + 7] = b3
  }
  for (; i < n; i++) {
    const o = i * dim
    let a = 0
    let b = 0
    for (let j = 0; j < dim; j++) {
      const x = data[o + j]
      a += x * c0[j]
      b += x * c1[j]
      squares += x * x
      sums[j] += x
    }
    raw[2 * i] = a
    raw[2 * i + 1] = b
  }
  return { raw, sums, squares }
}

/**
 * rowPass on the SIMD kernel (pcaRowsAll), over the rows where they lie in `memory`: both axes, the squared norms
 * and the column sums in one pass, four to eight times the JS loop's speed. Its scratch space (the axes, the sums,
 * three outputs per row) is memory grown for this call alone, so threads sharing the memory never share it. Null
 * when the kernel is missing or `data` is not inside `memory`.
 */
function rowPassSimd(data: Float32Array, n: number, dim: number, c0: Float64Array, c1: Float64Array, memory: WasmMemory): RowPass | null {
  if (n === 0 || data.byteOffset % 4 !== 0 || data.byteOffset + 4 * n * dim > memory.buffer.byteLength) return null
  let kernel: DotAll
  let at: number
  try {
    const k = dotKernel(memory, true, 'pcaRowsAll')
    if (!k) return null
    kernel = k
    at = memory.grow(Math.ceil((24 * dim + 24 * n) / 65536)) * 65536
  } catch {
    // The memory is at its maximum (or not a shared one): the JS pass.
    return null
  }
  const buf = memory.buffer
  const q = new Float64Array(buf, at, 3 * dim)
  q.set(c0)
  q.set(c1, dim)
  kernel(data.byteOffset, n, dim, at, at + 24 * dim)
  const out = new Float64Array(buf, at + 24 * dim, 3 * n)
  const raw = new Float64Array(2 * n)
  let squares = 0
  for (let i = 0; i < n; i++) {
    raw[2 * i] = out[3 * i]
    raw[2 * i + 1] = out[3 * i + 1]
    squares += out[3 * i + 2]
  }
  return { raw, sums: Float64Array.from(q.subarray(2 * dim)), squares }
}

/** The result from a row pass: coordinates (x − μ)·c = x·c − μ·c, and the variance of every row on each axis. */
function pcaResult(pass: RowPass, n: number, mean: Float64Array, total: number, axes: Axes): PcaResult {
  const { raw } = pass
  const { c0, c1 } = axes
  const m0 = dot64(mean, c0)
  const m1 = dot64(mean, c1)
  const coords = new Float32Array(2 * n)
  let v0 = 0
  let v1 = 0
  for (let i = 0; i < n; i++) {
    coords[2 * i] = raw[2 * i] - m0
    coords[2 * i + 1] = raw[2 * i + 1] - m1
    // The variances of the coordinates as shown (float32; their mean is 0).
    v0 += coords[2 * i] * coords[2 * i]
    v1 += coords[2 * i + 1] * coords[2 * i + 1]
  }
  if (n > 0) {
    v0 /= n
    v1 /= n
  }
  return { mean, components: [c0, c1], variance: [v0, v1], totalVariance: total, coords, iterations: axes.iterations, converged: axes.converged }
}

/** `k` of the `n` rows, a seeded uniform sample (partial Fisher–Yates), as a compact matrix. */
export function sampleRows(data: Float32Array, n: number, dim: number, k: number, rand: () => number): { data: Float32Array; n: number } {
  const idx = Array.from({ length: n }, (_, i) => i)
  const out = new Float32Array(k * dim)
  for (let m = 0; m < k; m++) {
    const j = m + Math.floor(rand() * (n - m))
    const t = idx[m]
    idx[m] = idx[j]
    idx[j] = t
    out.set(data.subarray(idx[m] * dim, (idx[m] + 1) * dim), m * dim)
  }
  return { data: out, n: k }
}

/** A vector's coordinates on the two axes (exact: the same affine map as every row's). */
export function projectPca(pca: Pick<PcaResult, 'mean' | 'components'>, v: ArrayLike<number>): [number, number] {
  let a = 0
  let b = 0
  const [c0, c1] = pca.components
  for (let j = 0; j < pca.mean.length; j++) {
    const x = (v[j] ?? 0) - pca.mean[j]
    a += x * c0[j]
    b += x * c1[j]
  }
  return [a, b]
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0
  for (let j = 0; j < a.length; j++) s += a[j] * b[j]
  return s
}

/**
 * C·q for each q in the block, C = (1/n) Σ (x−μ)(x−μ)ᵀ, without forming C or a
 * centred copy: (x−μ)·q = x·q − μ·q, and Σ tᵢ(xᵢ−μ) = Σ tᵢxᵢ − μ Σ tᵢ. One pass
 * over the float32 rows with monomorphic loops (this is the map's hot loop).
 */
export function covarianceTimes(data: Float32Array, n: number, dim: number, mean: Float64Array, q: Float64Array[]): Float64Array[] {
  const p = q.length
  const y = Array.from({ length: p }, () => new Float64Array(dim))
  const muQ = new Float64Array(p)
  for (let k = 0; k < p; k++) muQ[k] = dot64(mean, q[k])
  const tSum = new Float64Array(p)
  // Rows in blocks that stay in cache while every q[k] and y[k] passes over them (row by row, a wide block
  // streamed all of q and y from memory for each row: 10 ns a multiply-add at 64 × 768), four rows at a time
  // (four independent sums instead of one long chain of additions).
  const t = new Float64Array(ROW_BLOCK * p)
  for (let i0 = 0; i0 < n; i0 += ROW_BLOCK) {
    const rows = Math.min(ROW_BLOCK, n - i0)
    const base = i0 * dim
    for (let k = 0; k < p; k++) {
      const qk = q[k]
      let r = 0
      for (; r + 3 < rows; r += 4) {
        const o = base + r * dim
        let s0 = 0
        let s1 = 0
        let s2 = 0
        let s3 = 0
        for (let j = 0; j < dim; j++) {
          const x = qk[j]
          s0 += data[o + j] * x
          s1 += data[o + dim + j] * x
          s2 += data[o + 2 * dim + j] * x
          s3 += data[o + 3 * dim + j] * x
        }
        t[r * p + k] = s0 - muQ[k]
        t[(r + 1) * p + k] = s1 - muQ[k]
        t[(r + 2) * p + k] = s2 - muQ[k]
        t[(r + 3) * p + k] = s3 - muQ[k]
      }
      for (; r < rows; r++) {
        const o = base + r * dim
        let s = 0
        for (let j = 0; j < dim; j++) s += data[o + j] * qk[j]
        t[r * p + k] = s - muQ[k]
      }
    }
    for (let k = 0; k < p; k++) {
      const yk = y[k]
      let r = 0
      for (; r + 3 < rows; r += 4) {
        const o = base + r * dim
        const t0 = t[r * p + k]
        const t1 = t[(r + 1) * p + k]
        const t2 = t[(r + 2) * p + k]
        const t3 = t[(r + 3) * p + k]
        tSum[k] += t0 + t1 + t2 + t3
        for (let j = 0; j < dim; j++) yk[j] += t0 * data[o + j] + t1 * data[o + dim + j] + t2 * data[o + 2 * dim + j] + t3 * data[o + 3 * dim + j]
      }
      for (; r < rows; r++) {
        const o = base + r * dim
        const tk = t[r * p + k]
        tSum[k] += tk
        for (let j = 0; j < dim; j++) yk[j] += tk * data[o + j]
      }
    }
  }
  for (let k = 0; k < p; k++) {
    const yk = y[k]
    for (let j = 0; j < dim; j++) yk[j] = (yk[j] - mean[j] * tSum[k]) / n
  }
  return y
}

/**
 * q ↦ C·q for blocks q over one matrix (the fit's every iteration), on the dense scan's WebAssembly SIMD kernel
 * (store/vectors/dotKernel.ts) where there is one: the rows and their transpose are copied once into a
 * WebAssembly memory, and both products of C·q = (1/n)·Xᵀ(X·q − μ·q) − μ·(…) are that kernel's float32-rows ×
 * float64-vector dot products — X·q over the rows, Xᵀ·t over the columns — two vectors of the block per pass
 * (dot2All: each row read once for both, the same sums as one at a time). Several times faster than the JS loop
 * (covarianceTimes, the fallback), and as exact (float64 sums of exactly widened float32 values).
 */
export function covarianceOperator(data: Float32Array, n: number, dim: number, mean: Float64Array): (q: Float64Array[]) => Float64Array[] {
  const bytes = 8 * n * dim + 32 * (n + dim)
  let memory: WasmMemory | null = null
  let one: DotAll | null = null
  let two: DotAll | null = null
  if (n > 0 && dotKernelAvailable())
    try {
      memory = wasmMemory(Math.ceil(bytes / 65536) + 1)
      one = dotKernel(memory)
      two = dotKernel(memory, false, 'dot2All')
    } catch {
      one = null
    }
  if (!memory || !one || !two) return (q) => covarianceTimes(data, n, dim, mean, q)
  const [dot1, dot2] = [one, two]
  // Layout: X (n × dim f32), Xᵀ (dim × n f32), then float64 q (2 × dim), t (2 × n), out (2 × max(n, dim)).
  const xAt = 0
  const xtAt = 4 * n * dim
  const qAt = 8 * n * dim
  const tAt = qAt + 16 * dim
  const outAt = tAt + 16 * n
  const buf = memory.buffer
  new Float32Array(buf, xAt, n * dim).set(data.subarray(0, n * dim))
  const xt = new Float32Array(buf, xtAt, n * dim)
  // In blocks of 16 rows: each column's 16 values fill one cache line of Xᵀ (a row at a time wrote a value to a
  // different line, often a different page, at every step: ~30 ns each, 25 ms at 1,000 × 768).
  for (let i0 = 0; i0 < n; i0 += 16) {
    const rows = Math.min(16, n - i0)
    for (let j = 0; j < dim; j++) {
      const o = j * n + i0
      for (let r = 0; r < rows; r++) xt[o + r] = data[(i0 + r) * dim + j]
    }
  }
  const qv = new Float64Array(buf, qAt, 2 * dim)
  const tv = new Float64Array(buf, tAt, 2 * n)
  const out = new Float64Array(buf, outAt, 2 * Math.max(n, dim))
  return (q) => {
    const ys: Float64Array[] = []
    for (let k = 0; k < q.length; k += 2) {
      // w vectors this pass (two, or the block's last one alone); the kernel's outputs interleave them.
      const w = Math.min(2, q.length - k)
      const dot = w === 2 ? dot2 : dot1
      for (let m = 0; m < w; m++) qv.set(q[k + m], m * dim)
      dot(xAt, n, dim, qAt, outAt)
      const tSum = [0, 0]
      for (let m = 0; m < w; m++) {
        const muQ = dot64(mean, q[k + m])
        let s = 0
        for (let i = 0; i < n; i++) s += tv[m * n + i] = out[w * i + m] - muQ
        tSum[m] = s
      }
      dot(xtAt, dim, n, tAt, outAt)
      for (let m = 0; m < w; m++) {
        const y = new Float64Array(dim)
        for (let j = 0; j < dim; j++) y[j] = (out[w * j + m] - mean[j] * tSum[m]) / n
        ys.push(y)
      }
    }
    return ys
  }
}

/** Rows per cache block of covarianceTimes: 32 rows of 768 float32 are 96 KiB. */
const ROW_BLOCK = 32

function dot64(a: Float64Array, b: Float64Array): number {
  let s = 0
  for (let j = 0; j < a.length; j++) s += a[j] * b[j]
  return s
}

/** Σ_k coef[k]·basis[k]. */
function combine(basis: Float64Array[], coef: ArrayLike<number>, dim: number): Float64Array {
  const out = new Float64Array(dim)
  for (let k = 0; k < basis.length; k++) {
    const c = coef[k]
    if (c === 0) continue
    const b = basis[k]
    for (let j = 0; j < dim; j++) out[j] += c * b[j]
  }
  return out
}

/** Modified Gram–Schmidt in place; a vector that vanishes (rank deficiency) becomes zero. */
export function orthonormalize(vs: Float64Array[]): void {
  for (let k = 0; k < vs.length; k++) {
    const v = vs[k]
    for (let m = 0; m < k; m++) {
      const d = dot(v, vs[m])
      for (let j = 0; j < v.length; j++) v[j] -= d * vs[m][j]
    }
    const norm = Math.sqrt(dot(v, v))
    if (norm > 1e-300) for (let j = 0; j < v.length; j++) v[j] /= norm
    else v.fill(0)
  }
}

/** Largest-magnitude entry positive, so the axes do not flip between runs or machines. */
function fixSign(v: Float64Array): Float64Array {
  let at = 0
  for (let j = 1; j < v.length; j++) if (Math.abs(v[j]) > Math.abs(v[at])) at = j
  if (v[at] < 0) for (let j = 0; j < v.length; j++) v[j] = -v[j]
  return v
}

/**
 * Eigen-decomposition of a small symmetric matrix (cyclic Jacobi rotations):
 * eigenvalues descending, eigenvectors as coefficient arrays (columns of V).
 */
function jacobiEigen(input: number[][]): { values: number[]; vectors: number[][] } {
  const m = input.length
  const a = input.map((r, i) => r.map((x, j) => (x + input[j][i]) / 2))
  const v: number[][] = Array.from({ length: m }, (_, i) => Array.from({ length: m }, (_, j) => (i === j ? 1 : 0)))
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0
    for (let i = 0; i < m; i++) for (let j = i + 1; j < m; j++) off += a[i][j] * a[i][j]
    if (off < 1e-30) break
    for (let pi = 0; pi < m; pi++)
      for (let qi = pi + 1; qi < m; qi++) {
        if (Math.abs(a[pi][qi]) < 1e-300) continue
        const theta = (a[qi][qi] - a[pi][pi]) / (2 * a[pi][qi])
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1))
        const c = 1 / Math.sqrt(t * t + 1)
        const s = t * c
        for (let k = 0; k < m; k++) {
          const akp = a[k][pi]
          const akq = a[k][qi]
          a[k][pi] = c * akp - s * akq
          a[k][qi] = s * akp + c * akq
        }
        for (let k = 0; k < m; k++) {
          const apk = a[pi][k]
          const aqk = a[qi][k]
          a[pi][k] = c * apk - s * aqk
          a[qi][k] = s * apk + c * aqk
        }
        for (let k = 0; k < m; k++) {
          const vkp = v[k][pi]
          const vkq = v[k][qi]
          v[k][pi] = c * vkp - s * vkq
          v[k][qi] = s * vkp + c * vkq
        }
      }
  }
  const order = Array.from({ length: m }, (_, i) => i).sort((x, y) => a[y][y] - a[x][x])
  return { values: order.map((i) => a[i][i]), vectors: order.map((i) => v.map((r) => r[i])) }
}
