/**
 * Raw TCP to the bridge: bytes no HTTP client would send (bad request lines,
 * half-sent headers). Resolves with what the server wrote before it closed the
 * connection, or after `waitMs` with whatever arrived (and `closed: false`).
 */
import net from 'node:net'

export interface RawResult {
  text: string
  status: number | null
  closed: boolean
  /** ms from connect until the server closed (or the wait ended) */
  ms: number
  /** the server reset the connection instead of answering */
  reset: boolean
}

export function rawRequest(port: number, chunks: (string | Buffer | { pauseMs: number })[], opts: { waitMs?: number } = {}): Promise<RawResult> {
  const waitMs = opts.waitMs ?? 5_000
  return new Promise((resolve) => {
    const t0 = Date.now()
    const sock = net.connect(port, '127.0.0.1')
    let text = ''
    let reset = false
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      sock.destroy()
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text)
      resolve({ text, status: m ? Number(m[1]) : null, closed, ms: Date.now() - t0, reset })
    }
    const timer = setTimeout(() => finish(false), waitMs)
    sock.on('data', (d) => (text += d.toString('latin1')))
    sock.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') reset = true
      finish(true)
    })
    sock.on('close', () => finish(true))
    sock.on(
      'connect',
      () =>
        void (async () => {
          for (const c of chunks) {
            if (done) return
            if (typeof c === 'object' && !Buffer.isBuffer(c)) await new Promise((r) => setTimeout(r, c.pauseMs))
            else if (!sock.destroyed) sock.write(c)
          }
        })(),
    )
  })
}

/** The JSON body of a raw response (after the blank line). */
export function rawBody(r: RawResult): unknown {
  const i = r.text.indexOf('\r\n\r\n')
  if (i < 0) return null
  const body = r.text.slice(i + 4)
  // chunked bodies: take the first JSON-looking line
  const j = body.indexOf('{')
  try {
    return JSON.parse(body.slice(j, body.lastIndexOf('}') + 1))
  } catch {
    return null
  }
}
