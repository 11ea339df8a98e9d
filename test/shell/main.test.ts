/**
 * Electron main's lifecycle (src/main/index.ts) under Node with a test double
 * of `electron`: single instance, the DB from argv or the first-run demo,
 * window + IPC + guards wired, and a real preload → IPC → handler round trip.
 */
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

const fake = await vi.hoisted(async () => (await import('./fakeElectron')).createFakeElectron())
vi.mock('electron', () => fake.module)
// The real demo generator, made small: the full demo takes seconds, and its size is not what is tested here.
vi.mock('../../src/main/demoDb', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/main/demoDb')>()
  return { ensureDemo: (p: string, o: Parameters<typeof real.ensureDemo>[1] = {}) => real.ensureDemo(p, { memories: 60, ...o }) }
})

import { contract, type AppInfo } from '../../src/shared/contract'
import type { RecallscopeApi } from '../../src/shared/api'
import type { Result } from '../../src/shared/result'
import { appRoot } from '../../src/main/paths'
import { ensureDemo } from '../../src/main/demoDb'
import { sha256File, tmpDir } from '../helpers/tmp'

const root = appRoot()
const nodeBuild = path.join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')
const savedArgv = process.argv
let t: ReturnType<typeof tmpDir>
let agentDb: string

/** Boot a fresh copy of src/main/index.ts (it boots on import) and the preload. */
async function boot(argv: string[]): Promise<{ api: RecallscopeApi; main: typeof import('../../src/main/index') }> {
  vi.resetModules()
  fake.reset()
  fake.state.userData = path.join(t.dir, 'userData')
  process.argv = argv
  const main = await import('../../src/main/index')
  await import('../../src/preload/index')
  return { api: fake.exposed.get('recallscope') as RecallscopeApi, main }
}

/** The window appears once the store host worker opened the first DB (workers start slowly from source). */
async function ready(): Promise<void> {
  await vi.waitFor(
    () => {
      expect(fake.windows.length).toBe(1)
      expect(fake.windows[0].loadedFiles.length).toBe(1)
    },
    { timeout: 30_000, interval: 50 },
  )
}

beforeEach(() => {
  t = tmpDir()
  agentDb = ensureDemo(path.join(t.dir, 'agent.db'), { memories: 60 })
  // Isolate from the developer's own settings; point nativeBinding at the Node
  // build, which is what loads under vitest (the app gets the Electron one).
  vi.stubEnv('RECALLSCOPE_HOME', '')
  vi.stubEnv('RECALLSCOPE_NATIVE_BINDING', nodeBuild)
})

afterEach(async () => {
  // Quit the booted app so its DB handles close before the folder goes: wait for its app.exit(0), which
  // comes once every store-host worker has ended (a worker still running then would end this process by
  // SIGKILL, as it ends the app's).
  fake.appEmitter.emit('will-quit', {})
  if (fake.windows.length > 0) await vi.waitFor(() => expect(fake.state.exitCodes).toContain(0), { timeout: 30_000, interval: 20 })
  process.argv = savedArgv
  vi.unstubAllEnvs()
  t.cleanup()
})

