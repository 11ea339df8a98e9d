/**
 * `POST /v1/traces` (OTLP/HTTP, JSON encoding) for `serve` and the desktop app's loopback
 * listener, and the bounded request-body reader both servers use. The caller has checked
 * Host/Origin and the Bearer token (an exporter sends it through
 * `OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<token>`).
 *
 * Answers as the OTLP/HTTP spec asks: 200 with an `ExportTraceServiceResponse` JSON
 * (`partialSuccess.rejectedSpans` when some spans were malformed), 415 for protobuf
 * (`Content-Type: application/x-protobuf`: set `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json`),
 * 400 for a body that is not JSON, 413 over the size limit, 503 when no store is open.
 * `Content-Encoding: gzip` bodies are inflated (bounded by the same limit).
 */
import type http from 'node:http'
import zlib from 'node:zlib'
import { RecallscopeError } from '../../shared/result'
import { parseJsonSafe } from '../safety/json'
import type { LiveReceipt } from '../events/otlp/live'
import { sendError, sendJson } from './respond'

/** Takes a parsed OTLP JSON payload; throws NO_DB when no store is open. */
export type OtlpIngest = (payload: unknown) => Promise<LiveReceipt> | LiveReceipt

/**
 * Collect a request body up to `maxBody` bytes, then call `done`. Over the limit: 413 and
 * the connection closed after a short drain (so the client reads the answer, not a reset).
 */
export function readBody(req: http.IncomingMessage, res: http.ServerResponse, maxBody: number, done: (body: Buffer) => void): void {
  const tooBig = () => {
    res.setHeader('connection', 'close')
    sendError(res, 413, 'BAD_INPUT', `Request body over ${maxBody} bytes`)
    req.removeAllListeners('data')
    req.removeAllListeners('end')
    let drained = 0
    const stop = setTimeout(() => req.socket.destroy(), 2_000)
    stop.unref()
    req.on('data', (c: Buffer) => {
      drained += c.length
      if (drained > 4 * maxBody) req.socket.destroy()
    })
    req.on('end', () => clearTimeout(stop))
    req.resume()
  }
  const declared = Number(req.headers['content-length'] ?? NaN)
  if (Number.isFinite(declared) && declared > maxBody) return tooBig()
  const chunks: Buffer[] = []
  let size = 0
  req.on('data', (c: Buffer) => {
    size += c.length
    if (size > maxBody) return tooBig()
    chunks.push(c)
  })
  req.on('end', () => {
    if (size <= maxBody) done(Buffer.concat(chunks))
  })
}

/** Handle one authorized request to /v1/traces. */
export function handleOtlpTraces(req: http.IncomingMessage, res: http.ServerResponse, opts: { maxBody: number; ingest: OtlpIngest | undefined }): void {
  if (req.method !== 'POST') return sendError(res, 405, 'BAD_INPUT', 'Use POST /v1/traces')
  if (!opts.ingest) return sendError(res, 404, 'NOT_FOUND', 'This server does not accept OTLP traces')
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase()
  if (type === 'application/x-protobuf' || type === 'application/protobuf')
    return sendError(res, 415, 'BAD_INPUT', 'OTLP protobuf is not accepted: send OTLP/HTTP JSON (set OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json)')
  if (type !== 'application/json')
    return sendError(res, 415, 'BAD_INPUT', `Content-Type must be application/json (OTLP/HTTP JSON), not ${type.slice(0, 100) || 'none'}`)
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase()
  if (encoding !== 'identity' && encoding !== 'gzip')
    return sendError(res, 415, 'BAD_INPUT', `Content-Encoding ${encoding.slice(0, 50)} is not supported (use gzip or none)`)
  readBody(req, res, opts.maxBody, (raw) => {
    let body = raw
    if (encoding === 'gzip') {
      try {
        body = zlib.gunzipSync(raw, { maxOutputLength: opts.maxBody })
      } catch {
        return sendError(res, 400, 'BAD_INPUT', `The gzip body does not inflate (or inflates past ${opts.maxBody} bytes)`)
      }
    }
    const parsed = parseJsonSafe(body.toString('utf8'))
    if (!parsed.ok) return sendError(res, 400, 'BAD_INPUT', `Body is not valid JSON (${parsed.reason})`)
    Promise.resolve()
      .then(() => opts.ingest!(parsed.value))
      .then((r) =>
        sendJson(
          res,
          200,
          r.rejected > 0
            ? {
                partialSuccess: {
                  rejectedSpans: String(r.rejected),
                  errorMessage: r.problems
                    .map((p) => p.why)
                    .join('; ')
                    .slice(0, 2000),
                },
              }
            : {},
        ),
      )
      .catch((e: unknown) => {
        if (e instanceof RecallscopeError) return sendError(res, e.code === 'NO_DB' ? 503 : 400, e.code, e.message)
        sendError(res, 500, 'INTERNAL', (e as Error)?.message ?? String(e))
      })
  })
}
