/**
 * Issue 10, HIGH 2: no path the app writes may land on the agent DB. Every writing
 * channel and CLI command is fed the agent DB (and its -wal, and the workspace) through
 * a symlink, a hard link, /proc/self/root/…, `..` segments, a symlinked folder and a case
 * variant; the sha256 of the agent DB and of its -wal must be unchanged after each.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { main } from '../src/main/cli/index'
import { openSource } from '../src/main/store/registry'

import { openDbPaths } from '../src/main/safety/fileIdentity'
import { sha256File, tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let agent: string // rollback-journal DB
let walAgent: string // WAL DB with a live -wal (an agent still writing)
let writer: Database.Database
let tiny: string
let n = 0

const HAS_PROC = fs.existsSync('/proc/self/root')

/** Every spelling of `target` we can make that is not its plain path. */
function aliases(target: string): [string, string][] {
  const id = ++n
  const dir = path.dirname(target)
  const base = path.basename(target)
  const out: [string, string][] = []
  if (fs.existsSync(target)) {
    const sym = path.join(t.dir, `sym-${id}-${base}`)
    fs.symlinkSync(target, sym)
    out.push(['symlink', sym])
    const hard = path.join(t.dir, `hard-${id}-${base}`)
    fs.linkSync(target, hard)
    out.push(['hard link', hard])
  } else {
    // a dangling symlink to a side file that does not exist yet: writing it would create it
    const sym = path.join(t.dir, `sym-${id}-${base}`)
    fs.symlinkSync(target, sym)
    out.push(['dangling symlink', sym])
  }
  if (HAS_PROC) out.push(['/proc/self/root', `/proc/self/root${target}`])
  fs.mkdirSync(path.join(dir, `sub-${id}`))
  out.push(['.. segments', `${dir}/sub-${id}/../${base}`])
  const dirLink = path.join(t.dir, `dirlink-${id}`)
  fs.symlinkSync(dir, dirLink)
  out.push(['symlinked folder', path.join(dirLink, base)])
  out.push(['case variant', path.join(dir, base.toUpperCase())])
  return out
}

function hashes(): Record<string, string> {
  const h: Record<string, string> = {}
  for (const f of [agent, `${agent}-wal`, `${agent}-journal`, walAgent, `${walAgent}-wal`]) h[f] = fs.existsSync(f) ? sha256File(f) : '(absent)'
  return h
}

/** Journal mode byte of the header (offset 18: 1 rollback, 2 WAL). */
const journalByte = (p: string) => fs.readFileSync(p).subarray(18, 19)[0]

beforeAll(() => {
  t = tmpDir()
  agent = writeDemoDb(path.join(t.dir, 'agent.db'), { memories: 120 }).path
  walAgent = path.join(t.dir, 'wal-agent.db')
  fs.copyFileSync(agent, walAgent)
  writer = new Database(walAgent)
  writer.pragma('journal_mode = WAL')
  writer.pragma('wal_autocheckpoint = 0')
  writer.exec(`UPDATE memories SET salience = 0.5 WHERE rowid IN (SELECT rowid FROM memories LIMIT 3)`)
  expect(fs.statSync(`${walAgent}-wal`).size).toBeGreaterThan(0)
  tiny = path.join(t.dir, 'tiny.jsonl')
  fs.writeFileSync(tiny, `${JSON.stringify({ id: 'm1', content: 'one memory', tier: 'working' })}\n`)
})
afterAll(() => {
  writer?.close()
  t?.cleanup()
})

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

