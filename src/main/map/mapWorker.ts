/**
 * The embedding map's worker thread: PCA and UMAP over tens of thousands of
 * vectors take seconds, and main must keep answering the UI meanwhile. One task
 * per worker; cancelling terminates it (runMapTask.ts).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { computeMapTask } from './compute'
import type { MapTask, WorkerMessage } from './protocol'

const post = (m: WorkerMessage) => parentPort?.postMessage(m)
try {
  let last = 0
  const result = computeMapTask(workerData as MapTask, (done, total, message) => {
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
