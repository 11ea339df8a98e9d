/**
 * The embedding map's worker thread: PCA and UMAP over tens of thousands of
 * vectors take seconds, and main must keep answering the UI meanwhile. One task
 * per worker; cancelling terminates it (runMapTask.ts). Started with `{ helper }`
 * as its workerData, the same script is one of a layout's helper threads
 * (mapHelpers.ts) and runs chunks of its parallel steps instead.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { computeMapTask } from './compute'
import { runPairChunk, runProjectChunk, type PairState, type ProjectState } from './knn'
import { runHelperLoop, type ChunkHandler, type HelperInit } from './mapHelpers'
import type { MapTask, WorkerMessage } from './protocol'
import { runEpochPart, type EpochState } from './umapLayout'

const init = workerData as { helper: HelperInit } | null
if (init && 'helper' in init) {
  const epochs: ChunkHandler = (s: EpochState, q, params) => runEpochPart(s, q, params[0])
  const pairs: ChunkHandler = (s: PairState, c, params) => runPairChunk(s, c, params)
  const project: ChunkHandler = (s: ProjectState, c) => runProjectChunk(s, c)
  runHelperLoop(init.helper, { epochs, pairs, project })
} else {
  // The task arrives by message: the worker may have been started before it was known (runMapTask.ts).
  const post = (m: WorkerMessage) => parentPort?.postMessage(m)
  post({ type: 'ready' })
  parentPort?.once('message', (task: MapTask) => {
    try {
      let last = 0
      const result = computeMapTask(task, (done, total, message) => {
        // A few progress messages a second are plenty for a progress bar.
        const now = Date.now()
        if (now - last > 150 || done === total) {
          last = now
          post({ type: 'progress', done, total, message })
        }
      })
      post({ type: 'done', result })
    } catch (e) {
      post({ type: 'error', message: e instanceof Error ? e.message : String(e) })
    }
  })
}
