/**
 * Issue 10, LOW 9/10/13/15: one exit-code rule (0 ok · 2 bad input or usage · 1 runtime
 * failure · 3 gate failed), user errors in one line naming the flag, no prototype
 * pollution through --set, unknown ids are bad input.
 */
import net from 'node:net'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../src/main/cli/index'
import { damagePages } from './helpers/malformedDb'
import { tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let db: string
beforeAll(() => {
  t = tmpDir()
  db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 300 }).path
})
afterAll(() => t.cleanup())

async function cli(...args: string[]) {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

/** A user error: the exit code, exactly one line on stderr, naming `flag`, no stack. */
async function expectUserError(args: string[], code: number, flag: RegExp | string) {
  const r = await cli(...args)
  expect(r.code, `${args.join(' ')}\n${r.err}`).toBe(code)
  expect(r.err.trim().split('\n'), r.err).toHaveLength(1)
  expect(r.err).toMatch(typeof flag === 'string' ? new RegExp(flag.replace(/[-.]/g, '\\$&')) : flag)
  expect(r.err).not.toMatch(/\n\s+at /)
  return r
}

describe('the exit-code rule', () => {
  it('is stated in --help', async () => {
    const r = await cli('--help')
    expect(r.code).toBe(0)
    expect(r.out).toMatch(/Exit codes: 0 ok · 2 bad input or usage .* 1 runtime failure · 3 quality gate failed/)
  })

  it('0: ok', async () => {
    expect((await cli('info', '--db', db, '--json')).code).toBe(0)
    expect((await cli('recall', '--db', db, '--query', 'deploy', '--now', '2026-10-20T12:00:00Z', '--json')).code).toBe(0)
  })

  it('2: a missing file, a folder, a file that is not SQLite, an unknown command or flag', async () => {
    await expectUserError(['info', '--db', path.join(t.dir, 'missing.db')], 2, 'No such file')
    // A folder holding one known store opens it (frameworks/index.ts); one holding none is refused.
    const empty = path.join(t.dir, 'empty-folder')
    fs.mkdirSync(empty, { recursive: true })
    await expectUserError(['info', '--db', empty], 2, 'is a folder')
    await expectUserError(['info', '--db', __filename], 2, 'not a SQLite database')
    expect((await cli('nope')).code).toBe(2)
    expect((await cli('info', '--bogus')).code).toBe(2)
  })

  it('2: bad flag values name the flag', async () => {
    await expectUserError(['recall', '--db', db, '--query', 'q', '--now', '99999999999999999999'], 2, '--now')
    await expectUserError(['recall', '--db', db, '--query', 'q', '--now', 'yesterday-ish'], 2, '--now')
    await expectUserError(['trace', 'list', '--db', db, '--after', 'garbage'], 2, '--after')
    await expectUserError(['trace', 'list', '--db', db, '--before', '1e400'], 2, '--before')
    await expectUserError(['serve', '--token', 'short'], 2, '--token')
    await expectUserError(['serve', '--port', '99999'], 2, '--port')
  })

  it('2: a port in use names --port (one line)', async () => {
    const blocker = net.createServer()
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()))
    const port = (blocker.address() as net.AddressInfo).port
    try {
      await expectUserError(['serve', '--port', String(port)], 2, '--port')
    } finally {
      blocker.close()
    }
  })

  it('2: --set __proto__.x=1 is refused and Object.prototype stays clean', async () => {
    for (const key of ['__proto__.polluted', 'constructor.prototype.polluted', 'scope.__proto__.polluted']) {
      const r = await cli('recall', '--db', db, '--query', 'q', '--set', `${key}=1`, '--json')
      expect(r.code, key).toBe(2)
      expect(JSON.parse(r.out).error.code).toBe('BAD_INPUT')
    }
    const tr = await cli('trace', 'replay', '--db', db, '--event', 'x', '--current', '--set', '__proto__.polluted=1')
    expect(tr.code).toBe(2)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.prototype).not.toHaveProperty('polluted')
  })

  it('2: trace why --memory with an unknown id', async () => {
    const list = JSON.parse((await cli('trace', 'list', '--db', db, '--limit', '1', '--json')).out)
    const ev = (list.rows ?? list.events ?? list)[0]
    const r = await cli('trace', 'why', '--db', db, '--memory', 'm-nope', '--event', ev.id, '--json')
    expect(r.code).toBe(2)
    expect(JSON.parse(r.out).error.code).toBe('NOT_FOUND')
    const human = await cli('trace', 'why', '--db', db, '--memory', 'm-nope', '--event', ev.id)
    expect(human.code).toBe(2)
    expect(human.err).toContain('--memory')
  })

  it('1: a runtime failure (a damaged DB) is one line, no stack', async () => {
    const bad = path.join(t.dir, 'damaged.db')
    writeDemoDb(bad, { memories: 400 })
    damagePages(bad, 6)
    const r = await cli('info', '--db', bad)
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/malformed/)
    expect(r.err).not.toMatch(/\n\s+at /)
  })

  it('3: a quality gate that fails', async () => {
    const r = await cli('eval', '--db', db, '--fail-under', 'recall@10=1.01', '--now', '2026-10-20T12:00:00Z', '--json')
    expect([3, 2]).toContain(r.code) // 2 only if the demo DB held no cases
    if (r.code === 2) throw new Error(`eval could not run: ${r.out}${r.err}`)
  })

  it('$RECALLSCOPE_HOME that cannot be created: one line, not EACCES + stack', async () => {
    const prev = process.env.RECALLSCOPE_HOME
    process.env.RECALLSCOPE_HOME = path.join(__filename, 'cannot-be-a-folder')
    try {
      const r = await cli('serve', '--port', '0', '--db', db)
      expect(r.code).toBe(1)
      expect(r.err.trim().split('\n')).toHaveLength(1)
      expect(r.err).toContain('RECALLSCOPE_HOME')
    } finally {
      if (prev === undefined) delete process.env.RECALLSCOPE_HOME
      else process.env.RECALLSCOPE_HOME = prev
    }
  })
})
