/**
 * Issue 10, HIGH 3: the renderer cannot make main read or write files it names, and no
 * error or report ever echoes a file's contents.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { main } from '../src/main/cli/index'
import { tmpDir } from './helpers/tmp'
import type { PickDialog } from '../src/main/safety/pathGrants'
import { writeDemoDb } from './helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let db: string
let secret: string
const MARK = 'S3CRET'
/** Lines shaped like /etc/passwd and a private key: each carries MARK, none is JSON. */
const SECRET_TEXT = [
  `root${MARK}:x:0:0:root:/root:/bin/bash`,
  `-----BEGIN ${MARK} PRIVATE KEY-----`,
  `api_key=${MARK}abcdef0123456789`,
  `{"unterminated": "${MARK}`,
  `[${MARK}]`,
].join('\n')

beforeAll(() => {
  t = tmpDir()
  db = writeDemoDb(path.join(t.dir, 'agent.db'), { memories: 80 }).path
  secret = path.join(t.dir, 'secret.txt')
  fs.writeFileSync(secret, `${SECRET_TEXT}\n`)
})
afterAll(() => t.cleanup())

/** Everything a result says, flattened, must not contain the marker (or any secret line). */
function expectNoEcho(x: unknown): void {
  const s = JSON.stringify(x) ?? ''
  expect(s).not.toContain(MARK)
  for (const line of SECRET_TEXT.split('\n')) expect(s).not.toContain(line.slice(0, 12))
}

async function waitJob(call: Dispatch, jobId: string): Promise<{ state: string; error?: unknown; result?: unknown }> {
  // an eventual state: a job worker started from source takes seconds on a loaded machine
  for (const end = Date.now() + 60_000; Date.now() < end;) {
    const r = await call('jobs.get', { jobId })
    const j = (r as { ok: true; data: { state: string } }).data
    if (j.state !== 'running') return j
    await new Promise((res) => setTimeout(res, 25))
  }
  throw new Error('job did not finish')
}

describe('browser mode: paths are confined to what the user chose', () => {
  let app: App
  let call: Dispatch
  beforeAll(() => {
    app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home') })
    call = createDispatcher(createHandlers(app))
    app.open(db)
  })
  afterAll(() => app.close())

  it('cases.import {path: "/etc/passwd"} is FORBIDDEN and echoes nothing', async () => {
    for (const p of ['/etc/passwd', secret, `${t.dir}/../${path.basename(t.dir)}/secret.txt`]) {
      const r = await call('cases.import', { format: 'jsonl', path: p })
      expect(r.ok).toBe(false)
      if (!r.ok) expect(r.error.code).toBe('FORBIDDEN')
      expectNoEcho(r)
    }
  })

  it('cases.export to a path nobody picked is FORBIDDEN, and nothing is created', async () => {
    const target = path.join(t.dir, 'not-picked.jsonl')
    const r = await call('cases.export', { path: target })
    expect(!r.ok && r.error.code).toBe('FORBIDDEN')
    expect(fs.existsSync(target)).toBe(false)
    // the renderer's flow (text back, no path) still works
    const text = await call('cases.export', {})
    expect(text.ok).toBe(true)
  })

  it('the same file sent as text (or granted) is read, but no issue quotes a line', async () => {
    for (const format of ['jsonl', 'locomo'] as const) {
      const r = await call('cases.import', { format, text: SECRET_TEXT })
      expectNoEcho(r)
    }
    app.grants.grant(secret, 'command line', 'read')
    const r = await call('cases.import', { format: 'jsonl', path: secret })
    expect(r.ok).toBe(true)
    if (r.ok) expect((r.data as { skipped: number }).skipped).toBe(5)
    expectNoEcho(r)
  })

  it('--force replaces only a database: a typed output that is any other file is refused, and kept', async () => {
    const jsonl = path.join(t.dir, 'force-in.jsonl')
    fs.writeFileSync(jsonl, `${JSON.stringify({ content: 'one' })}\n`)
    const notes = path.join(t.dir, 'notes.txt')
    fs.writeFileSync(notes, 'my notes\n')
    const r = await call('import.start', { kind: 'jsonl', in: jsonl, out: notes, force: true })
    expect(!r.ok && r.error.code).toBe('CONFLICT')
    expect(!r.ok && r.error.message).toMatch(/not a SQLite database: --force replaces only a database/)
    expect(fs.readFileSync(notes, 'utf8')).toBe('my notes\n')
    const cliRun = await main(['import', 'jsonl', '--in', jsonl, '--out', notes, '--force'], { out: () => undefined, err: () => undefined })
    expect(cliRun).toBe(2)
    expect(fs.readFileSync(notes, 'utf8')).toBe('my notes\n')
    // a database (here: an earlier import) is replaced as before
    const db2 = path.join(t.dir, 'force-out.db')
    expect(await main(['import', 'jsonl', '--in', jsonl, '--out', db2], { out: () => undefined, err: () => undefined })).toBe(0)
    expect(await main(['import', 'jsonl', '--in', jsonl, '--out', db2, '--force'], { out: () => undefined, err: () => undefined })).toBe(0)
  })

  it('import.start of a non-JSON file: the failure and its report never quote the file', async () => {
    for (const kind of ['jsonl', 'locomo', 'engram'] as const) {
      const r = await call('import.start', { kind, in: secret, out: path.join(t.dir, `out-${kind}.db`) })
      expectNoEcho(r)
      if (r.ok) expectNoEcho(await waitJob(call, (r.data as { jobId: string }).jobId))
    }
  }, 180_000)
})

