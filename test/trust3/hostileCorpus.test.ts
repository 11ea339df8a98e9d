/**
 * Trust round 3 conformance: a corpus of hostile files (FIFO, symlink to a FIFO, empty file,
 * garbage, a truncated SQLite file, a folder where a file should be) under every file name a store
 * type is found by (registry.ts: SQLite layouts, mem0's three files, basic-memory's memory.db,
 * MCP memory.jsonl, a LanceDB folder's data), opened both directly and as a folder. Each open must
 * end in a typed RecallscopeError (never INTERNAL, never an untyped throw) within a deadline.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSource } from '../../src/main/store/registry'
import { RecallscopeError } from '../../src/shared/result'
import { makeMemories, writeSqlite } from '../helpers/pgFixture'
import { tmpDir } from '../helpers/tmp'

let t: ReturnType<typeof tmpDir>
let good: Buffer
beforeAll(() => {
  t = tmpDir()
  good = fs.readFileSync(writeSqlite(path.join(t.dir, 'good.db'), makeMemories(30)))
})
afterAll(() => t.cleanup())

const NAMES = ['agent.db', 'vector_store.db', 'memory.db', 'history.db', 'memory.jsonl', 'store.sqlite']

const KINDS: Record<string, (p: string) => void> = {
  fifo: (p) => execFileSync('mkfifo', [p]),
  'symlink to a fifo': (p) => {
    execFileSync('mkfifo', [`${p}.target`])
    fs.symlinkSync(`${p}.target`, p)
  },
  empty: (p) => fs.writeFileSync(p, ''),
  garbage: (p) => fs.writeFileSync(p, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256))),
  'truncated SQLite': (p) => fs.writeFileSync(p, good.subarray(0, Math.floor(good.length / 3))),
  'folder instead of file': (p) => fs.mkdirSync(p),
}

const DEADLINE_MS = 5000

describe('hostile-file corpus against every store open path', () => {
  for (const [kind, plant] of Object.entries(KINDS))
    for (const name of NAMES)
      it(`${kind} named ${name}: typed error within ${DEADLINE_MS} ms, opened directly and as a folder`, () => {
        const dir = path.join(t.dir, `${kind.replace(/\W+/g, '-')}-${name}`)
        fs.mkdirSync(dir)
        const p = path.join(dir, name)
        plant(p)
        for (const target of [p, dir]) {
          const t0 = Date.now()
          let thrown: unknown = null
          try {
            openSource({ path: target, workspacePath: path.join(t.dir, `${path.basename(dir)}-${target === p ? 'f' : 'd'}.ws`) }).close()
          } catch (e) {
            thrown = e
          }
          expect(Date.now() - t0).toBeLessThan(DEADLINE_MS)
          // a truncated SQLite file may still open (its first pages are intact), and an empty
          // memory.jsonl is an empty graph by design; otherwise a typed error
          if (thrown === null) {
            expect(kind === 'truncated SQLite' || (kind === 'empty' && name === 'memory.jsonl'), `${kind} ${name} opened`).toBe(true)
            continue
          }
          expect(thrown, (thrown as Error)?.message).toBeInstanceOf(RecallscopeError)
          expect((thrown as RecallscopeError).code).not.toBe('INTERNAL')
        }
      })
})
