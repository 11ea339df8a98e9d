/**
 * The decision trace on an event read from an event source: replay (as logged),
 * why (for its first matched memory, else any memory) and drivers all answer,
 * about that event, without NOT_FOUND.
 */
import { expect } from 'vitest'
import type { MemorySource } from '../../src/main/store/source'
import { eventDrivers } from '../../src/main/trace/drivers'
import { replayEvent } from '../../src/main/trace/replay'
import { whyNot } from '../../src/main/trace/why'

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
