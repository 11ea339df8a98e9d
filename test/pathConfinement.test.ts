/**
 * Issue 10, HIGH 3: the renderer cannot make main read or write files it names, and no
 * error or report ever echoes a file's contents.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { main } from '../src/main/cli/index'
import { generateDemo } from '../src/main/demo/generate'
import { tmpDir } from './helpers/tmp'

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
  db = generateDemo({ out: path.join(t.dir, 'agent.db'), memories: 80 }).path
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
  for (let i = 0; i < 200; i++) {
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
    app.grants.grant(secret, 'command line')
    const r = await call('cases.import', { format: 'jsonl', path: secret })
    expect(r.ok).toBe(true)
    if (r.ok) expect((r.data as { skipped: number }).skipped).toBe(5)
    expectNoEcho(r)
  })

  it('import.start of a non-JSON file: the failure and its report never quote the file', async () => {
    for (const kind of ['jsonl', 'locomo', 'engram'] as const) {
      const r = await call('import.start', { kind, in: secret, out: path.join(t.dir, `out-${kind}.db`) })
      expectNoEcho(r)
      if (r.ok) expectNoEcho(await waitJob(call, (r.data as { jobId: string }).jobId))
    }
  })
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
      expect(await call('store.pick', {})).toEqual({ ok: true, data: { supported: true, path: cases } })
      const after = await call('cases.import', { format: 'jsonl', path: cases })
      expect(after.ok && (after.data as { added: number }).added).toBe(1)
      const other = await call('cases.import', { format: 'jsonl', path: secret })
      expect(!other.ok && other.error.code).toBe('FORBIDDEN')
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
