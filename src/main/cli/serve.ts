import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'
import { HostedApp } from '../host/hostedApp'
import { createHostedDispatcher } from '../host/dispatch'
import { startServer } from '../server/http'
import { hostedOtlpIngest } from '../api/otlpLive'
import { appVersion, rendererDir } from '../paths'
import { ensureDemo } from '../demoDb'
import { optionalInt, readMapping, type Command } from './args'
import { removeTemps } from '../safety/tempFiles'
import { assertWorkspaceTarget } from '../safety/fileIdentity'

/** How long an orderly stop may take before the process is ended by its signal. */
const STOP_GRACE_MS = 1500

/** End the process by `signal` with its default action (exit status 128 + signal number), temp files removed first. */
function killBySignal(signal: NodeJS.Signals): void {
  removeTemps()
  process.removeAllListeners(signal)
  process.kill(process.pid, signal)
}

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
    // A workspace that is the agent DB (or its side file) by another name is refused here, before the store host
    // worker starts (the store checks it again when it opens; safety/fileIdentity).
    if (typeof ctx.values.db === 'string' && typeof ctx.values.workspace === 'string' && fs.statSync(ctx.values.db, { throwIfNoEntry: false })?.isFile())
      assertWorkspaceTarget(ctx.values.workspace, ctx.values.db)
    const app = new HostedApp({ mode: 'browser', version: appVersion() })
    if (ctx.values.demo && typeof ctx.values.db !== 'string' && !fs.existsSync(app.demoPath) && !ctx.json)
      ctx.io.err(`recallscope: generating the demo database in ${app.demoPath} (first run only, a few seconds)…`)
    const db = typeof ctx.values.db === 'string' ? ctx.values.db : ctx.values.demo ? ensureDemo(app.demoPath) : undefined
    const workspace = typeof ctx.values.workspace === 'string' ? ctx.values.workspace : undefined
    // What the user typed on the command line is theirs to name again from the browser.
    app.grants.grant(db, 'command line', 'read')
    app.grants.grant(workspace, 'command line', 'write')
    // Opened in its store host worker, like every store call of this process (host/hostedApp.ts).
    if (db) {
      try {
        await app.openStore(db, { workspacePath: workspace, mapping: readMapping(ctx) })
      } catch (e) {
        await app.dispose()
        throw e
      }
    }
    const dispatch = createHostedDispatcher(app, {
      onError: (ch, e) => ctx.io.err(`[${ch}] ${e instanceof Error ? (e.stack ?? e.message) : JSON.stringify(e)}`),
    })
    let server: Awaited<ReturnType<typeof startServer>>
    try {
      server = await startServer({
        dispatch,
        jobs: app.jobs,
        onPush: (l) => app.onPush(l),
        rendererDir: renderer,
        port,
        token,
        otlp: hostedOtlpIngest(dispatch),
      })
    } catch (e) {
      await app.dispose()
      const code = (e as NodeJS.ErrnoException).code
      if (code === 'EADDRINUSE') throw new RecallscopeError('CONFLICT', `--port ${port}: the port is in use; pick another or omit --port for a free one`)
      if (code === 'EACCES') throw new RecallscopeError('FORBIDDEN', `--port ${port}: not allowed to listen there; use a port above 1023 or omit --port`)
      throw e
    }
    app.liveEndpoint = { url: `http://127.0.0.1:${server.port}/v1/traces`, token: server.token }
    // --log PATH: added to the store's events and remembered in its workspace (re-read on every open).
    const logs = Array.isArray(ctx.values.log) ? ctx.values.log.map(String) : []
    try {
      if (logs.length && !app.openInfo()) throw new RecallscopeError('BAD_INPUT', '--log needs a store: give --db FILE (or --demo)')
      for (const p of logs) {
        app.grants.grant(p, 'command line', 'read')
        const r = await dispatch('trace.addLog', { path: p })
        if (!r.ok) throw new RecallscopeError(r.error.code, r.error.message)
      }
    } catch (e) {
      await server.close()
      await app.dispose()
      throw e
    }
    if (ctx.json)
      ctx.io.out(
        JSON.stringify({ ok: true, url: server.url, port: server.port, token: server.token, otlp: app.liveEndpoint.url, db: app.openInfo()?.path ?? null }),
      )
    else
      ctx.io.out(
        `recallscope (browser mode) on ${server.url}${db ? `\n  database: ${app.openInfo()?.path}` : ''}\n  live OTLP traces: POST ${app.liveEndpoint.url} (same token)\n  Ctrl+C to stop`,
      )
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'))
      process.once('SIGTERM', () => resolve('SIGTERM'))
    })
    // However stuck a store is, the process stops: a worker blocked in a native call (a SQLite query
    // that never ends) ignores termination and would hold the exit forever, so then, and if the
    // orderly stop takes over STOP_GRACE_MS, the signal is raised again with its default action.
    const force = setTimeout(() => killBySignal(signal), STOP_GRACE_MS)
    force.unref()
    await server.close()
    const stuck = await app.dispose()
    removeTemps() // an import job cut short by Ctrl+C leaves nothing behind
    if (stuck > 0) killBySignal(signal)
    clearTimeout(force)
    return 0
  },
}
