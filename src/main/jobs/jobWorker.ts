/**
 * A job worker thread: holds its own read-only connection to the store the app
 * has open (opened again through the source registry; a Postgres source starts
 * its own bridge) and runs heavy tasks (tasks.ts) there, so the main thread
 * stays free to answer the UI. Tasks interleave (they yield between chunks);
 * each one is cancelled by a message that aborts its signal. Gathered
 * candidates are cached here between tasks, as the main thread used to.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { RecallscopeError } from '../../shared/result'
import { GatherCache } from '../eval/replay'
import { openStore } from '../store/registry'
import type { MemorySource } from '../store/source'
import type { FromWorker, OpenSpec, ToWorker, WireError } from './protocol'
import { runTask, STORELESS } from './tasks'

/** null: a worker for storeless tasks (imports) */
const spec = (workerData as { open: OpenSpec | null }).open
const port = parentPort!
let store: MemorySource | null = null
let cache: GatherCache | null = null
const running = new Map<number, AbortController>()

/** The connection, opened on first use (an open failure fails that task, typed). */
function source(): MemorySource {
  if (!spec) throw new RecallscopeError('NO_DB', 'No database is open: open one first')
  if (!store) {
    store = openStore({ path: spec.path, workspacePath: spec.workspacePath, nativeBinding: spec.nativeBinding, fallbackDir: spec.fallbackDir, write: false })
    cache = new GatherCache(store)
  }
  return store
}

function wireError(e: unknown, aborted: boolean): WireError {
  if (e instanceof RecallscopeError) return { code: e.code, message: e.message, details: safeDetails(e.details) }
  if (aborted) return { code: 'CANCELLED', message: 'Cancelled' }
  return { code: 'INTERNAL', message: (e as Error)?.message ?? String(e) }
}

/** Details cross by structured clone: anything that cannot is dropped rather than failing the reply. */
function safeDetails(d: unknown): unknown {
  try {
    return structuredClone(d)
  } catch {
    return undefined
  }
}

const post = (m: FromWorker) => port.postMessage(m)

async function run(m: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const ac = new AbortController()
  running.set(m.id, ac)
  let last = 0
  let phase: string | undefined
  try {
    const s = STORELESS.includes(m.kind) ? null : source()
    if (m.fresh) cache?.clear()
    const result = await runTask(s, m.kind, m.input, {
      signal: ac.signal,
      cache: cache ?? undefined,
      progress: (done, total, message) => {
        // At most ~20 messages a second per task (the JobManager throttles its events further); the last one
        // and a new phase ("gathering the baselines") always go out.
        const now = Date.now()
        const newPhase = message?.replace(/[\d,.]+/g, '') !== phase
        if (now - last < 50 && done < total && !newPhase) return
        last = now
        phase = message?.replace(/[\d,.]+/g, '')
        post({ type: 'progress', id: m.id, done, total, ...(message !== undefined ? { message } : {}) })
      },
    })
    // A task that returns after a cancel (a tune's best so far) hands its result back: the caller decides.
    post({ type: 'done', id: m.id, result })
  } catch (e) {
    post({ type: 'failed', id: m.id, error: wireError(e, ac.signal.aborted) })
  } finally {
    running.delete(m.id)
  }
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'run') void run(m)
  else if (m.type === 'cancel') running.get(m.id)?.abort()
})
