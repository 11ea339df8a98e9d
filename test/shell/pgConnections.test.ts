/**
 * Saved Postgres connections in the desktop shell (src/main/index.ts under the
 * electron test double): the password typed into the Connect form is encrypted
 * with safeStorage in main, only ciphertext reaches the disk, the renderer's
 * list carries no password, and a saved connection reopens by decrypting it.
 * The server is PGlite over the wire (test/helpers/pgServer.ts).
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'

const fake = await vi.hoisted(async () => (await import('./fakeElectron')).createFakeElectron())
vi.mock('electron', () => fake.module)

import type { RecallscopeApi } from '../../src/shared/api'
import type { OpenInfo } from '../../src/shared/contract'
import type { Result } from '../../src/shared/result'
import { appRoot } from '../../src/main/paths'
import { ensureDemo } from '../../src/main/demoDb'
import { canonicalDdl, canonicalInserts, makeMemories } from '../helpers/pgFixture'
import { startPgServer, type PgTestServer } from '../helpers/pgServer'
import { tmpDir } from '../helpers/tmp'

const root = appRoot()
const nodeBuild = path.join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')
const PASSWORD = 'secret-pw' // the test server's URL carries it (PGlite accepts any)
const savedArgv = process.argv
let srv: PgTestServer
let t: ReturnType<typeof tmpDir>

/**
 * Every file under a folder, read as bytes (the "grep" of what was written). A file listed and then gone before it
 * is read (a SQLite -shm/-wal of the store the open replaced, removed as its store host closes it) holds nothing on
 * disk any more and is skipped; any other read error fails the test.
 */
function filesUnder(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = []
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue
    const f = path.join(e.parentPath, e.name)
    let bytes: Buffer
    try {
      bytes = fs.readFileSync(f)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw err
    }
    out.push({ file: f, text: bytes.toString('latin1') })
  }
  return out
}

async function boot(): Promise<RecallscopeApi> {
  vi.resetModules()
  fake.reset()
  fake.state.userData = path.join(t.dir, 'userData')
  // The first-run demo, made small beforehand: the app would generate the full 6,000-memory one (~2.5 s of CPU in its
  // store host worker) at each boot; it is only the DB open before the Postgres one, and its size is not tested here.
  ensureDemo(path.join(fake.state.userData, 'demo.db'), { memories: 60 })
  process.argv = ['/opt/electron', root]
  await import('../../src/main/index')
  await import('../../src/preload/index')
  // The window appears once the store host worker opened the first DB (here the demo, generated first).
  await vi.waitFor(() => expect(fake.windows.length).toBe(1), { timeout: 60_000, interval: 50 })
  return fake.exposed.get('recallscope') as RecallscopeApi
}

beforeAll(async () => {
  srv = await startPgServer()
  await srv.seed(`${canonicalDdl('canon')} ${canonicalInserts('canon', makeMemories(40))}`)
}, 180_000)
afterAll(async () => {
  await srv?.stop()
})

afterEach(() => {
  fake.appEmitter.emit('will-quit', {})
  process.argv = savedArgv
  vi.unstubAllEnvs()
  t.cleanup()
})

describe('saved Postgres connections (desktop app)', () => {
  it('encrypts the password with safeStorage, writes only ciphertext, lists no password, and reopens by decrypting', async () => {
    t = tmpDir()
    vi.stubEnv('RECALLSCOPE_HOME', '')
    vi.stubEnv('RECALLSCOPE_NATIVE_BINDING', nodeBuild)
    vi.stubEnv('PGPASSWORD', '')
    const api = await boot()
    const port = Number(new URL(srv.url).port)
    const conn = { host: '127.0.0.1', port, database: 'postgres', user: 'recallscope_test', password: PASSWORD, sslmode: 'disable' as const, schema: 'canon' }

    const opened = await api['pg.connect']({ conn, saveAs: 'pglite' })
    expect(opened.ok).toBe(true)
    if (!opened.ok) return
    expect(opened.data.layout).toBe('canonical')
    expect(opened.data.memories).toBe(40)
    expect(JSON.stringify(opened)).not.toContain(PASSWORD)
    // main asked the keychain to encrypt the password and nothing else: for the saved connection and for the
    // recent list (which keeps a URL's password only as keychain ciphertext)
    expect(fake.safeStorage.encrypted).toEqual([PASSWORD, PASSWORD])

    const saved = await api['pg.saved']({})
    expect(saved.ok && saved.data).toEqual([
      {
        id: expect.any(String) as string,
        name: 'pglite',
        url: `postgres://recallscope_test@127.0.0.1:${port}/postgres?sslmode=disable&schema=canon`,
        password: 'keychain',
      },
    ])
    expect(JSON.stringify(saved)).not.toContain(PASSWORD)

    // Nothing on disk holds the plaintext (settings, recent list, saved connections, workspaces); the ciphertext is there.
    const written = filesUnder(path.join(t.dir, 'userData'))
    expect(written.map((w) => path.basename(w.file))).toContain('connections.json')
    for (const w of written) expect(w.text, w.file).not.toContain(PASSWORD)
    const stored = JSON.parse(fs.readFileSync(path.join(t.dir, 'userData', 'connections.json'), 'utf8')) as { secret?: string }[]
    expect(Buffer.from(stored[0].secret!, 'base64').subarray(0, 17).toString()).toBe('fake-safeStorage:')

    // Reopen from the saved entry: main decrypts, the renderer never sees the password.
    await api['store.close']({})
    const again = await api['pg.connect']({ savedId: saved.ok ? saved.data[0].id : '' })
    expect(again.ok && again.data.memories).toBe(40)
    expect(fake.safeStorage.decrypted).toBe(1)
    expect(JSON.stringify(again)).not.toContain(PASSWORD)

    // Forget: gone, file and all.
    const gone = (await api['pg.forget']({ id: saved.ok ? saved.data[0].id : '' })) as Result<{ removed: boolean }>
    expect(gone.ok && gone.data.removed).toBe(true)
    expect(await api['pg.saved']({})).toEqual({ ok: true, data: [] })
  }, 60_000)

  it('without a keychain, a password is not saved (BAD_INPUT before connecting) and nothing is written', async () => {
    t = tmpDir()
    vi.stubEnv('RECALLSCOPE_HOME', '')
    vi.stubEnv('RECALLSCOPE_NATIVE_BINDING', nodeBuild)
    // The shell asks isEncryptionAvailable() when it starts: switch it off for this boot.
    const reset = fake.reset.bind(fake)
    fake.reset = () => {
      reset()
      fake.safeStorage.available = false
    }
    try {
      const api = await boot()
      const port = Number(new URL(srv.url).port)
      const r = await api['pg.connect']({
        conn: { url: `postgres://recallscope_test@127.0.0.1:${port}/postgres?sslmode=disable&schema=canon`, password: PASSWORD },
        saveAs: 'nokeychain',
      })
      expect(!r.ok && r.error.code).toBe('BAD_INPUT')
      expect(JSON.stringify(r)).not.toContain(PASSWORD)
      expect(fs.existsSync(path.join(t.dir, 'userData', 'connections.json'))).toBe(false)
      // Nothing was opened either (the first-run demo DB is still the open one): the check comes before the connection.
      const info = (await api['app.info']({})) as Result<{ current: OpenInfo | null }>
      expect(info.ok && info.data.current?.path).toMatch(/demo\.db$/)
      expect(fake.safeStorage.encrypted).toEqual([])
    } finally {
      fake.reset = reset
    }
  }, 60_000)
})
