/**
 * Application state behind the handlers: the DB open right now, settings
 * (recent files, embedder), background jobs. One instance per Electron main
 * process or per `serve` process. No electron import: the shell passes paths in.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'
import type { JobKind, JobProgress, JobResults } from '../../shared/jobs'
import type { OpenInfo, RecentFile } from '../../shared/contract'
import type { Mapping } from '../../shared/mapping'
import { openStore } from '../store/registry'
import type { MemorySource } from '../store/source'
import { writeFileAtomic } from '../safety/atomicWrite'
import { PathGrants, pgUrlNamesFiles, type GrantAccess, type PickDialog } from '../safety/pathGrants'
import { WriteConsent, type ConfirmWrite } from '../safety/writeConsent'
import { isPostgresUrl, parsePgUrl } from '../store/postgres/url'
import { typedDbError } from '../store/sqlite/dbErrors'
import { SavedConnections, type SecretBox } from './pgConnections'
import { TaskWorker, type OffThreadControl } from '../jobs/offThread'
import { STORELESS, type TaskInputs, type TaskKind, type TaskOutputs } from '../jobs/tasks'
import { assertPgMappingFits } from '../store/mapped/pgTables'
import { ensureDemo } from '../demoDb'
import { runInspect, type InspectOp } from './inspect'

export interface AppOptions {
  /** Folder for settings, the demo DB and fallback workspaces. @default $RECALLSCOPE_HOME or ~/.recallscope */
  dataDir?: string
  mode: 'electron' | 'browser'
  /** better-sqlite3 addon for this runtime (Electron-ABI build in the app). */
  nativeBinding?: string
  version?: string
  /** The desktop shell's native file dialog (open, folder or save); absent in browser mode. */
  pickFile?: (dialog: PickDialog) => Promise<string | null>
  /**
   * The desktop shell's "allow writes?" message box (safety/writeConsent): asked before a DB
   * is opened for writing. Absent in browser mode (the token is the user) and in a desktop
   * App without a shell, where write mode is then refused (opened read-only).
   */
  confirmWrite?: ConfirmWrite
  /** The desktop shell's keychain (Electron safeStorage) for saved Postgres passwords; absent in browser mode. */
  secrets?: SecretBox
  /**
   * 'host': this App runs inside a store host's worker (host/hostWorker.ts) for the main
   * thread, which owns settings, grants and the recent list; the worker never writes them
   * and takes them from each call (`adoptPolicy`). @default 'main'
   */
  role?: 'main' | 'host'
  /** Prefix of job ids (a store host's worker sets its own). @default 'job' */
  jobPrefix?: string
}

/** What main hands a store host with every call: the state the handlers' checks read. */
export interface Policy {
  grants: ReturnType<PathGrants['list']>
  settings: Settings
}

/** How a store is opened (App.open / openStore). */
export interface OpenOptions {
  workspacePath?: string
  write?: boolean
  mapping?: Mapping
  /** sample a Postgres table against the mapping before opening it (openStore) */
  checkMapping?: boolean
}

export interface Settings {
  /**
   * Stores opened lately. A URL is kept without its password; in the desktop app the password is
   * kept beside it only as the keychain's ciphertext (`secret`, base64), in browser mode not at all.
   */
  recent: { path: string; openedAt: number; layout: string | null; secret?: string }[]
  /** Embedder spec: hashing | none | ollama:MODEL | openai:MODEL */
  embedder?: string
  ollamaHost?: string
  openaiBaseUrl?: string
  /** Chat model for the opt-in counterfactual: ollama:MODEL | openai:MODEL (same hosts as the embedder). @default $RECALLSCOPE_CHAT_MODEL, else none */
  chatModel?: string
}

function defaultDataDir(): string {
  return process.env.RECALLSCOPE_HOME ? path.resolve(process.env.RECALLSCOPE_HOME) : path.join(os.homedir(), '.recallscope')
}

type JobFn<K extends JobKind> = (ctl: { progress: (done: number, total: number, message?: string) => void; signal: AbortSignal }) => Promise<JobResults[K]>

