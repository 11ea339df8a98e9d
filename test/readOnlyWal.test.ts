/**
 * A WAL-mode agent DB, closed cleanly by its agent (no -wal, no -shm beside it), opened read-only:
 * SQLite needs -wal/-shm to read it and creates them; recallscope must remove what it created when
 * it closes, so the folder is exactly as it was: through the store (a recall included), the CLI
 * (`info`, `recall`, `import framework`) and the framework-folder sniffing. Side files that were
 * already there (a running agent) are never removed, and a -wal that holds frames is left alone.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../src/main/cli/index'
import { runRecall } from '../src/main/recall/engine'
import { getPreset } from '../src/shared/presets'
import { openSource } from '../src/main/store/registry'
import { hashTree } from './helpers/frameworks/hashTree'
import { sha256File, tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

let t: ReturnType<typeof tmpDir>
beforeAll(() => {
  t = tmpDir()
})
afterAll(() => t.cleanup())

/** A demo DB switched to WAL and closed cleanly by its writer, alone in its own folder. */
function walDb(name: string): string {
  const dir = path.join(t.dir, name)
  fs.mkdirSync(dir)
  const file = path.join(dir, 'agent.db')
  writeDemoDb(file, { memories: 200 })
  const w = new Database(file)
  w.pragma('journal_mode = WAL')
  w.close()
  // the demo's own workspace (its eval cases) goes: recallscope's files live elsewhere in these tests
  for (const f of fs.readdirSync(dir)) if (f !== 'agent.db') fs.rmSync(path.join(dir, f))
  expect(fs.readdirSync(dir)).toEqual(['agent.db'])
  return file
}

async function cli(...args: string[]) {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

describe('a cleanly closed WAL-mode agent DB, opened read-only', () => {
  it('the store (browse + a recall) leaves its folder exactly as it was', async () => {
    const file = walDb('store')
    const dir = path.dirname(file)
    const before = hashTree(dir)
    const s = openSource({ path: file, workspacePath: path.join(t.dir, 'store.ws') })
    try {
      expect(s.memoriesPage({ limit: 5 }).rows).toHaveLength(5)
      // SQLite made its side files to read the WAL database
      expect(fs.readdirSync(dir).sort()).toEqual(['agent.db', 'agent.db-shm', 'agent.db-wal'])
      const trace = await runRecall(s, 'deploy', getPreset('fieldguide').config, Date.now(), {})
      expect(trace.counts.inScope).toBeGreaterThan(0)
    } finally {
      s.close()
    }
    expect(fs.readdirSync(dir)).toEqual(['agent.db'])
    expect(hashTree(dir)).toEqual(before)
  }, 60_000)

  it('the CLI (info, recall, import framework) leaves it exactly as it was (beside it: only its workspace)', async () => {
    const file = walDb('cli')
    const dir = path.dirname(file)
    const before = sha256File(file)
    const info = await cli('info', '--db', file)
    expect(info.code, info.err).toBe(0)
    const recall = await cli('recall', '--db', file, '--query', 'deploy', '--json')
    expect(recall.code, recall.err).toBe(0)
    const out = path.join(t.dir, 'copy.db')
    const imp = await cli('import', 'framework', '--in', file, '--out', out, '--json')
    expect(imp.code, imp.err).toBe(0)
    // the CLI keeps its workspace beside the store (agent.db.recallscope and its own WAL files): nothing else
    expect(fs.readdirSync(dir).filter((f) => !f.startsWith('agent.db.recallscope'))).toEqual(['agent.db'])
    expect(sha256File(file)).toBe(before)
  }, 60_000)

  it('a folder holding it (sniffed for a framework store) is left as it was', () => {
    const file = walDb('folder')
    const dir = path.dirname(file)
    const s = openSource({ path: dir, workspacePath: path.join(t.dir, 'folder.ws') })
    s.close()
    expect(fs.readdirSync(dir)).toEqual(['agent.db'])
  }, 60_000)

  it('side files that were there before (a running agent) stay, and so does a -wal holding frames', () => {
    const file = walDb('running')
    const dir = path.dirname(file)
    // the "agent": a connection kept open that wrote a row (frames in the -wal, not checkpointed)
    const agent = new Database(file)
    agent.pragma('wal_autocheckpoint = 0')
    agent.prepare(`UPDATE memories SET content = content || '.' WHERE rowid = 1`).run()
    const walBytes = fs.statSync(`${file}-wal`).size
    expect(walBytes).toBeGreaterThan(0)
    try {
      const s = openSource({ path: file, workspacePath: path.join(t.dir, 'running.ws') })
      expect(s.getMemory(s.memoriesPage({ limit: 1 }).rows[0].id)).not.toBeNull()
      s.close()
      expect(fs.readdirSync(dir).sort()).toEqual(['agent.db', 'agent.db-shm', 'agent.db-wal'])
      expect(fs.statSync(`${file}-wal`).size).toBe(walBytes)
    } finally {
      agent.close()
    }
  }, 60_000)
})