describe('main process boot', () => {
  it('opens the DB named on the command line in a secure window with every channel wired', async () => {
    const { api } = await boot(['/opt/electron', root, agentDb])
    await ready()
    const win = fake.windows[0]
    expect(win.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      preload: path.join(root, 'out', 'preload', 'index.js'),
    })
    expect(win.loadedFiles).toEqual([path.join(root, 'out', 'renderer', 'index.html')])
    expect([...fake.handlers.keys()].sort()).toEqual(Object.keys(contract).sort())
    // Guards installed before the window existed.
    expect(fake.state.headersHook).toBeTypeOf('function')
    expect(fake.state.permissionCheck).toBeTypeOf('function')
    expect(win.webContents.windowOpenHandler).toBeTypeOf('function')
    expect(win.webContents.fire('will-navigate', { url: 'https://example.com' })).toBe(true)

    // A real round trip: preload function → IPC (sender check) → dispatcher → App → SQLite.
    const info = await api['app.info']({})
    expect(info.ok).toBe(true)
    if (!info.ok) return
    expect(info.data.mode).toBe('electron')
    expect(info.data.current?.path).toBe(agentDb)
    expect(info.data.current?.readOnly).toBe(true)
    const check = new Database(agentDb, { readonly: true })
    expect(info.data.current?.memories).toBe(check.prepare('SELECT count(*) FROM memories').pluck().get())
    check.close()
    expect(info.data.demoPath).toBe(path.join(t.dir, 'userData', 'demo.db'))
    const page = (await api['memories.page']({ limit: 3 })) as Result<{ rows: unknown[] }>
    expect(page.ok && page.data.rows.length).toBe(3)
    const bad = (await api['memories.page']({ limit: -1 })) as Result<unknown>
    expect(!bad.ok && bad.error.code).toBe('BAD_INPUT')
    // The agent DB is never written.
    expect(fs.existsSync(`${agentDb}-wal`)).toBe(false)
  })

  it('store.pick shows the native open dialog over the window and returns the chosen file', async () => {
    const { api } = await boot(['/opt/electron', root, agentDb])
    await ready()
    fake.dialog.calls.length = 0
    fake.dialog.answer = { canceled: false, filePaths: [agentDb] }
    const picked = (await api['store.pick']({})) as Result<{ supported: boolean; path: string | null }>
    expect(picked).toEqual({ ok: true, data: { supported: true, path: agentDb } })
    expect(fake.dialog.calls[0].window).toBe(fake.windows[0])
    expect(fake.dialog.calls[0].options.properties).toEqual(['openFile'])
    fake.dialog.answer = { canceled: true, filePaths: [] }
    expect(await api['store.pick']({})).toEqual({ ok: true, data: { supported: true, path: null } })
  })

  it('the renderer cannot name files: a typed path is FORBIDDEN, the Open and Save dialogs grant theirs', async () => {
    const { api } = await boot(['/opt/electron', root, agentDb])
    await ready()
    const other = path.join(t.dir, 'typed.db')
    fs.copyFileSync(agentDb, other)
    const typed = (await api['store.open']({ path: other })) as Result<unknown>
    expect(!typed.ok && typed.error.code).toBe('FORBIDDEN')
    // A folder store: the folder dialog.
    fake.dialog.calls.length = 0
    fake.dialog.answer = { canceled: false, filePaths: [t.dir] }
    await api['store.pick']({ purpose: 'dbFolder' })
    expect(fake.dialog.calls[0]).toMatchObject({ kind: 'open', options: { properties: ['openDirectory'] } })
    // The Open dialog grants reading: now the same file opens.
    fake.dialog.answer = { canceled: false, filePaths: [other] }
    await api['store.pick']({ purpose: 'db' })
    expect(((await api['store.open']({ path: other })) as Result<unknown>).ok).toBe(true)
    // Import output: the Save dialog over the window, with the suggested name; a cancelled one grants nothing.
    const out = path.join(t.dir, 'imported.db')
    fake.dialog.calls.length = 0
    fake.dialog.answer = { canceled: true, filePaths: [] }
    expect(await api['store.pick']({ purpose: 'importOut', defaultPath: out })).toEqual({ ok: true, data: { supported: true, path: null } })
    expect(fake.dialog.calls[0]).toMatchObject({ kind: 'save', window: fake.windows[0], options: { defaultPath: out } })
    const jsonl = path.join(t.dir, 'in.jsonl')
    fs.writeFileSync(jsonl, `${JSON.stringify({ content: 'hello' })}\n`)
    fake.dialog.answer = { canceled: false, filePaths: [jsonl] }
    await api['store.pick']({ purpose: 'importIn' })
    const refused = (await api['import.start']({ kind: 'jsonl', in: jsonl, out })) as Result<unknown>
    expect(!refused.ok && refused.error.code).toBe('FORBIDDEN')
    fake.dialog.answer = { canceled: false, filePaths: [out] }
    expect(await api['store.pick']({ purpose: 'importOut', defaultPath: out })).toEqual({ ok: true, data: { supported: true, path: out } })
    expect(((await api['import.start']({ kind: 'jsonl', in: jsonl, out })) as Result<unknown>).ok).toBe(true)
  })

  it("write mode needs the user's yes in main's message box: no opens read-only and writes nothing, yes once per file per run", async () => {
    const { api } = await boot(['/opt/electron', root, agentDb])
    await ready()
    const before = sha256File(agentDb)
    const page = (await api['memories.page']({ limit: 5 })) as Result<{ rows: { id: string }[] }>
    const ids = page.ok ? page.data.rows.map((r) => r.id) : []
    expect(ids).toHaveLength(5)
    const now = Date.UTC(2026, 10, 1, 12)
    // A plain open never asks.
    expect((await api['store.open']({ path: agentDb })).ok).toBe(true)
    expect(fake.dialog.boxes).toHaveLength(0)

    // The renderer asks for write mode; the user clicks "Open read-only".
    fake.dialog.boxAnswer = 0
    const no = await api['store.open']({ path: agentDb, write: true })
    expect(no.ok && no.data).toMatchObject({ readOnly: true, writeDeclined: true })
    expect(fake.dialog.boxes).toHaveLength(1)
    const box = fake.dialog.boxes[0]
    expect(box.window).toBe(fake.windows[0])
    expect(box.options).toMatchObject({ buttons: ['Open read-only', 'Allow writes'], defaultId: 0, cancelId: 0 })
    expect(String(box.options.title)).toMatch(/allow writes/i)
    expect(String(box.options.detail)).toContain(path.resolve(agentDb))
    expect(String(box.options.detail)).toMatch(/last_used_at/)
    expect(String(box.options.detail)).toMatch(/use_count/)
    const refused = (await api['recall.refresh']({ ids, now })) as Result<unknown>
    expect(!refused.ok && refused.error.code).toBe('READ_ONLY')
    // Closing the box (Escape) is read-only too; a no is not remembered, so it asks again.
    fake.dialog.boxAnswer = null
    const closed = await api['store.open']({ path: agentDb, write: true })
    expect(closed.ok && closed.data).toMatchObject({ readOnly: true, writeDeclined: true })
    expect(fake.dialog.boxes).toHaveLength(2)
    expect(sha256File(agentDb)).toBe(before)

    // "Allow writes": opened writable, and the refresh lands in the agent DB.
    fake.dialog.boxAnswer = 1
    const yes = await api['store.open']({ path: agentDb, write: true })
    expect(yes.ok && yes.data.readOnly).toBe(false)
    expect(yes.ok && 'writeDeclined' in yes.data).toBe(false)
    expect(fake.dialog.boxes).toHaveLength(3)
    expect(await api['recall.refresh']({ ids, now })).toEqual({ ok: true, data: { updated: 5 } })

    // The same file again in this run (here through a symlink to it): no second question, even if the next answer would be no.
    fake.dialog.boxAnswer = 0
    const link = path.join(t.dir, 'link.db')
    fs.symlinkSync(agentDb, link)
    const again = await api['store.open']({ path: link, write: true })
    expect(again.ok && again.data.readOnly).toBe(false)
    expect(fake.dialog.boxes).toHaveLength(3)
    expect(((await api['store.close']({})) as Result<unknown>).ok).toBe(true)
    const direct = new Database(agentDb, { readonly: true })
    const rows = direct.prepare(`SELECT last_used_at FROM memories WHERE id IN (${ids.map(() => '?').join(',')})`).all(...ids) as { last_used_at: number }[]
    direct.close()
    expect(rows.map((r) => r.last_used_at)).toEqual(ids.map(() => now))

    // Another file is asked about on its own.
    const other = path.join(t.dir, 'other.db')
    fs.copyFileSync(agentDb, other)
    fake.dialog.answer = { canceled: false, filePaths: [other] }
    await api['store.pick']({ purpose: 'db' })
    const otherBefore = sha256File(other)
    const otherNo = await api['store.open']({ path: other, write: true })
    expect(otherNo.ok && otherNo.data).toMatchObject({ readOnly: true, writeDeclined: true })
    expect(fake.dialog.boxes).toHaveLength(4)
    expect(String(fake.dialog.boxes[3].options.detail)).toContain(other)
    expect(sha256File(other)).toBe(otherBefore)
  })

  it('with no file, generates the demo DB in userData on first run and opens it', async () => {
    const demo = path.join(t.dir, 'userData', 'demo.db')
    expect(fs.existsSync(demo)).toBe(false)
    const { api } = await boot(['/opt/electron', root])
    await ready()
    expect(fs.existsSync(demo)).toBe(true)
    const info = await api['app.info']({})
    expect(info.ok && info.data.current?.path).toBe(demo)
  })

  it('passes the Electron-ABI addon to better-sqlite3 (nativeBinding)', async () => {
    // An addon path that exists but is not an addon: if nativeBinding reached
    // better-sqlite3 the open fails; if it were ignored the open would succeed.
    const notAnAddon = path.join(t.dir, 'not-an-addon.node')
    fs.writeFileSync(notAnAddon, 'not a shared object')
    vi.stubEnv('RECALLSCOPE_NATIVE_BINDING', notAnAddon)
    const errors: string[] = []
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => (errors.push(String(s)), true))
    const { api } = await boot(['/opt/electron', root, agentDb])
    await ready()
    spy.mockRestore()
    const info = await api['app.info']({})
    expect(info.ok && info.data.current).toBe(null)
    expect(errors.join('')).toMatch(/could not open .*agent\.db/)
    // The window still opens, so the user can pick another file.
    expect(fake.windows[0].loadedFiles.length).toBe(1)
  })

  it('a second instance quits at once; the first opens its file and reloads', async () => {
    const first = ensureDemo(path.join(t.dir, 'first.db'), { memories: 20 })
    await boot(['/opt/electron', root, first])
    await ready()
    const win = fake.windows[0]
    fake.appEmitter.emit('second-instance', {}, ['/opt/electron', root, 'agent.db'], t.dir, {})
    expect(win.focused).toBe(1)
    // Reloaded once its file opened (in a store host worker), so the page's app.info shows it.
    await vi.waitFor(() => expect(win.webContents.reloads).toBe(1), { timeout: 30_000, interval: 50 })
    const info = (await fake.ipcRenderer.invoke('app.info', {})) as Result<AppInfo>
    expect(info.ok && info.data.current?.path).toBe(agentDb)

    // The second process itself: no lock → quit, no window, no handlers.
    fake.appEmitter.emit('will-quit', {})
    vi.resetModules()
    fake.reset()
    fake.state.lock = false
    await import('../../src/main/index')
    await new Promise((r) => setTimeout(r, 10))
    expect(fake.state.quitCalls).toBe(1)
    expect(fake.windows).toHaveLength(0)
    expect(fake.handlers.size).toBe(0)
  })

  it('quits when the window closes (not on macOS) and unregisters on will-quit', async () => {
    await boot(['/opt/electron', root, agentDb])
    await ready()
    fake.appEmitter.emit('window-all-closed')
    expect(fake.state.quitCalls).toBe(process.platform === 'darwin' ? 0 : 1)
    fake.appEmitter.emit('will-quit', {})
    expect(fake.handlers.size).toBe(0)
  })
})