/**
 * Background work with progress and cancel. Jobs yield to the event loop between chunks.
 * A store host's jobs run in its worker (host/hostWorker.ts) and are mirrored here on main
 * (`mirror`), so `jobs.list/get/cancel` answer even while that worker is busy.
 */
export class JobManager {
  private readonly jobs = new Map<string, { p: JobProgress; cancel: () => void }>()
  private readonly listeners = new Set<(p: JobProgress) => void>()
  private seq = 0

  /** @param prefix job ids start with it (each store host's worker has its own, so mirrored ids never collide) */
  constructor(private readonly prefix = 'job') {}

  onProgress(l: (p: JobProgress) => void): () => void {
    this.listeners.add(l)
    return () => this.listeners.delete(l)
  }

  private emit(p: JobProgress): void {
    p.updatedAt = Date.now()
    for (const l of this.listeners) l({ ...p })
  }

  start<K extends JobKind>(kind: K, label: string, fn: JobFn<K>): JobProgress {
    const jobId = `${this.prefix}-${++this.seq}-${Date.now().toString(36)}`
    const ac = new AbortController()
    const p: JobProgress = { jobId, kind, label, state: 'running', done: 0, total: 0, startedAt: Date.now(), updatedAt: Date.now() }
    this.jobs.set(jobId, { p, cancel: () => ac.abort() })
    let last = 0
    const progress = (done: number, total: number, message?: string) => {
      p.done = done
      p.total = total
      if (message !== undefined) p.message = message
      const now = Date.now()
      if (now - last > 100 || done >= total) {
        last = now
        this.emit(p)
      }
    }
    this.emit(p)
    void (async () => {
      try {
        await new Promise((r) => setImmediate(r))
        const result = await fn({ progress, signal: ac.signal })
        if (ac.signal.aborted) throw new RecallscopeError('CANCELLED', 'Cancelled')
        p.state = 'done'
        p.result = result
      } catch (e) {
        const code = e instanceof RecallscopeError ? e.code : ac.signal.aborted ? 'CANCELLED' : 'INTERNAL'
        p.state = code === 'CANCELLED' ? 'cancelled' : 'failed'
        p.error = { code, message: (e as Error)?.message ?? String(e) }
      }
      this.emit(p)
    })()
    return { ...p }
  }

  cancel(jobId: string): boolean {
    const j = this.jobs.get(jobId)
    if (!j) throw new RecallscopeError('NOT_FOUND', `No job ${jobId}`)
    if (j.p.state !== 'running') return false
    j.cancel()
    return true
  }

  /** Record (or update) a job that runs elsewhere (a store host's worker); `cancel` asks it to stop. */
  mirror(p: JobProgress, cancel: () => void): void {
    const j = this.jobs.get(p.jobId)
    if (j) j.p = { ...p }
    else this.jobs.set(p.jobId, { p: { ...p }, cancel })
    for (const l of this.listeners) l({ ...p })
  }

  get(jobId: string): JobProgress {
    const j = this.jobs.get(jobId)
    if (!j) throw new RecallscopeError('NOT_FOUND', `No job ${jobId}`)
    return { ...j.p }
  }

  list(): JobProgress[] {
    return [...this.jobs.values()].map((j) => ({ ...j.p })).sort((a, b) => b.startedAt - a.startedAt)
  }
}

export class App {
  readonly dataDir: string
  readonly mode: 'electron' | 'browser'
  readonly nativeBinding?: string
  readonly version: string
  readonly pickFile?: (dialog: PickDialog) => Promise<string | null>
  readonly jobs: JobManager
  readonly role: 'main' | 'host'
  /** Files the user chose outside the renderer (CLI, native dialog): see safety/pathGrants and `confine`. */
  readonly grants = new PathGrants()
  /** Files the user allowed write mode for in this run (desktop app). */
  private readonly writeConsent = new WriteConsent()
  private readonly confirmWrite?: ConfirmWrite
  /** Saved Postgres connections (passwords only encrypted, only with `secrets`). */
  readonly connections: SavedConnections
  /** the keychain (desktop app) for the passwords of recent Postgres URLs; null in browser mode */
  private readonly secrets: SecretBox | null
  private store: MemorySource | null = null
  /** the open store's job worker (heavy tasks run there, on its own read-only connection) */
  private worker: TaskWorker | null = null
  /** the worker for tasks that need no open store (imports), started on first use */
  private storeless: TaskWorker | null = null
  /** the job worker loading big vector indexes for the open store (readyStore) */
  private warming: { store: MemorySource; run: Promise<void> } | null = null
  private settingsCache: Settings | null = null
  private readonly pushListeners = new Set<(stream: string, payload: unknown) => void>()

