/**
 * The Electron shell's security settings, checked under Node against a test
 * double of `electron`: webPreferences, CSP header, navigation / new-window /
 * webview / permission denial, and the IPC sender check.
 */
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import type { BrowserWindow, IpcMainInvokeEvent, WebContents } from 'electron'

const fake = await vi.hoisted(async () => (await import('./fakeElectron')).createFakeElectron())
vi.mock('electron', () => fake.module)

import { contract } from '../../src/shared/contract'
import { CONTENT_SECURITY_POLICY } from '../../src/main/csp'
import { appRoot } from '../../src/main/paths'
import { App } from '../../src/main/api/app'
import { createDispatcher, CHANNELS } from '../../src/main/api/register'
import { createHandlers } from '../../src/main/api/handlers'
import { hardenSession, hardenWebContents, installSecurity, isAppUrl } from '../../src/main/security'
import { createMainWindow, loadApp, secureWebPreferences, shellFiles } from '../../src/main/window'
import { isTrustedSender, JOB_PROGRESS_EVENT, registerIpc } from '../../src/main/ipc'
import { tmpDir } from '../helpers/tmp'

const files = shellFiles()
const root = appRoot()

beforeEach(() => fake.reset())

describe('window', () => {
  it('uses isolated, sandboxed, Node-less webPreferences', () => {
    const win = createMainWindow(files) as unknown as InstanceType<typeof fake.BrowserWindow>
    const prefs = win.options.webPreferences as Record<string, unknown>
    expect(prefs).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    })
    expect(prefs.preload).toBe(path.join(root, 'out', 'preload', 'index.js'))
    // Shown only once drawn.
    expect(win.options.show).toBe(false)
    expect(win.shown).toBe(false)
    win.emit('ready-to-show')
    expect(win.shown).toBe(true)
  })

  it('no webPreference weakens the sandbox, whatever is added later', () => {
    const prefs = secureWebPreferences('/x/preload.js') as Record<string, unknown>
    for (const risky of [
      'nodeIntegration',
      'nodeIntegrationInWorker',
      'nodeIntegrationInSubFrames',
      'allowRunningInsecureContent',
      'webviewTag',
      'experimentalFeatures',
    ]) {
      expect(prefs[risky], risky).not.toBe(true)
    }
    expect(prefs.contextIsolation).toBe(true)
    expect(prefs.sandbox).toBe(true)
    expect(prefs.webSecurity).toBe(true)
  })

  it('loads the built renderer from out/renderer/index.html (and the preload from out/preload/index.js)', async () => {
    expect(files.indexHtml).toBe(path.join(root, 'out', 'renderer', 'index.html'))
    expect(files.preload).toBe(path.join(root, 'out', 'preload', 'index.js'))
    expect(files.indexUrl).toBe(pathToFileURL(files.indexHtml).href)
    const win = createMainWindow(files) as unknown as InstanceType<typeof fake.BrowserWindow>
    await loadApp(win as unknown as BrowserWindow, files)
    expect(win.loadedFiles).toEqual([files.indexHtml])
  })

  it('points at files that `npm run build` produces', (ctx) => {
    if (!fs.existsSync(path.join(root, 'out'))) ctx.skip(true, 'out/ not built yet: run `npm run build` (npm test does)')
    expect(fs.existsSync(files.indexHtml), files.indexHtml).toBe(true)
    expect(fs.existsSync(files.preload), files.preload).toBe(true)
    expect(fs.existsSync(path.join(root, 'out', 'main', 'index.js'))).toBe(true)
    // package.json "main" is what `electron .` runs.
    expect((JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { main: string }).main).toBe('./out/main/index.js')
    // Relative asset URLs: the same index.html works over file:// and http://127.0.0.1.
    const html = fs.readFileSync(files.indexHtml, 'utf8')
    const srcs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])
    expect(srcs.length).toBeGreaterThan(0)
    for (const s of srcs) expect(s.startsWith('./'), s).toBe(true)
  })
})

