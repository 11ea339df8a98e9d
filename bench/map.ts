/**
 * The embedding map (docs/internals/performance.md, "The map"): the PCA frame and the UMAP layout of 5,000
 * and 20,000 clustered unit vectors at 256 dimensions (the hashing embedder) and 768 (a typical model), each
 * against its goal — PCA ≤ 200 ms, UMAP ≤ 5 s at 5,000 and ≤ 20 s at 20,000 — with the time per phase, the
 * CPU time (on a loaded machine wall time overstates what the code costs), the load average, and the
 * neighbour graph's recall against a brute force on a sample of points (the layout is only as good as it).
 * The layout runs on every core (helper threads, mapHelpers.ts); on a shared machine a second core may not
 * show in wall time, so the same layout is also timed with one thread and with two, alternately, and the
 * two layouts compared (they must be identical).
 */
import fs from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { clusteredVectors } from '../test/helpers/clusteredVectors'
import { PCA_FIT_ROWS, PCA_MAX_ITERATIONS } from '../src/main/map/buildMap'
import { computeMapTask } from '../src/main/map/compute'
import { nearestNeighbours } from '../src/main/map/knn'
import { MapHelpers } from '../src/main/map/mapHelpers'
import type { MapTask, MapTaskResult, WorkerMessage } from '../src/main/map/protocol'
import { allocateRows } from '../src/main/map/rows'
import { layoutUmap } from '../src/main/map/umapLayout'
import { workerScript, type WorkerScript } from '../src/main/workerScript'
import { scaled } from './scale'
import { GOALS } from './goals'
import { check, checkWord, measure, verdict } from './report'
import { fmtMs, loadLine } from './util'

const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
/**
 * CPU ms of this (the calling) thread alone, from /proc (Linux; null elsewhere): with helpers, the part of the
 * work the caller still does — what the wall time comes to when every thread has a core of its own.
 */
const callerCpuMs = (): number | null => {
  try {
    const f = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(f[11]) + Number(f[12])) * 10 // utime, stime in clock ticks of 10 ms
  } catch {
    return null
  }
}

/** UMAP epochs: the app's 200 (umapLayout's default); smoke mode runs the same steps, fewer times. */
const EPOCHS = scaled(200, 50)

