/**
 * The map's own UMAP: its neighbour graph against an exact brute force computed here, and the layout's
 * quality measured independently (trustworthiness, cluster separation) on a clustered synthetic set, so a
 * layout that breaks (a sign error in a gradient, a graph that loses its neighbours) fails here.
 */
import { describe, expect, it } from 'vitest'
import { clusteredVectors, sameClusterNearest } from '../../../test/helpers/clusteredVectors'
import { nearestNeighbours } from './knn'
import { MapHelpers } from './mapHelpers'
import { computePca } from './pca'
import { layoutUmap } from './umapLayout'

/**
 * The reference: every pair's squared distance, brute force in float64, as an n × n matrix (a point's distance to
 * itself is Infinity, so it ranks last). Each pair is computed once and mirrored: (a − b)² and (b − a)² are the
 * same number, and the sum runs over the dimensions in the same order either way.
 */
interface Distances {
  n: number
  d: Float64Array
}

function bruteDistances(data: Float32Array, n: number, dim: number): Distances {
  const d = new Float64Array(n * n)
  for (let i = 0; i < n; i++) {
    d[i * n + i] = Infinity
    for (let j = i + 1; j < n; j++) {
      let s = 0
      for (let t = 0; t < dim; t++) s += (data[i * dim + t] - data[j * dim + t]) ** 2
      d[i * n + j] = s
      d[j * n + i] = s
    }
  }
  return { n, d }
}

/**
 * The `k` smallest of `dist(0..n-1)`, ascending, equal values by index: the first `k` of a stable sort of the
 * indexes by distance (insertion into a sorted buffer of `k`).
 */
function smallestK(n: number, k: number, dist: (j: number) => number): Int32Array {
  const idx = new Int32Array(k)
  const val = new Float64Array(k)
  let m = 0
  for (let j = 0; j < n; j++) {
    const v = dist(j)
    if (m === k && !(v < val[k - 1])) continue
    let p = m === k ? k - 1 : m++
    while (p > 0 && val[p - 1] > v) {
      idx[p] = idx[p - 1]
      val[p] = val[p - 1]
      p--
    }
    idx[p] = j
    val[p] = v
  }
  return idx.subarray(0, m)
}

/** Point i's rank of point j (1 = nearest) in the stable sort of i's distances: those nearer, and the equal ones before j. */
function rankOf(t: Distances, i: number, j: number): number {
  const row = t.d.subarray(i * t.n, (i + 1) * t.n)
  const dj = row[j]
  let r = 1
  for (let m = 0; m < t.n; m++) if (row[m] < dj || (row[m] === dj && m < j)) r++
  return r
}

/** Share of the true k nearest found. */
function knnRecall(found: Int32Array, k: number, truth: Distances): number {
  let hit = 0
  for (let i = 0; i < truth.n; i++) {
    const row = truth.d.subarray(i * truth.n, (i + 1) * truth.n)
    const want = new Set(smallestK(truth.n, k, (j) => row[j]))
    for (let t = 0; t < k; t++) if (want.has(found[i * k + t])) hit++
  }
  return hit / (truth.n * k)
}

/**
 * Trustworthiness (Venna & Kaski): 1 − 2/(n·k·(2n − 3k − 1)) · Σᵢ Σ_{j ∈ Uₖ(i)} (r(i, j) − k), where Uₖ(i) are
 * the layout's k nearest of i that are not among its k nearest in the original space and r their rank
 * there. 1 = no false neighbours on the map.
 */
function trustworthiness(truth: Distances, coords: Float32Array, k: number): number {
  const n = truth.n
  let sum = 0
  for (let i = 0; i < n; i++) {
    const near = smallestK(n, k, (j) => (j === i ? Infinity : (coords[2 * i] - coords[2 * j]) ** 2 + (coords[2 * i + 1] - coords[2 * j + 1]) ** 2))
    for (const j of near) {
      const r = rankOf(truth, i, j)
      if (r > k) sum += r - k
    }
  }
  return 1 - (2 / (n * k * (2 * n - 3 * k - 1))) * sum
}

describe('the neighbour graph (approximate, seeded)', () => {
  for (const dim of [96, 384]) {
    it(`finds ≥ 90 % of the exact 15 nearest of 1,200 clustered ${dim}-d vectors${dim > 256 ? ' (searched in 64 PCA dimensions, re-ranked exactly)' : ''}`, () => {
      const c = clusteredVectors(1200, dim, { seed: 3 })
      const truth = bruteDistances(c.data, c.n, dim)
      const g = nearestNeighbours(c.data, c.n, dim, 15, { seed: 1 })
      expect(g.searchDims).toBe(dim > 256 ? 64 : dim)
      expect(g.rounds).toBeGreaterThan(0)
      expect(knnRecall(g.indices, 15, truth)).toBeGreaterThan(0.9)
      // Distances are the true Euclidean ones, ascending.
      for (let i = 0; i < 50; i++)
        for (let t = 0; t < 15; t++) {
          const j = g.indices[i * 15 + t]
          let s = 0
          for (let q = 0; q < dim; q++) s += (c.data[i * dim + q] - c.data[j * dim + q]) ** 2
          expect(g.dists[i * 15 + t]).toBeCloseTo(Math.sqrt(s), 5)
          if (t) expect(g.dists[i * 15 + t]).toBeGreaterThanOrEqual(g.dists[i * 15 + t - 1])
        }
    })
  }

  it('is exact below 600 points, never lists a point as its own neighbour, and rejects an impossible k', () => {
    const c = clusteredVectors(300, 32, { seed: 4 })
    const truth = bruteDistances(c.data, c.n, 32)
    const g = nearestNeighbours(c.data, c.n, 32, 10)
    expect(g.rounds).toBe(0)
    expect(knnRecall(g.indices, 10, truth)).toBe(1)
    for (let i = 0; i < c.n; i++) expect(Array.from(g.indices.subarray(i * 10, i * 10 + 10))).not.toContain(i)
    expect(() => nearestNeighbours(c.data, c.n, 32, 300)).toThrow(RangeError)
  })
})

