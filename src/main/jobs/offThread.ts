/**
 * Heavy work off the main thread: one job worker (jobWorker.ts) per open store,
 * started on first use, with its own read-only connection. The main thread only
 * posts a task and relays its progress, so IPC and the HTTP bridge keep
 * answering while an eval, a tune or a why-not runs. Cancel aborts the task in
 * the worker; a task that does not stop within a grace period takes the worker
 * down with it (the next task starts a fresh one).
 */
import { Worker } from 'node:worker_threads'
import { ERROR_CODES, RecallscopeError, type ErrorCode } from '../../shared/result'
import type { FromWorker, OpenSpec, ToWorker, WireError } from './protocol'
import type { TaskInputs, TaskKind, TaskOutputs } from './tasks'
import { workerScript } from '../workerScript'

/** How long a cancelled task may take to stop before its worker is terminated. */
const CANCEL_GRACE_MS = 3000

function fromWire(e: WireError): RecallscopeError {
  const code = (ERROR_CODES as readonly string[]).includes(e.code) ? (e.code as ErrorCode) : 'INTERNAL'
  return new RecallscopeError(code, e.message, e.details)
}

interface Pending {
  resolve: (v: unknown) => void
  reject: (e: Error) => void
  progress: (done: number, total: number, message?: string) => void
}

export interface OffThreadControl {
  signal?: AbortSignal
  progress?: (done: number, total: number, message?: string) => void
  /** drop the worker's cached candidates first */
  fresh?: boolean
}

/** One store's job worker (or, with no store, a worker for storeless tasks: imports). */
export class TaskWorker {
  private worker: Worker | null = null
  private readonly pending = new Map<number, Pending>()
  private seq = 0
  private closed = false

  constructor(private readonly open: OpenSpec | null) {}

  private start(): Worker {
    if (this.worker) return this.worker
    const script = workerScript('jobWorker', typeof __dirname === 'string' ? __dirname : process.cwd(), 'job worker')
    const w = new Worker(script.code, { eval: script.eval, execArgv: script.execArgv, workerData: { open: this.open } })
    w.on('message', (m: FromWorker) => {
      const p = this.pending.get(m.id)
      if (!p) return
      if (m.type === 'progress') p.progress(m.done, m.total, m.message)
      else {
        this.pending.delete(m.id)
        if (m.type === 'done') p.resolve(m.result)
        else p.reject(fromWire(m.error))
        this.idle()
      }
    })
    w.on('error', (e) => this.stop(new RecallscopeError('INTERNAL', `The job worker failed: ${e.message}`)))
    w.on('exit', () => {
      if (this.worker === w) this.stop(new RecallscopeError('INTERNAL', 'The job worker stopped'))
    })
    this.worker = w
    return w
  }

  /** An idle worker does not keep the process alive (the CLI, tests). */
  private idle(): void {
    if (this.pending.size === 0) this.worker?.unref()
  }

  /** Drop the worker, failing whatever it was running with `why`. */
  private stop(why: RecallscopeError): void {
    const w = this.worker
    this.worker = null
    for (const p of this.pending.values()) p.reject(why)
    this.pending.clear()
    if (w) void w.terminate()
  }

  /** Run one task in the worker; resolves with its result, rejects with its typed error. */
  run<K extends TaskKind>(kind: K, input: TaskInputs[K], ctl: OffThreadControl = {}): Promise<TaskOutputs[K]> {
    if (this.closed) return Promise.reject(new RecallscopeError('NO_DB', 'The store was closed'))
    if (ctl.signal?.aborted) return Promise.reject(new RecallscopeError('CANCELLED', 'Cancelled'))
    const w = this.start()
    const id = ++this.seq
    return new Promise<TaskOutputs[K]>((resolve, reject) => {
      let timer: NodeJS.Timeout | null = null
      const onAbort = () => {
        w.postMessage({ type: 'cancel', id } satisfies ToWorker)
        // A task stuck in a long synchronous stretch: terminate its worker rather than let it run on.
        timer = setTimeout(() => {
          if (this.pending.has(id) && this.worker === w) this.stop(new RecallscopeError('CANCELLED', 'Cancelled (the worker was stopped)'))
        }, CANCEL_GRACE_MS)
        timer.unref()
      }
      const settle = () => {
        ctl.signal?.removeEventListener('abort', onAbort)
        if (timer) clearTimeout(timer)
      }
      this.pending.set(id, {
        resolve: (v) => {
          settle()
          resolve(v as TaskOutputs[K])
        },
        reject: (e) => {
          settle()
          reject(e)
        },
        progress: ctl.progress ?? (() => {}),
      })
      ctl.signal?.addEventListener('abort', onAbort, { once: true })
      w.ref()
      w.postMessage({ type: 'run', id, kind, input, fresh: ctl.fresh ?? false } satisfies ToWorker)
    })
  }

  /** Terminate the worker (the store was closed or replaced); running tasks fail with NO_DB. */
  close(): void {
    this.closed = true
    this.stop(new RecallscopeError('NO_DB', 'The store was closed while the task ran'))
  }
}
