/**
 * A big first load's chunked BLOB read (load.ts) on threads of their own, so that
 * on two cores the SQL read (SQLite's page reads, `group_concat`, the Buffer)
 * runs beside the quantiser instead of before it. At 1M × 768 the read is about
 * half of the load's CPU (docs/internals/performance.md, "A million memories"),
 * so it is split over several readers on disjoint `_rid` ranges: no one thread's
 * work is the load's critical path, whichever way the OS shares the cores.
 *
 * The rows are cut into chunks by `_rid`: chunk i holds the rows with
 * lo − 1 + i·width < `_rid` ≤ lo − 1 + (i+1)·width (load.ts picks width so a
 * chunk holds ~1,000 rows). Reader k of R reads chunks k, k+R, k+2R, … and posts
 * each with its BLOB's memory transferred, not copied; the loading thread takes
 * chunk 0 from reader 0, chunk 1 from reader 1, and so on, so it applies the rows
 * in `_rid` order exactly as one reader would. Each reader opens its own read-only
 * connection and holds one read transaction; it first reads `pinSql` (fixing its
 * snapshot) and says so, and the loading thread checks that no commit came between
 * its own version read before and after every reader did (load.ts), so all of
 * them read the same snapshot. The loading thread stays synchronous: it takes
 * messages with `receiveMessageOnPort` and sleeps on a shared counter in between.
 * At most IN_FLIGHT chunks per reader wait unread (~3 MB each at 768-d), so a slow
 * consumer does not pile the file up in memory.
 */
import { createRequire } from 'node:module'
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads'
import { withoutModuleHooks } from '../../workerScript'

/** One chunk: what load.ts's chunk statements return (JSON arrays of the rows' `_rid`, id and fast-path flag). */
export interface ChunkRow {
  n: number
  hi: number | null
  rids: string
  ids: string
  ok: string
  nbytes: number | null
  v: Uint8Array | null
}

/** Where and how the reader threads open the file. */
export interface ReaderFile {
  path: string
  nativeBinding?: string
  timeoutMs: number
}

/** What the readers read: `chunkSql` with `params`, `@after` and `@to` for each chunk's `_rid` range. */
export interface ReadPlan {
  /** run first in each reader's transaction (fixes its snapshot) */
  pinSql: string
  /** the rows with @after < _rid ≤ @to, as one ChunkRow */
  chunkSql: string
  params: Record<string, unknown>
  /** the smallest `_rid` */
  lo: number
  /** `_rid`s per chunk */
  width: number
  chunks: number
  readers: number
}

const IN_FLIGHT = 4
/** control words, per reader: [0] chunks posted and not yet taken, [1] messages posted (the loading thread waits on it), [2] 1: stop */
const FLIGHT = 0
const POSTED = 1
const STOP = 2

const READER = `
const { workerData } = require('node:worker_threads')
const { driver, file, plan, k, port, ctl } = workerData
const c = new Int32Array(ctl)
const post = (m, transfer) => {
  port.postMessage(m, transfer)
  Atomics.add(c, ${POSTED}, 1)
  Atomics.notify(c, ${POSTED})
}
let db = null
try {
  if (Atomics.load(c, ${STOP})) throw new Error('stopped')
  const Database = require(driver)
  db = new Database(file.path, { readonly: true, fileMustExist: true, timeout: file.timeoutMs, ...(file.nativeBinding ? { nativeBinding: file.nativeBinding } : {}) })
  if (Atomics.load(c, ${STOP})) throw new Error('stopped')
  db.exec('BEGIN')
  db.prepare(plan.pinSql).get()
  post({ ready: true })
  const chunk = db.prepare(plan.chunkSql)
  for (let i = k; i < plan.chunks; i += plan.readers) {
    for (let f = Atomics.load(c, ${FLIGHT}); f >= ${IN_FLIGHT} && !Atomics.load(c, ${STOP}); f = Atomics.load(c, ${FLIGHT})) Atomics.wait(c, ${FLIGHT}, f, 1000)
    if (Atomics.load(c, ${STOP})) break
    const after = plan.lo - 1 + i * plan.width
    const row = chunk.get({ ...plan.params, after, to: after + plan.width })
    const v = row.v
    Atomics.add(c, ${FLIGHT}, 1)
    // the BLOB's own memory moves to the loading thread (a Buffer sharing a pool is copied instead)
    post({ row, i }, v && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength ? [v.buffer] : [])
  }
  db.exec('COMMIT')
  post({ done: true })
} catch (e) {
  post({ error: String((e && e.message) || e) })
} finally {
  try { if (db) db.close() } catch {}
}
`

