// The PGlite server of test/helpers/pgServer.ts, in a child process: the source under test blocks its
// thread while it waits for the database (store/postgres/bridge.ts), so the server, the logging proxy
// and the fake auth server cannot share that thread; a process of its own also runs V8 with its own flags.
// Commands come over the IPC channel; it exits when the test process goes away (the channel closes).
// Plain JS so it loads without a TypeScript loader.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import pg from 'pg'

/**
 * A new PGlite cluster. `PGlite.create` runs initdb in WebAssembly: ~7 s of CPU, against ~1.5 s to start from
 * a dump of the data folder it leaves (measured; docs/internals/testing.md). So the first server of a run
 * makes two dumps into .cache/pglite/ (git-ignored), keyed by the PGlite and pgvector versions and by what they
 * hold: the fresh cluster (for a server without pgvector) and the same cluster after `CREATE EXTENSION vector`
 * (~0.6 s a server saved; the extension's files are in PGlite's own bundle, not in the data folder, so the plain
 * dump loads without them). Every later server starts from one of them: the files initdb and the extension's
 * script write, before any test touched them. Servers starting at the same time wait for the one writing the
 * dumps (a lock file) instead of each running initdb.
 */
async function createCluster(withVector) {
  const req = createRequire(import.meta.url)
  // Their package.json is not exported: found above the resolved entry point.
  const version = (name) => {
    for (let d = path.dirname(req.resolve(name)); d !== path.dirname(d); d = path.dirname(d)) {
      const pkg = path.join(d, 'package.json')
      if (fs.existsSync(pkg) && JSON.parse(fs.readFileSync(pkg, 'utf8')).name === name) return JSON.parse(fs.readFileSync(pkg, 'utf8')).version
    }
    throw new Error(`no package.json for ${name}`)
  }
  const dir = path.resolve(import.meta.dirname, '../../.cache/pglite')
  const base = `pglite-${version('@electric-sql/pglite')}`
  const dumps = {
    plain: path.join(dir, `${base}-initdb.tar`),
    vector: path.join(dir, `${base}-pgvector-${version('@electric-sql/pglite-pgvector')}-created.tar`),
  }
  const dump = withVector ? dumps.vector : dumps.plain
  const opts = withVector ? { extensions: { vector } } : {}
  const lock = path.join(dir, `${base}.lock`)
  const fromDump = () => PGlite.create({ ...opts, loadDataDir: new Blob([fs.readFileSync(dump)]) })
  if (fs.existsSync(dump)) return fromDump()
  fs.mkdirSync(dir, { recursive: true })
  let fd
  try {
    fd = fs.openSync(lock, 'wx')
  } catch {
    // Another server is writing the dumps: wait for it. A lock older than two minutes was left by a killed run.
    const stale = () => Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? 0) > 120_000
    while (!fs.existsSync(dump) && fs.existsSync(lock) && !stale()) await new Promise((r) => setTimeout(r, 100))
    if (fs.existsSync(dump)) return fromDump()
    if (stale()) fs.rmSync(lock, { force: true })
    const db = await PGlite.create(opts)
    if (withVector) await db.exec('CREATE EXTENSION vector')
    return db
  }
  try {
    // initdb with pgvector's files present (they live outside the data folder, so the first dump is the plain cluster)
    const db = await PGlite.create({ extensions: { vector } })
    const write = async (file) => {
      const tmp = `${file}.${process.pid}.${Date.now()}`
      fs.writeFileSync(tmp, Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer()))
      fs.renameSync(tmp, file)
    }
    await write(dumps.plain)
    await db.exec('CREATE EXTENSION vector')
    await write(dumps.vector)
    if (withVector) return db
    await db.close()
    return fromDump()
  } finally {
    fs.closeSync(fd)
    fs.rmSync(lock, { force: true })
  }
}

// an orphan never outlives its test process
process.on('disconnect', () => process.exit(0))
const db = await createCluster(process.argv[2] !== 'plain')
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

process.on('message', async ({ id, cmd, sql, params }) => {
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
    process.send({ id, ok: true, data })
  } catch (e) {
    process.send({ id, ok: false, error: String(e?.message ?? e) })
  }
})
process.send({ ready: true, port: proxy.address().port, directPort, fakeAuthPort: fakeAuth.address().port })
