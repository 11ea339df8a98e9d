/**
 * SQLite connections: checking a file is SQLite before the driver sees it,
 * opening the agent DB read-only, the workspace's default path, migrations, and
 * the small SQL helpers every query module shares (statement cache, escaping,
 * limits).
 *
 * The agent connection is `readonly` + `PRAGMA query_only`, with a busy timeout
 * so reads wait out a writer's commit instead of failing (WAL readers never block).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import crypto from 'node:crypto'
import Database from 'better-sqlite3'
import { RecallscopeError } from '../../../shared/result'
import { openRegularFile } from '../safeFiles'
import { openReadOnlyAgentDb } from './readOnlyOpen'

const SQLITE_MAGIC = 'SQLite format 3\0'

/** Check that a file exists and is SQLite before handing it to the driver (clear errors, no side files). */
export function assertSqliteFile(p: string): void {
  let fd: number
  try {
    // O_NONBLOCK + fstat: a FIFO named agent.db must be refused, not waited on forever (trust round 3)
    fd = openRegularFile(p, 'database')
  } catch (e) {
    if (e instanceof RecallscopeError && e.code === 'BAD_INPUT') throw new RecallscopeError('NOT_SQLITE', `${e.message} (not a SQLite database)`, e.details)
    throw e
  }
  try {
    const buf = Buffer.alloc(16)
    const n = fs.readSync(fd, buf, 0, 16, 0)
    if (n < 16 || buf.toString('latin1') !== SQLITE_MAGIC)
      throw new RecallscopeError('NOT_SQLITE', `${p} is not a SQLite database (${n === 0 ? 'empty file' : 'bad header'})`)
  } finally {
    fs.closeSync(fd)
  }
}

function dirWritable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** Where the workspace of an agent DB lives by default. */
export function defaultWorkspacePath(agentPath: string, fallbackDir?: string): string {
  const abs = path.resolve(agentPath)
  if (dirWritable(path.dirname(abs))) return `${abs}.recallscope`
  // $RECALLSCOPE_HOME like the app: the CLI and the app must find the same workspace.
  const home = process.env.RECALLSCOPE_HOME ? path.resolve(process.env.RECALLSCOPE_HOME) : path.join(os.homedir(), '.recallscope')
  const dir = fallbackDir ?? path.join(home, 'workspaces')
  try {
    fs.mkdirSync(dir, { recursive: true })
  } catch (e) {
    throw new RecallscopeError(
      'READ_ONLY',
      `${path.dirname(abs)} is read-only and the workspace folder ${dir} cannot be created (${(e as NodeJS.ErrnoException).code}): set $RECALLSCOPE_HOME or pass --workspace FILE`,
    )
  }
  const h = crypto.createHash('sha1').update(abs).digest('hex').slice(0, 12)
  return path.join(dir, `${path.basename(abs)}-${h}.recallscope`)
}

export function migrate(db: Database.Database, migrations: string[]): void {
  // One BEGIN IMMEDIATE around the version read and every step: two processes opening a new
  // store together serialise here (the second waits out the busy timeout, then sees the new
  // version) instead of both reading version 0 and the loser failing "duplicate column name".
  if ((db.pragma('user_version', { simple: true }) as number) >= migrations.length) return
  const steps = db.transaction(() => {
    const v = db.pragma('user_version', { simple: true }) as number
    for (let i = v; i < migrations.length; i++) {
      db.exec(migrations[i])
      db.pragma(`user_version = ${i + 1}`)
    }
  })
  retryWhileBusy(db, () => steps.immediate())
}

/** How long a write waits for another process's write lock, in all (the connections' busy timeout). */
const WRITE_BUSY_BUDGET_MS = 5000

const isBusy = (e: unknown) => {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code)
}

/** Block this thread for `ms` (a store host or job worker, or the CLI: never the app's main thread). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * Run `fn`, retrying it while SQLite says another process holds the lock (SQLITE_BUSY / LOCKED), with a
 * short jittered backoff until `budgetMs` has passed since the first try; only then `DB_BUSY`. For the
 * calls SQLite does not wait on with the busy timeout: a write transaction whose snapshot went stale,
 * and switching a new file to WAL while another process is creating it too (measured: 4 processes
 * opening 12 new workspaces together lost 1–3 opens a run to an immediate "database is locked").
 */
