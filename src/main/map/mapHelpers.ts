/**
 * The map's second core (docs/internals/performance.md, "The map"): helper threads that
 * take part in the layout's parallel steps. A step is cut into chunks that write disjoint
 * outputs (one partition of the points, one block of neighbour pairs) and read only what no
 * chunk of the same step writes, so the result is the same whichever thread ran which chunk,
 * and the same with no helper at all — the layout stays seeded and deterministic.
 *
 * The scheme is the dense scan pool's (store/vectors/scanPool.ts): the calling thread claims
 * chunks from one atomic counter like any helper, so a helper that is still starting or that
 * the OS has not scheduled (the machine is shared) costs nothing; the caller then runs more
 * chunks itself. The step is synchronous: after its own chunks the caller `Atomics.wait`s for
 * chunks a helper is still running.
 *
 * A helper is the map worker's own script (mapWorker.ts) started with `{ helper }` as its
 * workerData, so it runs the very functions the caller runs; the task's state (typed arrays
 * over SharedArrayBuffers) arrives once per task by message, each step's parameters in the
 * shared control block.
 *
 * Per helper control block (Int32Array): [GEN] step number (the caller bumps it and notifies),
 * [TASK] id of the task to run, [READY] 1 once the helper runs its loop.
 * Shared job block: [CLAIM] (gen << 16 | next chunk), [DONE] chunks finished, [FAILED] a
 * helper's chunk threw, [CHUNKS], then the step's parameters.
 */
import os from 'node:os'
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads'
import { claimChunks, HelperThreads } from '../helperThreads'
import { workerScript } from '../workerScript'

const GEN = 0
const TASK = 1
const READY = 2
const CLAIM = 0
const DONE = 1
const FAILED = 2
const CHUNKS = 3
const PARAMS = 4
/** Parameters a step can pass (epoch number, pair block, …). */
const MAX_PARAMS = 6
/** GEN value that tells a helper to leave its loop. */
const QUIT = -1

/** What a helper needs at start: its control block, the shared job block, the port tasks arrive on. */
export interface HelperInit {
  own: SharedArrayBuffer
  shared: SharedArrayBuffer
  port: MessagePort
}

/** Runs chunk `chunk` of a step of a task of this kind, over the task's shared `state`, with the step's parameters. */
export type ChunkHandler = (state: never, chunk: number, params: Int32Array) => void

interface Helper {
  worker: Worker
  ctl: Int32Array
  port: MessagePort
  task: number
}

/** How many helpers a layout starts: `$RECALLSCOPE_MAP_THREADS` − 1, else one per extra core, at most 3. */
function helperCount(): number {
  const env = Number(process.env.RECALLSCOPE_MAP_THREADS)
  const threads = Number.isInteger(env) && env >= 1 ? env : Math.min(4, os.availableParallelism())
  return typeof SharedArrayBuffer === 'function' ? threads - 1 : 0
}

/** A Float64Array over shared memory where there is some (helpers read and write it in place), else a plain one. */
export function sharedF64(length: number): Float64Array {
  return typeof SharedArrayBuffer === 'function' ? new Float64Array(new SharedArrayBuffer(8 * length)) : new Float64Array(length)
}

/** An Int32Array over shared memory where there is some, else a plain one. */
export function sharedI32(length: number): Int32Array {
  return typeof SharedArrayBuffer === 'function' ? new Int32Array(new SharedArrayBuffer(4 * length)) : new Int32Array(length)
}

/** Waiting this long for a helper's chunk means the helper died (never seen): the step fails. */
const STUCK_MS = 30_000

export class MapHelpers {
  private readonly helpers = new HelperThreads<Helper>(READY)
  private readonly job = new Int32Array(new SharedArrayBuffer((PARAMS + MAX_PARAMS) * 4))
  private readonly params = this.job.subarray(PARAMS, PARAMS + MAX_PARAMS)
  private gen = 0
  private taskId = 0
  private task: { id: number; kind: string; state: object } | null = null
  /** Steps run, chunks in them, and how many chunks helpers ran (the rest ran on the calling thread). */
  readonly stats = { steps: 0, chunks: 0, helperChunks: 0 }

  private constructor(count: number, here: string) {
    if (count < 1) return
    const script = workerScript('mapWorker', here, 'map worker')
    for (let i = 0; i < count; i++) {
      const own = new SharedArrayBuffer(4 * 4)
      const { port1, port2 } = new MessageChannel()
      const helper: HelperInit = { own, shared: this.job.buffer, port: port2 }
      const worker = new Worker(script.code, { eval: script.eval, execArgv: script.execArgv, workerData: { helper }, transferList: [port2] })
      this.helpers.add({ worker, ctl: new Int32Array(own), port: port1, task: 0 })
    }
  }

