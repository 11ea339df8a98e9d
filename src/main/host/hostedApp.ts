/**
 * The App of the desktop app and of `serve`: it keeps on the main thread what only
 * main may hold (settings, path grants, write consent, saved connections, the
 * dialogs, the jobs list) and runs every store in a store host worker (storeHost.ts),
 * one per open store, so no store call ever runs on the Electron main thread or the
 * server's event loop. Channels that touch a store are forwarded to the open store's
 * host with a deadline (dispatch.ts); with nothing open, and for reading another DB
 * (the mapping dialog, the Connect form's test), a scratch host without a store runs
 * them. A host that stopped answering is replaced: the next call reopens the store.
 */
import fs from 'node:fs'
import type { OpenInfo } from '../../shared/contract'
import { RecallscopeError } from '../../shared/result'
import { App, type AppOptions, type OpenOptions } from '../api/app'
import type { InspectOp } from '../api/inspect'
import { isPostgresUrl, parsePgUrl } from '../store/postgres/url'
import type { OpenRequest } from './protocol'
import { NotStartedError, StoreHost } from './storeHost'

function envMs(name: string, fallback: number): number {
  const v = Number(process.env[name])
  return Number.isFinite(v) && v > 0 ? v : fallback
}

export interface HostedAppOptions extends AppOptions {
  /** Deadline of one forwarded call. @default $RECALLSCOPE_STORE_TIMEOUT_MS or 60 000 */
  callTimeoutMs?: number
  /** Deadline of opening a store (detection, integrity check, vector restore). @default $RECALLSCOPE_OPEN_TIMEOUT_MS or 180 000 */
  openTimeoutMs?: number
}

export class HostedApp extends App {
  readonly callTimeoutMs: number
  readonly openTimeoutMs: number
  private host: StoreHost | null = null
  private scratchHost: StoreHost | null = null
  /** what is open: how to open it again (a wedged host is replaced), and what app.info shows */
  private opened: { request: OpenRequest; info: OpenInfo } | null = null
  private reopening: Promise<StoreHost> | null = null
  /** a worker started ahead, so opening a store does not wait for a thread to start and load the code */
  private spare: StoreHost | null = null
  private disposed = false
  private hostSeq = 0
  /** every worker started whose thread has not ended (dispose waits for them) */
  private readonly running = new Set<StoreHost>()

  constructor(opts: HostedAppOptions) {
    super({ ...opts, role: 'main' })
    this.callTimeoutMs = opts.callTimeoutMs ?? envMs('RECALLSCOPE_STORE_TIMEOUT_MS', 60_000)
    this.openTimeoutMs = opts.openTimeoutMs ?? envMs('RECALLSCOPE_OPEN_TIMEOUT_MS', 180_000)
  }

  /** Never in this thread: stores open in a store host (openStore). */
  override open(): OpenInfo {
    throw new RecallscopeError('INTERNAL', 'Stores open in a store host worker here: use openStore')
  }

  /** The open store's info as of its opening (main never asks the store itself: app.info answers at once). */
  override openInfo(): OpenInfo | null {
    return this.opened?.info ?? null
  }

  override openStore(p: string, opts: OpenOptions = {}): Promise<OpenInfo> {
    return this.replace({ path: p, opts })
  }

  override openDemo(regenerate = false): Promise<OpenInfo> {
    // As in-thread: the open store is closed before the demo file is (re)written.
    if (regenerate || !fs.existsSync(this.demoPath)) this.close()
    return this.replace({ path: this.demoPath, opts: {}, demo: { regenerate } })
  }

  override inspect<T>(op: InspectOp): Promise<T> {
    return this.scratch().inspect(op, this.callTimeoutMs) as Promise<T>
  }

  override close(): boolean {
    const had = !!this.opened
    this.host?.close()
    this.host = null
    this.opened = null
    return had
  }

  /**
   * Stop every worker (quitting); resolves with how many threads are stuck in a native call
   * and would keep the process from exiting (the caller then ends it by signal).
   */
  async dispose(graceMs = 1000): Promise<number> {
    this.disposed = true
    this.close()
    this.spare?.close()
    this.spare = null
    this.scratchHost?.close()
    this.scratchHost = null
    this.closeWorkers()
    const until = Date.now() + graceMs
    for (;;) {
      for (const h of this.running) if (h.exited) this.running.delete(h)
      if (this.running.size === 0 || Date.now() >= until) return this.running.size
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  /** Run a channel in the open store's host (the scratch host when nothing is open), within the call deadline. */
  async forward(channel: string, input: unknown): Promise<unknown> {
    try {
      return await this.forwardOnce(channel, input)
    } catch (e) {
      // Queued behind a call that wedged its worker, never run: once more, in the new worker.
      if (e instanceof NotStartedError) return this.forwardOnce(channel, input)
      throw e
    }
  }

  private async forwardOnce(channel: string, input: unknown): Promise<unknown> {
    if (!this.opened) return this.scratch().call(channel, input, this.policy(), this.callTimeoutMs)
    const host = this.host?.live ? this.host : await this.reopen()
    return host.call(channel, input, this.policy(), this.callTimeoutMs)
  }

  private spawn(): StoreHost {
    const seq = ++this.hostSeq
    const host: StoreHost = new StoreHost({
      init: { dataDir: this.dataDir, mode: this.mode, version: this.version, nativeBinding: this.nativeBinding, seq },
      onJob: (p) => this.jobs.mirror(p, () => host.cancelJob(p.jobId)),
      onPush: (stream, payload) => this.emitPush(stream, payload),
    })
    this.running.add(host)
    return host
  }

  /** A host to open a store in: the spare when there is one; a new spare is started behind it. */
  private hostForOpen(): StoreHost {
    const host = this.spare?.live ? this.spare : this.spawn()
    this.spare = null
    setImmediate(() => {
      if (!this.disposed && !this.spare) this.spare = this.spawn()
    })
    return host
  }

  /** The host without a store, started on first use. */
  private scratch(): StoreHost {
    if (!this.scratchHost?.live) this.scratchHost = this.spawn()
    return this.scratchHost
  }

  /** Open in a new host; the previous store stays open (and answering) until this one opened fine. */
  private async replace(request: OpenRequest): Promise<OpenInfo> {
    const host = this.hostForOpen()
    // A recent URL's password comes from the keychain here, on main (the worker has none).
    const real: OpenRequest = { ...request, path: this.withRecentPassword(request.path) }
    let info: OpenInfo
    try {
      info = await host.open(real, this.policy(), this.openTimeoutMs)
    } catch (e) {
      host.close()
      throw e
    }
    this.host?.close()
    this.host = host
    this.opened = { request: { path: real.path, opts: request.opts }, info }
    this.rememberRecent(info.path, info.layout, isPostgresUrl(request.path) ? parsePgUrl(request.path).password : null)
    return info
  }

  /** A new host for the open store after the last one stopped answering (shared by concurrent callers). */
  private reopen(): Promise<StoreHost> {
    const opened = this.opened!
    this.reopening ??= (async () => {
      const host = this.hostForOpen()
      try {
        await host.open(opened.request, this.policy(), this.openTimeoutMs)
      } catch (e) {
        host.close()
        throw e
      }
      if (this.opened !== opened) {
        host.close() // closed or replaced meanwhile
        throw new RecallscopeError('NO_DB', 'The store was closed')
      }
      this.host = host
      return host
    })().finally(() => (this.reopening = null))
    return this.reopening
  }
}
