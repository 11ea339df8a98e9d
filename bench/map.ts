/**
 * The embedding map (docs/internals/performance.md, "The map"): the PCA frame and the UMAP layout of 5,000
 * and 20,000 clustered unit vectors at 256 dimensions (the hashing embedder) and 768 (a typical model), each
 * against its goal — PCA ≤ 200 ms, UMAP ≤ 5 s at 5,000 and ≤ 20 s at 20,000 — with the time per phase, the
 * CPU time (on a loaded machine wall time overstates what the code costs), the load average, and the
 * neighbour graph's recall against a brute force on a sample of points (the layout is only as good as it).
 */
import fs from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { clusteredVectors } from '../test/helpers/clusteredVectors'
import { PCA_FIT_ROWS, PCA_MAX_ITERATIONS } from '../src/main/map/buildMap'
import { computeMapTask } from '../src/main/map/compute'
import { nearestNeighbours } from '../src/main/map/knn'
import type { MapTask } from '../src/main/map/protocol'
import { scaled } from './scale'
import { GOALS } from './goals'
import { measure, verdict } from './report'
import { fmtMs, loadLine } from './util'

const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

export async function runMapBench(): Promise<void> {
  console.log(loadLine())
  const sizes = scaled(
    [
      { n: 5000, goal: GOALS['map.umap5k'] },
      { n: 20000, goal: GOALS['map.umap20k'] },
    ],
    [{ n: 700, goal: GOALS['map.umap5k'] }],
  )
  for (const dim of scaled([256, 768], [48])) {
    for (const { n, goal } of sizes) {
      const c = clusteredVectors(n, dim, { seed: 11, clusters: 20 })
      const query = c.data.slice(0, dim)
      const pcaTask = { task: 'pca' as const, data: c.data, n, dim, query, seed: 1, maxIterations: PCA_MAX_ITERATIONS, fitRows: PCA_FIT_ROWS }
      let cpu = cpuMs()
      let t = performance.now()
      const pca = computeMapTask(pcaTask)
      const pcaHere = performance.now() - t
      const pcaCpu = cpuMs() - cpu
      // The frame as the app computes it: on the built map worker (thread start and the copy of the rows count).
      // Without a build the worker runs from source, and tsx compiling it on each start would be the number.
      const built = path.resolve(__dirname, '../out/main/mapWorker.js')
      const onWorker = fs.existsSync(built) ? await timeWorker(built, pcaTask) : null
      const frame = onWorker ?? pcaHere
      const pcaFig = measure({
        name: `${n.toLocaleString('en-US')} × ${dim}: PCA frame${onWorker === null ? ' (this thread)' : ' (built map worker)'}`,
        value: frame,
        unit: 'ms',
        goal: GOALS['map.pca'],
      })
      console.log(
        `${n.toLocaleString('en-US')} × ${dim}  PCA frame ${fmtMs(frame)} ${onWorker === null ? '(computed in this thread: no build, `npm run build` to time the worker too)' : `on the built map worker (compute alone ${fmtMs(pcaHere)})`}, CPU ${fmtMs(pcaCpu)}, ${pca.iterations} iterations  ${verdict(pcaFig)}`,
      )

      cpu = cpuMs()
      t = performance.now()
      const phases: string[] = []
      const u = computeMapTask({ task: 'umap', data: c.data, n, dim, query, seed: 1, init: pca.coords, nNeighbors: 15, nEpochs: 200 }, (_d, _t, m) => {
        const phase = m.replace(/[\d,]+/g, '#')
        if (phases.at(-1) !== phase) phases.push(phase)
      })
      const wall = performance.now() - t
      const cpuUsed = cpuMs() - cpu
      const s = u.timings
      const umapFig = measure({ name: `${n.toLocaleString('en-US')} × ${dim}: UMAP`, value: wall, unit: 'ms', goal })
      measure({ name: `${n.toLocaleString('en-US')} × ${dim}: UMAP CPU time`, value: cpuUsed, unit: 'ms' })
      console.log(
        `${n.toLocaleString('en-US')} × ${dim}  UMAP ${fmtMs(wall)} (CPU ${fmtMs(cpuUsed)}): neighbours ${fmtMs(s.neighboursMs)}, graph ${fmtMs(s.graphMs)}, ${u.epochs} epochs ${fmtMs(s.layoutMs)}  ${verdict(umapFig)}`,
      )
      console.log(`    progress phases: ${phases.length} distinct messages, first "${phases[0]}", last "${phases.at(-1)}"`)
      // The graph again, for its quality (at 5,000 only: at 20,000 it would repeat the longest phase).
      if (n <= 5000) {
        const rec = measure({
          name: `${n.toLocaleString('en-US')} × ${dim}: neighbour graph recall@15`,
          value: sampleRecall(c.data, n, dim, scaled(200, 20)),
          unit: 'fraction',
        })
        console.log(`    neighbour graph: recall@15 vs brute force ${rec.value.toFixed(3)} (a 200-point sample)`)
      }
    }
  }
}

/** The approximate graph's share of the exact 15 nearest, over a seeded sample of points (brute force for those). */
function sampleRecall(data: Float32Array, n: number, dim: number, m: number): number {
  const g = nearestNeighbours(data, n, dim, 15, { seed: 1 })
  let hit = 0
  for (let s = 0; s < m; s++) {
    const i = Math.floor((s * n) / m)
    const d = new Float64Array(n)
    for (let j = 0; j < n; j++) {
      let x = 0
      for (let q = 0; q < dim; q++) x += (data[i * dim + q] - data[j * dim + q]) ** 2
      d[j] = j === i ? Infinity : x
    }
    const want = new Set(
      Array.from({ length: n }, (_, j) => j)
        .sort((a, b) => d[a] - d[b])
        .slice(0, 15),
    )
    for (let t = 0; t < 15; t++) if (want.has(g.indices[i * 15 + t])) hit++
  }
  return hit / (m * 15)
}

/** Wall ms from starting a worker on the built script to its answer (what `runMapTask` costs in the app). */
async function timeWorker(script: string, task: MapTask): Promise<number> {
  const t = performance.now()
  await new Promise<void>((resolve, reject) => {
    const w = new Worker(script, { workerData: task })
    w.on('message', (m: { type: string; message?: string }) => {
      if (m.type === 'done') resolve()
      else if (m.type === 'error') reject(new Error(m.message))
      if (m.type !== 'progress') void w.terminate()
    })
    w.on('error', reject)
  })
  return performance.now() - t
}
