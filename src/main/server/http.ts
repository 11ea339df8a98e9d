/**
 * Browser mode: the same handlers over loopback HTTP. 127.0.0.1 only, a random
 * token per run (Authorization: Bearer), Host and Origin checks against DNS
 * rebinding, the built renderer served as static files with the app's CSP.
 *
 *   POST /api/<channel>   body: JSON input   → 200 Result JSON
 *   GET  /api/progress    text/event-stream of job progress (Bearer token)
 *   GET  /*               the renderer (index.html for unknown paths)
 */
import http from 'node:http'
import fs from 'node:fs'
import path from 'node:path'
import crypto from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { Dispatch } from '../api/register'
import type { JobManager } from '../api/app'
import { CONTENT_SECURITY_POLICY } from '../csp'

export interface ServeOptions {
  dispatch: Dispatch
  jobs?: JobManager
  /** Folder of the built renderer (index.html + assets). */
  rendererDir: string
  /** @default 0 (a free port) */
  port?: number
  /** @default random 32 bytes, hex */
  token?: string
  /** Largest accepted request body. @default 16 MiB */
  maxBodyBytes?: number
  log?: (line: string) => void
}

export interface RunningServer {
  url: string
  port: number
  token: string
  close(): Promise<void>
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && crypto.timingSafeEqual(x, y)
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(data),
  })
  res.end(data)
}

function sendError(res: http.ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { ok: false, error: { code, message } })
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const token = opts.token ?? crypto.randomBytes(32).toString('hex')
  if (token.length < 8) throw new Error('--token must be at least 8 characters')
  const maxBody = opts.maxBodyBytes ?? 16 * 1024 * 1024
  const rendererDir = path.resolve(opts.rendererDir)
  let port = 0

  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`])
  const allowedOrigins = () => new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`])

  const server = http.createServer((req, res) => {
    // DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends its own Host.
    if (!req.headers.host || !allowedHosts().has(req.headers.host)) return sendError(res, 403, 'FORBIDDEN', 'Bad Host header')
    const origin = req.headers.origin
    if (origin !== undefined && !allowedOrigins().has(origin)) return sendError(res, 403, 'FORBIDDEN', 'Cross-origin requests are not allowed')
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`)
    if (url.pathname.startsWith('/api/')) return handleApi(req, res, url)
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'BAD_INPUT', 'Method not allowed')
    return serveStatic(res, url.pathname)
  })

  function authorized(req: http.IncomingMessage): boolean {
    const h = req.headers.authorization ?? ''
    const m = /^Bearer (.+)$/.exec(h)
    return !!m && safeEqual(m[1], token)
  }

  function handleApi(req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
    if (!authorized(req)) return sendError(res, 401, 'FORBIDDEN', 'Missing or wrong token (Authorization: Bearer <token>)')
    const channel = decodeURIComponent(url.pathname.slice('/api/'.length))
    if (channel === 'progress' && req.method === 'GET') return streamProgress(req, res)
    if (req.method !== 'POST') return sendError(res, 405, 'BAD_INPUT', 'Use POST /api/<channel>')
    const chunks: Buffer[] = []
    let size = 0
    let tooBig = false
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > maxBody) {
        tooBig = true
        req.destroy()
        return
      }
      chunks.push(c)
    })
    req.on('error', () => {
      if (tooBig && !res.headersSent) sendError(res, 413, 'BAD_INPUT', `Request body over ${maxBody} bytes`)
    })
    req.on('end', () => {
      if (tooBig) return sendError(res, 413, 'BAD_INPUT', `Request body over ${maxBody} bytes`)
      const text = Buffer.concat(chunks).toString('utf8')
      let input: unknown = {}
      if (text.trim() !== '') {
        try {
          input = JSON.parse(text)
        } catch {
          return sendJson(res, 400, { ok: false, error: { code: 'BAD_INPUT', message: 'Body is not valid JSON' } })
        }
      }
      opts
        .dispatch(channel, input)
        .then((r) => sendJson(res, 200, r))
        .catch((e) => sendError(res, 500, 'INTERNAL', String((e as Error)?.message ?? e)))
    })
  }

  function streamProgress(req: http.IncomingMessage, res: http.ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' })
    res.write(': connected\n\n')
    const off = opts.jobs?.onProgress((p) => res.write(`data: ${JSON.stringify(p)}\n\n`))
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000)
    req.on('close', () => {
      clearInterval(ping)
      off?.()
    })
  }

  function serveStatic(res: http.ServerResponse, pathname: string): void {
    let rel: string
    try {
      rel = decodeURIComponent(pathname)
    } catch {
      return sendError(res, 400, 'BAD_INPUT', 'Bad path')
    }
    let file = path.resolve(rendererDir, `.${rel}`)
    if (!file.startsWith(rendererDir + path.sep) && file !== rendererDir) return sendError(res, 403, 'FORBIDDEN', 'Outside the app folder')
    if (!fs.existsSync(file) || fs.statSync(file).isDirectory()) file = path.join(rendererDir, 'index.html')
    if (!fs.existsSync(file)) {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
      return void res.end(`The renderer is not built: ${rendererDir} has no index.html. Run \`npm run build\`.`)
    }
    const type = MIME[path.extname(file)] ?? 'application/octet-stream'
    const headers: Record<string, string> = {
      'content-type': type,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': type.startsWith('text/html') ? 'no-store' : 'public, max-age=3600',
    }
    if (type.startsWith('text/html')) {
      headers['content-security-policy'] = CONTENT_SECURITY_POLICY
      headers['x-frame-options'] = 'DENY'
    }
    res.writeHead(200, headers)
    fs.createReadStream(file).pipe(res)
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve())
  })
  port = (server.address() as AddressInfo).port
  const url = `http://127.0.0.1:${port}/#token=${token}`
  opts.log?.(`recallscope is serving on ${url}`)
  return {
    url,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}
