/**
 * Handlers for the Library's Connect form: test a Postgres connection, open it
 * (from the form or a saved connection), list and forget saved connections.
 * Passwords come in (desktop app only) and never go back out: every reply and
 * error carries the URL without its password.
 */
import { RecallscopeError } from '../../../shared/result'
import type { PgConnectionInput, PgTarget } from '../../../shared/contract'
import type { App } from '../app'
import { pgUrlOf } from '../pgConnections'
import type { Handlers } from '../register'

type PgChannels = 'pg.test' | 'pg.connect' | 'pg.saved' | 'pg.forget'

/** The URL for a form's input; browser mode refuses a password from the page (PGPASSWORD or the command line give it). */
function urlFor(app: App, conn: PgConnectionInput): ReturnType<typeof pgUrlOf> {
  const r = pgUrlOf(conn)
  if (r.password && app.mode === 'browser')
    throw new RecallscopeError(
      'BAD_INPUT',
      'In browser mode the password is not taken from the page: set PGPASSWORD before starting recallscope, or give the URL on the command line (npm start -- postgres://…)',
    )
  // A URL naming local files (sslrootcert, sslkey, passfile…) has the driver read them: desktop needs the dialog's grant.
  app.confine(r.url, 'pg.connect', 'read')
  return r
}

/**
 * The URL to connect with for the form's fields or a saved connection (pg.connect and the mapping
 * channels): the form's password refused in browser mode, a saved one decrypted here, in main.
 * `typed` is the form's URL and password when the fields were given (what saving the connection needs).
 */
export function urlOfTarget(app: App, t: PgTarget): { url: string; typed: ReturnType<typeof pgUrlOf> | null } {
  if (t.conn) {
    const typed = urlFor(app, t.conn)
    return { url: typed.url, typed }
  }
  return { url: app.connections.urlOf(t.savedId!), typed: null }
}

export function postgresHandlers(app: App): Pick<Handlers, PgChannels> {
  return {
    // Read in a store host worker on the server and in the app (App.inspect): a server that never answers wedges only that worker.
    'pg.test': (i) => app.inspect({ kind: 'pgTest', url: urlFor(app, i.conn).url, nativeBinding: app.nativeBinding }),
    'pg.connect': async (i) => {
      const { url, typed: target } = urlOfTarget(app, i)
      if (i.saveAs && target) app.connections.assertCanSave(target.password)
      const info = await app.openStore(url)
      if (i.saveAs && target) app.connections.save(i.saveAs, target.url, target.password)
      return info
    },
    'pg.saved': () => app.connections.list(),
    'pg.forget': (i) => ({ removed: app.connections.forget(i.id) }),
  }
}
