/**
 * Issue 10, LOW 9/13: the inputs the issue lists answer a typed error naming the field,
 * never INTERNAL, and never a raw errno string.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { tmpDir } from './helpers/tmp'
import { writeDemoDb } from './helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let app: App
let call: Dispatch
let eventId: string
beforeAll(() => {
  t = tmpDir()
  const db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 120 }).path
  app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home') })
  call = createDispatcher(createHandlers(app))
  app.open(db)
  eventId = app.current!.eventsPage({ limit: 1 }).rows[0].id
})
afterAll(() => {
  app.close()
  t.cleanup()
})

async function expectError(channel: string, input: unknown, code: string, field: RegExp) {
  const r = await call(channel, input)
  expect(r.ok).toBe(false)
  if (!r.ok) {
    expect(r.error.code, r.error.message).toBe(code)
    expect(r.error.message).toMatch(field)
    expect(r.error.message).not.toMatch(/EISDIR|ENOENT|EACCES|RangeError|TypeError/)
  }
}

describe('typed errors for the issue-10 inputs', () => {
  it('trace.replay / recall.run with now = 1e308 → BAD_INPUT naming now', async () => {
    await expectError('trace.replay', { eventId, mode: 'current', now: 1e308 }, 'BAD_INPUT', /now/)
    await expectError('recall.run', { query: 'x', now: 1e308 }, 'BAD_INPUT', /now/)
    await expectError('recall.run', { query: 'x', now: -9e15 }, 'BAD_INPUT', /now/)
  })

  it('store.open of a folder → NOT_SQLITE "is a folder" (the Library used to show raw EISDIR)', async () => {
    // A folder holding one known store opens it (frameworks/index.ts); one holding none is refused.
    const empty = path.join(t.dir, 'empty-folder')
    fs.mkdirSync(empty, { recursive: true })
    await expectError('store.open', { path: empty }, 'NOT_SQLITE', /is a folder/)
    const info = await call('app.info', {})
    expect(info.ok && (info.data as { current: unknown }).current).toBeTruthy()
  })

  it('store.open with a workspace in a folder that does not exist → NOT_FOUND, not INTERNAL', async () => {
    await expectError('store.open', { path: app.current!.path, workspacePath: path.join(t.dir, 'no', 'such', 'ws.db') }, 'NOT_FOUND', /folder does not exist/)
  })

  it('a workspace path that is an existing non-SQLite file → typed, and the file is untouched', async () => {
    const r = await call('store.open', { path: app.current!.path, workspacePath: __filename })
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error.code).not.toBe('INTERNAL')
  })
})

describe('inputs only IPC can carry', () => {
  it('a 5000-deep object (structured clone has no depth limit) → BAD_INPUT, not a stack overflow', async () => {
    let deep: unknown = 'x'
    for (let i = 0; i < 5000; i++) deep = { a: deep }
    const r = await call('cases.save', { case: { query: 'q', note: deep } })
    expect(!r.ok && r.error.code).toBe('BAD_INPUT')
    const cyc: Record<string, unknown> = { query: 'q' }
    cyc.self = cyc
    const r2 = await call('recall.run', cyc)
    expect(r2.ok || r2.error.code !== 'INTERNAL').toBe(true)
  })
})
