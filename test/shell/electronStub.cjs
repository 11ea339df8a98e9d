/**
 * Loaded with `node -r` in front of the BUILT main bundle (out/main/index.js):
 * answers require('electron') with a minimal double and reports, one JSON line
 * each, what the bundle did, then calls app.info through the registered
 * handler as the window's main frame and exits. Proves the bundle itself
 * (externals, CJS, paths from out/main) works, not only the sources.
 */
'use strict'
const Module = require('node:module')
const { EventEmitter } = require('node:events')
const { pathToFileURL } = require('node:url')

const report = (e) => process.stdout.write(`${JSON.stringify(e)}\n`)
const handlers = new Map()
const appEvents = new EventEmitter()

class WebContents extends EventEmitter {
  constructor() {
    super()
    this.mainFrame = { url: 'about:blank', parent: null }
  }
  setWindowOpenHandler() {}
  isDestroyed() {
    return false
  }
  send() {}
}

class BrowserWindow extends EventEmitter {
  constructor(options) {
    super()
    this.webContents = new WebContents()
    appEvents.emit('web-contents-created', {}, this.webContents)
    report({ event: 'window', webPreferences: options.webPreferences })
  }
  static getAllWindows() {
    return []
  }
  isDestroyed() {
    return false
  }
  async loadFile(file) {
    this.webContents.mainFrame.url = pathToFileURL(file).href
    report({ event: 'loadFile', file, handlers: [...handlers.keys()] })
    const r = await handlers.get('app.info')({ sender: this.webContents, senderFrame: this.webContents.mainFrame }, {})
    report({ event: 'app.info', result: r })
    appEvents.emit('will-quit', {})
    process.exit(0)
  }
}

const electron = {
  app: {
    isPackaged: false,
    requestSingleInstanceLock: () => true,
    quit() {},
    exit: (c) => process.exit(c),
    whenReady: () => Promise.resolve(),
    isReady: () => true,
    getPath: () => process.env.STUB_USER_DATA,
    on: (n, l) => appEvents.on(n, l),
  },
  BrowserWindow,
  ipcMain: { handle: (c, f) => handlers.set(c, f), removeHandler: (c) => handlers.delete(c) },
  session: { defaultSession: { webRequest: { onHeadersReceived() {} }, setPermissionRequestHandler() {}, setPermissionCheckHandler() {} } },
  // The shell asks at start whether the OS keychain can encrypt saved Postgres passwords; this stub has none.
  safeStorage: { isEncryptionAvailable: () => false },
}

const load = Module._load
Module._load = function (request, ...rest) {
  if (request === 'electron') return electron
  return load.call(this, request, ...rest)
}
