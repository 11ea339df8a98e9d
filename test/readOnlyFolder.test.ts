/**
 * Issue 10, LOW 11: a WAL DB without its -shm, or a DB with a leftover -journal, in a folder
 * we cannot write, still opens (from a private snapshot, said so), and is not changed.
 * Runs the real CLI as an unprivileged user: as root (which ignores folder permissions) the
 * child gets uid/gid 65534; otherwise the folder's own mode does it.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256File, tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

const BIN = path.resolve(__dirname, '../bin/recallscope.cjs')
const ROOT = process.getuid?.() === 0
const NOBODY = 65534
let t: ReturnType<typeof tmpDir>
let ro: string
let home: string

function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, RECALLSCOPE_HOME: home, HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(ROOT ? { uid: NOBODY, gid: NOBODY } : {}),
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

beforeAll(() => {
  t = tmpDir()
  fs.chmodSync(t.dir, 0o755)
  ro = path.join(t.dir, 'ro')
  home = path.join(t.dir, 'home')
  fs.mkdirSync(ro)
  fs.mkdirSync(home, { mode: 0o777 })
  fs.chmodSync(home, 0o777)
  // A WAL DB with committed pages still in its -wal, and no -shm (the agent has exited).
  const wal = writeDemoDb(path.join(ro, 'wal.db'), { memories: 120 }).path
  const w = new Database(wal)
  w.pragma('journal_mode = WAL')
  w.pragma('wal_autocheckpoint = 0')
  w.exec(`DELETE FROM memories WHERE rowid IN (SELECT rowid FROM memories LIMIT 20)`)
  fs.copyFileSync(wal, path.join(ro, 'wal-copy.db'))
  fs.copyFileSync(`${wal}-wal`, path.join(ro, 'wal-copy.db-wal'))
  w.close() // checkpoints wal.db itself; the copy keeps its un-checkpointed -wal and no -shm
  fs.rmSync(wal, { force: true })
  fs.renameSync(path.join(ro, 'wal-copy.db'), wal)
  fs.renameSync(path.join(ro, 'wal-copy.db-wal'), `${wal}-wal`)
  for (const f of fs.readdirSync(ro)) if (f.endsWith('.recallscope') || f.endsWith('-shm')) fs.rmSync(path.join(ro, f), { recursive: true, force: true })
  // A rollback-journal DB left by a crash mid-transaction: pages already changed, a hot -journal beside it.
  const src = writeDemoDb(path.join(t.dir, 'journal-src.db'), { memories: 60 }).path
  const c = new Database(src)
  c.pragma('cache_size = 1') // spill the transaction's pages into the file before commit
  c.exec('BEGIN; DELETE FROM memories; DELETE FROM sessions;')
  const j = path.join(ro, 'journal.db')
  fs.copyFileSync(src, j)
  fs.copyFileSync(`${src}-journal`, `${j}-journal`)
  c.exec('ROLLBACK')
  c.close()
  for (const f of fs.readdirSync(ro)) fs.chmodSync(path.join(ro, f), 0o644)
  fs.chmodSync(ro, 0o555)
})
afterAll(() => {
  fs.chmodSync(ro, 0o755)
  t.cleanup()
})

describe('read-only folder', () => {
  it('a WAL DB without -shm: opens as a snapshot with the WAL’s commits; nothing in the folder changes', async () => {
    const db = path.join(ro, 'wal.db')
    const before = fs.readdirSync(ro).map((f) => `${f}:${sha256File(path.join(ro, f))}`)
    expect(fs.existsSync(`${db}-wal`)).toBe(true)
    const r = await run(['info', '--db', db, '--json'])
    expect(r.code, r.err).toBe(0)
    const facts = JSON.parse(r.out)
    expect(facts.counts.memories).toBe(100) // the 20 deletions live only in the -wal: it was read
    expect(facts.snapshot).toContain(path.join(home, 'snapshots'))
    const human = await run(['info', '--db', db])
    expect(human.out).toContain('note: read-only snapshot: the folder is not writable, changes the agent makes now are not seen; reopen to refresh')
    expect(fs.readdirSync(ro).map((f) => `${f}:${sha256File(path.join(ro, f))}`)).toEqual(before)
  })

  it('serve: app.info says the open DB is a snapshot (the UI’s note), for both kinds', async () => {
    const before = fs.readdirSync(ro).map((f) => `${f}:${sha256File(path.join(ro, f))}`)
    for (const name of ['wal.db', 'journal.db']) {
      const db = path.join(ro, name)
      const child = spawn(process.execPath, [BIN, 'serve', '--db', db, '--json'], {
        env: { ...process.env, RECALLSCOPE_HOME: home, HOME: home },
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(ROOT ? { uid: NOBODY, gid: NOBODY } : {}),
      })
      try {
        let out = ''
        let err = ''
        child.stderr.on('data', (d) => (err += d))
        const line = await new Promise<string>((resolve, reject) => {
          child.stdout.on('data', (d) => {
            out += d
            if (out.includes('\n')) resolve(out.split('\n')[0])
          })
          child.on('close', (code) => reject(new Error(`serve exited ${code}: ${err}`)))
        })
        const { port, token } = JSON.parse(line) as { port: number; token: string }
        const res = await fetch(`http://127.0.0.1:${port}/api/app.info`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        })
        const info = (await res.json()) as { ok: boolean; data: { current: { path: string; snapshot?: boolean; readOnly: boolean } } }
        expect(info.data.current).toMatchObject({ path: db, snapshot: true, readOnly: true })
      } finally {
        child.kill('SIGTERM')
        await new Promise((r) => child.once('close', r))
      }
    }
    expect(fs.readdirSync(ro).map((f) => `${f}:${sha256File(path.join(ro, f))}`)).toEqual(before)
  })

  it('a DB with a leftover -journal: opens as a snapshot; nothing in the folder changes', async () => {
    const db = path.join(ro, 'journal.db')
    const before = fs.readdirSync(ro).map((f) => `${f}:${sha256File(path.join(ro, f))}`)
    const r = await run(['info', '--db', db, '--json'])
    expect(r.code, r.err + r.out).toBe(0)
    expect(JSON.parse(r.out).counts.memories).toBe(60) // the crashed transaction rolled back (in the copy)
    expect(fs.readdirSync(ro).map((f) => `${f}:${sha256File(path.join(ro, f))}`)).toEqual(before)
  })
})
