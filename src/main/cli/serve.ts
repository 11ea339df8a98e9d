import fs from 'node:fs'
import { App } from '../api/app'
import { createHandlers } from '../api/handlers'
import { createDispatcher } from '../api/register'
import { startServer } from '../server/http'
import { appVersion, rendererDir } from '../paths'
import { ensureDemo } from '../demoDb'
import { optionalInt, type Command } from './index'

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Browser mode: serve the app on 127.0.0.1 with a per-run token',
  usage: 'recallscope serve [--db FILE | --demo] [--port N] [--token T] [--json]',
  options: { db: { type: 'string' }, demo: { type: 'boolean' }, port: { type: 'string' }, token: { type: 'string' }, workspace: { type: 'string' } },
  async run(ctx) {
    const app = new App({ mode: 'browser', version: appVersion() })
    if (ctx.values.demo && typeof ctx.values.db !== 'string' && !fs.existsSync(app.demoPath) && !ctx.json)
      ctx.io.err(`recallscope: generating the demo database in ${app.demoPath} (first run only, a few seconds)…`)
    const db = typeof ctx.values.db === 'string' ? ctx.values.db : ctx.values.demo ? ensureDemo(app.demoPath) : undefined
    const workspace = typeof ctx.values.workspace === 'string' ? ctx.values.workspace : undefined
    // What the user typed on the command line is theirs to name again from the browser.
    app.grants.grant(db, 'command line')
    app.grants.grant(workspace, 'command line')
    if (db) app.open(db, { workspacePath: workspace })
    const dispatch = createDispatcher(createHandlers(app), { onError: (ch, e) => ctx.io.err(`[${ch}] ${(e as Error)?.stack ?? e}`) })
    const server = await startServer({
      dispatch,
      jobs: app.jobs,
      rendererDir: rendererDir(),
      port: optionalInt(ctx, 'port', 0),
      token: typeof ctx.values.token === 'string' ? ctx.values.token : undefined,
    })
    if (ctx.json) ctx.io.out(JSON.stringify({ ok: true, url: server.url, port: server.port, token: server.token, db: app.current?.path ?? null }))
    else ctx.io.out(`recallscope (browser mode) on ${server.url}${db ? `\n  database: ${app.current?.path}` : ''}\n  Ctrl+C to stop`)
    await new Promise<void>((resolve) => {
      const stop = () => resolve()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
    await server.close()
    app.close()
    return 0
  },
}