describe('Electron mode: the native dialog grants the path', () => {
  it('store.pick records the chosen file; cases.import takes it, and only it', async () => {
    const cases = path.join(t.dir, 'picked.jsonl')
    fs.writeFileSync(cases, `${JSON.stringify({ id: 'p1', query: 'picked case' })}\n`)
    const app = new App({ mode: 'electron', dataDir: path.join(t.dir, 'home-e'), pickFile: async () => cases })
    const call = createDispatcher(createHandlers(app))
    app.open(db)
    try {
      const before = await call('cases.import', { format: 'jsonl', path: cases })
      expect(!before.ok && before.error.code).toBe('FORBIDDEN')
      expect(await call('store.pick', { purpose: 'casesIn' })).toEqual({ ok: true, data: { supported: true, path: cases } })
      const after = await call('cases.import', { format: 'jsonl', path: cases })
      expect(after.ok && (after.data as { added: number }).added).toBe(1)
      const other = await call('cases.import', { format: 'jsonl', path: secret })
      expect(!other.ok && other.error.code).toBe('FORBIDDEN')
    } finally {
      app.close()
    }
  })
})

describe('Electron mode: store.open, import.start and cases.export take only dialog paths', () => {
  /** A desktop App whose native dialog answers from a queue and records what it was asked to show. */
  function desktop(home: string) {
    const answers: (string | null)[] = []
    const shown: PickDialog[] = []
    const app = new App({
      mode: 'electron',
      dataDir: path.join(t.dir, home),
      pickFile: async (d) => {
        shown.push(d)
        return answers.shift() ?? null
      },
    })
    return { app, call: createDispatcher(createHandlers(app)), answers, shown }
  }
  const codeOf = (r: { ok: boolean; error?: { code: string } }) => (r.ok ? 'ok' : r.error!.code)

  it('a typed DB path is FORBIDDEN (the open DB stays), the picked one opens, a recent one reopens', async () => {
    const other = writeDemoDb(path.join(t.dir, 'other.db'), { memories: 30 }).path
    const { app, call, answers, shown } = desktop('home-open')
    app.open(db) // as from the command line
    try {
      for (const p of [other, '/etc/passwd', `${t.dir}/./other.db`]) {
        const r = await call('store.open', { path: p })
        expect(codeOf(r), p).toBe('FORBIDDEN')
        expectNoEcho(r)
      }
      const info = await call('app.info', {})
      expect(info.ok && (info.data as { current: { path: string } }).current.path).toBe(db)
      // A workspace the renderer names is a write: never without a dialog or the command line.
      answers.push(other)
      expect(await call('store.pick', {})).toEqual({ ok: true, data: { supported: true, path: other } })
      expect(shown.at(-1)).toMatchObject({ purpose: 'db', kind: 'open' })
      expect(codeOf(await call('store.open', { path: other, workspacePath: path.join(t.dir, 'ws-typed.db') }))).toBe('FORBIDDEN')
      expect(fs.existsSync(path.join(t.dir, 'ws-typed.db'))).toBe(false)
      const opened = await call('store.open', { path: other })
      const check = new Database(other, { readonly: true })
      expect(opened.ok && (opened.data as { memories: number }).memories).toBe(check.prepare('SELECT count(*) FROM memories').pluck().get())
      check.close()
      // The first DB is in main's own recent list: reopening it needs no dialog.
      expect(codeOf(await call('store.open', { path: db }))).toBe('ok')
      expect(codeOf(await call('store.openDemo', {}))).toBe('ok')
    } finally {
      app.close()
    }
  })

  it('import.start: typed in/out are FORBIDDEN; Open-dialog input + Save-dialog output import', async () => {
    const jsonl = path.join(t.dir, 'picked-in.jsonl')
    fs.writeFileSync(jsonl, `${JSON.stringify({ id: 'm1', content: 'one memory' })}\n${JSON.stringify({ id: 'm2', content: 'two' })}\n`)
    const out = path.join(t.dir, 'picked-out.db')
    const { app, call, answers, shown } = desktop('home-import')
    try {
      expect(codeOf(await call('import.start', { kind: 'jsonl', in: jsonl, out }))).toBe('FORBIDDEN')
      answers.push(jsonl)
      await call('store.pick', { purpose: 'importIn' })
      expect(shown.at(-1)).toMatchObject({ purpose: 'importIn', kind: 'open' })
      // input granted, output still typed
      expect(codeOf(await call('import.start', { kind: 'jsonl', in: jsonl, out }))).toBe('FORBIDDEN')
      // an Open dialog's grant is read-only: it does not let main write the file
      answers.push(out)
      await call('store.pick', { purpose: 'db' })
      expect(codeOf(await call('import.start', { kind: 'jsonl', in: jsonl, out }))).toBe('FORBIDDEN')
      expect(fs.existsSync(out)).toBe(false)
      answers.push(out)
      await call('store.pick', { purpose: 'importOut', defaultPath: path.join(t.dir, 'suggested.db') })
      expect(shown.at(-1)).toMatchObject({ purpose: 'importOut', kind: 'save', defaultPath: path.join(t.dir, 'suggested.db') })
      const r = await call('import.start', { kind: 'jsonl', in: jsonl, out })
      expect(r.ok).toBe(true)
      const job = await waitJob(call, (r as { ok: true; data: { jobId: string } }).data.jobId)
      expect(job.state).toBe('done')
      // what the Save dialog chose can be opened right after ("Open it")
      const opened = await call('store.open', { path: out })
      expect(opened.ok && (opened.data as { memories: number }).memories).toBe(2)
    } finally {
      app.close()
    }
  })

  it('cases.export writes only to a Save-dialog path; grants are exact (another case of the name is another file)', async () => {
    const { app, call, answers } = desktop('home-export')
    app.open(db)
    try {
      const target = path.join(t.dir, 'Cases-Export.jsonl')
      answers.push(target)
      await call('store.pick', { purpose: 'casesIn' }) // read grant
      expect(codeOf(await call('cases.export', { path: target }))).toBe('FORBIDDEN')
      answers.push(target)
      await call('store.pick', { purpose: 'casesOut' })
      expect(codeOf(await call('cases.export', { path: path.join(t.dir, 'cases-export.jsonl') }))).toBe('FORBIDDEN')
      expect(codeOf(await call('cases.export', { path: target }))).toBe('ok')
      expect(fs.existsSync(target)).toBe(true)
    } finally {
      app.close()
    }
  })

  it('a typed postgres:// URL is a network address, unless it names local files (sslcert, …)', () => {
    const { app } = desktop('home-pg')
    expect(app.confine('postgres://me@db.example/agent', 'store.open', 'read')).toBe('postgres://me@db.example/agent')
    for (const q of ['sslrootcert=/etc/passwd', 'sslkey=/home/me/.ssh/id_rsa', 'sslcert=x.pem', 'passfile=/etc/shadow'])
      expect(() => app.confine(`postgres://me@db.example/agent?${q}`, 'store.open', 'read')).toThrow(/FORBIDDEN|not chosen/)
    app.grants.grant('postgres://me@db.example/agent?sslrootcert=/ca.pem', 'command line', 'read')
    expect(app.confine('postgres://me@db.example/agent?sslrootcert=/ca.pem', 'store.open', 'read')).toContain('sslrootcert')
  })

  it('the Connect form and the Postgres mapping dialog refuse a URL naming local files (desktop), before connecting', async () => {
    const { app, call } = desktop('home-pg2')
    const url = 'postgres://me@127.0.0.1:1/agent?sslrootcert=/etc/passwd'
    try {
      for (const [channel, input] of [
        ['pg.test', { conn: { url } }],
        ['pg.connect', { conn: { url } }],
        ['store.tables', { pg: { conn: { url } } }],
      ] as const)
        expect(codeOf(await call(channel, input)), channel).toBe('FORBIDDEN')
    } finally {
      app.close()
    }
  })

  it('browser mode: what the user types in the Library counts as chosen (the token guards the page)', async () => {
    const app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home-b2') })
    const call = createDispatcher(createHandlers(app))
    try {
      expect(codeOf(await call('store.open', { path: db }))).toBe('ok')
      expect(await call('store.pick', {})).toEqual({ ok: true, data: { supported: false, path: null } })
      // cases.import/export by path stay grant-only (the page sends text)
      expect(codeOf(await call('cases.export', { path: path.join(t.dir, 'b2.jsonl') }))).toBe('FORBIDDEN')
    } finally {
      app.close()
    }
  })
})

describe('CLI: errors about a named file never quote it', () => {
  async function cli(...args: string[]) {
    let out = ''
    let err = ''
    const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
    return { code, out, err }
  }
  it('--config / --cue pointing at a non-JSON file: exit 2, no contents', async () => {
    for (const flag of ['--config', '--cue']) {
      const r = await cli('recall', '--db', db, '--query', 'q', flag, secret)
      expect(r.code).toBe(2)
      expect(r.err).toContain(flag)
      expectNoEcho(r)
    }
  })
  it('import jsonl/locomo of a non-JSON file: exit 2, no contents', async () => {
    for (const kind of ['jsonl', 'locomo']) {
      const r = await cli('import', kind, '--in', secret, '--out', path.join(t.dir, `cli-${kind}.db`))
      expect(r.code).toBe(2)
      expectNoEcho(r)
    }
  })
})