/** A reader thread failed (the file went away, a lock, no driver, no thread): the load starts again in-thread. */
export class ChunkReaderFailed extends Error {
  override name = 'ChunkReaderFailed'
}

interface Reader {
  worker: Worker
  port: MessagePort
  ctl: Int32Array
  gone: boolean
}

/**
 * Start `plan.readers` reader threads over `file`. `ready()` blocks until every reader holds its
 * snapshot; `next()` returns the non-empty chunks in `_rid` order (null after the last); `close()`
 * tells the threads to stop (call it in every case). Both throw ChunkReaderFailed when a reader fails.
 */
export function startChunkReaders(file: ReaderFile, plan: ReadPlan): { ready: () => void; next: () => ChunkRow | null; close: () => void } {
  const driver = createRequire(__filename).resolve('better-sqlite3')
  const readers: Reader[] = []
  // Readers are told to stop, not terminated: a thread terminated while better-sqlite3 throws (its open failing on a
  // missing file) aborts the whole process ("v8::ToLocalChecked Empty MaybeLocal"), as a clean clone's test run did
  // when one reader failed and the other was still opening. A told reader ends within a chunk (~10 ms) or its open;
  // unref'd, it never holds the process open.
  const close = () => {
    for (const r of readers) {
      // a reader waiting for room wakes up and stops
      Atomics.store(r.ctl, STOP, 1)
      Atomics.notify(r.ctl, FLIGHT)
      r.port.close()
      r.worker.unref()
    }
  }
  try {
    for (let k = 0; k < plan.readers; k++) {
      const ctl = new Int32Array(new SharedArrayBuffer(12))
      const { port1, port2 } = new MessageChannel()
      const worker = new Worker(READER, {
        eval: true,
        // plain CommonJS: no TypeScript loader to start in the thread (tests and benches run under tsx)
        execArgv: withoutModuleHooks(process.execArgv),
        workerData: { driver, file, plan, k, port: port2, ctl: ctl.buffer },
        transferList: [port2],
      })
      const r: Reader = { worker, port: port1, ctl, gone: false }
      // An exit or a start-up error before any message: never wait for messages that will not come.
      worker.once('exit', () => (r.gone = true))
      worker.once('error', () => (r.gone = true))
      readers.push(r)
    }
  } catch (e) {
    // A thread that cannot start (no threads, a Node flag a worker does not take): read in-thread instead.
    close()
    throw new ChunkReaderFailed(`cannot start a vector reader thread: ${String((e as Error)?.message ?? e)}`)
  }
  const take = (r: Reader): Record<string, unknown> => {
    for (;;) {
      const seen = Atomics.load(r.ctl, POSTED)
      const m = receiveMessageOnPort(r.port)
      if (m) return m.message as Record<string, unknown>
      // 'exit' and 'error' arrive through this thread's event loop, which a synchronous load does not
      // run: a thread that died without a word is noticed by its silence (a chunk is ~10 ms of work).
      if (r.gone || Atomics.wait(r.ctl, POSTED, seen, 30_000) === 'timed-out') throw new ChunkReaderFailed('a vector reader thread stopped answering')
    }
  }
  const fail = (m: Record<string, unknown>): never => {
    throw new ChunkReaderFailed(typeof m.error === 'string' ? m.error : 'unexpected message from a vector reader thread')
  }
  let i = 0
  return {
    ready: () => {
      for (const r of readers) {
        const m = take(r)
        if (!m.ready) fail(m)
      }
    },
    next: () => {
      for (; i < plan.chunks; i++) {
        const r = readers[i % plan.readers]
        const m = take(r)
        if (m.i !== i || !m.row) return fail(m)
        Atomics.sub(r.ctl, FLIGHT, 1)
        Atomics.notify(r.ctl, FLIGHT)
        const row = m.row as ChunkRow
        if (row.n > 0) {
          i++
          return row
        }
      }
      return null
    },
    close,
  }
}
