/**
 * A set of persistent helper threads, each saying it is up by storing 1 at `readyAt` of its own
 * control block (an Int32Array over shared memory): the dense scan pool's (store/vectors/scanPool.ts)
 * and the map layout's (map/mapHelpers.ts). A helper that errors or exits leaves the set; callers use
 * the ready ones and never wait for one still starting.
 */
import type { Worker } from 'node:worker_threads'

export interface HelperThread {
  worker: Worker
  ctl: Int32Array
}

export class HelperThreads<H extends HelperThread> {
  /** every live helper, ready or still starting */
  readonly all: H[] = []

  constructor(private readonly readyAt: number) {}

  /** Track `h`; it sleeps in Atomics.wait between requests, so it never keeps the process alive. */
  add(h: H): void {
    h.worker.unref()
    const drop = () => {
      const i = this.all.indexOf(h)
      if (i >= 0) this.all.splice(i, 1)
    }
    h.worker.on('error', drop)
    h.worker.on('exit', drop)
    this.all.push(h)
  }

  /** The helpers that run their loop. */
  ready(): H[] {
    return this.all.filter((h) => Atomics.load(h.ctl, this.readyAt) === 1)
  }

  /** Resolves with the number ready once every helper runs or `timeoutMs` passed (benches and tests wait for it). */
  async started(timeoutMs: number): Promise<number> {
    const t0 = Date.now()
    while (this.ready().length < this.all.length && Date.now() - t0 < timeoutMs) await new Promise((r) => setTimeout(r, 5))
    return this.ready().length
  }

  /** Terminate every helper and forget them. */
  clear(): void {
    for (const h of this.all) void h.worker.terminate()
    this.all.length = 0
  }
}

/**
 * The calling thread's share of a request: claim chunks from `job[claimAt]` (request number << 16 | next chunk)
 * like any helper until none are left, run each and count it at `job[doneAt]`. Returns how many it ran.
 */
export function claimChunks(job: Int32Array, claimAt: number, doneAt: number, chunks: number, run: (chunk: number) => void): number {
  let mine = 0
  for (;;) {
    const v = Atomics.load(job, claimAt)
    const c = v & 0xffff
    if (c >= chunks) break
    if (Atomics.compareExchange(job, claimAt, v, v + 1) !== v) continue
    run(c)
    Atomics.add(job, doneAt, 1)
    mine++
  }
  return mine
}
