/**
 * The blocking bridge: synchronous queries over the asynchronous `pg` driver.
 *
 * MemorySource is synchronous by design (the engine's replay / eval / tune
 * loops), so a worker thread owns the pool (pgWorker.ts) and the main thread,
 * for each request: reads a shared counter, posts the request, then
 * `Atomics.wait`s until the worker bumps the counter, and takes the reply off
 * its port with `receiveMessageOnPort` (no event loop turn needed). The wait is
 * bounded by the statement timeout plus a margin, so a dead server or a lost
 * worker is a DB_TIMEOUT / DB_UNREACHABLE error, never a hang; late replies to a
 * request that already timed out carry an old id and are dropped.
 *
 * The bridges of one thread share one worker (a pool each, on a port each): a worker and the `pg` module it loads
 * cost ~0.1–0.25 s of CPU to start, paid once per process or store host thread instead of once per source opened
 * (docs/internals/testing.md, "stop 33").
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads'
import { RecallscopeError } from '../../../shared/result'
import type { PoolOpen, Reply, Request, Statement, WireError, WorkerConfig } from './protocol'
import { workerScript } from '../../workerScript'
import { scrubSecrets } from './url'

/** Map a driver / server error onto our stable codes; every secret (the passwords it may use) is scrubbed from the message. */
function toPgError(e: WireError, secrets: readonly string[], where: string): RecallscopeError {
  const msg = scrubSecrets(e.message, secrets)
  const code = e.code ?? ''
  const details = { sqlstate: /^[0-9A-Z]{5}$/.test(code) ? code : undefined, driverCode: code || undefined }
  if (code === '28P01' || code === '28000') return new RecallscopeError('AUTH_FAILED', `${where}: the server refused the credentials (${msg})`, details)
  if (code === '57014') return new RecallscopeError('DB_TIMEOUT', `${where}: a statement ran past the statement timeout and was cancelled (${msg})`, details)
  if (code === '25006') return new RecallscopeError('READ_ONLY', `${where}: the connection is read-only (${msg})`, details)
  if (code === '3D000') return new RecallscopeError('NOT_FOUND', `${where}: no such database (${msg})`, details)
  if (code === '42P01' || code === '42703')
    return new RecallscopeError('UNKNOWN_LAYOUT', `${where}: a table or column the layout needs is missing (${msg})`, details)
  if (
    ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN', 'EPIPE'].includes(code) ||
    code.startsWith('08') ||
    code === '57P01' ||
    /terminated|timeout exceeded when trying to connect|Connection terminated|connect ECONN|socket hang up/i.test(msg)
  )
    return new RecallscopeError(
      'DB_UNREACHABLE',
      `${where}: ${/terminated unexpectedly/i.test(msg) ? 'the connection dropped' : 'cannot reach the server'} (${msg})`,
      details,
    )
  if (/Query read timeout/i.test(msg)) return new RecallscopeError('DB_TIMEOUT', `${where}: no answer within the statement timeout (${msg})`, details)
  // Class 22 is "data exception" (22021: a U+0000 in text, 22P02: bad literal, 22003: out of range…): the input, not us.
  if (code.startsWith('22') || code === '42601' || code === '42883') return new RecallscopeError('BAD_INPUT', `${where}: ${msg}`, details)
  return new RecallscopeError('INTERNAL', `${where}: ${msg}`, details)
}

export interface BridgeOptions extends WorkerConfig {
  /** scrubbed from every error message (ParsedPgUrl.secrets) */
  secrets: readonly string[]
  /** name shown in errors (the redacted URL) */
  label: string
}

export interface QueryResult<R> {
  rows: R[]
  fields: string[]
}

/** The worker this thread's bridges share, and why it stopped (null while it runs). */
interface SharedWorker {
  worker: Worker
  dead: string | null
}

let shared: SharedWorker | null = null

/** This thread's Postgres worker, started on first use and again after one stopped. */
function sharedWorker(): SharedWorker {
  if (shared && !shared.dead) return shared
  const script = workerScript('pgWorker', typeof __dirname === 'string' ? __dirname : process.cwd(), 'Postgres worker')
  const w: SharedWorker = { worker: new Worker(script.code, { eval: script.eval, execArgv: script.execArgv }), dead: null }
  // Without a listener, an error in the worker would crash the process; record it instead (every bridge on it sees it).
  w.worker.on('error', (e) => (w.dead = e.message))
  w.worker.on('exit', (c) => (w.dead ??= `exited with code ${c}`))
  // Idle, it must not keep the process alive; each bridge's wait is on its own counter, not on the event loop.
  w.worker.unref()
  shared = w
  return w
}

