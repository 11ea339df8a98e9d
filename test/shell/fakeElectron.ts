/**
 * A test double of the `electron` module, for testing the shell under Node
 * where no Electron binary exists. It records what the shell asks of Electron
 * (window options, loaded files, IPC handlers, session hooks, exposed APIs)
 * and wires ipcRenderer.invoke to ipcMain.handle and webContents.send to
 * ipcRenderer.on, so preload → main round trips run for real.
 *
 * Usage: `const fake = await vi.hoisted(async () => (await import('./fakeElectron')).createFakeElectron())`
 * then `vi.mock('electron', () => fake.module)`.
 */
import { EventEmitter } from 'node:events'
import { pathToFileURL } from 'node:url'

export interface FakeFrame {
  url: string
  parent: FakeFrame | null
}

export class FakeWebContents extends EventEmitter {
  static nextId = 1
  readonly id = FakeWebContents.nextId++
  destroyed = false
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null
  readonly mainFrame: FakeFrame = { url: 'about:blank', parent: null }
  readonly sent: { channel: string; args: unknown[] }[] = []
  reloads = 0
  constructor(private readonly bus: { ipcRendererEmitter: EventEmitter }) {
    super()
  }
  setWindowOpenHandler(h: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = h
  }
  send(channel: string, ...args: unknown[]): void {
    this.sent.push({ channel, args })
    // Deliver to the preload side, as Electron would to this window's renderer.
    this.bus.ipcRendererEmitter.emit(channel, { sender: 'main' }, ...args)
  }
  isDestroyed(): boolean {
    return this.destroyed
  }
  reload(): void {
    this.reloads++
  }
  /** Emit a cancellable event the way Electron does; returns whether it was prevented. */
  fire(name: string, details: Record<string, unknown>, ...legacy: unknown[]): boolean {
    let prevented = false
    const event = { ...details, preventDefault: () => (prevented = true) }
    this.emit(name, event, ...legacy)
    return prevented
  }
}

export type FakeElectron = ReturnType<typeof createFakeElectron>