  /**
   * Start `count` helpers (default `helperCount()`); none when shared memory is missing. They boot while
   * the caller works on; steps use those that are up. `here` is the caller's folder, where the map worker's
   * script is found.
   */
  static start(count = helperCount(), here: string = typeof __dirname === 'string' ? __dirname : process.cwd()): MapHelpers {
    return new MapHelpers(typeof SharedArrayBuffer === 'function' ? Math.max(0, count) : 0, here)
  }

  /** Resolves once every helper runs (tests and benches wait for it; the app uses what is up). */
  started(timeoutMs = 20_000): Promise<number> {
    return this.helpers.started(timeoutMs)
  }

  /** The steps that follow run chunks of `kind` over `state` (typed arrays over SharedArrayBuffers: shared, not copied). */
  setTask(kind: string, state: object): void {
    this.task = { id: ++this.taskId, kind, state }
  }

  /**
   * Chunks 0 … `chunks` − 1 of the current task with `params`, across this thread (which runs `self(chunk, params)`)
   * and the ready helpers. Returns when every chunk is done; throws when a helper's chunk threw or a helper died mid-chunk.
   */
  step(chunks: number, params: number[], self: (chunk: number, params: Int32Array) => void): void {
    if (chunks > 0xffff) throw new RangeError(`A step has at most 65,535 chunks (got ${chunks})`)
    const job = this.job
    for (let i = 0; i < MAX_PARAMS; i++) this.params[i] = params[i] ?? 0
    const helpers = this.task ? this.helpers.ready() : []
    if (helpers.length === 0) {
      for (let c = 0; c < chunks; c++) self(c, this.params)
      this.count(chunks, chunks)
      return
    }
    const task = this.task!
    this.gen = (this.gen % 0x7fff) + 1 // 1..32767: never a helper's last-seen value, never QUIT
    const gen = this.gen
    job[CHUNKS] = chunks
    Atomics.store(job, DONE, 0)
    Atomics.store(job, FAILED, 0)
    Atomics.store(job, CLAIM, gen << 16) // publishes the parameters above (sequentially consistent)
    for (const h of helpers) {
      if (h.task !== task.id) {
        h.port.postMessage({ id: task.id, kind: task.kind, state: task.state })
        h.task = task.id
      }
      Atomics.store(h.ctl, TASK, task.id)
      Atomics.store(h.ctl, GEN, gen)
      Atomics.notify(h.ctl, GEN)
    }
    const mine = claimChunks(job, CLAIM, DONE, chunks, (c) => self(c, this.params))
    for (let done = Atomics.load(job, DONE); done < chunks; done = Atomics.load(job, DONE))
      if (Atomics.wait(job, DONE, done, STUCK_MS) === 'timed-out' && Atomics.load(job, DONE) === done) {
        this.close()
        throw new Error('A map helper thread stopped in the middle of a step')
      }
    if (Atomics.load(job, FAILED)) throw new Error('A map helper thread failed in a step')
    this.count(chunks, mine)
  }

  private count(chunks: number, mine: number): void {
    this.stats.steps++
    this.stats.chunks += chunks
    this.stats.helperChunks += chunks - mine
  }

  /** End the helpers (they also end with the thread that started them). */
  close(): void {
    for (const h of this.helpers.all) {
      Atomics.store(h.ctl, GEN, QUIT)
      Atomics.notify(h.ctl, GEN)
    }
    this.helpers.clear()
  }
}

/**
 * A helper's loop (mapWorker.ts runs it when started as one): sleep until the next step, take the task's
 * state if it is new, claim chunks of the step until none are left, run each with `handlers[kind]`.
 */
export function runHelperLoop(init: HelperInit, handlers: Record<string, ChunkHandler>): void {
  const ctl = new Int32Array(init.own)
  const job = new Int32Array(init.shared)
  const params = job.subarray(PARAMS, PARAMS + MAX_PARAMS)
  type Task = { id: number; kind: string; state: never }
  let task = null as Task | null
  let seen = 0
  Atomics.store(ctl, READY, 1)
  for (;;) {
    Atomics.wait(ctl, GEN, seen)
    seen = Atomics.load(ctl, GEN)
    if (seen === QUIT) return
    for (let m; (m = receiveMessageOnPort(init.port));) task = m.message as Task
    if (!task || task.id !== Atomics.load(ctl, TASK)) continue
    const run = handlers[task.kind]
    for (;;) {
      const v = Atomics.load(job, CLAIM)
      if (v >>> 16 !== seen) break
      const c = v & 0xffff
      if (c >= Atomics.load(job, CHUNKS)) break
      if (Atomics.compareExchange(job, CLAIM, v, v + 1) !== v) continue
      try {
        run(task.state, c, params)
      } catch {
        Atomics.store(job, FAILED, 1)
      }
      Atomics.add(job, DONE, 1)
      Atomics.notify(job, DONE)
    }
  }
}
