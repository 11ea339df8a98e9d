/**
 * The dense scan on every core: persistent helper threads that run the same
 * SIMD kernel (dotKernel.ts, shared-memory variant) over the VectorIndex's
 * shared WebAssembly memory, no copy. The main thread takes part: the rows are
 * cut into chunks that every thread claims from one atomic counter, so a helper
 * the OS has not scheduled yet (the machine is shared) costs nothing — the
 * calling thread simply scans more chunks. Each row's similarity is computed
 * by the same kernel whichever thread takes it, so the result is bit-identical
 * to the single-thread scan and the top-k after it is unchanged.
 *
 * The call is synchronous (the engine is): after its own chunks, the caller
 * `Atomics.wait`s for chunks still being scanned (a few hundred µs at most).
 *
 * Control block (Int32Array over a SharedArrayBuffer, one per helper):
 *   [GEN]   request number (1..32767); the caller sets it and notifies to wake the helper
 *   [MEM]   id of the memory to scan (a helper drains its port for new ones)
 *   [READY] 1 once the helper runs its loop (unused before: the first scans stay on one thread)
 * and one block shared by all: [CLAIM] (gen << 16 | next chunk), [DONE] chunks finished,
 * the parameters (data, n, dim, q, out, chunk rows, chunks, kernel, row/out/q strides).
 */
import os from 'node:os'
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads'
import { claimChunks, HelperThreads } from '../../helperThreads'
import { kernelModule, type DotAll, type KernelName, type WasmMemory } from './dotKernel'

const GEN = 0
const MEM = 1
const READY = 2
const CLAIM = 0
const DONE = 1
const P_DATA = 2
const P_N = 3
const P_DIM = 4
const P_Q = 5
const P_OUT = 6
const P_ROWS = 7
const P_CHUNKS = 8
const P_KERNEL = 9
const P_ROW_BYTES = 10
const P_OUT_BYTES = 11
const P_Q_BYTES = 12
const KERNELS: readonly KernelName[] = ['dotAll', 'dot6All', 'quantI8']

/**
 * The helper: plain CommonJS run with `eval` (no file to build or find: the kernel
 * arrives compiled in workerData). It claims chunks of the current request until
 * none are left, then sleeps on its control word.
 */
const HELPER = `
const { workerData, receiveMessageOnPort } = require('node:worker_threads')
const { modules, own, shared, port } = workerData
const ctl = new Int32Array(own)
const job = new Int32Array(shared)
let memId = -1
let kernels = null
let seen = 0
Atomics.store(ctl, ${READY}, 1)
for (;;) {
  Atomics.wait(ctl, ${GEN}, seen)
  seen = Atomics.load(ctl, ${GEN})
  for (let m; (m = receiveMessageOnPort(port)); ) {
    memId = m.message.id
    kernels = modules.map((mod, k) => new WebAssembly.Instance(mod, { env: { mem: m.message.memory } }).exports[${JSON.stringify(KERNELS)}[k]])
  }
  if (memId !== Atomics.load(ctl, ${MEM}) || kernels === null) continue
  const gen = seen
  for (;;) {
    const v = Atomics.load(job, ${CLAIM})
    if (v >>> 16 !== gen) break
    const c = v & 0xffff
    const chunks = Atomics.load(job, ${P_CHUNKS})
    if (c >= chunks) break
    if (Atomics.compareExchange(job, ${CLAIM}, v, v + 1) !== v) continue
    const rows = job[${P_ROWS}], n = job[${P_N}]
    const from = c * rows
    const count = Math.min(rows, n - from)
    kernels[job[${P_KERNEL}]](job[${P_DATA}] + from * job[${P_ROW_BYTES}], count, job[${P_DIM}], job[${P_Q}] + from * job[${P_Q_BYTES}], job[${P_OUT}] + from * job[${P_OUT_BYTES}])
    Atomics.add(job, ${DONE}, 1)
    Atomics.notify(job, ${DONE})
  }
}
`

/** One kernel call over rows [0, n), as `scan` and `start` split it (see `scan`). */
export interface ScanRequest {
  name: KernelName
  data: number
  n: number
  dim: number
  q: number
  out: number
  rowBytes: number
  outBytes: number
  /** bytes between rows' places at `q` (the quantiser's codes) @default 0 */
  qBytes?: number
}

interface Helper {
  worker: Worker
  ctl: Int32Array
  port: MessagePort
  memId: number
}

const memIds = new WeakMap<WasmMemory, number>()
let nextMemId = 1

/** Chunks per scan: enough for balance on a busy machine, few enough that a kernel call's overhead is nothing. */
const MAX_CHUNKS = 64
const MIN_CHUNK_ROWS = 512

export class ScanPool {
  private readonly helpers = new HelperThreads<Helper>(READY)
  private readonly job = new Int32Array(new SharedArrayBuffer(16 * 4))
  private gen = 0
  /** Scans split so far, and how many chunks helpers took (the rest ran on the calling thread). */
  readonly stats = { scans: 0, chunks: 0, helperChunks: 0 }