export function createFakeElectron() {
  const appEmitter = new EventEmitter()
  const ipcRendererEmitter = new EventEmitter()
  const handlers = new Map<string, (event: unknown, ...args: unknown[]) => unknown>()
  const exposed = new Map<string, unknown>()
  const windows: FakeBrowserWindow[] = []
  const state = {
    lock: true,
    ready: true,
    userData: '/nonexistent-userData',
    quitCalls: 0,
    exitCodes: [] as number[],
    headersHook: null as
      | null
      | ((details: { url: string; responseHeaders?: Record<string, string[]> }, cb: (r: { responseHeaders?: Record<string, string[]> }) => void) => void),
    permissionRequest: null as null | ((wc: unknown, permission: string, cb: (granted: boolean) => void, details?: unknown) => void),
    permissionCheck: null as null | ((wc: unknown, permission: string, origin: string, details?: unknown) => boolean),
  }

  const fake = {
    state,
    handlers,
    exposed,
    windows,
    ipcRendererEmitter,
    appEmitter,
    /** The renderer side of the window under test (the first one by default). */
    invokeAs(event: unknown, channel: string, input: unknown): Promise<unknown> {
      const h = handlers.get(channel)
      if (!h) return Promise.reject(new Error(`No handler registered for '${channel}'`))
      return Promise.resolve(h(event, input))
    },
    reset() {
      appEmitter.removeAllListeners()
      ipcRendererEmitter.removeAllListeners()
      handlers.clear()
      exposed.clear()
      windows.length = 0
      state.lock = true
      state.ready = true
      state.quitCalls = 0
      state.exitCodes = []
      state.headersHook = null
      state.permissionRequest = null
      state.permissionCheck = null
      safeStorage.available = true
      safeStorage.encrypted.length = 0
      safeStorage.decrypted = 0
      dialog.boxes.length = 0
      dialog.boxAnswer = 0
    },
    module: null as unknown as Record<string, unknown>,
  }

  class FakeBrowserWindow extends EventEmitter {
    readonly options: Record<string, unknown>
    readonly webContents: FakeWebContents
    readonly loadedFiles: string[] = []
    destroyed = false
    shown = false
    focused = 0
    constructor(options: Record<string, unknown>) {
      super()
      this.options = options
      this.webContents = new FakeWebContents(fake)
      windows.push(this)
      // Electron emits web-contents-created for every new WebContents.
      appEmitter.emit('web-contents-created', {}, this.webContents)
    }
    static getAllWindows() {
      return windows.filter((w) => !w.destroyed)
    }
    async loadFile(file: string): Promise<void> {
      this.loadedFiles.push(file)
      this.webContents.mainFrame.url = pathToFileURL(file).href
    }
    show() {
      this.shown = true
    }
    focus() {
      this.focused++
    }
    isMinimized() {
      return false
    }
    restore() {}
    isDestroyed() {
      return this.destroyed
    }
  }

  const app = {
    isPackaged: false,
    requestSingleInstanceLock: () => state.lock,
    quit: () => {
      state.quitCalls++
    },
    exit: (code: number) => {
      state.exitCodes.push(code)
    },
    whenReady: () => (state.ready ? Promise.resolve() : new Promise<void>(() => {})),
    isReady: () => state.ready,
    getPath: (name: string) => {
      if (name !== 'userData') throw new Error(`fake app.getPath: unexpected ${name}`)
      return state.userData
    },
    getVersion: () => '0.0.0-fake',
    on: (name: string, l: (...a: unknown[]) => void) => {
      appEmitter.on(name, l)
      return app
    },
    once: (name: string, l: (...a: unknown[]) => void) => {
      appEmitter.once(name, l)
      return app
    },
  }

  const ipcMain = {
    handle(channel: string, fn: (event: unknown, ...args: unknown[]) => unknown) {
      // Electron throws on a second handler for the same channel.
      if (handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`)
      handlers.set(channel, fn)
    },
    removeHandler(channel: string) {
      handlers.delete(channel)
    },
  }

  const session = {
    defaultSession: {
      webRequest: {
        onHeadersReceived(fn: typeof state.headersHook) {
          state.headersHook = fn
        },
      },
      setPermissionRequestHandler(fn: typeof state.permissionRequest) {
        state.permissionRequest = fn
      },
      setPermissionCheckHandler(fn: typeof state.permissionCheck) {
        state.permissionCheck = fn
      },
    },
  }

  const contextBridge = {
    exposeInMainWorld(key: string, api: unknown) {
      if (exposed.has(key)) throw new Error(`Cannot bind an API on top of an existing property on the window object: ${key}`)
      exposed.set(key, api)
    },
  }

  const ipcRenderer = {
    invokeCalls: [] as { channel: string; args: unknown[] }[],
    /** Route to main as the first window's main frame (the trusted sender). */
    invoke(channel: string, ...args: unknown[]) {
      ipcRenderer.invokeCalls.push({ channel, args })
      const win = windows[0]
      const event = win ? { sender: win.webContents, senderFrame: win.webContents.mainFrame } : { sender: null, senderFrame: null }
      return fake.invokeAs(event, channel, args[0])
    },
    on(channel: string, l: (...a: unknown[]) => void) {
      ipcRendererEmitter.on(channel, l)
      return ipcRenderer
    },
    removeListener(channel: string, l: (...a: unknown[]) => void) {
      ipcRendererEmitter.removeListener(channel, l)
      return ipcRenderer
    },
  }

  /** The native file dialogs: record each call (open or save) and answer with `answer` (the first path for a save). */
  const dialog = {
    calls: [] as { kind: 'open' | 'save'; window: unknown; options: Record<string, unknown> }[],
    answer: { canceled: true, filePaths: [] as string[] },
    async showOpenDialog(a: unknown, b?: unknown) {
      const [window, options] = b === undefined ? [null, a] : [a, b]
      dialog.calls.push({ kind: 'open', window, options: options as Record<string, unknown> })
      return dialog.answer
    },
    async showSaveDialog(a: unknown, b?: unknown) {
      const [window, options] = b === undefined ? [null, a] : [a, b]
      dialog.calls.push({ kind: 'save', window, options: options as Record<string, unknown> })
      return { canceled: dialog.answer.canceled, filePath: dialog.answer.filePaths[0] }
    },
    /** Message boxes shown, and the button index the fake user clicks (default 0; null: close it, which answers `cancelId`). */
    boxes: [] as { window: unknown; options: Record<string, unknown> }[],
    boxAnswer: 0 as number | null,
    async showMessageBox(a: unknown, b?: unknown) {
      const [window, options] = b === undefined ? [null, a] : [a, b]
      const o = options as Record<string, unknown>
      dialog.boxes.push({ window, options: o })
      return { response: dialog.boxAnswer ?? (o.cancelId as number | undefined) ?? 0, checkboxChecked: false }
    },
  }

  /**
   * The OS keychain (safeStorage): a reversible scramble behind a marker, recording what it was asked to
   * encrypt and decrypt, so a test can check the shell encrypts and never writes the plaintext.
   */
  const MARK = Buffer.from('fake-safeStorage:')
  const safeStorage = {
    available: true,
    encrypted: [] as string[],
    decrypted: 0,
    isEncryptionAvailable: () => safeStorage.available,
    encryptString(plain: string): Buffer {
      if (!safeStorage.available) throw new Error('Encryption is not available')
      safeStorage.encrypted.push(plain)
      return Buffer.concat([MARK, Buffer.from(plain, 'utf8').map((b) => b ^ 0xa5)])
    },
    decryptString(cipher: Buffer): string {
      if (!cipher.subarray(0, MARK.length).equals(MARK)) throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString')
      safeStorage.decrypted++
      return Buffer.from(cipher.subarray(MARK.length).map((b) => b ^ 0xa5)).toString('utf8')
    },
  }

  fake.module = { app, BrowserWindow: FakeBrowserWindow, ipcMain, session, contextBridge, ipcRenderer, dialog, safeStorage, default: undefined }
  ;(fake.module as { default: unknown }).default = fake.module
  return Object.assign(fake, { app, BrowserWindow: FakeBrowserWindow, ipcMain, session, contextBridge, ipcRenderer, dialog, safeStorage })
}
