/**
 * Browser mode: the same handlers over loopback HTTP. 127.0.0.1 only, a random
 * token per run (Authorization: Bearer), Host and Origin checks against DNS
 * rebinding, the built renderer served as static files with the app's CSP.
 *
 *   POST /api/<channel>   body: JSON input   → 200 Result JSON
 *   GET  /api/progress    text/event-stream of job progress (Bearer token), and other
 *                         pushed events as named events (`event: <stream>`)
 *   POST /v1/traces       OTLP/HTTP JSON traces (Bearer token): live recall events (otlpRoute.ts)
 *   GET  /*               the renderer (index.html for unknown paths)
 */
import http from 'node:http'
import fs from 'node:fs'
import path from 'node:path'
import crypto from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { isChannel } from '../api/register'
import type { Dispatch } from '../api/register'
import type { JobManager } from '../api/app'
import { CONTENT_SECURITY_POLICY } from '../csp'
import { parseJsonSafe } from '../safety/json'
import { handleOtlpTraces, readBody, type OtlpIngest } from './otlpRoute'
import { closeServer, hasBearer, sendError } from './respond'

export interface ServeOptions {
  dispatch: Dispatch
  jobs?: JobManager
  /** Other pushed events (App.onPush): sent on GET /api/progress as `event: <stream>` (job progress stays unnamed). */
  onPush?: (l: (stream: string, payload: unknown) => void) => () => void
  /** Folder of the built renderer (index.html + assets). */
  rendererDir: string
  /** @default 0 (a free port) */
  port?: number
  /** @default random 32 bytes, hex */
  token?: string
  /** Largest accepted request body. @default 16 MiB */
  maxBodyBytes?: number
  /**
   * Bounds on slow clients (slowloris): all headers within `headersMs`, the whole request
   * within `requestMs`, both checked every `checkMs`. @default { headersMs: 10_000, requestMs: 60_000, checkMs: 1_000 }
   */
  timeouts?: { headersMs?: number; requestMs?: number; checkMs?: number }
  /** Largest accepted header block. @default 16 KiB */
  maxHeaderBytes?: number
  log?: (line: string) => void
  /** Takes OTLP/HTTP JSON posted to /v1/traces (live recall events); absent: 404 there. */
  otlp?: OtlpIngest
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

/** JSON for a channel's Result; a value JSON cannot hold (BigInt, a cycle) is a typed error, not a crash. */
function resultJson(r: unknown): { ok: true; text: string } | { ok: false; message: string } {
  try {
    return { ok: true, text: JSON.stringify(r) }
  } catch (e) {
    return { ok: false, message: `The result could not be encoded (${(e as Error)?.name ?? 'error'})` }
  }
}

/**
 * A reply written straight to the socket, for requests Node's parser rejected before any
 * `req`/`res` exist (bad request line, huge headers, timeouts). Always closes the connection.
 */
function rawReply(socket: Duplex, status: number, reason: string, code: string, message: string): void {
  if (!socket.writable || socket.destroyed) return void socket.destroy()
  const body = JSON.stringify({ ok: false, error: { code, message } })
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  )
}

/** What a parser/socket error means for the client: status, reason phrase, code, message. */
function classifyClientError(e: NodeJS.ErrnoException): [number, string, string, string] {
  switch (e.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', 'BAD_INPUT', 'Request headers are too large']
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return [408, 'Request Timeout', 'BAD_INPUT', 'The request did not arrive in time']
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return [400, 'Bad Request', 'BAD_INPUT', 'Bad request framing']
    default:
      return [400, 'Bad Request', 'BAD_INPUT', 'Malformed HTTP request']
  }
}

/** What the request handlers share: the options, the token, and the port once listening (Host / Origin checks). */
interface ServerCtx {
  opts: ServeOptions
  token: string
  maxBody: number
  rendererDir: string
  port: number
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const token = opts.token ?? crypto.randomBytes(32).toString('hex')
  if (token.length < 8) throw new Error('--token must be at least 8 characters')
  const ctx: ServerCtx = { opts, token, maxBody: opts.maxBodyBytes ?? 16 * 1024 * 1024, rendererDir: path.resolve(opts.rendererDir), port: 0 }
  const server = createLoopbackServer(ctx)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve())
  })
  const port = (ctx.port = (server.address() as AddressInfo).port)
  const url = `http://127.0.0.1:${port}/#token=${token}`
  opts.log?.(`recallscope is serving on ${url}`)
  return {
    url,
    port,
    token,
    close: () => closeServer(server),
  }
}

/** The HTTP server with its bounds on slow clients and header size; every request and client error contained. */
function createLoopbackServer(ctx: ServerCtx): http.Server {
  const { opts } = ctx
  const headersMs = opts.timeouts?.headersMs ?? 10_000
  const requestMs = Math.max(opts.timeouts?.requestMs ?? 60_000, headersMs)
  const server = http.createServer(
    {
      maxHeaderSize: opts.maxHeaderBytes ?? 16 * 1024,
      headersTimeout: headersMs,
      requestTimeout: requestMs,
      connectionsCheckingInterval: opts.timeouts?.checkMs ?? 1_000,
    },
    (req, res) => {
      // Nothing a client sends may take the process down: every path below is contained.
      req.on('error', () => {})
      res.on('error', () => {})
      try {
        routeRequest(ctx, req, res)
      } catch (e) {
        const bad = e instanceof URIError || e instanceof TypeError
        sendError(res, bad ? 400 : 500, bad ? 'BAD_INPUT' : 'INTERNAL', bad ? 'Malformed request' : 'The request could not be handled')
        opts.log?.(`request failed: ${(e as Error)?.message ?? String(e)}`)
      }
    },
  )
  // Parser errors (bad request line, header overflow) and timeouts: a typed 4xx, never a crash.
  server.on('clientError', (e: NodeJS.ErrnoException, socket: Duplex) => {
    if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return void socket.destroy()
    const [status, reason, code, message] = classifyClientError(e)
    rawReply(socket, status, reason, code, message)
  })
  return server
}

