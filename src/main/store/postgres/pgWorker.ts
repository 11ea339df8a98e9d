/**
 * The worker thread that owns the Postgres pools of one thread's PgSources (one worker per process or store host
 * thread, one pool per bridge: bridge.ts). A bridge opens its pool with a PoolOpen message carrying its own port and
 * counter; then the bridge's thread blocks on that counter while this side runs each request's statements on one
 * pooled client, posts the reply on the bridge's port, then bumps the counter and wakes it (the synckit technique,
 * written small).
 *
 * Every session starts with `SET default_transaction_read_only = on` (unless
 * write mode), `SET statement_timeout` and `SET application_name`, so a session
 * that reconnects after a drop is as safe as the first one. Nothing is retried:
 * a failed statement is one error reply.
 */
import { parentPort } from 'node:worker_threads'
import pg from 'pg'
import type { PoolOpen, Reply, Request, WireError } from './protocol'

function wireError(e: unknown): WireError {
  const x = e as { code?: unknown; message?: unknown }
  return { code: typeof x?.code === 'string' ? x.code : null, message: typeof x?.message === 'string' ? x.message : String(e) }
}

/** Answer on a bridge's port and wake its thread. */
function replyOn(port: PoolOpen['port'], counter: Int32Array, r: Reply): void {
  port.postMessage(r)
  Atomics.add(counter, 0, 1)
  Atomics.notify(counter, 0)
}

/** One bridge's pool: its requests arrive on its port until it closes. */
function servePool({ config, port, signal }: PoolOpen): void {
  const counter = new Int32Array(signal)
  const pool = new pg.Pool({
    ...(config.connectionString ? { connectionString: config.connectionString } : {}),
    max: config.max,
    connectionTimeoutMillis: config.connectTimeoutMs,
    // Client-side backstop in case the server ignores statement_timeout: the query errors, no hang.
    query_timeout: config.statementTimeoutMs + 2000,
    idleTimeoutMillis: 30_000,
    application_name: config.applicationName,
  })
  // An idle client whose server went away: pg emits this on the pool; without a listener the worker dies.
  pool.on('error', () => {})

  const initialised = new WeakSet<pg.PoolClient>()

  async function session(client: pg.PoolClient): Promise<void> {
    if (initialised.has(client)) return
    if (config.readOnly) await client.query('SET default_transaction_read_only = on')
    await client.query(`SET statement_timeout = ${Math.max(1, Math.floor(config.statementTimeoutMs))}`)
    await client.query(`SET application_name = '${config.applicationName.replace(/'/g, "''")}'`)
    initialised.add(client)
  }

  const reply = (r: Reply) => replyOn(port, counter, r)

  async function run(req: Request): Promise<void> {
    if (req.close) {
      try {
        await pool.end()
      } catch {
        /* closing a broken pool */
      }
      reply({ id: req.id, ok: true, rows: [], fields: [] })
      port.close()
      return
    }
    let client: pg.PoolClient | null = null
    let broken = false
    try {
      client = await pool.connect()
      await session(client)
      let last: pg.QueryResult | null = null
      let kept: pg.QueryResult | null = null
      for (const st of req.batch) {
        last = await client.query({ text: st.sql, values: st.params ?? [], ...(req.rowMode ? { rowMode: req.rowMode } : {}) })
        if (st.result) kept = last
      }
      last = kept ?? last
      reply({ id: req.id, ok: true, rows: last?.rows ?? [], fields: last?.fields.map((f) => f.name) ?? [] })
    } catch (e) {
      // A connection-level failure: drop the client rather than hand it out again.
      const code = (e as { code?: string }).code
      broken = !code || !/^[0-9A-Z]{5}$/.test(code) || code.startsWith('08') || code === '57P01'
      reply({ id: req.id, ok: false, error: wireError(e) })
    } finally {
      client?.release(broken)
    }
  }

  port.on('message', (req: Request) => {
    void run(req)
  })
}

parentPort?.on('message', (open: PoolOpen) => {
  try {
    servePool(open)
  } catch (e) {
    // A pool that cannot even be made (a config pg rejects) fails its own bridge's every call, not the worker the
    // thread's other bridges share.
    const counter = new Int32Array(open.signal)
    open.port.on('message', (req: Request) => {
      replyOn(open.port, counter, req.close ? { id: req.id, ok: true, rows: [], fields: [] } : { id: req.id, ok: false, error: wireError(e) })
      if (req.close) open.port.close()
    })
  }
})