describe('hostile paths through the channels', () => {
  let app: App
  let call: Dispatch
  beforeAll(() => {
    app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home') })
    call = createDispatcher(createHandlers(app))
  })
  afterAll(() => app.close())

  for (const which of ['agent', 'walAgent'] as const) {
    it(`store.open with the ${which} DB (or its -wal) as its own workspace is refused; nothing changes`, async () => {
      const db = which === 'agent' ? agent : walAgent
      const before = hashes()
      const mode = journalByte(db)
      for (const target of [db, `${db}-wal`, `${db}-journal`]) {
        for (const [how, alias] of aliases(target)) {
          const r = await call('store.open', { path: db, workspacePath: alias })
          // A case variant is another file on a case-sensitive FS; it may be refused (we fold case) or used as a workspace.
          if (how !== 'case variant') {
            expect(r.ok, `${how} ${alias}`).toBe(false)
            if (!r.ok) expect(r.error.code, `${how}: ${r.error.message}`).toBe('FORBIDDEN')
          }
          if (r.ok) await call('store.close', {})
          expect(hashes(), `${how} → ${alias}`).toEqual(before)
          expect(journalByte(db)).toBe(mode)
        }
      }
    })
  }

  it('a failed workspace open leaves the previous DB open, and cases.save lands in the workspace only', async () => {
    const opened = await call('store.open', { path: agent })
    expect(opened.ok).toBe(true)
    const before = hashes()
    const [, sym] = aliases(agent)[0]
    const r = await call('store.open', { path: agent, workspacePath: sym })
    expect(r.ok).toBe(false)
    const info = await call('app.info', {})
    expect(info.ok && (info.data as { current: { path: string } | null }).current?.path).toBe(agent)
    const saved = await call('cases.save', { case: { query: 'where do deploys go', expected: [{ id: 'x' }] } })
    // whatever the case schema says, the agent DB is not where it goes
    expect(hashes()).toEqual(before)
    if (saved.ok) expect(new Database(`${agent}.recallscope`, { readonly: true }).prepare('SELECT count(*) FROM eval_cases').pluck().get()).toBeGreaterThan(0)
  })

  it('cases.export onto the agent DB, its -wal or the open workspace is refused (overwrite: true)', async () => {
    expect((await call('store.open', { path: walAgent })).ok).toBe(true)
    const before = hashes()
    const ws = `${walAgent}.recallscope`
    const wsHash = sha256File(ws)
    for (const target of [walAgent, `${walAgent}-wal`, `${walAgent}-shm`, ws]) {
      for (const [how, alias] of [['plain', target] as [string, string], ...aliases(target)]) {
        if (how === 'case variant') continue
        // Even a path the user typed on the command line (granted) is refused by file identity.
        app.grants.grant(alias, 'command line', 'write')
        const r = await call('cases.export', { path: alias, overwrite: true })
        expect(r.ok, `${how} ${alias}`).toBe(false)
        if (!r.ok) expect(r.error.message).toMatch(/never writes it/)
      }
    }
    expect(hashes()[walAgent]).toBe(before[walAgent])
    expect(hashes()[`${walAgent}-wal`]).toBe(before[`${walAgent}-wal`])
    expect(fs.statSync(walAgent).size).toBeGreaterThan(0)
    expect(sha256File(ws)).toBe(wsHash)
  })

  it('import.start with the open agent DB as output (force: true) is refused at once', async () => {
    expect((await call('store.open', { path: walAgent })).ok).toBe(true)
    const before = hashes()
    for (const target of [walAgent, `${walAgent}-wal`, `${walAgent}.recallscope`]) {
      for (const [how, alias] of [['plain', target] as [string, string], ...aliases(target)]) {
        if (how === 'case variant') continue
        const r = await call('import.start', { kind: 'jsonl', in: tiny, out: alias, force: true })
        expect(r.ok, `${how} ${alias}`).toBe(false)
        if (!r.ok) expect(['FORBIDDEN', 'BAD_INPUT']).toContain(r.error.code)
      }
    }
    // no job was started, so nothing can have been renamed into place later
    expect(((await call('jobs.list', {})) as { ok: true; data: unknown[] }).data.filter((j) => (j as { kind: string }).kind === 'import')).toHaveLength(0)
    expect(hashes()).toEqual(before)
    const facts = await call('store.facts', {})
    expect(facts.ok && (facts.data as { counts: { memories: number } }).counts.memories).toBe(120)
  })

  it('settings.json hard-linked to the open agent DB is not written through', async () => {
    const home = path.join(t.dir, 'home2')
    fs.mkdirSync(home)
    fs.linkSync(agent, path.join(home, 'settings.json'))
    const app2 = new App({ mode: 'browser', dataDir: home })
    const before = hashes()
    app2.open(agent) // remembers the recent file: a settings write, refused for this target
    app2.close()
    expect(hashes()).toEqual(before)
  })
})