  constructor(opts: AppOptions) {
    this.role = opts.role ?? 'main'
    this.jobs = new JobManager(opts.jobPrefix)
    this.dataDir = opts.dataDir ?? defaultDataDir()
    this.mode = opts.mode
    this.nativeBinding = opts.nativeBinding
    this.version = opts.version ?? '0.0.0'
    this.pickFile = opts.pickFile
    this.confirmWrite = opts.confirmWrite
    this.connections = new SavedConnections(this.dataDir, opts.secrets ?? null)
    this.secrets = opts.secrets ?? null
    try {
      fs.mkdirSync(this.dataDir, { recursive: true })
    } catch (e) {
      throw new RecallscopeError(
        'READ_ONLY',
        `Cannot create the data folder ${this.dataDir} (${(e as NodeJS.ErrnoException).code}): set $RECALLSCOPE_HOME to a writable folder`,
      )
    }
  }

  get demoPath(): string {
    return path.join(this.dataDir, 'demo.db')
  }

  get current(): MemorySource | null {
    return this.store && !this.store.isClosed ? this.store : null
  }

  /** The open store, or a NO_DB error. */
  requireStore(): MemorySource {
    const s = this.current
    if (!s) throw new RecallscopeError('NO_DB', 'No database is open: open one first')
    return s
  }

  /**
   * May the renderer name this path for `access`? In the desktop app only paths the user
   * chose outside the page count (the native dialog, the command line, and for reading the
   * recent files main itself recorded and the demo DB); a typed path is FORBIDDEN there.
   * In browser mode a path typed into the Library counts as the user's choice (the page is
   * the user's own `serve` run, every call carries its token); only `cases.import/export`
   * stay grant-only (they have text flows). Returns the path to use.
   */
  confine(p: string, what: string, access: GrantAccess): string {
    if (this.mode === 'browser' || this.grants.has(p, access)) return p
    if (access === 'read') {
      if (isPostgresUrl(p)) {
        if (!pgUrlNamesFiles(p)) return p // a network address: no local file is read
      } else {
        const abs = path.resolve(p)
        if (abs === path.resolve(this.demoPath) || this.settings().recent.some((r) => !isPostgresUrl(r.path) && path.resolve(r.path) === abs)) return p
      }
    }
    this.grants.check(p, what, access) // throws FORBIDDEN, naming the channel and the dialog to use
    return p
  }

  /**
   * May this DB be opened for writing? Browser mode: yes (the per-run token is the user).
   * Desktop app: only when the user said so in main's own message box, asked once per file
   * per run; the renderer's `write: true` is a request, never the answer.
   */
  allowWrite(p: string): Promise<boolean> {
    if (this.mode === 'browser') return Promise.resolve(true)
    return this.writeConsent.ask(p, this.confirmWrite)
  }

  /** Open a DB in this thread, closing the previous one only once the new one opened fine. */
  open(p: string, opts: OpenOptions = {}): OpenInfo {
    const t0 = performance.now()
    const next = openStore({
      path: this.withRecentPassword(p),
      workspacePath: opts.workspacePath,
      write: opts.write,
      mapping: opts.mapping,
      nativeBinding: this.nativeBinding,
      fallbackDir: this.fallbackDir,
    })
    // All-or-nothing: a damaged file fails here, while the previous DB is still the open one.
    let info: OpenInfo
    try {
      next.checkIntegrity()
      info = this.openInfo(0, next)!
    } catch (e) {
      next.close()
      throw typedDbError(e, next.path)
    }
    this.store?.close()
    this.worker?.close()
    this.store = next
    // The worker reopens what was opened here (a read-only folder's private copy when there is one).
    this.worker = new TaskWorker({
      path: next.snapshotPath ?? p,
      workspacePath: next.workspace.path,
      nativeBinding: this.nativeBinding,
      fallbackDir: this.fallbackDir,
    })
    // A store host's App leaves this to main (HostedApp), which owns the settings and the keychain.
    if (this.role === 'main') this.rememberRecent(next.path, next.layout, isPostgresUrl(p) ? parsePgUrl(p).password : null)
    return { ...info, tookMs: performance.now() - t0 }
  }