describe('session guards', () => {
  it('sets the CSP header on every response, replacing a weaker one', () => {
    hardenSession(fake.session.defaultSession as never)
    expect(fake.state.headersHook).toBeTypeOf('function')
    let out: Record<string, string[]> | undefined
    fake.state.headersHook!(
      { url: files.indexUrl, responseHeaders: { 'content-security-policy': ["default-src *; script-src 'unsafe-eval'"], 'X-Other': ['1'] } },
      (r) => (out = r.responseHeaders),
    )
    const csp = Object.entries(out!).filter(([k]) => k.toLowerCase() === 'content-security-policy')
    expect(csp).toEqual([['Content-Security-Policy', [CONTENT_SECURITY_POLICY]]])
    expect(out!['X-Other']).toEqual(['1'])
    // The policy itself forbids what matters.
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'")
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/)
    expect(CONTENT_SECURITY_POLICY).toContain("object-src 'none'")
    // Also when the response had no headers at all.
    fake.state.headersHook!({ url: files.indexUrl }, (r) => (out = r.responseHeaders))
    expect(out).toEqual({ 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] })
  })

  it('denies every permission request and check', () => {
    hardenSession(fake.session.defaultSession as never)
    for (const permission of ['media', 'notifications', 'geolocation', 'clipboard-read', 'openExternal', 'fullscreen', 'hid', 'serial']) {
      const cb = vi.fn()
      fake.state.permissionRequest!({}, permission, cb)
      expect(cb, permission).toHaveBeenCalledWith(false)
      expect(fake.state.permissionCheck!({}, permission, 'file://', {}), permission).toBe(false)
    }
  })
})

describe('navigation guards', () => {
  const indexUrl = files.indexUrl

  function guarded() {
    installSecurity(indexUrl)
    // Created after installSecurity: guarded through web-contents-created.
    const win = new fake.BrowserWindow({})
    return win.webContents
  }

  it('denies new windows', () => {
    const wc = guarded()
    expect(wc.windowOpenHandler).toBeTypeOf('function')
    for (const url of ['https://example.com', indexUrl, 'file:///etc/passwd', 'javascript:alert(1)']) {
      expect(wc.windowOpenHandler!({ url })).toEqual({ action: 'deny' })
    }
  })

  it('prevents navigation and redirects away from the app page, in any frame', () => {
    const wc = guarded()
    const away = [
      'https://example.com/',
      'http://127.0.0.1:1234/',
      'file:///etc/passwd',
      `${indexUrl.replace('index.html', 'other.html')}`,
      'data:text/html,hi',
      'not a url',
    ]
    for (const ev of ['will-navigate', 'will-redirect', 'will-frame-navigate']) {
      for (const url of away) expect(wc.fire(ev, { url }, url), `${ev} ${url}`).toBe(true)
      // Same document (a hash route) is not "away".
      expect(wc.fire(ev, { url: `${indexUrl}#/browse` }, `${indexUrl}#/browse`), ev).toBe(false)
    }
  })

  it('refuses to attach a <webview>', () => {
    const wc = guarded()
    expect(wc.fire('will-attach-webview', {}, {}, { src: 'https://example.com' })).toBe(true)
  })

  it('guards a WebContents passed in directly too', () => {
    const wc = new fake.BrowserWindow({}).webContents
    hardenWebContents(wc as unknown as WebContents, indexUrl)
    expect(wc.fire('will-navigate', { url: 'https://example.com' })).toBe(true)
  })

  it('isAppUrl compares the file, not the hash or query', () => {
    expect(isAppUrl(`${indexUrl}#x`, indexUrl)).toBe(true)
    expect(isAppUrl(`${indexUrl}?a=1`, indexUrl)).toBe(true)
    expect(isAppUrl(indexUrl.replace('file://', 'http://'), indexUrl)).toBe(false)
    expect(isAppUrl('file:///out/renderer/index.html', 'file:///elsewhere/out/renderer/index.html')).toBe(false)
    expect(isAppUrl('', indexUrl)).toBe(false)
  })
})