describe('layoutUmap', () => {
  const c = clusteredVectors(1500, 128, { seed: 7, clusters: 10 })
  const truth = bruteDistances(c.data, c.n, c.dim)
  const pca = computePca(c.data, c.n, c.dim)

  it('lays clustered vectors out trustworthily, far better than the PCA frame it starts from', () => {
    const messages: string[] = []
    const done: number[] = []
    let total = 0
    const u = layoutUmap(c.data, c.n, c.dim, pca.coords, null, {
      seed: 2,
      onProgress: (d, t, m) => {
        done.push(d)
        total = t
        messages.push(m)
      },
    })
    expect(u.stopped).toBe(false)
    expect(u.epochs).toBe(200)
    expect(u.coords.every(Number.isFinite)).toBe(true)
    const tU = trustworthiness(truth, u.coords, 10)
    const tP = trustworthiness(truth, pca.coords, 10)
    expect(tU).toBeGreaterThan(0.9)
    expect(tU).toBeGreaterThan(tP + 0.05)
    expect(sameClusterNearest(u.coords, c.labels)).toBeGreaterThan(0.97)
    // Progress for every phase, never going back, ending at the total.
    expect(messages.some((m) => m.includes('random-projection trees'))).toBe(true)
    expect(messages.some((m) => m.includes('NN-descent round'))).toBe(true)
    expect(messages.some((m) => m.startsWith('layout epoch'))).toBe(true)
    expect(done.every((d, i) => i === 0 || d >= done[i - 1])).toBe(true)
    expect(done.at(-1)).toBe(total)
  })

  it('gives the same layout for the same seed, another for another seed', () => {
    const opts = { nNeighbors: 10, nEpochs: 40 }
    const a = layoutUmap(c.data, c.n, c.dim, pca.coords, null, { ...opts, seed: 5 })
    const b = layoutUmap(c.data, c.n, c.dim, pca.coords, null, { ...opts, seed: 5 })
    const d = layoutUmap(c.data, c.n, c.dim, pca.coords, null, { ...opts, seed: 6 })
    expect(Array.from(b.coords)).toEqual(Array.from(a.coords))
    expect(Array.from(d.coords)).not.toEqual(Array.from(a.coords))
  })

  it('gives the same graph and layout, bit for bit, when a helper thread runs part of every parallel step', async () => {
    const helpers = MapHelpers.start(1)
    try {
      expect(await helpers.started()).toBe(1)
      for (const dim of [128, 384]) {
        const d = dim === c.dim ? c : clusteredVectors(900, dim, { seed: 8 })
        const init = dim === c.dim ? pca.coords : computePca(d.data, d.n, dim).coords
        const opts = { nNeighbors: 12, nEpochs: 30, seed: 3 }
        const alone = layoutUmap(d.data, d.n, dim, init, null, opts)
        const before = { ...helpers.stats }
        const shared = layoutUmap(d.data, d.n, dim, init, null, { ...opts, helpers })
        // Every step went through the pool (kNN batches, the reduction at 384-d, 30 epochs) and the helper ran some chunks.
        expect(helpers.stats.steps - before.steps).toBeGreaterThan(30)
        expect(helpers.stats.helperChunks).toBeGreaterThan(before.helperChunks)
        expect(Array.from(shared.coords)).toEqual(Array.from(alone.coords))
        const g1 = nearestNeighbours(d.data, d.n, dim, 15, { seed: 4 })
        const g2 = nearestNeighbours(d.data, d.n, dim, 15, { seed: 4, helpers })
        expect(Array.from(g2.indices)).toEqual(Array.from(g1.indices))
        expect(Array.from(g2.dists)).toEqual(Array.from(g1.dists))
      }
    } finally {
      helpers.close()
    }
  })

  it('stops when progress says so, in the neighbour search or in the epochs', () => {
    const inSearch = layoutUmap(c.data, c.n, c.dim, pca.coords, null, { onProgress: (_d, _t, m) => !m.includes('NN-descent') })
    expect(inSearch).toMatchObject({ stopped: true, epochs: 0 })
    const inEpochs = layoutUmap(c.data, c.n, c.dim, pca.coords, null, { onProgress: (_d, _t, m) => m !== 'layout epoch 3 of 200' })
    expect(inEpochs).toMatchObject({ stopped: true, epochs: 3 })
  })
})
