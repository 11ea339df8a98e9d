/**
 * A store host worker: holds one open store (or none: the scratch host) in its own
 * in-thread App and runs the channels main forwards to it, with the same handler
 * functions an in-thread App uses (api/handlers). Opening (detection, integrity
 * check, vector snapshot restore) happens here too, so a hostile or slow store
 * wedges this thread, never main's. Main sends its grants and settings with every
 * call (the checks read them; only main changes them). Jobs started here (eval,
 * tune, backfill, map refine) are mirrored to main as their progress changes, and
 * `App.emitPush` events are relayed.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { toResultError } from '../../shared/result'
import { App } from '../api/app'
import { createHandlers } from '../api/handlers'
import { isChannel, type Handler } from '../api/register'
import type { Channel } from '../../shared/contract'
import { runInspect } from '../api/inspect'
import type { FromHost, HostInit, ToHost, WireError } from './protocol'

const init = workerData as HostInit
const port = parentPort!
const post = (m: FromHost) => port.postMessage(m)

const app = new App({
  dataDir: init.dataDir,
  mode: init.mode,
  version: init.version,
  nativeBinding: init.nativeBinding,
  role: 'host',
  jobPrefix: `job-h${init.seq}`,
})
const handlers = createHandlers(app)
app.jobs.onProgress((progress) => post({ type: 'job', progress }))
app.onPush((stream, payload) => post({ type: 'push', stream, payload }))

function wireError(e: unknown): WireError {
  const re = toResultError(e)
  const w: WireError = { code: re.code, message: re.message }
  if (re.details !== undefined) {
    try {
      w.details = structuredClone(re.details)
    } catch {
      /* details that cannot cross are dropped rather than failing the reply */
    }
  }
  if (re.code === 'INTERNAL' && e instanceof Error && e.stack) w.stack = e.stack
  return w
}

/** Post a result; one that cannot be cloned (a function, a symbol) is a typed failure, not a lost reply. */
function reply(id: number, result: unknown): void {
  try {
    post({ type: 'done', id, result })
  } catch (e) {
    post({ type: 'failed', id, error: { code: 'INTERNAL', message: `The result could not be sent to the main thread (${(e as Error)?.message ?? e})` } })
  }
}

async function handle(m: Exclude<ToHost, { type: 'ping' } | { type: 'cancelJob' }>): Promise<void> {
  post({ type: 'started', id: m.id })
  try {
    if (m.type === 'open') {
      app.adoptPolicy(m.policy)
      const info = m.open.demo ? await app.openDemo(m.open.demo.regenerate) : await app.openStore(m.open.path, m.open.opts)
      reply(m.id, info)
    } else if (m.type === 'inspect') reply(m.id, runInspect(m.op))
    else {
      if (!isChannel(m.channel)) throw new Error(`Unknown channel ${m.channel}`)
      app.adoptPolicy(m.policy)
      reply(m.id, await (handlers[m.channel] as Handler<Channel>)(m.input as never))
    }
  } catch (e) {
    post({ type: 'failed', id: m.id, error: wireError(e) })
  }
}

port.on('message', (m: ToHost) => {
  // A ping is answered at once: main asks when a call passed its deadline, to tell a busy thread from a wedged one.
  if (m.type === 'ping') post({ type: 'pong', id: m.id })
  else if (m.type === 'cancelJob') {
    try {
      app.jobs.cancel(m.jobId)
    } catch {
      /* finished or unknown meanwhile */
    }
  } else void handle(m)
})