describe('IPC', () => {
  function setup() {
    const t = tmpDir()
    const app = new App({ mode: 'electron', dataDir: t.dir })
    const dispatch = vi.fn(createDispatcher(createHandlers(app)))
    const win = new fake.BrowserWindow({})
    win.webContents.mainFrame.url = files.indexUrl
    const dispose = registerIpc({
      ipcMain: fake.ipcMain as never,
      app,
      dispatch,
      getWindow: () => win as unknown as BrowserWindow,
      appIndexUrl: files.indexUrl,
    })
    const trusted = { sender: win.webContents, senderFrame: win.webContents.mainFrame }
    return { t, app, dispatch, win, dispose, trusted }
  }

  it('registers a handler for every contract channel, and only those', () => {
    const { t, dispose } = setup()
    expect([...fake.handlers.keys()].sort()).toEqual(Object.keys(contract).sort())
    expect(CHANNELS.sort()).toEqual(Object.keys(contract).sort())
    dispose()
    expect(fake.handlers.size).toBe(0)
    t.cleanup()
  })

  it('runs a trusted call through the dispatcher (validated, wrapped in a Result)', async () => {
    const { t, dispatch, trusted } = setup()
    const info = (await fake.invokeAs(trusted, 'app.info', {})) as { ok: boolean; data: { mode: string } }
    expect(info).toMatchObject({ ok: true, data: { mode: 'electron', current: null } })
    const bad = (await fake.invokeAs(trusted, 'memories.page', { limit: 'lots' })) as { ok: boolean; error: { code: string } }
    expect(bad.ok).toBe(false)
    expect(bad.error.code).toBe('BAD_INPUT')
    expect(dispatch).toHaveBeenCalledTimes(2)
    t.cleanup()
  })

  it('refuses foreign senders with FORBIDDEN, without reaching a handler', async () => {
    const { t, dispatch, win, trusted } = setup()
    const other = new fake.BrowserWindow({})
    other.webContents.mainFrame.url = files.indexUrl
    const subFrame = { url: files.indexUrl, parent: win.webContents.mainFrame }
    const foreign: [string, unknown][] = [
      ['another window', { sender: other.webContents, senderFrame: other.webContents.mainFrame }],
      ['a sub-frame of our window', { sender: win.webContents, senderFrame: subFrame }],
      ['a frame that is gone', { sender: win.webContents, senderFrame: null }],
      ['no sender', {}],
    ]
    for (const [what, event] of foreign) {
      for (const channel of ['app.info', 'store.open']) {
        const r = (await fake.invokeAs(event, channel, { path: '/etc/passwd' })) as { ok: boolean; error: { code: string } }
        expect(r.ok, what).toBe(false)
        expect(r.error.code, what).toBe('FORBIDDEN')
      }
    }
    // Our main frame after navigating elsewhere is no longer trusted either.
    win.webContents.mainFrame.url = 'https://example.com/'
    const r = (await fake.invokeAs(trusted, 'app.info', {})) as { ok: boolean; error: { code: string } }
    expect(r.error.code).toBe('FORBIDDEN')
    // A destroyed window trusts no one.
    win.webContents.mainFrame.url = files.indexUrl
    expect(isTrustedSender(trusted as unknown as IpcMainInvokeEvent, win as unknown as BrowserWindow, files.indexUrl)).toBe(true)
    win.destroyed = true
    expect(isTrustedSender(trusted as unknown as IpcMainInvokeEvent, win as unknown as BrowserWindow, files.indexUrl)).toBe(false)
    expect(dispatch).not.toHaveBeenCalled()
    t.cleanup()
  })

  it('forwards job progress to the window', async () => {
    const { t, app, win, dispose } = setup()
    app.jobs.start('eval', 'a job', async ({ progress }) => {
      progress(1, 2)
      progress(2, 2)
      return 'done' as never
    })
    await vi.waitFor(() => expect(win.webContents.sent.some((s) => (s.args[0] as { state: string }).state === 'done')).toBe(true))
    expect(win.webContents.sent.every((s) => s.channel === JOB_PROGRESS_EVENT)).toBe(true)
    expect(win.webContents.sent[0].args[0]).toMatchObject({ kind: 'eval', label: 'a job', state: 'running' })
    // After dispose nothing more is sent.
    dispose()
    const n = win.webContents.sent.length
    app.jobs.start('eval', 'later', async () => 1 as never)
    await new Promise((r) => setTimeout(r, 20))
    expect(win.webContents.sent.length).toBe(n)
    t.cleanup()
  })

  it('keeps the progress event name out of the contract (it is a push, not a call)', () => {
    expect(Object.keys(contract)).not.toContain(JOB_PROGRESS_EVENT)
  })
})
