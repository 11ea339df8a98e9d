import { describe, expect, it } from 'vitest'
import { computeMapTask } from './compute'
import { allocateRows } from './rows'
import { runMapTask } from './runMapTask'
import { mulberry32 } from '../../shared/random'
import type { PcaTask, UmapTask } from './protocol'
import { sameClusterNearest } from '../../../test/helpers/clusteredVectors'

/** Three well-separated clusters of unit vectors (what embeddings look like, small). */
function clusters(n: number, dim: number, seed: number): Float32Array {
  const r = mulberry32(seed)
  const centres = Array.from({ length: 3 }, () => Array.from({ length: dim }, () => r() - 0.5))
  const data = new Float32Array(n * dim)
  for (let i = 0; i < n; i++) {
    const c = centres[i % 3]
    let s = 0
    for (let j = 0; j < dim; j++) s += (data[i * dim + j] = c[j] + 0.08 * (r() - 0.5)) ** 2
    for (let j = 0; j < dim; j++) data[i * dim + j] /= Math.sqrt(s)
  }
  return data
}

describe('the map worker', () => {
  const n = 240
  const dim = 24
  const data = clusters(n, dim, 5)
  const query = data.slice(0, dim)

  it('returns the same PCA as the in-thread computation', async () => {
    const task: PcaTask = { task: 'pca', data, n, dim, query, seed: 1 }
    const here = computeMapTask(task)
    const there = await runMapTask(task)
    expect(Array.from(there.coords)).toEqual(Array.from(here.coords))
    expect(there.query).toEqual(here.query)
    expect(there.variance).toEqual(here.variance)
  })

  it('reads rows in a shared WebAssembly memory in place on the worker: the same frame as in this thread', async () => {
    const rows = allocateRows(n, dim)
    rows.data.set(data)
    const task: PcaTask = { task: 'pca', data: rows.data, memory: rows.memory, n, dim, query, seed: 1, fitRows: 100, maxIterations: 6 }
    const here = computeMapTask(task)
    const there = await runMapTask(task)
    expect(Array.from(there.coords)).toEqual(Array.from(here.coords))
    expect(there.totalVariance).toBe(here.totalVariance)
    // and the rows are still those written (the worker's scratch space lies past them)
    expect(Array.from(rows.data)).toEqual(Array.from(data))
  })

  it('returns the same UMAP layout (seeded) as the in-thread computation, with progress through every phase', async () => {
    const pca = computeMapTask({ task: 'pca', data, n, dim, query, seed: 1 } satisfies PcaTask)
    const task: UmapTask = { task: 'umap', data, n, dim, query, seed: 2, init: pca.coords, nNeighbors: 10, nEpochs: 60 }
    const here = computeMapTask(task)
    const seen: number[] = []
    const said: string[] = []
    let total = 0
    const there = await runMapTask(task, {
      onProgress: (done, t, message) => {
        seen.push(done)
        said.push(message)
        total = t
      },
    })
    expect(Array.from(there.coords)).toEqual(Array.from(here.coords))
    expect(there.query).toEqual(here.query)
    expect(there.queryPlacement).toBe('nearest')
    expect(there.epochs).toBe(60)
    expect(seen.at(-1)).toBe(total)
    expect(said.some((m) => m.includes('nearest neighbours'))).toBe(true)
    expect(said.at(-1)).toBe('layout epoch 60 of 60')
    // The clusters stay apart: each point's nearest layout neighbour is in its own cluster (point i is in cluster i mod 3).
    expect(
      sameClusterNearest(
        there.coords,
        Int32Array.from({ length: n }, (_, i) => i % 3),
      ),
    ).toBeGreaterThan(0.95)
  })

  it('lays out duplicate vectors (agents store the same memory many times) and places the query among them', () => {
    const m = 60
    const dup = new Float32Array(m * dim)
    for (let i = 0; i < m; i++) dup.set(i < 25 ? data.subarray(0, dim) : data.subarray(i * dim, (i + 1) * dim), i * dim)
    const r = computeMapTask({
      task: 'umap',
      data: dup,
      n: m,
      dim,
      query: dup.slice(0, dim),
      seed: 1,
      init: new Float32Array(m * 2),
      nNeighbors: 10,
      nEpochs: 30,
    })
    expect(r.epochs).toBe(30)
    expect(r.coords.every(Number.isFinite)).toBe(true)
    // The query equals the 25 duplicates: it lands where its 5 nearest (all duplicates) are, on average.
    const nearest = [0, 1, 2, 3, 4].map((i) => [r.coords[2 * i], r.coords[2 * i + 1]])
    expect(r.query![0]).toBeCloseTo(nearest.reduce((s, p) => s + p[0], 0) / 5, 4)
  })

  it('stops with CANCELLED when aborted', async () => {
    const ac = new AbortController()
    const p = runMapTask(
      { task: 'umap', data, n, dim, query: null, seed: 1, init: new Float32Array(n * 2), nNeighbors: 10, nEpochs: 2000 },
      { signal: ac.signal },
    )
    setTimeout(() => ac.abort(), 50)
    await expect(p).rejects.toMatchObject({ code: 'CANCELLED' })
  })
})
