/**
 * Test helper: a real Postgres (PGlite, Postgres compiled to WebAssembly) with
 * pgvector, served over the wire protocol on a loopback port by
 * @electric-sql/pglite-socket, started and stopped by the test itself.
 *
 * It runs in a child process (pgServerWorker.mjs): the source under test
 * blocks its own thread while waiting for the database, so the server cannot
 * live there, and a process of its own can run V8 with the flags that suit a
 * WebAssembly Postgres (Liftoff only, see `tierUp`) without changing how the
 * code under test runs. In front of it sits a TCP proxy that the tests connect
 * through; it decodes the frontend messages and records the SQL text of every
 * Query and Parse message, so a test can prove what reached the server
 * independently of the code under test. It can also cut every connection (a
 * dropped network). A third listener answers every startup with SQLSTATE 28P01
 * (wrong password).
 *
 * PGlite is one backend shared by every connection, so a session setting such
 * as `default_transaction_read_only` set by the source applies to the test's
 * own writes too: `seed()` switches it off first.
 */
import path from 'node:path'
import { fork } from 'node:child_process'

export interface PgTestServer {
  /** postgres://… through the logging proxy (the password is a marker tests look for in output) */
  url: string
  /** a port whose server refuses every password */
  fakeAuthPort: number
  /** SQL text of every Query / Parse message seen by the proxy since the last clear */
  statements(): Promise<string[]>
  clearLog(): Promise<void>
  /** Destroy every proxied connection (the network drops); resolves once PGlite serves a new connection again. */
  dropConnections(): Promise<void>
  /** Connections the proxy has accepted so far (a reconnect shows as one more). */
  accepted(): Promise<number>
  /** Run SQL as the test (writes allowed). */
  seed(sql: string): Promise<void>
  /** Query PGlite directly (not through the source under test). */
  query<R>(sql: string, params?: unknown[]): Promise<R[]>
  stop(): Promise<void>
}

/**
 * Start PGlite, the logging proxy and the fake auth server. The database has pgvector's extension created (`vector`
 * is a type there) unless `vector: false`, which gives a server where pgvector is not even installable.
 *
 * `tierUp` (default false) lets V8 optimise PGlite's hot WebAssembly with TurboFan, as any Postgres user of PGlite
 * gets. Tests leave it off: their servers run a few hundred short statements each, and compiling PGlite's hot
 * functions a second time costs more CPU than it saves (measured in docs/internals/testing.md, "Postgres test
 * servers"). Benches that time PGlite's queries turn it on.
 */
export async function startPgServer(opts: { vector?: boolean; tierUp?: boolean } = {}): Promise<PgTestServer> {
  const child = fork(path.join(__dirname, 'pgServerWorker.mjs'), [opts.vector === false ? 'plain' : 'vector'], {
    execArgv: opts.tierUp ? [] : ['--liftoff-only'],
    // structured clone for the replies (query rows may hold a bigint)
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let next = 1
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  const ready = new Promise<{ port: number; fakeAuthPort: number }>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the PGlite server exited (${code}) before it was ready`)))
    child.on('message', (m: { ready?: boolean; id?: number; ok?: boolean; data?: unknown; error?: string; port?: number; fakeAuthPort?: number }) => {
      if (m.ready) return resolve({ port: m.port!, fakeAuthPort: m.fakeAuthPort! })
      const w = waiting.get(m.id!)
      waiting.delete(m.id!)
      if (m.ok) w?.resolve(m.data)
      else w?.reject(new Error(m.error))
    })
  })
  const { port, fakeAuthPort } = await ready
  const call = <T>(cmd: string, sql?: string, params?: unknown[]) =>
    new Promise<T>((resolve, reject) => {
      const id = next++
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
      child.send({ id, cmd, sql, params })
    })
  return {
    url: `postgres://recallscope_test:secret-pw@127.0.0.1:${port}/postgres?sslmode=disable`,
    fakeAuthPort,
    statements: () => call<string[]>('log'),
    clearLog: () => call<void>('clear'),
    dropConnections: () => call<void>('drop'),
    accepted: () => call<number>('accepted'),
    seed: (sql) => call<void>('seed', sql),
    query: <R>(sql: string, params?: unknown[]) => call<R[]>('query', sql, params),
    stop: async () => {
      await call('stop')
      // it exits once stopped; waiting for that reaps it, so its CPU counts for the test file (fileCpu.ts)
      child.disconnect()
      await exited
    },
  }
}

/** A Postgres literal for a vector ('[1,2,3]'). */
export function pgVector(v: ArrayLike<number>): string {
  return `'[${Array.from(v).join(',')}]'`
}

/**
 * One multi-row INSERT of `rows` (each a list of SQL literals) into `table`, or '' for none. Postgres parses and
 * plans it once: 400 fixture rows load in ~0.1 s of PGlite's CPU where 400 one-row INSERTs take ~0.4–1 s.
 */
export function pgInsert(table: string, rows: readonly (readonly (string | number)[])[]): string {
  return rows.length ? `INSERT INTO ${table} VALUES ${rows.map((r) => `(${r.join(', ')})`).join(',\n')};` : ''
}

/** A single-quoted SQL string literal. */
export function pgText(s: string | null | undefined): string {
  return s === null || s === undefined ? 'NULL' : `'${s.replace(/'/g, "''")}'`
}
