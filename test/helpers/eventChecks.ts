/**
 * The decision trace on an event read from an event source: replay (as logged),
 * why (for its first matched memory, else any memory) and drivers all answer,
 * about that event, without NOT_FOUND.
 */
import path from 'node:path'
import { expect } from 'vitest'
import { openStore } from '../../src/main/store/registry'
import type { MemorySource } from '../../src/main/store/source'
import { eventDrivers } from '../../src/main/trace/drivers'
import { replayEvent } from '../../src/main/trace/replay'
import { whyNot } from '../../src/main/trace/why'
import { sha256File, tmpDir } from './tmp'

export async function expectTraceRuns(store: MemorySource, eventId: string, memoryId: string): Promise<void> {
  const opts = { embedder: 'hashing', embedderOptions: {} }
  const r = await replayEvent(store, eventId, { mode: 'logged', ...opts })
  expect(r.event.id).toBe(eventId)
  // The logged results are rows of the replay's diff (matched ones, by id).
  for (const x of r.event.results) expect(r.rows.map((row) => row.id)).toContain(x.id)
  const w = await whyNot(store, { memoryId, eventId, ...opts, verify: 'none' })
  expect(w.eventId).toBe(eventId)
  expect(w.status).not.toBe('not-found')
  const d = await eventDrivers(store, eventId, opts)
  expect(d.eventId).toBe(eventId)
}

/**
 * A store built by `build` in a temp folder, opened read-only with its workspace beside it;
 * `done()` closes it and checks the store's bytes are unchanged (the agent's file is never written).
 */
export async function openFixtureStore(build: (dir: string) => string | Promise<string>): Promise<{ store: MemorySource; file: string; done(): void }> {
  const t = tmpDir()
  const file = await build(t.dir)
  const before = sha256File(file)
  const store = openStore({ path: file, workspacePath: path.join(t.dir, 'ws.recallscope') })
  return {
    store,
    file,
    done() {
      store.close()
      expect(sha256File(file)).toBe(before)
      t.cleanup()
    },
  }
}