describe('main helpers', () => {
  it('finds the DB path in argv: unpackaged, packaged, with Chromium switches', async () => {
    const { main } = await boot(['/opt/electron', root, agentDb])
    await ready()
    expect(main.dbPathFromArgv(['/e', '.', 'x.db'], '/home/u', false)).toBe(path.resolve('/home/u', 'x.db'))
    expect(main.dbPathFromArgv(['/e', '.', '--enable-logging', '/abs/y.db'], '/home/u', false)).toBe('/abs/y.db')
    expect(main.dbPathFromArgv(['/e', '.'], '/home/u', false)).toBe(null)
    expect(main.dbPathFromArgv(['/app/recallscope', 'z.db'], '/w', true)).toBe(path.resolve('/w', 'z.db'))
    expect(main.dbPathFromArgv(['/app/recallscope', '--original-process-start-time=1'], '/w', true)).toBe(null)
  })

  it('looks for the Electron-ABI addon where scripts/prestart.cjs puts it', async () => {
    const { main } = await boot(['/opt/electron', root, agentDb])
    await ready()
    const support = createRequire(import.meta.url)('../../scripts/electronSupport.cjs') as { paths(): { abiBinary: string } }
    vi.stubEnv('RECALLSCOPE_NATIVE_BINDING', '')
    const expected = support.paths().abiBinary
    expect(main.electronNativeBinding()).toBe(fs.existsSync(expected) ? expected : undefined)
    vi.stubEnv('RECALLSCOPE_NATIVE_BINDING', nodeBuild)
    expect(main.electronNativeBinding()).toBe(nodeBuild)
    vi.stubEnv('RECALLSCOPE_NATIVE_BINDING', path.join(t.dir, 'missing.node'))
    expect(main.electronNativeBinding()).toBe(undefined)
  })

  it("only the shell modules import 'electron' at run time", () => {
    const offenders: string[] = []
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name)
        if (e.isDirectory()) walk(p)
        else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) {
          const src = fs.readFileSync(p, 'utf8')
          if (/^import\s+(?!type\s)[^;]*from\s+['"]electron['"]/m.test(src) || /require\(\s*['"]electron['"]\s*\)/.test(src))
            offenders.push(path.relative(root, p))
        }
      }
    }
    walk(path.join(root, 'src', 'main'))
    walk(path.join(root, 'src', 'shared'))
    walk(path.join(root, 'src', 'renderer'))
    expect(offenders.sort()).toEqual(['src/main/index.ts', 'src/main/security.ts', 'src/main/window.ts'])
  })
})
