/**
 * A big first load's chunked BLOB read (load.ts) on a thread of its own, so that
 * on two cores the SQL read (SQLite's page reads, `group_concat`, the Buffer)
 * runs beside the quantiser instead of before it: at 1M × 768 the read is ~6 s of
 * CPU and the quantiser ~5 s (docs/internals/performance.md, "A million memories").
 *
 * The reader opens its own read-only connection to the file, takes the source's
 * row count and max `_rid` and then every chunk inside one read transaction (one
 * snapshot, as the in-thread read), and posts each chunk row with its BLOB's
 * memory transferred, not copied. The loading thread stays synchronous: it
 * takes messages with `receiveMessageOnPort` and sleeps on a shared counter in
 * between. At most IN_FLIGHT chunks wait unread (~3 MB each at 768-d), so a
 * slow consumer does not pile the file up in memory.
 */
import { createRequire } from 'node:module'
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads'
import { withoutModuleHooks } from '../../workerScript'

/** One chunk: what load.ts's chunk statement returns (JSON arrays of the rows' `_rid`, id and fast-path flag). */
export interface ChunkRow {
  n: number
  hi: number | null
  rids: string
  ids: string
  ok: string
  nbytes: number | null
  v: Uint8Array | null
}

/** Where and how the reader thread opens the file. */
export interface ReaderFile {
  path: string
  nativeBinding?: string
  timeoutMs: number
}

const IN_FLIGHT = 4
/** control words: [0] chunks posted and not yet taken, [1] messages posted (the loading thread waits on it), [2] 1: stop */
const FLIGHT = 0
const POSTED = 1
const STOP = 2

const READER = `
const { workerData } = require('node:worker_threads')
const { driver, file, statsSql, chunkSql, params, chunkRows, port, ctl } = workerData
const c = new Int32Array(ctl)
const post = (m, transfer) => {
  port.postMessage(m, transfer)
  Atomics.add(c, ${POSTED}, 1)
  Atomics.notify(c, ${POSTED})
}
let db = null
try {
  const Database = require(driver)
  db = new Database(file.path, { readonly: true, fileMustExist: true, timeout: file.timeoutMs, ...(file.nativeBinding ? { nativeBinding: file.nativeBinding } : {}) })
  db.exec('BEGIN')
  const n = db.prepare(statsSql[0]).pluck().get()
  const r = db.prepare(statsSql[1]).pluck().get()
  post({ stats: { n, r: r === null ? null : Number(r) } })
  const chunk = db.prepare(chunkSql)
  let after = params.after
  for (;;) {
    for (let f = Atomics.load(c, ${FLIGHT}); f >= ${IN_FLIGHT} && !Atomics.load(c, ${STOP}); f = Atomics.load(c, ${FLIGHT})) Atomics.wait(c, ${FLIGHT}, f, 1000)
    if (Atomics.load(c, ${STOP})) break
    const row = chunk.get({ ...params, after })
    if (!row || row.n === 0 || row.hi === null) break
    const v = row.v
    Atomics.add(c, ${FLIGHT}, 1)
    // the BLOB's own memory moves to the loading thread (a Buffer sharing a pool is copied instead)
    post({ row }, v && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength ? [v.buffer] : [])
    after = Number(row.hi)
    if (row.n < chunkRows) break
  }
  db.exec('COMMIT')
  post({ done: true })
} catch (e) {
  post({ error: String((e && e.message) || e) })
} finally {
  try { if (db) db.close() } catch {}
}
`

/** The reader thread failed (the file went away, a lock, no driver): the load starts again in-thread. */
export class ChunkReaderFailed extends Error {
  override name = 'ChunkReaderFailed'
}

/**
 * Start reading: `statsSql` (count(*), max(_rid) of the whole source) first, then `chunkSql` with
 * `params` and `@after` moving past each chunk's last `_rid`. `stats()` then `next()` block until
 * the thread has the answer; `close()` stops the thread (call it in every case).
 */
export function startChunkReader(
  file: ReaderFile,
  statsSql: [string, string],
  chunkSql: string,
  params: Record<string, unknown>,
  chunkRows: number,
): { stats: () => { n: number; r: number | null }; next: () => ChunkRow | null; close: () => void } {
  const ctl = new Int32Array(new SharedArrayBuffer(12))
  const { port1, port2 } = new MessageChannel()
  const driver = createRequire(__filename).resolve('better-sqlite3')
  const worker = new Worker(READER, {
    eval: true,
    // plain CommonJS: no TypeScript loader to start in the thread (tests and benches run under tsx)
    execArgv: withoutModuleHooks(process.execArgv),
    workerData: { driver, file, statsSql, chunkSql, params, chunkRows, port: port2, ctl: ctl.buffer },
    transferList: [port2],
  })
  // An exit or a start-up error before any message: never wait for messages that will not come.
  let gone = false
  worker.once('exit', () => (gone = true))
  worker.once('error', () => (gone = true))
  let ended = false
  const take = (port: MessagePort): Record<string, unknown> => {
    for (;;) {
      const seen = Atomics.load(ctl, POSTED)
      const m = receiveMessageOnPort(port)
      if (m) return m.message as Record<string, unknown>
      // 'exit' and 'error' arrive through this thread's event loop, which a synchronous load does not
      // run: a thread that died without a word is noticed by its silence (a chunk is ~10 ms of work).
      if (gone || Atomics.wait(ctl, POSTED, seen, 30_000) === 'timed-out') throw new ChunkReaderFailed('the vector reader thread stopped answering')
    }
  }
  const fail = (m: Record<string, unknown>): never => {
    throw new ChunkReaderFailed(typeof m.error === 'string' ? m.error : 'unexpected message from the vector reader thread')
  }
  return {
    stats: () => {
      const m = take(port1)
      return m.stats ? (m.stats as { n: number; r: number | null }) : fail(m)
    },
    next: () => {
      if (ended) return null
      const m = take(port1)
      if (m.done) {
        ended = true
        return null
      }
      if (!m.row) return fail(m)
      Atomics.sub(ctl, FLIGHT, 1)
      Atomics.notify(ctl, FLIGHT)
      return m.row as ChunkRow
    },
    close: () => {
      // a reader waiting for room wakes up and stops
      Atomics.store(ctl, STOP, 1)
      Atomics.notify(ctl, FLIGHT)
      port1.close()
      void worker.terminate()
    },
  }
}