export async function runMapBench(): Promise<void> {
  console.log(loadLine())
  const sizes = scaled(
    [
      { n: 5000, goal: GOALS['map.umap5k'] },
      { n: 20000, goal: GOALS['map.umap20k'] },
    ],
    [{ n: 400, goal: GOALS['map.umap5k'] }],
  )
  for (const dim of scaled([256, 768], [48])) {
    for (const { n, goal } of sizes) {
      const c = clusteredVectors(n, dim, { seed: 11, clusters: 20 })
      // The rows where buildMap puts them for the workers (a shared WebAssembly memory: read in place, not copied).
      const rows = allocateRows(n, dim)
      rows.data.set(c.data)
      c.data = rows.data
      const query = c.data.slice(0, dim)
      const pcaTask = {
        task: 'pca' as const,
        data: c.data,
        memory: rows.memory,
        n,
        dim,
        query,
        seed: 1,
        maxIterations: PCA_MAX_ITERATIONS,
        fitRows: PCA_FIT_ROWS,
      }
      let cpu = cpuMs()
      let t = performance.now()
      const pca = computeMapTask(pcaTask)
      const pcaHere = performance.now() - t
      const pcaCpu = cpuMs() - cpu
      // The frame as the app computes it: on the built map worker (thread start and the copy of the rows count).
      // Without a build the worker runs from source, and tsx compiling it on each start would be the number.
      const built = builtWorker()
      const times = built ? await timeWorker(built, pcaTask) : null
      const onWorker = times?.cold ?? null
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
      if (times) {
        measure({ name: `${n.toLocaleString('en-US')} × ${dim}: PCA frame (map worker already up)`, value: times.warm, unit: 'ms' })
        console.log(`    PCA frame on a map worker already up (buildMap starts it before the gather): ${fmtMs(times.warm)}`)
      }

      // The layout as the app runs it: on the built map worker, whose helper threads start from the built script
      // too (from source each thread would first compile the map's modules); without a build, in this thread.
      const umapTask = { task: 'umap' as const, data: c.data, memory: rows.memory, n, dim, query, seed: 1, init: pca.coords, nNeighbors: 15, nEpochs: EPOCHS }
      const phases: string[] = []
      const onProgress = (_d: number, _t: number, m: string) => {
        const phase = m.replace(/[\d,]+/g, '#')
        if (phases.at(-1) !== phase) phases.push(phase)
      }
      cpu = cpuMs()
      t = performance.now()
      const u = built ? await runOnWorker(built, umapTask, onProgress) : computeMapTask(umapTask, onProgress)
      const wall = performance.now() - t
      const cpuUsed = cpuMs() - cpu
      const s = u.timings
      const umapFig = measure({ name: `${n.toLocaleString('en-US')} × ${dim}: UMAP`, value: wall, unit: 'ms', goal })
      measure({ name: `${n.toLocaleString('en-US')} × ${dim}: UMAP CPU time`, value: cpuUsed, unit: 'ms' })
      console.log(
        `${n.toLocaleString('en-US')} × ${dim}  UMAP ${fmtMs(wall)} ${built ? 'on the built map worker' : 'in this thread'} (CPU ${fmtMs(cpuUsed)}): neighbours ${fmtMs(s.neighboursMs)}, graph ${fmtMs(s.graphMs)}, ${u.epochs} epochs ${fmtMs(s.layoutMs)}  ${verdict(umapFig)}`,
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
      if (n <= 5000 && dim <= 256) await compareThreads(c.data, n, dim, pca.coords)
    }
  }
}

/**
 * The layout with one thread and with two (one helper, started and waited for), alternately, `RUNS` times each:
 * wall and CPU time of each, the load average, and whether the layouts are identical (the parallel steps must not
 * change a single coordinate).
 */
async function compareThreads(data: Float32Array, n: number, dim: number, init: Float32Array): Promise<void> {
  const runs = scaled(3, 1)
  const helpers = MapHelpers.start(1)
  const up = await helpers.started()
  const times: Record<1 | 2, { wall: number[]; cpu: number[]; caller: number[] }> = {
    1: { wall: [], cpu: [], caller: [] },
    2: { wall: [], cpu: [], caller: [] },
  }
  let first: Float32Array | null = null
  let compared = 0
  let identical = 0
  for (let r = 0; r < runs; r++)
    for (const threads of [1, 2] as const) {
      const cpu = cpuMs()
      const caller = callerCpuMs()
      const t = performance.now()
      const u = layoutUmap(data, n, dim, init, null, { seed: 1, nEpochs: EPOCHS, helpers: threads === 2 ? helpers : null })
      times[threads].wall.push(performance.now() - t)
      times[threads].cpu.push(cpuMs() - cpu)
      if (caller !== null) times[threads].caller.push(callerCpuMs()! - caller)
      if (!first) first = u.coords
      else {
        compared++
        if (u.coords.every((x, i) => x === first![i])) identical++
      }
    }
  const share = helpers.stats.chunks ? helpers.stats.helperChunks / helpers.stats.chunks : 0
  helpers.close()
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
  const [w1, w2] = [med(times[1].wall), med(times[2].wall)]
  const name = `${n.toLocaleString('en-US')} × ${dim}: UMAP`
  measure({ name: `${name}, 1 thread`, value: w1, unit: 'ms' })
  measure({ name: `${name}, 2 threads`, value: w2, unit: 'ms' })
  if (times[1].caller.length) {
    measure({ name: `${name}, calling thread's CPU, 1 thread`, value: med(times[1].caller), unit: 'ms' })
    measure({ name: `${name}, calling thread's CPU, 2 threads`, value: med(times[2].caller), unit: 'ms' })
  }
  const same = check({ name: `${name}: layouts with 1 and 2 threads identical`, passed: identical, total: compared, goal: 'all' })
  const callers = times[1].caller.length ? `; calling thread's CPU 1 → ${fmtMs(med(times[1].caller))}, 2 → ${fmtMs(med(times[2].caller))}` : ''
  console.log(
    `    threads: 1 → ${fmtMs(w1)} (CPU ${fmtMs(med(times[1].cpu))}), 2 → ${fmtMs(w2)} (CPU ${fmtMs(med(times[2].cpu))}): ${(w1 / w2).toFixed(2)}× (medians of ${runs} alternating runs, ${up} helper up, ${loadLine()}); layouts identical ${checkWord(same)}`,
  )
  console.log(`    parallel steps: the helper ran ${(100 * share).toFixed(0)} % of their chunks${callers}`)
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

/**
 * Wall ms from starting a worker on the built script to its answer (what the frame costs when its thread starts
 * with the task), and from sending the task to a worker already up to its answer (what buildMap's early start
 * leaves of it when the recall and the gather take longer than the thread's start).
 */
async function timeWorker(script: WorkerScript, task: MapTask): Promise<{ cold: number; warm: number }> {
  const once = (early: boolean) =>
    new Promise<number>((resolve, reject) => {
      let t = performance.now()
      const w = new Worker(script.code, { eval: script.eval, execArgv: script.execArgv })
      const send = () => {
        if (early) t = performance.now()
        w.postMessage(task)
      }
      if (!early) send()
      w.on('message', (m: { type: string; message?: string }) => {
        if (m.type === 'ready' && early) send()
        else if (m.type === 'done') resolve(performance.now() - t)
        else if (m.type === 'error') reject(new Error(m.message))
        if (m.type === 'done' || m.type === 'error') void w.terminate()
      })
      w.on('error', reject)
    })
  return { cold: await once(false), warm: await once(true) }
}

/** The built map worker (`npm run build`), started as the app starts it; null without a build. */
function builtWorker(): WorkerScript | null {
  const dir = path.resolve(__dirname, '../out/main')
  return fs.existsSync(path.join(dir, 'mapWorker.js')) ? workerScript('mapWorker', dir, 'map worker') : null
}

/** `task` on a fresh worker of `script`, its progress passed on; resolves with its result. */
function runOnWorker<T extends MapTask>(
  script: WorkerScript,
  task: T,
  onProgress: (done: number, total: number, message: string) => void,
): Promise<MapTaskResult[T['task']]> {
  return new Promise((resolve, reject) => {
    const w = new Worker(script.code, { eval: script.eval, execArgv: script.execArgv })
    w.on('message', (m: WorkerMessage) => {
      if (m.type === 'progress') onProgress(m.done, m.total, m.message)
      else if (m.type === 'done') resolve(m.result as MapTaskResult[T['task']])
      else if (m.type === 'error') reject(new Error(m.message))
      if (m.type === 'done' || m.type === 'error') void w.terminate()
    })
    w.on('error', reject)
    w.postMessage(task)
  })
}
