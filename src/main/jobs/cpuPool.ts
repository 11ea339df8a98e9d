/**
 * One bounded pool for the CPU jobs that start their own worker thread (the map's PCA and
 * UMAP): at most `size` run at once, up to `maxQueued` more wait in order, and anything past
 * that is refused with a typed `BUSY` instead of starting yet another thread. A slot is
 * released only when the job's promise settles — runMapTask settles after its worker has
 * exited — so the number of live worker threads is bounded, not just the number of jobs.
 * A queued job whose signal aborts (cancelled, superseded) leaves the queue at once with
 * `CANCELLED`, without ever starting. docs/guide/safety.md lists the measured bound.
 */
import os from 'node:os'
import { RecallscopeError } from '../../shared/result'

/** What the pool is doing now, and the most it ever ran at once (the regression test reads it). */
export interface PoolStats {
  running: number
  queued: number
  /** the highest `running` since the pool was made */
  peak: number
  /** jobs refused with BUSY since the pool was made */
  refused: number
}

/** How a job waits for its turn. */
export interface PoolRunOptions {
  /** aborting while queued rejects with CANCELLED and frees the place in the queue */
  signal?: AbortSignal
  /** called when the job has to wait, with its place in the queue (1 = next) */
  onQueued?: (position: number) => void
}

/** A queued job: `start` hands it the slot that was just released. */
interface Waiter {
  start: () => void
}

export class CpuPool {
  private running = 0
  private peak = 0
  private refused = 0
  private readonly queue: Waiter[] = []

  /**
   * @param size jobs run at once (at least 1)
   * @param maxQueued jobs that may wait; one more is `BUSY`
   */
  constructor(
    readonly size: number,
    readonly maxQueued: number,
  ) {
    if (!(size >= 1)) throw new RecallscopeError('INTERNAL', `A pool needs at least one slot (got ${size})`)
  }

  stats(): PoolStats {
    return { running: this.running, queued: this.queue.length, peak: this.peak, refused: this.refused }
  }

  /** Run `job` when a slot is free; its slot is held until the promise it returns settles. */
  async run<T>(job: () => Promise<T>, opts: PoolRunOptions = {}): Promise<T> {
    await this.acquire(opts)
    try {
      return await job()
    } finally {
      this.release()
    }
  }

  private acquire(opts: PoolRunOptions): Promise<void> {
    if (opts.signal?.aborted) return Promise.reject(new RecallscopeError('CANCELLED', 'Cancelled'))
    if (this.running < this.size && this.queue.length === 0) {
      this.take()
      return Promise.resolve()
    }
    if (this.queue.length >= this.maxQueued) {
      this.refused++
      return Promise.reject(
        new RecallscopeError(
          'BUSY',
          `Too much work queued: ${this.running} CPU jobs run and ${this.queue.length} wait (the most allowed); try again when one ends`,
        ),
      )
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.queue.indexOf(w)
        if (i >= 0) this.queue.splice(i, 1)
        reject(new RecallscopeError('CANCELLED', 'Cancelled while waiting for a free worker'))
      }
      const w: Waiter = {
        start: () => {
          opts.signal?.removeEventListener('abort', onAbort)
          this.take()
          resolve()
        },
      }
      opts.signal?.addEventListener('abort', onAbort, { once: true })
      this.queue.push(w)
      opts.onQueued?.(this.queue.length)
    })
  }

  private take(): void {
    this.running++
    this.peak = Math.max(this.peak, this.running)
  }

  private release(): void {
    this.running--
    this.queue.shift()?.start()
  }
}

/** Slots of the process's pool: `$RECALLSCOPE_CPU_WORKERS`, else cores − 1 between 2 and 4 (a PCA is not stuck behind one UMAP). */
function poolSize(): number {
  const v = Number(process.env.RECALLSCOPE_CPU_WORKERS)
  if (Number.isInteger(v) && v >= 1) return v
  return Math.min(4, Math.max(2, os.availableParallelism() - 1))
}

/** Jobs that may wait: a queued map refinement holds no copy of its vectors, so a few dozen cost nothing. */
const MAX_QUEUED = 64

/** The pool every map task (PCA, UMAP) of this thread runs in. */
export const cpuPool = new CpuPool(poolSize(), MAX_QUEUED)