export class PgBridge {
  private readonly host: SharedWorker
  private readonly port: MessagePort
  private readonly counter: Int32Array
  private nextId = 1
  private closed = false
  /** Statements sent (for tests and the trace): every SQL text, in order. */
  readonly sent: string[] = []
  /** Keep the log of sent statements (tests); off by default. */
  logStatements = false

  constructor(private readonly opts: BridgeOptions) {
    const signal = new SharedArrayBuffer(4)
    this.counter = new Int32Array(signal)
    const { port1, port2 } = new MessageChannel()
    this.port = port1
    const config: WorkerConfig = {
      connectionString: opts.connectionString,
      statementTimeoutMs: opts.statementTimeoutMs,
      connectTimeoutMs: opts.connectTimeoutMs,
      max: opts.max,
      readOnly: opts.readOnly,
      applicationName: opts.applicationName,
    }
    this.host = sharedWorker()
    const open: PoolOpen = { config, port: port2, signal }
    this.host.worker.postMessage(open, [port2])
    this.port.unref()
  }

  /** Why the worker stopped, or null while it runs. */
  private get dead(): string | null {
    return this.host.dead
  }

  /** Run statements on one pooled client; the last one's rows come back. Blocks the calling thread. */
  run<R = Record<string, unknown>>(batch: Statement[], opts: { rowMode?: 'array'; timeoutMs?: number } = {}): QueryResult<R> {
    if (this.closed) throw new RecallscopeError('NO_DB', `${this.opts.label} is closed`)
    if (this.dead) throw new RecallscopeError('DB_UNREACHABLE', `${this.opts.label}: the database worker stopped (${this.dead})`)
    if (this.logStatements) for (const s of batch) this.sent.push(s.sql)
    const id = this.nextId++
    const req: Request = { id, batch, rowMode: opts.rowMode }
    const reply = this.roundTrip(req, opts.timeoutMs ?? this.opts.statementTimeoutMs + this.opts.connectTimeoutMs + 3000)
    if (!reply.ok) throw toPgError(reply.error, this.opts.secrets, this.opts.label)
    return { rows: reply.rows as R[], fields: reply.fields }
  }

  /** One statement. */
  query<R = Record<string, unknown>>(sql: string, params: unknown[] = [], opts: { rowMode?: 'array'; timeoutMs?: number } = {}): R[] {
    return this.run<R>([{ sql, params }], opts).rows
  }

  private roundTrip(req: Request, timeoutMs: number): Reply {
    const deadline = performance.now() + timeoutMs
    this.port.postMessage(req)
    for (;;) {
      // Drain first: a reply may already be here (or a stale one from a request that timed out).
      for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
        const r = m.message as Reply
        if (r.id === req.id) return r
      }
      const seen = Atomics.load(this.counter, 0)
      // A reply that landed between the drain and the load bumped the counter already: drain again.
      const again = receiveMessageOnPort(this.port)
      if (again) {
        const r = again.message as Reply
        if (r.id === req.id) return r
        continue
      }
      const left = deadline - performance.now()
      if (left <= 0 || this.dead) break
      Atomics.wait(this.counter, 0, seen, Math.min(left, 250))
    }
    if (this.dead) throw new RecallscopeError('DB_UNREACHABLE', `${this.opts.label}: the database worker stopped (${this.dead})`)
    throw new RecallscopeError('DB_TIMEOUT', `${this.opts.label}: no answer from the database within ${Math.round(timeoutMs / 1000)} s`, { timeoutMs })
  }

  /**
   * Close the pool (bounded wait) and this bridge's port; the shared worker stays for the thread's other bridges.
   * A pool that does not close within the wait still ends on its own: its statements and connection attempts
   * have timeouts (query_timeout, connectionTimeoutMillis).
   */
  close(): void {
    if (this.closed) return
    try {
      if (!this.dead) this.roundTrip({ id: this.nextId++, batch: [], close: true }, 3000)
    } catch {
      /* a pool that cannot close cleanly ends in the worker when its timeouts fire */
    }
    this.closed = true
    this.port.close()
  }
}