  /**
   * Open a store (`store.open`, `pg.connect`, `store.openMapped`): in this thread here; on the
   * server and in the desktop app (HostedApp) in a new store host worker. `checkMapping`: a
   * Postgres table opened through a mapping is sampled first (times in range, a unique id, one
   * vector length), BAD_INPUT naming the column.
   */
  async openStore(p: string, opts: OpenOptions = {}): Promise<OpenInfo> {
    if (opts.checkMapping && opts.mapping && isPostgresUrl(p))
      assertPgMappingFits({ url: p, workspacePath: opts.workspacePath, nativeBinding: this.nativeBinding, fallbackDir: this.fallbackDir }, opts.mapping)
    return this.open(p, opts)
  }

  /** Open the demo DB, generating it first when missing or when `regenerate` (the open store is closed before it is replaced). */
  async openDemo(regenerate = false): Promise<OpenInfo> {
    ensureDemo(this.demoPath, { regenerate, beforeReplace: () => this.close() })
    return this.open(this.demoPath)
  }

  /** Read another DB than the open one (the mapping dialog, the Connect form's test): api/inspect.ts. */
  async inspect<T>(op: InspectOp): Promise<T> {
    return runInspect(op) as T
  }

  /** Folder for workspaces of stores whose own folder is not writable (and of URLs). */
  get fallbackDir(): string {
    return path.join(this.dataDir, 'workspaces')
  }

  /** Take main's grants and settings (a store host's worker, before each call). */
  adoptPolicy(p: Policy): void {
    this.grants.replace(p.grants)
    this.settingsCache = p.settings
  }

  /** main's grants and settings, for a store host's call */
  policy(): Policy {
    return { grants: this.grants.list(), settings: this.settings() }
  }

  /**
   * Events pushed to the window / the browser (besides job progress, which has `jobs`), by
   * stream name: a store host's worker relays its pushes to main's App, which hands them to
   * ipc.ts (`webContents.send(stream, payload)`) and the server (`event: <stream>` on
   * GET /api/progress).
   */
  onPush(l: (stream: string, payload: unknown) => void): () => void {
    this.pushListeners.add(l)
    return () => this.pushListeners.delete(l)
  }

  emitPush(stream: string, payload: unknown): void {
    for (const l of this.pushListeners) l(stream, payload)
  }

  openInfo(tookMs = 0, store: MemorySource | null = this.current): OpenInfo | null {
    const s = store
    if (!s) return null
    const { memories, sessions } = s.counts()
    return {
      path: s.path,
      layout: s.layout,
      ...(s.detectedBecause ? { detectedBecause: s.detectedBecause } : {}),
      readOnly: s.readOnly,
      workspacePath: s.workspace.path,
      ...(s.snapshotPath ? { snapshot: true } : {}),
      memories,
      sessions,
      tookMs,
    }
  }

  close(): boolean {
    const had = !!this.current
    this.store?.close()
    this.store = null
    this.worker?.close()
    this.worker = null
    return had
  }

  /** Stop the job workers (quitting). */
  protected closeWorkers(): void {
    this.worker?.close()
    this.worker = null
    this.storeless?.close()
    this.storeless = null
  }

  /**
   * Run a heavy task (eval, tune, why-not, replay, drivers, backfill) on the open store
   * off the main thread, so IPC keeps answering meanwhile (NO_DB when nothing is open);
   * an import needs no open store.
   */
  offThread<K extends TaskKind>(kind: K, input: TaskInputs[K], ctl: OffThreadControl = {}): Promise<TaskOutputs[K]> {
    if (STORELESS.includes(kind)) return (this.storeless ??= new TaskWorker(null)).run(kind, input, ctl)
    this.requireStore()
    return this.worker!.run(kind, input, ctl)
  }