  private constructor(count: number, modules: object[]) {
    for (let i = 0; i < count; i++) {
      const own = new SharedArrayBuffer(4 * 4)
      const { port1, port2 } = new MessageChannel()
      const worker = new Worker(HELPER, { eval: true, workerData: { modules, own, shared: this.job.buffer, port: port2 }, transferList: [port2] })
      this.helpers.add({ worker, ctl: new Int32Array(own), port: port1, memId: -1 })
    }
  }

  /** Helpers that have started their loop (a helper still starting is left out of this scan). */
  ready(): number {
    return this.helpers.ready().length
  }

  /** Resolves once every helper runs (benches and tests wait for it; the app just uses what is up). */
  started(timeoutMs = 10_000): Promise<number> {
    return this.helpers.started(timeoutMs)
  }

  /**
   * `kernel(data, n, dim, q, out)` over rows [0, n), split across this thread and the
   * ready helpers: rows are `rowBytes` apart from `data`, results `outBytes` apart from
   * `out` (and `qBytes` apart from `q` when the kernel writes per row there: the quantiser's
   * codes; 0 for a query every row reads). False when no helper is ready (the caller runs
   * the kernel itself).
   */
  scan(memory: WasmMemory, kernel: DotAll, s: ScanRequest, onMine?: (from: number, count: number) => void): boolean {
    return this.start(memory, kernel, s, onMine)?.() ?? false
  }

  /**
   * Start a scan on the helpers only and return its finish: call it to take part (this thread claims
   * the chunks no helper has taken) and wait for the rest; it returns false when a helper died (the
   * caller runs the kernel itself over every row). Meanwhile this thread is free for other work (a
   * load reads its next block from SQL while the helpers quantise this one). null: no helper is ready.
   * One request at a time: finish it before the next start or scan. `onMine(from, count)`: called on
   * this thread right after it scanned rows [from, from + count) (their results are in place), so it can
   * work on them while the helpers still scan (the int8 search's bound pass); not for the helpers' rows.
   */
  start(memory: WasmMemory, kernel: DotAll, s: ScanRequest, onMine?: (from: number, count: number) => void): (() => boolean) | null {
    const { data, n, dim, q, out, rowBytes, outBytes } = s
    const qBytes = s.qBytes ?? 0
    const helpers = this.helpers.ready()
    if (helpers.length === 0) return null
    let id = memIds.get(memory)
    if (id === undefined) memIds.set(memory, (id = nextMemId++))
    const rows = Math.max(MIN_CHUNK_ROWS, Math.ceil(n / MAX_CHUNKS))
    const chunks = Math.ceil(n / rows)
    const job = this.job
    this.gen = (this.gen % 0x7fff) + 1 // 1..32767: a helper's last-seen request number is never the next one
    const gen = this.gen
    job[P_DATA] = data
    job[P_N] = n
    job[P_DIM] = dim
    job[P_Q] = q
    job[P_OUT] = out
    job[P_ROWS] = rows
    job[P_CHUNKS] = chunks
    job[P_KERNEL] = KERNELS.indexOf(s.name)
    job[P_ROW_BYTES] = rowBytes
    job[P_OUT_BYTES] = outBytes
    job[P_Q_BYTES] = qBytes
    Atomics.store(job, DONE, 0)
    Atomics.store(job, CLAIM, gen << 16) // publishes the parameters above (sequentially consistent)
    for (const h of helpers) {
      if (h.memId !== id) {
        h.port.postMessage({ id, memory })
        h.memId = id
      }
      Atomics.store(h.ctl, MEM, id)
      Atomics.store(h.ctl, GEN, gen)
      Atomics.notify(h.ctl, GEN)
    }
    return () => {
      // This thread claims chunks like any helper.
      const mine = claimChunks(job, CLAIM, DONE, chunks, (c) => {
        const from = c * rows
        const count = Math.min(rows, n - from)
        kernel(data + from * rowBytes, count, dim, q + from * qBytes, out + from * outBytes)
        onMine?.(from, count)
      })
      // Chunks a helper claimed and is still scanning.
      for (let done = Atomics.load(job, DONE); done < chunks; done = Atomics.load(job, DONE)) {
        if (Atomics.wait(job, DONE, done, 5000) === 'timed-out' && Atomics.load(job, DONE) === done) {
          // A helper died mid-chunk (never seen): stop using the pool; the caller rescans alone.
          this.helpers.clear()
          return false
        }
      }
      this.stats.scans++
      this.stats.chunks += chunks
      this.stats.helperChunks += chunks - mine
      return true
    }
  }

  private static instance: ScanPool | null | undefined

  /**
   * This thread's pool: one helper per extra core (at most 3), or null on one core or
   * without shared WebAssembly memory. `RECALLSCOPE_SCAN_THREADS=1` turns it off.
   */
  static get(): ScanPool | null {
    if (ScanPool.instance === undefined) {
      const env = Number(process.env.RECALLSCOPE_SCAN_THREADS)
      const threads = Number.isInteger(env) && env >= 1 ? env : Math.min(4, os.availableParallelism())
      const modules = KERNELS.map((k) => kernelModule(true, k))
      ScanPool.instance = threads > 1 && modules.every((m) => m !== null) ? new ScanPool(threads - 1, modules) : null
    }
    return ScanPool.instance
  }
}
