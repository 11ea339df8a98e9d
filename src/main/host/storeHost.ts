/**
 * Main's side of one store host worker (hostWorker.ts): every request is a message
 * with a deadline. A request past its deadline fails with DB_TIMEOUT; main then
 * pings the worker, and if the ping is not answered either (the thread is stuck in
 * a synchronous store call: a SQLite query that never ends, a Postgres server that
 * never answers) the host is wedged: its other requests fail with DB_TIMEOUT, its
 * jobs fail, and the worker is terminated. A thread stuck inside native code ignores
 * termination, so it is abandoned (unref'd); `stuckWorkers()` counts those, and the
 * process's exit paths (cli/serve.ts, index.ts) end the process by signal when any
 * remain, since Node would wait for such a thread forever at exit.
 */
import { Worker } from 'node:worker_threads'
import { ERROR_CODES, RecallscopeError, type ErrorCode } from '../../shared/result'
import type { OpenInfo } from '../../shared/contract'
import type { JobProgress } from '../../shared/jobs'
import type { Policy } from '../api/app'
import type { InspectOp } from '../api/inspect'
import { workerScript } from '../workerScript'
import type { FromHost, HostInit, OpenRequest, ToHost, WireError } from './protocol'

/** How long a worker has to answer a ping before it counts as wedged. */
const PING_MS = 1000

/**
 * A request the wedged worker never took off its queue: it did not run, so it may run in a
 * new worker (HostedApp retries it once there).
 */
export class NotStartedError extends RecallscopeError {
  override name = 'NotStartedError'
}

function fromWire(e: WireError): RecallscopeError {
  const code = (ERROR_CODES as readonly string[]).includes(e.code) ? (e.code as ErrorCode) : 'INTERNAL'
  const re = new RecallscopeError(code, e.message, e.details)
  if (e.stack) re.stack = e.stack
  return re
}

interface Pending {
  resolve: (v: unknown) => void
  reject: (e: Error) => void
  timer: NodeJS.Timeout
  started: boolean
}

export interface StoreHostOptions {
  init: HostInit
  /** a job of this host changed */
  onJob: (p: JobProgress) => void
  /** an App.emitPush in the worker */
  onPush: (stream: string, payload: unknown) => void
}

/** One store host worker, from main. */
export class StoreHost {
  private readonly worker: Worker
  private readonly pending = new Map<number, Pending>()
  /** this host's running jobs, failed on main when the worker goes away */
  private readonly jobs = new Map<string, JobProgress>()
  private seq = 0
  private probing = false
  private state: 'live' | 'wedged' | 'closed' = 'live'
  private ended = false

  constructor(private readonly opts: StoreHostOptions) {
    const script = workerScript('hostWorker', typeof __dirname === 'string' ? __dirname : process.cwd(), 'store host')
    this.worker = new Worker(script.code, { eval: script.eval, execArgv: script.execArgv, workerData: opts.init })
    this.worker.on('message', (m: FromHost) => this.receive(m))
    // Without listeners an error in the worker would take the process down.
    this.worker.on('error', (e) => this.fail('wedged', new RecallscopeError('INTERNAL', `The store host stopped: ${e.message}`)))
    this.worker.on('exit', () => {
      this.ended = true
      this.fail('wedged', new RecallscopeError('INTERNAL', 'The store host stopped'))
    })
    this.worker.unref()
  }

  /** the worker's thread ended (a thread stuck in a native call never does, even when terminated) */
  get exited(): boolean {
    return this.ended
  }

  /** false once wedged or closed: the next request needs a new host */
  get live(): boolean {
    return this.state === 'live'
  }

  /** Open the store in the worker (detection, integrity check, vector restore); its OpenInfo. */
  open(open: OpenRequest, policy: Policy, deadlineMs: number): Promise<OpenInfo> {
    return this.request(
      { type: 'open', id: 0, open, policy },
      deadlineMs,
      `Opening ${open.path}`,
      'detecting its layout, checking it or loading its vectors never finished (a query that never ends, such as a VIEW over an endless recursive query, or a server that does not answer); nothing was opened',
    ) as Promise<OpenInfo>
  }

  /** Run a channel's handler in the worker. */
  call(channel: string, input: unknown, policy: Policy, deadlineMs: number): Promise<unknown> {
    return this.request(
      { type: 'call', id: 0, channel, input, policy },
      deadlineMs,
      channel,
      'a query that never ends (such as a VIEW over an endless recursive query) or a server that does not answer',
    )
  }