  /**
   * The open store, with its big vector indexes ready to restore: a model whose first load here
   * would block this thread for seconds (a 1M × 768 index takes about a minute from SQL) is loaded
   * by the job worker first, which saves a snapshot; this thread then restores the snapshot
   * without holding the thread (the OS's I/O threads read it; the id map is built in chunks), so
   * IPC keeps answering throughout. Concurrent callers share one warm-up; if it fails, the first
   * use loads here as before.
   */
  async readyStore(): Promise<MemorySource> {
    const store = this.requireStore()
    const snapshots = store.capabilities().snapshots
    const cold = snapshots?.coldVectorModels() ?? []
    if (cold.length === 0) {
      await snapshots?.restoreVectors()
      return this.requireStore()
    }
    if (!this.warming || this.warming.store !== store) {
      const run = this.offThread('warmVectors', { models: cold })
        .then(() => undefined)
        .catch(() => undefined)
        .finally(() => {
          if (this.warming?.run === run) this.warming = null
        })
      this.warming = { store, run }
    }
    await this.warming.run
    if (!store.isClosed) await snapshots?.restoreVectors()
    return this.requireStore()
  }

  // --- settings --------------------------------------------------------------

  private get settingsPath(): string {
    return path.join(this.dataDir, 'settings.json')
  }

  settings(): Settings {
    if (this.settingsCache) return this.settingsCache
    let s: Settings = { recent: [] }
    try {
      const raw = JSON.parse(fs.readFileSync(this.settingsPath, 'utf8')) as Partial<Settings>
      s = { ...s, ...raw, recent: Array.isArray(raw.recent) ? raw.recent.filter((r) => r && typeof r.path === 'string') : [] }
    } catch {
      /* first run or unreadable settings: start fresh, never fatal */
    }
    this.settingsCache = s
    return s
  }

  saveSettings(patch: Partial<Settings>): Settings {
    const s = { ...this.settings(), ...patch }
    this.settingsCache = s
    writeFileAtomic(this.settingsPath, JSON.stringify(s, null, 2), { what: 'settings', overwrite: true }) // O_EXCL temp + rename, never an open DB
    return s
  }

  /**
   * A recent URL (shown without its password) reopened: its password from the keychain when one was
   * kept there. A URL that carries a password, or one with none kept, is used as given.
   */
  protected withRecentPassword(p: string): string {
    if (!this.secrets || !isPostgresUrl(p) || parsePgUrl(p).password) return p
    const kept = this.settings().recent.find((r) => r.path === p && r.secret)
    if (!kept?.secret) return p
    try {
      const u = new URL(p)
      u.password = encodeURIComponent(this.secrets.decrypt(Buffer.from(kept.secret, 'base64')))
      return u.toString()
    } catch {
      return p // not decryptable here (another machine's keychain): the server asks, AUTH_FAILED says so
    }
  }

  protected rememberRecent(p: string, layout: string, password: string | null = null): void {
    // Never the password in plain text: the keychain's ciphertext (desktop app) or nothing (browser mode).
    const secret = password && this.secrets ? { secret: this.secrets.encrypt(password).toString('base64') } : {}
    const recent = [{ path: p, openedAt: Date.now(), layout, ...secret }, ...this.settings().recent.filter((r) => r.path !== p)].slice(0, 12)
    try {
      this.saveSettings({ recent })
    } catch {
      /* a read-only data dir must not stop a DB from opening */
    }
  }

  recent(): RecentFile[] {
    // URLs (stored without their password) cannot be checked without connecting: listed as present.
    // Never the ciphertext either: the renderer gets the fields RecentFile names.
    return this.settings().recent.map((r) => ({
      path: r.path,
      openedAt: r.openedAt,
      layout: r.layout,
      exists: isPostgresUrl(r.path) || fs.existsSync(r.path),
    }))
  }
}
