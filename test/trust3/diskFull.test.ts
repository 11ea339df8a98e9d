/**
 * Trust round 3, a full disk (docs/guide/safety.md): SQLite's SQLITE_FULL is the typed `DISK_FULL`,
 * never INTERNAL, and reads never fail because a cache write failed (before: `recall.run` failed
 * on a full disk, as it stores the query's vector in the workspace first).
 *
 * The disk is made full for the workspace only and for real as SQLite sees it: `PRAGMA
 * max_page_count` on the workspace connection is set to the pages it has, so the next write that
 * needs a page fails inside SQLite with SQLITE_FULL, exactly as on a full disk.
 */
import path from 'node:path'
import type Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../../src/main/api/app'
import { createHandlers } from '../../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../../src/main/api/register'
import type { RecallTrace } from '../../src/shared/types'
import { startFakeOllama, type FakeOllamaSwitches, type FakeServer } from '../helpers/fakeOllama'
import { sha256File, tmpDir } from '../helpers/tmp'
import { writeDemoDb } from '../helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let app: App
let call: Dispatch
let db: string
let ws: Database.Database
let srv: FakeServer<FakeOllamaSwitches>

beforeAll(async () => {
  // an embedder whose query vectors are cached in the workspace (the offline hashing one is not cached)
  srv = await startFakeOllama()
  t = tmpDir()
  db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 300 }).path
  app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home') })
  app.open(db)
  call = createDispatcher(createHandlers(app))
  ws = (app.requireStore() as unknown as { ws: Database.Database }).ws
  app.saveSettings({ ollamaHost: srv.url })
})
afterAll(async () => {
  app.close()
  await srv.close()
  t.cleanup()
})

describe('a full disk', () => {
  it('a write is DISK_FULL naming what could not be written; recall.run (whose cache write fails) still answers', async () => {
    const before = sha256File(db)
    const q = {
      query: 'deploy to staging',
      preset: 'fieldguide',
      config: { mode: 'hybrid', topK: 5, floor: null },
      now: Date.UTC(2026, 9, 20),
      embedder: 'ollama:nomic-embed-text',
    }
    const normal = await call('recall.run', q)
    expect(normal.ok).toBe(true)

    const pages = ws.pragma('page_count', { simple: true }) as number
    expect(ws.pragma(`max_page_count = ${pages}`, { simple: true })).toBe(pages)
    // the cap is live: a write that needs a new page fails inside SQLite with SQLITE_FULL
    expect(() => ws.exec(`CREATE TABLE filler (x); INSERT INTO filler VALUES (zeroblob(65536))`)).toThrow(expect.objectContaining({ code: 'SQLITE_FULL' }))

    const saved = await call('cases.save', { case: { name: 'on a full disk', query: 'x'.repeat(20_000), relevant: [{ id: 'm-1', grade: 2 }] } })
    expect(!saved.ok && saved.error.code).toBe('DISK_FULL')
    expect(!saved.ok && saved.error.message).toContain(ws.name) // the workspace file

    // A new query text: its vector is not cached, and caching it would need a page. The recall answers anyway,
    // the same ranking as with room on the disk.
    const full = await call('recall.run', q)
    expect(full.ok).toBe(true)
    const cached = () => ws.prepare('SELECT count(*) FROM query_cache').pluck().get() as number
    const n0 = cached()
    const fresh = await call('recall.run', { ...q, query: 'how do we deploy the staging database '.repeat(200) })
    expect(fresh.ok && (fresh.data as RecallTrace).results.length).toBeGreaterThan(0)
    expect(cached()).toBe(n0) // its cache write failed (and was ignored)
    if (!normal.ok || !full.ok) throw new Error('unreachable')
    expect((full.data as RecallTrace).results.map((r) => r.id)).toEqual((normal.data as RecallTrace).results.map((r) => r.id))
    // reads answer
    expect((await call('memories.page', { limit: 5 })).ok).toBe(true)
    expect((await call('cases.list', {})).ok).toBe(true)

    // room again: the save goes through
    ws.pragma(`max_page_count = ${pages + 10_000}`)
    expect((await call('cases.save', { case: { name: 'room again', query: 'q', relevant: [{ id: 'm-1', grade: 2 }] } })).ok).toBe(true)
    expect((await call('recall.run', { ...q, query: 'what broke in the last staging deploy '.repeat(200) })).ok).toBe(true)
    expect(cached()).toBeGreaterThan(n0) // with room, a new query's vector is cached: the write above was really attempted
    expect(sha256File(db)).toBe(before)
  })
})
