import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'
import { App } from '../api/app'
import { createHandlers } from '../api/handlers'
import { createDispatcher } from '../api/register'
import { startServer } from '../server/http'
import { createOtlpIngest } from '../api/otlpLive'
import { eventLogOf } from '../events/eventLog'
import { appVersion, rendererDir } from '../paths'
import { ensureDemo } from '../demoDb'
import { optionalInt, readMapping, type Command } from './args'
import { removeTemps } from '../safety/tempFiles'

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Browser mode: serve the app on 127.0.0.1 with a per-run token',
  usage: 'recallscope serve [--db FILE [--map MAPPING.json] | --demo] [--log FILE|FOLDER]… [--port N] [--token T] [--json]',
  options: {
    db: { type: 'string' },
    map: { type: 'string' },
    demo: { type: 'boolean' },
    port: { type: 'string' },
    token: { type: 'string' },
    workspace: { type: 'string' },
    log: { type: 'string', multiple: true },
  },
  async run(ctx) {
    // Flags first, each refused in one line naming it (issue 10), before anything is opened.
    const port = optionalInt(ctx, 'port', 0)
    if (port !== undefined && port > 65535) throw new RecallscopeError('BAD_INPUT', `--port must be 0–65535 (got ${port}); 0 picks a free port`)
    const token = typeof ctx.values.token === 'string' ? ctx.values.token : undefined
    if (token !== undefined && (token.length < 8 || /\s/.test(token)))
      throw new RecallscopeError('BAD_INPUT', '--token must be at least 8 characters, without spaces')
    // Never print a URL that answers 500: refuse before listening (bin/recallscope.cjs builds out/ first).
    const renderer = rendererDir()
    if (!fs.existsSync(path.join(renderer, 'index.html')))
      throw new RecallscopeError('INTERNAL', `the renderer is not built (${renderer} has no index.html): run \`npm run build\``)
    const app = new App({ mode: 'browser', version: appVersion() })
    if (ctx.values.demo && typeof ctx.values.db !== 'string' && !fs.existsSync(app.demoPath) && !ctx.json)
      ctx.io.err(`recallscope: generating the demo database in ${app.demoPath} (first run only, a few seconds)…`)
    const db = typeof ctx.values.db === 'string' ? ctx.values.db : ctx.values.demo ? ensureDemo(app.demoPath) : undefined
    const workspace = typeof ctx.values.workspace === 'string' ? ctx.values.workspace : undefined
    // What the user typed on the command line is theirs to name again from the browser.
    app.grants.grant(db, 'command line', 'read')
    app.grants.grant(workspace, 'command line', 'write')
    if (db) app.open(db, { workspacePath: workspace, mapping: readMapping(ctx) })
    // --log PATH: added to the store's events and remembered in its workspace (re-read on every open).
    const logs = Array.isArray(ctx.values.log) ? ctx.values.log.map(String) : []
    if (logs.length && !app.current) throw new RecallscopeError('BAD_INPUT', '--log needs a store: give --db FILE (or --demo)')
    for (const p of logs) {
      app.grants.grant(p, 'command line', 'read')
      eventLogOf(app.requireStore()).addLogFile(p, { remember: true })
    }
    const dispatch = createDispatcher(createHandlers(app), {
      onError: (ch, e) => ctx.io.err(`[${ch}] ${e instanceof Error ? (e.stack ?? e.message) : JSON.stringify(e)}`),
    })
    let server: Awaited<ReturnType<typeof startServer>>
    try {
      server = await startServer({ dispatch, jobs: app.jobs, rendererDir: renderer, port, token, otlp: createOtlpIngest(app) })
    } catch (e) {
      app.close()
      const code = (e as NodeJS.ErrnoException).code
      if (code === 'EADDRINUSE') throw new RecallscopeError('CONFLICT', `--port ${port}: the port is in use; pick another or omit --port for a free one`)
      if (code === 'EACCES') throw new RecallscopeError('FORBIDDEN', `--port ${port}: not allowed to listen there; use a port above 1023 or omit --port`)
      throw e
    }
    app.liveEndpoint = { url: `http://127.0.0.1:${server.port}/v1/traces`, token: server.token }
    if (ctx.json)
      ctx.io.out(
        JSON.stringify({ ok: true, url: server.url, port: server.port, token: server.token, otlp: app.liveEndpoint.url, db: app.current?.path ?? null }),
      )
    else
      ctx.io.out(
        `recallscope (browser mode) on ${server.url}${db ? `\n  database: ${app.current?.path}` : ''}\n  live OTLP traces: POST ${app.liveEndpoint.url} (same token)\n  Ctrl+C to stop`,
      )
    await new Promise<void>((resolve) => {
      const stop = () => resolve()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
    await server.close()
    app.close()
    removeTemps() // an import job cut short by Ctrl+C leaves nothing behind
    return 0
  },
}
