/**
 * The app as the HTTP bridge and IPC drive it, for tests that call its channels: an App in browser mode with
 * its workspace home in `dataDir`, `db` opened, and the dispatcher over every handler. Framework-free.
 */
import { App } from '../../src/main/api/app'
import { createHandlers } from '../../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../../src/main/api/register'

/** `db` opened in a fresh App (home `dataDir`) and the dispatcher to call its channels; close the app when done. */
export function openTestApp(db: string, dataDir: string): { app: App; call: Dispatch } {
  const app = new App({ mode: 'browser', dataDir })
  app.open(db)
  return { app, call: createDispatcher(createHandlers(app)) }
}
