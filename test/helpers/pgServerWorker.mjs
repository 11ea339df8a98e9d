// The PGlite server of test/helpers/pgServer.ts, in its own thread: the source under test blocks its
// thread while it waits for the database (store/postgres/bridge.ts), so the server, the logging proxy
// and the fake auth server cannot share that thread. Plain JS so it loads without a TypeScript loader.
import net from 'node:net'
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import pg from 'pg'

const db = await PGlite.create(workerData.vector === false ? {} : { extensions: { vector } })
const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 16 })
await server.start()
const directPort = Number(server.getServerConn().split(':').at(-1))
const statements = []
const sockets = new Set()
let accepted = 0

/**
 * Wait until PGlite serves a new connection again (a probe on its own port, not through the proxy, so
 * nothing is logged): it serves one connection at a time from one WebAssembly thread, and after a forced
 * drop it first has to notice the dead socket. Bounded: after 30 s the drop command fails.
 */
async function untilAccepting() {
  const deadline = Date.now() + 30_000
  for (;;) {
    const c = new pg.Client({ host: '127.0.0.1', port: directPort, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 2000 })
    c.on('error', () => {})
    try {
      await c.connect()
      await c.query('SELECT 1')
      await c.end()
      return
    } catch (e) {
      await c.end().catch(() => {})
      if (Date.now() > deadline) throw new Error(`PGlite did not accept a connection within 30 s of the drop (${e?.message ?? e})`, { cause: e })
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}

/** Frontend messages off a client→server byte stream: records the SQL of Query ('Q') and Parse ('P'). */
function frontendParser(onSql) {
  let buf = Buffer.alloc(0)
  let started = false
  return (chunk) => {
    buf = Buffer.concat([buf, chunk])
    for (;;) {
      if (!started) {
        if (buf.length < 8) return
        const len = buf.readInt32BE(0)
        if (buf.length < len) return
        const code = buf.readInt32BE(4)
        buf = buf.subarray(len)
        // SSLRequest / GSSENCRequest come before the real startup packet.
        if (code !== 80877103 && code !== 80877104) started = true
        continue
      }
      if (buf.length < 5) return
      const type = String.fromCharCode(buf[0])
      const len = buf.readInt32BE(1)
      if (buf.length < 1 + len) return
      const body = buf.subarray(5, 1 + len)
      if (type === 'Q') onSql(body.subarray(0, body.indexOf(0)).toString('utf8'))
      else if (type === 'P') {
        const q = body.subarray(body.indexOf(0) + 1)
        onSql(q.subarray(0, q.indexOf(0)).toString('utf8'))
      }
      buf = buf.subarray(1 + len)
    }
  }
}

const proxy = net.createServer((client) => {
  const upstream = net.connect(directPort, '127.0.0.1')
  accepted++
  sockets.add(client)
  sockets.add(upstream)
  const parse = frontendParser((sql) => statements.push(sql))
  client.on('data', (d) => {
    parse(d)
    upstream.write(d)
  })
  upstream.on('data', (d) => client.write(d))
  const end = () => {
    client.destroy()
    upstream.destroy()
    sockets.delete(client)
    sockets.delete(upstream)
  }
  for (const s of [client, upstream]) {
    s.on('close', end)
    s.on('error', end)
  }
})
await new Promise((r) => proxy.listen(0, '127.0.0.1', r))

// A server that answers any startup with FATAL 28P01, as Postgres does for a wrong password.
const fakeAuth = net.createServer((c) => {
  c.on('error', () => {})
  c.once('data', () => {
    const fields = Buffer.from('SFATAL\0C28P01\0Mpassword authentication failed for user "u"\0\0')
    const head = Buffer.alloc(5)
    head.write('E', 0)
    head.writeInt32BE(4 + fields.length, 1)
    c.end(Buffer.concat([head, fields]))
  })
})
await new Promise((r) => fakeAuth.listen(0, '127.0.0.1', r))

parentPort.on('message', async ({ id, cmd, sql, params }) => {
  try {
    let data = null
    // Its own statement first: a multi-statement exec runs as one transaction, begun under the old default.
    if (cmd === 'seed') {
      await db.exec('SET default_transaction_read_only = off')
      await db.exec(sql)
    } else if (cmd === 'query') data = (await db.query(sql, params ?? [])).rows
    else if (cmd === 'log') data = [...statements]
    else if (cmd === 'clear') statements.splice(0)
    else if (cmd === 'accepted') data = accepted
    else if (cmd === 'drop') {
      for (const s of sockets) s.destroy()
      sockets.clear()
      await untilAccepting()
    } else if (cmd === 'stop') {
      for (const s of sockets) s.destroy()
      await new Promise((r) => proxy.close(() => r()))
      await new Promise((r) => fakeAuth.close(() => r()))
      await server.stop()
      await db.close()
    }
    parentPort.postMessage({ id, ok: true, data })
  } catch (e) {
    parentPort.postMessage({ id, ok: false, error: String(e?.message ?? e) })
  }
})
parentPort.postMessage({ ready: true, port: proxy.address().port, directPort, fakeAuthPort: fakeAuth.address().port })
