/**
 * The built main bundle (out/main/index.js, what `electron .` runs) loads,
 * finds the preload and renderer it was built with, registers every channel
 * and serves app.info for the DB given on its command line. Run under Node
 * with a stubbed `electron` (test/shell/electronStub.cjs).
 */
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { contract } from '../../src/shared/contract'
import { appRoot } from '../../src/main/paths'
import { ensureDemo } from '../../src/main/demoDb'
import { tmpDir } from '../helpers/tmp'

/** One line of test/shell/electronStub.cjs's report: which fields are set depends on `event`. */
interface StubEvent {
  event: string
  webPreferences?: Record<string, unknown> & { preload: string }
  file?: string
  handlers?: string[]
  result?: unknown
}

const root = appRoot()
const bundle = path.join(root, 'out', 'main', 'index.js')

describe('built main bundle', () => {
  it('boots on the DB from argv with the built preload and renderer', (ctx) => {
    if (!fs.existsSync(bundle)) ctx.skip(true, 'out/main/index.js not built: run `npm run build` (npm test does)')
    const t = tmpDir()
    try {
      const db = ensureDemo(path.join(t.dir, 'agent.db'), { memories: 40 })
      const check = new Database(db, { readonly: true })
      const memories = check.prepare('SELECT count(*) FROM memories').pluck().get()
      check.close()
      const r = spawnSync(process.execPath, ['-r', path.join(__dirname, 'electronStub.cjs'), bundle, db], {
        cwd: t.dir,
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          ...process.env,
          STUB_USER_DATA: path.join(t.dir, 'userData'),
          RECALLSCOPE_HOME: '',
          // Under Node the Node build is the right addon; the point is that the path is honoured.
          RECALLSCOPE_NATIVE_BINDING: path.join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'),
        },
      })
      expect(r.status, r.stderr).toBe(0)
      const events = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as StubEvent)
      const win = events.find((e) => e.event === 'window')!
      expect(win.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false })
      expect(win.webPreferences!.preload).toBe(path.join(root, 'out', 'preload', 'index.js'))
      expect(fs.existsSync(win.webPreferences!.preload)).toBe(true)
      const load = events.find((e) => e.event === 'loadFile')!
      expect(load.file).toBe(path.join(root, 'out', 'renderer', 'index.html'))
      expect(fs.existsSync(load.file!)).toBe(true)
      expect(load.handlers!.sort()).toEqual(Object.keys(contract).sort())
      const info = events.find((e) => e.event === 'app.info')!.result
      expect(info).toMatchObject({ ok: true, data: { mode: 'electron', current: { path: db, memories, readOnly: true } } })
    } finally {
      t.cleanup()
    }
  })
})
