/**
 * A big vector index is loaded by the job worker, not on the thread that answers
 * IPC (issue 13: nothing blocks the app). The first recall on a DB whose index is
 * big enough to snapshot waits (asynchronously) for the worker to load it and
 * save the snapshot; the main thread then only restores that snapshot. The
 * answer is the one a plain load gives.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { runRecall } from '../src/main/recall/engine'
import { openSource } from '../src/main/store/registry'
import { CanonicalWriter } from '../src/main/store/sqlite/canonicalWriter'
import { getPreset } from '../src/shared/presets'
import type { RecallTrace } from '../src/shared/types'
import { tmpDir } from './helpers/tmp'

const N = 21_000 // above the snapshot threshold (20,000 rows)
const DIM = 16
const MODEL = 'warm-16'
const NOW = Date.UTC(2026, 6, 1)

let t: ReturnType<typeof tmpDir>
let db: string
let app: App
let call: Dispatch

beforeAll(() => {
  t = tmpDir()
  db = path.join(t.dir, 'big.db')
  const w = new CanonicalWriter(db)
  let s = 12345
  const rnd = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296) * 2 - 1
  for (let i = 0; i < N; i++) {
    w.memory({
      id: `m${i}`,
      agent_id: 'a',
      user_id: 'u',
      session_id: `s${i % 300}`,
      role: 'user',
      kind: 'episodic',
      tier: 'working',
      content: `note ${i}`,
      summary: null,
      salience: 0.5,
      created_at: NOW - (N - i) * 60_000,
      last_used_at: null,
      use_count: 0,
      turn: i,
      source: null,
      metadata: null,
    })
    w.embedding('memory', `m${i}`, MODEL, Array.from({ length: DIM }, rnd))
  }
  w.finish()
  app = new App({ dataDir: path.join(t.dir, 'data'), mode: 'browser' })
  app.open(db)
  call = createDispatcher(createHandlers(app))
}, 120_000)
afterAll(() => {
  app?.close()
  t?.cleanup()
})

describe('big vector indexes are loaded off the main thread', () => {
  it('the first recall has the worker load the index and save a snapshot, then restores it here; same answer as a plain load', async () => {
    const store = app.requireStore()
    expect(store.capabilities().snapshots?.coldVectorModels()).toEqual([{ model: MODEL, ownerType: 'memory' }])
    const queryVector = Array.from({ length: DIM }, (_, i) => (i % 3) - 1)
    const config = { ...getPreset('fieldguide').config, floor: null }
    const r = await call('recall.run', { query: 'note 42', preset: 'fieldguide', config: { floor: null }, now: NOW, queryVector })
    if (!r.ok) throw new Error(r.error.message)
    const got = r.data as RecallTrace
    const idx = store.vectors(MODEL)
    expect(idx.fullLoads).toBe(0) // never loaded from SQL on this thread: restored from the worker's snapshot
    expect(idx.count).toBe(N)
    expect(store.capabilities().snapshots?.coldVectorModels()).toEqual([])

    const plain = openSource({ path: db, workspacePath: path.join(t.dir, 'plain.ws'), vectorCache: false })
    try {
      const want = await runRecall(plain, 'note 42', config, NOW, { queryVector })
      expect(plain.vectors(MODEL).fullLoads).toBe(1)
      expect(got.results.map((x) => x.id)).toEqual(want.results.map((x) => x.id))
      expect(got.results.length).toBeGreaterThan(0)
      expect(got.results.map((x) => [x.score, x.features])).toEqual(want.results.map((x) => [x.score, x.features]))
    } finally {
      plain.close()
    }
  })
})
