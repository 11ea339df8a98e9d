/**
 * What both loopback servers (browser mode's http.ts and the desktop app's OTLP listener)
 * answer with: JSON bodies, typed errors, a bearer-token check, and a close that also
 * drops keep-alive connections.
 */
import crypto from 'node:crypto'
import type http from 'node:http'

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return
  const data = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(data),
  })
  res.end(data)
}

/** `{ok: false, error: {code, message}}` with a status; nothing once a reply has started. */
export function sendError(res: http.ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { ok: false, error: { code, message } })
}

/** Does the request carry `Authorization: Bearer <token>`? (constant-time compare) */
export function hasBearer(req: http.IncomingMessage, token: string): boolean {
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')
  const x = Buffer.from(m?.[1] ?? '')
  const y = Buffer.from(token)
  return !!m && x.length === y.length && crypto.timingSafeEqual(x, y)
}

/** Stop listening and end open (keep-alive) connections. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections?.()
    server.close(() => resolve())
  })
}
