/**
 * The desktop app's live-OTLP listener: the app has no HTTP server, so main starts this
 * one (from the shell, which passes nothing Electron-specific) to take `POST /v1/traces`
 * from an instrumented agent. Loopback only, a random token per run (shown on the Trace
 * screen), the Host check against DNS rebinding, and no browser pages at all: a request
 * carrying an Origin header is refused. Everything else is 404.
 *
 * Port: $RECALLSCOPE_OTLP_PORT, else 4318 (the OTLP/HTTP default, so an exporter's
 * default `http://localhost:4318` reaches it), else a free port when that one is taken.
 */
import crypto from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { handleOtlpTraces, type OtlpIngest } from './otlpRoute'
import { closeServer, hasBearer, sendError } from './respond'

export interface OtlpListener {
  /** http://127.0.0.1:PORT/v1/traces */
  url: string
  port: number
  token: string
  close(): Promise<void>
}

/** The OTLP/HTTP default port. */
const OTLP_DEFAULT_PORT = 4318

function listen(server: http.Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
}

/** Start the listener; `port` 0 picks a free one. */
export async function startOtlpListener(opts: { ingest: OtlpIngest; port?: number; token?: string; maxBodyBytes?: number }): Promise<OtlpListener> {
  const token = opts.token ?? crypto.randomBytes(24).toString('hex')
  const maxBody = opts.maxBodyBytes ?? 16 * 1024 * 1024
  let port = 0
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 60_000, maxHeaderSize: 16 * 1024 }, (req, res) => {
    req.on('error', () => {})
    res.on('error', () => {})
    if (req.headers.host !== `127.0.0.1:${port}` && req.headers.host !== `localhost:${port}`) return sendError(res, 403, 'FORBIDDEN', 'Bad Host header')
    if (req.headers.origin !== undefined) return sendError(res, 403, 'FORBIDDEN', 'Browser requests are not accepted here')
    if ((req.url ?? '').split('?')[0] !== '/v1/traces') return sendError(res, 404, 'NOT_FOUND', 'Only POST /v1/traces is served here')
    if (!hasBearer(req, token)) return sendError(res, 401, 'FORBIDDEN', 'Missing or wrong token (OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<token>)')
    handleOtlpTraces(req, res, { maxBody, ingest: opts.ingest })
  })
  server.on('clientError', (_e, socket) => socket.destroy())
  const envPort = Number(process.env.RECALLSCOPE_OTLP_PORT)
  const wanted = opts.port ?? (Number.isInteger(envPort) && envPort >= 0 && envPort <= 65535 && process.env.RECALLSCOPE_OTLP_PORT ? envPort : OTLP_DEFAULT_PORT)
  try {
    await listen(server, wanted)
  } catch (e) {
    // The default port is often a local collector's: take a free one rather than fail.
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || wanted === 0) throw e
    await listen(server, 0)
  }
  port = (server.address() as AddressInfo).port
  // Never what keeps the process alive (the app quits when its windows close).
  server.unref()
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    port,
    token,
    close: () => closeServer(server),
  }
}
