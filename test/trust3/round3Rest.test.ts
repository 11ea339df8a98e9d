/**
 * Trust round 3, the rest (docs/guide/safety.md), each hostile input built here:
 * - timestamps outside Date’s range (±8.64e15 ms) in a memory or an event: `trace why` answers for a memory
 *   (an event whose own time is unreadable is a typed BAD_INPUT),
 *   the memory's times are unreadable and counted (facts.malformed.badTimestamp), never INTERNAL;
 * - a FIFO planted as a LanceDB data file: refused with BAD_INPUT naming it, within seconds (the
 *   reader child would otherwise wait for its 5-minute timeout);
 * - a FIFO given as a JSONL import: refused (BAD_INPUT), never waited on;
 * - a `memories` VIEW (no rowid): UNKNOWN_LAYOUT naming it, and the failed open leaves no
 *   workspace file behind (before: INTERNAL "no such column: m.rowid" and a stray workspace).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import * as lancedb from '@lancedb/lancedb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/main/cli/index'
import { openSource } from '../../src/main/store/registry'
import { readLines } from '../../src/main/store/importers/jsonl'
import { RecallscopeError } from '../../src/shared/result'
import { makeMemories, writeSqlite } from '../helpers/pgFixture'
import { sha256File, tmpDir } from '../helpers/tmp'

let t: ReturnType<typeof tmpDir>
beforeAll(() => {
  t = tmpDir()
})
afterAll(() => t.cleanup())

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  let out = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (out += `${s}\n`) })
  return { code, out }
}

function errorOf(fn: () => unknown): RecallscopeError | null {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(RecallscopeError)
    return e as RecallscopeError
  }
  return null
}

describe('timestamps outside Date’s range', () => {
  it('trace why / replay answer; the memory’s times are unreadable and counted; the store unchanged', async () => {
    const mems = makeMemories(12)
    const db = writeSqlite(path.join(t.dir, 'far-times.db'), mems)
    const d = new Database(db)
    // 1e20 ms and -1e19 ms: finite numbers no Date can hold (toISOString throws RangeError)
    d.prepare('UPDATE memories SET created_at = 1e20, last_used_at = -1e19 WHERE id = ?').run(mems[0].id)
    const ev = d.prepare('INSERT INTO recall_events (id, at, query, results) VALUES (?, ?, ?, ?)')
    ev.run('far', 1e18, 'coffee', JSON.stringify([{ id: mems[0].id, score: 0.5 }]))
    ev.run('near', Date.UTC(2026, 0, 2), 'coffee', JSON.stringify([{ id: mems[0].id, score: 0.5 }]))
    d.close()
    const before = sha256File(db)
    for (const event of ['far', 'near']) {
      const why = await cli(['trace', 'why', '--db', db, '--event', event, '--memory', mems[0].id, '--json'])
      expect(why.out).not.toMatch(/INTERNAL|Invalid time value/)
      if (event === 'far') {
        // the event's own time is unreadable: a why-not needs its moment, so a typed refusal (never "as of 1970")
        expect(why.code).toBe(2)
        expect(why.out).toMatch(/unreadable time/)
        const replay = await cli(['trace', 'replay', '--db', db, '--event', event, '--json'])
        expect(replay.code).toBe(2)
        expect(replay.out).toMatch(/BAD_INPUT/)
        continue
      }
      expect(why.code).toBe(0)
      const w = JSON.parse(why.out) as { memory: { createdAt: number; lastUsedAt: number | null } }
      expect(w.memory.lastUsedAt).toBeNull()
      const replay = await cli(['trace', 'replay', '--db', db, '--event', event, '--json'])
      expect(replay.out).not.toMatch(/INTERNAL/)
    }
    const s = openSource({ path: db })
    try {
      expect(s.facts().malformed.badTimestamp).toBe(1)
      // the time range is the readable rows' (the fixture's own minimum and maximum)
      const readable = mems.slice(1).map((m) => m.createdAt)
      expect(s.facts().timeRange).toEqual({ min: Math.min(...readable), max: Math.max(...readable) })
    } finally {
      s.close()
    }
    expect(sha256File(db)).toBe(before)
  }, 60_000)
})

describe('planted FIFOs in LanceDB folders and imports', () => {
  it('a FIFO as a LanceDB data file → BAD_INPUT naming it, within seconds', async () => {
    const dir = path.join(t.dir, 'hostile.lancedb')
    const db = await lancedb.connect(dir)
    await db.createTable('docs', [{ id: 'd-1', text: 'staging needs the VPN', vector: [1, 0, 0, 0] }])
    const dataDir = path.join(dir, 'docs.lance', 'data')
    const victim = path.join(dataDir, fs.readdirSync(dataDir)[0])
    fs.rmSync(victim)
    execFileSync('mkfifo', [victim])
    const t0 = Date.now()
    const err = errorOf(() => openSource({ path: dir, workspacePath: path.join(t.dir, 'lance.ws') }).close())
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(err?.code).toBe('BAD_INPUT')
    expect(err?.message).toContain(victim)
    expect(err?.message).toMatch(/FIFO/)
  }, 60_000)

  it('a FIFO given as a JSONL file → BAD_INPUT, never waited on', () => {
    const fifo = path.join(t.dir, 'memories.jsonl')
    execFileSync('mkfifo', [fifo])
    const t0 = Date.now()
    const err = errorOf(() => [...readLines(fifo)])
    expect(err?.code).toBe('BAD_INPUT')
    expect(Date.now() - t0).toBeLessThan(5000)
  })
})

describe('a memories VIEW without rowid', () => {
  it('→ UNKNOWN_LAYOUT naming memories; no workspace file left; the store unchanged', () => {
    const dir = path.join(t.dir, 'view-store')
    fs.mkdirSync(dir)
    const db = writeSqlite(path.join(dir, 'view.db'), makeMemories(12))
    const d = new Database(db)
    d.exec('ALTER TABLE memories RENAME TO memory_rows; CREATE VIEW memories AS SELECT * FROM memory_rows')
    d.close()
    const before = sha256File(db)
    const listing = fs.readdirSync(dir).sort()
    const err = errorOf(() => openSource({ path: db }).close())
    expect(err?.code).toBe('UNKNOWN_LAYOUT')
    expect(err?.message).toMatch(/memories has no rowid/)
    expect(fs.readdirSync(dir).sort()).toEqual(listing)
    expect(sha256File(db)).toBe(before)
  })
})