export function retryWhileBusy<T>(db: Database.Database, fn: () => T, budgetMs = WRITE_BUSY_BUDGET_MS): T {
  const until = Date.now() + budgetMs
  for (let attempt = 0; ; attempt++) {
    try {
      return fn()
    } catch (e) {
      if (!isBusy(e)) throw e
      const left = until - Date.now()
      if (left <= 0)
        throw new RecallscopeError('DB_BUSY', `${db.name}: another process kept the database locked for ${budgetMs / 1000} s (${(e as Error).message})`)
      // 2, 4, 8 … 64 ms with jitter, so two writers that collided do not collide again in step
      sleepSync(Math.min(left, 2 ** Math.min(attempt + 1, 6) * (0.5 + Math.random())))
    }
  }
}

/**
 * Run `fn` as one write transaction that another process may be writing beside (two apps, or the
 * app and the CLI, on one workspace): `BEGIN IMMEDIATE` takes the write lock before anything is
 * read, so the transaction never has to upgrade a read snapshot another writer made stale
 * (SQLITE_BUSY_SNAPSHOT, which SQLite does not wait on), and SQLITE_BUSY is retried
 * (`retryWhileBusy`). SQLITE_FULL is `DISK_FULL` naming the file (the transaction rolled back whole).
 */
export function runWriteTransaction<T>(db: Database.Database, fn: () => T, budgetMs = WRITE_BUSY_BUDGET_MS): T {
  const tx = db.transaction(fn)
  return retryWhileBusy(
    db,
    () => {
      try {
        return tx.immediate()
      } catch (e) {
        if ((e as { code?: unknown } | null)?.code === 'SQLITE_FULL')
          throw new RecallscopeError('DISK_FULL', `${db.name}: the disk (or the database's size limit) is full; nothing of this change was written`)
        throw e
      }
    },
    budgetMs,
  )
}

export interface ConnectOptions {
  /** open read-write (explicit write mode only) */
  write?: boolean
  /** better-sqlite3 native addon (the Electron-ABI build in the app) */
  nativeBinding?: string
  /** @default 5000 */
  busyTimeoutMs?: number
}

/** Open a SQLite file (read-only + query_only unless `write`), with typed errors. */
export function openSqlite(abs: string, opts: ConnectOptions = {}): Database.Database {
  assertSqliteFile(abs)
  try {
    const options = {
      fileMustExist: true,
      timeout: opts.busyTimeoutMs ?? 5000,
      ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}),
    }
    const db = opts.write ? new Database(abs, options) : openReadOnlyAgentDb(abs, options)
    if (!opts.write) db.pragma('query_only = 1')
    return db
  } catch (e) {
    throw new RecallscopeError('NOT_SQLITE', `Cannot open ${abs}: ${(e as Error).message}`)
  }
}

/** Table name → column names, from sqlite_master + PRAGMA table_info. */
export function readTables(db: Database.Database): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  const names = db.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table','view')`).pluck().all() as string[]
  for (const name of names) {
    const cols = db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(name) as string[]
    out.set(name, new Set(cols))
  }
  return out
}

const stmtCache = new WeakMap<Database.Database, Map<string, Database.Statement>>()

/** A prepared statement, reused across calls (SQL text is the key; at most 256 per connection). */
export function prep(db: Database.Database, sql: string): Database.Statement {
  let m = stmtCache.get(db)
  if (!m) stmtCache.set(db, (m = new Map<string, Database.Statement>()))
  let st = m.get(sql)
  if (!st) {
    if (m.size >= 256) m.delete(m.keys().next().value!)
    st = db.prepare(sql)
    m.set(sql, st)
  }
  return st
}

export function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}

export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`
}

/** Page size: 50 by default, 1..1000. */
export function clampLimit(n: number | undefined): number {
  if (n === undefined || !Number.isFinite(n)) return 50
  return Math.min(1000, Math.max(1, Math.floor(n)))
}

export function* chunks<T>(arr: T[], n: number): Generator<T[]> {
  for (let i = 0; i < arr.length; i += n) yield arr.slice(i, i + n)
}
