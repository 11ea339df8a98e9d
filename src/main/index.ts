/**
 * Electron main: app lifecycle only. Everything with logic lives in plain Node
 * modules (api/, store/, …) shared with the CLI and browser mode; this file
 * wires them to Electron: one instance, one window, the DB given on the
 * command line (`npm start -- FILE`) or the demo DB, IPC, security guards.
 */
import fs from 'node:fs'
import path from 'node:path'
import { app, BrowserWindow, dialog, ipcMain, safeStorage } from 'electron'
import { HostedApp } from './host/hostedApp'
import { createHostedDispatcher } from './host/dispatch'
import { hostedOtlpIngest } from './api/otlpLive'
import { startOtlpListener, type OtlpListener } from './server/otlpListener'
import { registerIpc } from './ipc'
import { appRoot, appVersion } from './paths'
import { installSecurity } from './security'
import type { PickDialog } from './safety/pathGrants'
import type { WritePrompt } from './safety/writeConsent'
import { removeTemps } from './safety/tempFiles'
import { redactUrl } from './store/postgres/url'
import { createMainWindow, loadApp, shellFiles } from './window'

/**
 * The better-sqlite3 addon built for Electron's ABI, kept beside the Node
 * build (scripts/prestart.cjs makes it) so `npm test` and `npm start` never
 * fight over node_modules/better-sqlite3/build. Undefined when absent: then
 * better-sqlite3 loads its own build, which works only if that one was built
 * for Electron.
 */
export function electronNativeBinding(): string | undefined {
  const p = process.env.RECALLSCOPE_NATIVE_BINDING || path.join(appRoot(), '.cache', 'electron-abi', 'better_sqlite3.node')
  return fs.existsSync(p) ? p : undefined
}

/**
 * The DB path among Electron's argv, resolved against `cwd`. argv is
 * `[electron, appDir, …]` when run as `electron .` and `[exe, …]` when
 * packaged; Chromium may add `--switches`, which are skipped.
 */
export function dbPathFromArgv(argv: string[], cwd: string, packaged = app.isPackaged): string | null {
  const args = argv.slice(packaged ? 1 : 2).filter((a) => !a.startsWith('-'))
  if (!args.length) return null
  const last = args[args.length - 1]
  // A postgres:// URL opens the Postgres source as is.
  return /^postgres(ql)?:\/\//i.test(last) ? last : path.resolve(cwd, last)
}

/** Show one native dialog (safety/pathGrants describes it); the chosen path, or null when cancelled. */
async function showDialog(d: PickDialog, win: BrowserWindow | null): Promise<string | null> {
  const base = { title: d.title, ...(d.filters.length ? { filters: d.filters } : {}), ...(d.defaultPath ? { defaultPath: d.defaultPath } : {}) }
  if (d.kind === 'save') {
    const opts: Electron.SaveDialogOptions = { ...base, properties: ['createDirectory', 'showOverwriteConfirmation'] }
    const r = win ? await dialog.showSaveDialog(win, opts) : await dialog.showSaveDialog(opts)
    return r.canceled || !r.filePath ? null : r.filePath
  }
  const opts: Electron.OpenDialogOptions = { ...base, properties: [d.kind === 'folder' ? 'openDirectory' : 'openFile'] }
  const r = win ? await dialog.showOpenDialog(win, opts) : await dialog.showOpenDialog(opts)
  return r.canceled ? null : (r.filePaths[0] ?? null)
}

/** Ask in a native message box whether this DB may be opened for writing (safety/writeConsent); true only for "Allow writes". */
async function askWrite(p: WritePrompt, win: BrowserWindow | null): Promise<boolean> {
  const opts: Electron.MessageBoxOptions = {
    type: 'warning',
    title: p.title,
    message: p.message,
    detail: p.detail,
    buttons: p.buttons,
    // Enter and Escape / closing the box both mean read-only.
    defaultId: 0,
    cancelId: 0,
    noLink: true,
  }
  const r = win ? await dialog.showMessageBox(win, opts) : await dialog.showMessageBox(opts)
  return r.response === 1
}

function log(line: string): void {
  process.stderr.write(`recallscope: ${line}\n`)
}