  /** Read another DB in the worker (api/inspect.ts). */
  inspect(op: InspectOp, deadlineMs: number): Promise<unknown> {
    return this.request({ type: 'inspect', id: 0, op }, deadlineMs, op.kind === 'pgTest' ? 'pg.test' : `the mapping dialog (${op.kind})`)
  }

  cancelJob(jobId: string): void {
    if (this.state === 'live') this.worker.postMessage({ type: 'cancelJob', jobId } satisfies ToHost)
  }

  /** Stop the worker (the store was closed or replaced): its requests fail with NO_DB, its jobs too. */
  close(): void {
    this.fail('closed', new RecallscopeError('NO_DB', 'The store was closed while the call ran'))
  }

  /** `what` names the request in a DB_TIMEOUT, `hint` says what usually causes one. */
  private request(m: Extract<ToHost, { id: number }>, deadlineMs: number, what: string, hint?: string): Promise<unknown> {
    if (this.state === 'closed') return Promise.reject(new RecallscopeError('NO_DB', 'The store was closed'))
    if (this.state === 'wedged') return Promise.reject(new RecallscopeError('DB_TIMEOUT', 'The store stopped answering'))
    const id = ++this.seq
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        this.idle()
        reject(
          new RecallscopeError(
            'DB_TIMEOUT',
            `${what}: no answer from the store within ${(deadlineMs / 1000).toLocaleString('en-US')} s${hint ? `: ${hint}` : ''}`,
            {
              timeoutMs: deadlineMs,
            },
          ),
        )
        this.probe()
      }, deadlineMs)
      timer.unref()
      this.pending.set(id, { resolve, reject, timer, started: false })
      // A request in flight keeps the process alive (the CLI, tests); an idle host does not.
      this.worker.ref()
      try {
        this.worker.postMessage({ ...m, id })
      } catch (e) {
        clearTimeout(timer)
        this.pending.delete(id)
        this.idle()
        reject(new RecallscopeError('BAD_INPUT', `The request cannot be sent to the store host: ${(e as Error).message}`))
      }
    })
  }

  private receive(m: FromHost): void {
    if (m.type === 'job') {
      if (this.state !== 'live') return
      if (m.progress.state === 'running') this.jobs.set(m.progress.jobId, m.progress)
      else this.jobs.delete(m.progress.jobId)
      this.opts.onJob(m.progress)
      return
    }
    if (m.type === 'push') return void (this.state === 'live' && this.opts.onPush(m.stream, m.payload))
    if (m.type === 'pong') {
      this.probing = false
      return
    }
    const p = this.pending.get(m.id)
    if (!p) return // answered after its deadline: dropped
    if (m.type === 'started') return void (p.started = true)
    this.pending.delete(m.id)
    clearTimeout(p.timer)
    this.idle()
    if (m.type === 'done') p.resolve(m.result)
    else p.reject(fromWire(m.error))
  }

  private idle(): void {
    if (this.pending.size === 0 && this.state === 'live') this.worker.unref()
  }

  /** A request passed its deadline: is the thread still answering (an async wait), or stuck? */
  private probe(): void {
    if (this.probing || this.state !== 'live') return
    this.probing = true
    const timer = setTimeout(() => {
      if (this.probing)
        this.fail('wedged', new RecallscopeError('DB_TIMEOUT', 'The store stopped answering (a call into it never returned): it is reopened for the next call'))
    }, PING_MS)
    timer.unref()
    this.worker.postMessage({ type: 'ping', id: 0 } satisfies ToHost)
  }

  private fail(state: 'wedged' | 'closed', why: RecallscopeError): void {
    if (this.state !== 'live') return
    this.state = state
    this.probing = false
    for (const p of this.pending.values()) {
      clearTimeout(p.timer)
      p.reject(state === 'wedged' && !p.started ? new NotStartedError(why.code, why.message) : why)
    }
    this.pending.clear()
    const error = { code: why.code, message: why.message }
    for (const j of this.jobs.values()) this.opts.onJob({ ...j, state: 'failed', error, updatedAt: Date.now() })
    this.jobs.clear()
    this.worker.unref()
    void this.worker.terminate().catch(() => undefined)
  }
}