describe('hostile paths through the CLI', () => {
  it('recall / trace / serve with --workspace aliasing --db exit 2, nothing written', async () => {
    const before = hashes()
    for (const db of [agent, walAgent]) {
      for (const target of [db, `${db}-wal`]) {
        for (const [how, alias] of aliases(target)) {
          if (how === 'case variant') continue
          const r = await cli('recall', '--db', db, '--workspace', alias, '--query', 'deploy', '--json')
          expect(r.code, `${how} ${alias} ${r.out}${r.err}`).toBe(2)
          expect(JSON.parse(r.out).error.code).toBe('FORBIDDEN')
          const tr = await cli('trace', 'list', '--db', db, '--workspace', alias)
          expect(tr.code, `${how}: ${tr.err}`).toBe(2)
          // serve refuses before it listens (otherwise it would block here until a signal)
          const sv = await cli('serve', '--db', db, '--workspace', alias, '--port', '0')
          expect(sv.code, `${how}: ${sv.err}`).toBe(2)
        }
      }
    }
    expect(hashes()).toEqual(before)
    expect(openDbPaths()).toEqual(expect.not.arrayContaining([expect.objectContaining({ path: agent })]))
  })

  it('tune --out aliasing the open DB is refused before any tuning (exit 2), nothing written', async () => {
    const before = hashes()
    for (const [how, alias] of aliases(agent)) {
      if (how === 'case variant') continue
      const r = await cli('tune', '--db', agent, '--out', alias, '--force', '--budget', '2')
      expect(r.code, `${how} ${alias}: ${r.err}`).toBe(2)
      expect(r.err).toMatch(/--out: .* never writes it/)
      expect(r.err).not.toMatch(/gathering|trial/) // refused up front, not after the search
    }
    expect(hashes()).toEqual(before)
  })

  it('import --out aliasing the input (engram-style: the input is a DB) is refused', async () => {
    const before = hashes()
    for (const [how, alias] of aliases(agent)) {
      if (how === 'case variant') continue
      const r = await cli('import', 'engram', '--in', agent, '--out', alias, '--force', '--json')
      expect(r.code, `${how} ${alias}`).toBe(2)
    }
    expect(hashes()).toEqual(before)
  })

  it('the SqliteSource API refuses a workspace that is a hard link of the agent DB before opening either', () => {
    const before = hashes()
    const hard = path.join(t.dir, `direct-hard-${++n}.db`)
    fs.linkSync(agent, hard)
    expect(() => openSource({ path: agent, workspacePath: hard })).toThrow(/never writes it/)
    expect(hashes()).toEqual(before)
  })
})

describe('planted links at temp names', () => {
  it('an import whose predictable temp name is a symlink to the agent DB refuses instead of writing through it', async () => {
    const { CanonicalWriter } = await import('../src/main/store/sqlite/canonicalWriter')
    const before = hashes()
    const out = path.join(t.dir, `planted-${++n}.db`)
    const realNow = Date.now
    const fixed = realNow()
    Date.now = () => fixed
    try {
      fs.symlinkSync(agent, `${out}.tmp-${process.pid}-${fixed}`)
      expect(() => new CanonicalWriter(out)).toThrow(/already exists/)
    } finally {
      Date.now = realNow
    }
    expect(hashes()).toEqual(before)
  })
})