/** Host and Origin checks, then the API, the OTLP route or the renderer's files. */
function routeRequest(ctx: ServerCtx, req: http.IncomingMessage, res: http.ServerResponse): void {
  const port = ctx.port
  // DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends its own Host.
  if (!req.headers.host || !new Set([`127.0.0.1:${port}`, `localhost:${port}`]).has(req.headers.host))
    return sendError(res, 403, 'FORBIDDEN', 'Bad Host header')
  const origin = req.headers.origin
  if (origin !== undefined && !new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]).has(origin))
    return sendError(res, 403, 'FORBIDDEN', 'Cross-origin requests are not allowed')
  // Only origin-form targets ("/path?query"): an absolute URL or "*" is not ours to parse.
  const target = req.url ?? '/'
  if (!target.startsWith('/') || target.startsWith('//')) return sendError(res, 400, 'BAD_INPUT', 'Bad request target')
  let url: URL
  try {
    url = new URL(target, `http://127.0.0.1:${port}`)
  } catch {
    return sendError(res, 400, 'BAD_INPUT', 'Bad request target')
  }
  if (url.pathname.startsWith('/api/')) return handleApi(ctx, req, res, url)
  if (url.pathname === '/v1/traces') {
    if (!hasBearer(req, ctx.token)) return sendError(res, 401, 'FORBIDDEN', 'Missing or wrong token (Authorization: Bearer <token>)')
    return handleOtlpTraces(req, res, { maxBody: ctx.maxBody, ingest: ctx.opts.otlp })
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'BAD_INPUT', 'Method not allowed')
  return serveStatic(ctx, res, url.pathname)
}

/** POST /api/<channel> (the body is the input, the answer the Result) and GET /api/progress. */
function handleApi(ctx: ServerCtx, req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
  if (!hasBearer(req, ctx.token)) return sendError(res, 401, 'FORBIDDEN', 'Missing or wrong token (Authorization: Bearer <token>)')
  let channel: string
  try {
    channel = decodeURIComponent(url.pathname.slice('/api/'.length))
  } catch {
    return sendError(res, 400, 'BAD_INPUT', 'Bad percent-encoding in the channel name')
  }
  if (channel === 'progress' && req.method === 'GET') return streamProgress(ctx, req, res)
  if (req.method !== 'POST') return sendError(res, 405, 'BAD_INPUT', 'Use POST /api/<channel>')
  if (!isChannel(channel)) return sendError(res, 404, 'NOT_FOUND', `Unknown channel: ${channel.slice(0, 100)}`)
  readBody(req, res, ctx.maxBody, (buf) => {
    const text = buf.toString('utf8')
    let input: unknown = {}
    if (text.trim() !== '') {
      const parsed = parseJsonSafe(text)
      if (!parsed.ok) return sendError(res, 400, 'BAD_INPUT', `Body is not valid JSON (${parsed.reason})`)
      input = parsed.value
    }
    ctx.opts
      .dispatch(channel, input)
      .then((r) => {
        const j = resultJson(r)
        if (!j.ok) return sendError(res, 500, 'INTERNAL', j.message)
        if (res.headersSent || res.destroyed) return
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          'content-length': Buffer.byteLength(j.text),
        })
        res.end(j.text)
      })
      .catch((e) => sendError(res, 500, 'INTERNAL', String((e as Error)?.message ?? e)))
  })
}

/** GET /api/progress: job progress as unnamed events, other pushed streams as named ones, a ping every 15 s. */
function streamProgress(ctx: ServerCtx, req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' })
  res.write(': connected\n\n')
  const off = ctx.opts.jobs?.onProgress((p) => res.write(`data: ${JSON.stringify(p)}\n\n`))
  // A stream name is ours (no newline can reach the frame); a payload JSON cannot encode is skipped, not fatal.
  const offPush = ctx.opts.onPush?.((stream, payload) => {
    const j = resultJson(payload)
    if (j.ok && /^[\w.:-]+$/.test(stream)) res.write(`event: ${stream}\ndata: ${j.text}\n\n`)
  })
  const ping = setInterval(() => res.write(': ping\n\n'), 15_000)
  req.on('close', () => {
    clearInterval(ping)
    off?.()
    offPush?.()
  })
}

/** A file of the built renderer (index.html for unknown paths: client-side routes), never outside its folder. */
function serveStatic(ctx: ServerCtx, res: http.ServerResponse, pathname: string): void {
  const rendererDir = ctx.rendererDir
  let rel: string
  try {
    rel = decodeURIComponent(pathname)
  } catch {
    return sendError(res, 400, 'BAD_INPUT', 'Bad path')
  }
  let file = path.resolve(rendererDir, `.${rel}`)
  if (!file.startsWith(rendererDir + path.sep) && file !== rendererDir) return sendError(res, 403, 'FORBIDDEN', 'Outside the app folder')
  let isFile = false
  try {
    isFile = fs.statSync(file).isFile()
  } catch {
    /* missing: the app's index.html answers (client-side routes) */
  }
  if (!isFile) file = path.join(rendererDir, 'index.html')
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
  // A file removed mid-read must end this response, not the process.
  fs.createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res)
}