/** Open the DB named on the command line, else the demo (generated on first run), in its store host worker. */
async function openInitial(core: HostedApp, dbPath: string | null): Promise<void> {
  if (!dbPath && !fs.existsSync(core.demoPath)) log(`generating the demo database in ${core.demoPath} (first run only)…`)
  // What the user named on the command line is theirs to reopen from the window (safety/pathGrants).
  core.grants.grant(dbPath, 'command line', 'read')
  try {
    await (dbPath ? core.openStore(dbPath) : core.openDemo())
  } catch (e) {
    // The window still opens: the library view shows recent files and lets the
    // user pick another; the reason goes to the terminal.
    log(`could not open ${dbPath ? redactUrl(dbPath) : core.demoPath}: ${(e as Error)?.message ?? e}`)
  }
}

function boot(): void {
  // One instance: a second `npm start -- other.db` hands its file to this one.
  if (!app.requestSingleInstanceLock()) {
    app.quit()
    return
  }

  let core: HostedApp | null = null
  let win: BrowserWindow | null = null
  let disposeIpc: (() => void) | null = null
  let otlp: OtlpListener | null = null
  const files = shellFiles()

  const showWindow = () => {
    win = createMainWindow(files)
    win.on('closed', () => {
      win = null
    })
    loadApp(win, files).catch((e) => log(`could not load ${files.indexHtml}: ${(e as Error)?.message ?? e}`))
  }

  app.on('second-instance', (_event, argv, workingDirectory) => {
    if (!core) return
    const p = dbPathFromArgv(argv, workingDirectory)
    const opening = p ? openInitial(core, p) : Promise.resolve()
    if (win) {
      if (win.isMinimized()) win.restore()
      win.focus()
      // The renderer reads the open DB at start (app.info): reload to show the new one once it is open.
      if (p) void opening.then(() => win && !win.isDestroyed() && win.webContents.reload())
    } else if (app.isReady()) showWindow()
  })

  app
    .whenReady()
    .then(async () => {
      installSecurity(files.indexUrl)
      core = new HostedApp({
        mode: 'electron',
        version: appVersion(),
        // RECALLSCOPE_HOME wins, as in browser mode and the CLI.
        dataDir: process.env.RECALLSCOPE_HOME ? undefined : app.getPath('userData'),
        nativeBinding: electronNativeBinding(),
        // Saved Postgres passwords are encrypted by the OS keychain; without one, connections are saved without them.
        secrets: safeStorage.isEncryptionAvailable()
          ? { encrypt: (plain) => safeStorage.encryptString(plain), decrypt: (cipher) => safeStorage.decryptString(cipher) }
          : undefined,
        pickFile: (d) => showDialog(d, win),
        confirmWrite: (p) => askWrite(p, win),
      })
      // Before the window: the page's first app.info shows the opened DB.
      await openInitial(core, dbPathFromArgv(process.argv, process.cwd()))
      const dispatch = createHostedDispatcher(core, {
        onError: (channel, e) => log(`[${channel}] ${e instanceof Error ? (e.stack ?? e.message) : JSON.stringify(e)}`),
      })
      // Live OTLP (POST /v1/traces) on loopback, handed to the open store's thread; the Trace screen shows where and the token.
      const live = core
      startOtlpListener({ ingest: hostedOtlpIngest(dispatch) }).then(
        (l) => {
          otlp = l
          live.liveEndpoint = { url: l.url, token: l.token }
        },
        (e) => log(`live OTLP listener not started: ${(e as Error)?.message ?? e}`),
      )
      // Handlers exist before the page loads, so its first call never races them.
      disposeIpc = registerIpc({ ipcMain, app: core, dispatch, getWindow: () => win, appIndexUrl: files.indexUrl })
      showWindow()
      app.on('activate', () => {
        // macOS: clicking the dock icon with no window open.
        if (BrowserWindow.getAllWindows().length === 0) showWindow()
      })
    })
    .catch((e) => {
      log(`failed to start: ${(e as Error)?.stack ?? e}`)
      app.exit(1)
    })

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })

  app.on('will-quit', (event) => {
    disposeIpc?.()
    disposeIpc = null
    void otlp?.close()
    otlp = null
    const c = core
    core = null
    removeTemps() // an import cut short by quitting leaves nothing behind (safety/tempFiles)
    if (!c) return
    // Quitting waits for the store hosts to stop; one stuck in a native call (a SQLite query that never
    // ends) never does and would hold the exit forever, so the process then ends by signal.
    event?.preventDefault?.()
    // 5 s: a worker thread that is only slow to end (a loaded machine) is not stuck; killing it early
    // would end the process by signal for nothing.
    void c.dispose(5000).then((stuck) => {
      if (stuck > 0) process.kill(process.pid, 'SIGKILL')
      else app.exit(0) // will-quit ran already: exit without running it again
    })
  })
}

boot()
