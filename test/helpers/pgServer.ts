/**
 * Test helper: a real Postgres (PGlite, Postgres compiled to WebAssembly) with
 * pgvector, served over the wire protocol on a loopback port by
 * @electric-sql/pglite-socket, started and stopped by the test itself.
 *
 * It runs in a worker thread (pgServerWorker.mjs): the source under test
 * blocks its own thread while waiting for the database, so the server cannot
 * live there. In front of it sits a TCP proxy that the tests connect through;
 * it decodes the frontend messages and records the SQL text of every Query and
 * Parse message, so a test can prove what reached the server independently of
 * the code under test. It can also cut every connection (a dropped network).
 * A third listener answers every startup with SQLSTATE 28P01 (wrong password).
 *
 * PGlite is one backend shared by every connection, so a session setting such
 * as `default_transaction_read_only` set by the source applies to the test's
 * own writes too: `seed()` switches it off first.
 */
import path from 'node:path'
import { Worker } from 'node:worker_threads'

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

/** Start PGlite (+ pgvector unless `vector: false`), the logging proxy and the fake auth server. ~15 s on a slow machine. */
export async function startPgServer(opts: { vector?: boolean } = {}): Promise<PgTestServer> {
  const worker = new Worker(path.join(__dirname, 'pgServerWorker.mjs'), { workerData: { vector: opts.vector !== false } })
  let next = 1
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  const ready = new Promise<{ port: number; fakeAuthPort: number }>((resolve, reject) => {
    worker.once('error', reject)
    worker.on('message', (m: { ready?: boolean; id?: number; ok?: boolean; data?: unknown; error?: string; port?: number; fakeAuthPort?: number }) => {
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
      worker.postMessage({ id, cmd, sql, params })
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
      await worker.terminate()
    },
  }
}

/** A Postgres literal for a vector ('[1,2,3]'). */
export function pgVector(v: ArrayLike<number>): string {
  return `'[${Array.from(v).join(',')}]'`
}

/** A single-quoted SQL string literal. */
export function pgText(s: string | null | undefined): string {
  return s === null || s === undefined ? 'NULL' : `'${s.replace(/'/g, "''")}'`
}
