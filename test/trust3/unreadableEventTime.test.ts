/**
 * Trust round 3, unreadable event times (docs/guide/safety.md): a logged recall whose `at` is not a
 * time a date can hold (empty text, text, 1e18 ms) is unreadable and counted, never shown as
 * 1970-01-01 (before: its `at` read as 0, so the log listed it at 1970 and a replay ran "as of" 1970).
 * `events.page` gives it `at` NaN with the stored value in `unreadableAt`, the timeline counts it in
 * `badTimestamps`, a replay refuses it with BAD_INPUT, and `trace list` prints "unreadable time".
 */
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../../src/main/api/app'
import type { Dispatch } from '../../src/main/api/register'
import { main } from '../../src/main/cli/index'
import type { Page, RecallEvent } from '../../src/shared/types'
import { makeMemories, writeSqlite } from '../helpers/pgFixture'
import { sha256File, tmpDir } from '../helpers/tmp'
import { openTestApp } from '../helpers/testApp'

let t: ReturnType<typeof tmpDir>
let db: string
let app: App
let call: Dispatch
const GOOD_AT = Date.UTC(2026, 0, 2, 9, 30)
/** id → what is stored as its `at` */
const BAD = { 'ev-empty': '', 'ev-text': 'yesterday-ish', 'ev-far': 1e18 } as const

beforeAll(() => {
  t = tmpDir()
  const mems = makeMemories(6)
  db = writeSqlite(path.join(t.dir, 'events.db'), mems)
  const d = new Database(db)
  const ev = d.prepare('INSERT INTO recall_events (id, at, query, results) VALUES (?, ?, ?, ?)')
  ev.run('ev-good', GOOD_AT, 'coffee', JSON.stringify([{ id: mems[0].id, score: 0.5 }]))
  for (const [id, at] of Object.entries(BAD)) ev.run(id, at, 'coffee', JSON.stringify([{ id: mems[0].id, score: 0.5 }]))
  d.close()
  ;({ app, call } = openTestApp(db, path.join(t.dir, 'home')))
})
afterAll(() => {
  app.close()
  t.cleanup()
})

describe('an event whose time is unreadable', () => {
  it('is listed without a time (NaN + unreadableAt), never at 1970; counted by the timeline; a replay is BAD_INPUT', async () => {
    const before = sha256File(db)
    const r = await call('events.page', { limit: 50 })
    if (!r.ok) throw new Error(r.error.message)
    const rows = (r.data as Page<RecallEvent>).rows
    expect(rows.map((e) => e.id).sort()).toEqual(['ev-empty', 'ev-far', 'ev-good', 'ev-text'])
    for (const e of rows) {
      expect(e.at, e.id).not.toBe(0)
      if (e.id === 'ev-good') {
        expect(e.at).toBe(GOOD_AT)
        expect(e.unreadableAt).toBeUndefined()
      } else {
        expect(Number.isNaN(e.at), e.id).toBe(true)
        expect(e.unreadableAt).toBe(String(BAD[e.id as keyof typeof BAD]))
      }
    }

    const tl = await call('trace.timeline', {})
    expect(tl.ok && (tl.data as { badTimestamps: number; total: number })).toMatchObject({ badTimestamps: 3, total: 1 })

    for (const id of Object.keys(BAD)) {
      const rp = await call('trace.replay', { eventId: id })
      expect(!rp.ok && rp.error.code, id).toBe('BAD_INPUT')
      expect(!rp.ok && rp.error.message).toMatch(/unreadable time/)
    }
    expect((await call('trace.replay', { eventId: 'ev-good' })).ok).toBe(true)

    let out = ''
    const code = await main(['trace', 'list', '--db', db], { out: (s) => (out += `${s}\n`), err: (s) => (out += `${s}\n`) })
    expect(code).toBe(0)
    expect(out).not.toMatch(/1970/)
    expect(out.match(/unreadable time/g)).toHaveLength(3)
    expect(out).toContain('2026-01-02 09:30')
    expect(sha256File(db)).toBe(before)
  })
})
