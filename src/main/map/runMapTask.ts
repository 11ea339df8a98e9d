/**
 * Run a map task (PCA or UMAP) on a worker thread, so main keeps serving the UI
 * while it computes. The worker script is the built `mapWorker.js` (an
 * electron-vite input beside the main bundle) or, running from source (vitest,
 * tsx), `mapWorker.ts` through tsx's CommonJS hook — the same two ways the
 * Postgres worker is found (store/postgres/bridge.ts).
 *
 * The worker can be started before its task is known (`startMapWorker`): the map's
 * first frame starts it before gathering the rows, so the thread's start overlaps the
 * recall and the gather instead of adding to the frame.
 */
import { Worker } from 'node:worker_threads'
import { RecallscopeError } from '../../shared/result'
import type { MapTask, MapTaskResult, WorkerMessage } from './protocol'
import { workerScript } from '../workerScript'

export interface RunOptions {
  /** aborting terminates the worker: the promise rejects with CANCELLED */
  signal?: AbortSignal
  onProgress?: (done: number, total: number, message: string) => void
}

/** A started map worker, waiting for its one task. */
export interface MapWorker {
  /** Send the task; settles once the worker has answered and exited. Call once. */
  run<T extends MapTask>(task: T, opts?: RunOptions): Promise<MapTaskResult[T['task']]>
  /** End the worker when no task will come (after `run` it ends by itself). */
  close(): void
}

/** Start a map worker thread now; its task follows with `run`. */
export function startMapWorker(): MapWorker {
  const script = workerScript('mapWorker', typeof __dirname === 'string' ? __dirname : process.cwd(), 'map worker')
  const worker = new Worker(script.code, { eval: script.eval, execArgv: script.execArgv })
  // Until it has a task it must not keep the process alive, nor crash it if it fails to start.
  worker.unref()
  let early: Error | null = null
  const onEarly = (e: Error) => (early = e)
  worker.on('error', onEarly)
  let used = false
  return {
    close: () => {
      if (!used) void worker.terminate()
    },
    run<T extends MapTask>(task: T, opts: RunOptions = {}): Promise<MapTaskResult[T['task']]> {
      used = true
      worker.off('error', onEarly)
      worker.ref()
      return new Promise((resolve, reject) => {
        let settled = false
        // Settle only once the thread is gone: the CPU pool (jobs/cpuPool.ts) frees a slot when this settles, so the
        // number of live map workers stays bounded even while cancelled ones are still being torn down.
        const finish = (f: () => void) => {
          if (settled) return
          settled = true
          opts.signal?.removeEventListener('abort', onAbort)
          worker.terminate().then(f, f)
        }
        const onAbort = () => finish(() => reject(new RecallscopeError('CANCELLED', 'Cancelled')))
        if (opts.signal?.aborted) return onAbort()
        if (early) return finish(() => reject(new RecallscopeError('INTERNAL', `The map worker failed: ${early!.message}`)))
        opts.signal?.addEventListener('abort', onAbort, { once: true })
        worker.on('message', (m: WorkerMessage) => {
          if (m.type === 'progress') opts.onProgress?.(m.done, m.total, m.message)
          else if (m.type === 'done') finish(() => resolve(m.result as MapTaskResult[T['task']]))
          else if (m.type === 'error') finish(() => reject(new RecallscopeError('INTERNAL', `The map could not be computed: ${m.message}`)))
        })
        worker.on('error', (e) => finish(() => reject(new RecallscopeError('INTERNAL', `The map worker failed: ${e.message}`))))
        worker.on('exit', (code) => finish(() => reject(new RecallscopeError('INTERNAL', `The map worker exited (code ${code}) before answering`))))
        // Rows over a SharedArrayBuffer (buildMap's) are shared with the worker, not copied.
        worker.postMessage(task)
      })
    },
  }
}

/** Compute `task` on a fresh worker thread (callers run it inside `cpuPool`, which bounds how many run at once). */
export function runMapTask<T extends MapTask>(task: T, opts: RunOptions = {}): Promise<MapTaskResult[T['task']]> {
  if (opts.signal?.aborted) return Promise.reject(new RecallscopeError('CANCELLED', 'Cancelled'))
  return startMapWorker().run(task, opts)
}
