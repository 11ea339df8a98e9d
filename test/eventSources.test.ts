/**
 * Event sources through the API (the app and `serve` share it): `events.sources`
 * and `events.page` on a store whose events come from its own records, and the
 * trace channels, which run in the job worker, on an event the worker's own log
 * cannot read (a reader added on the main thread: the event goes with the task).
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventSourceInfo, Page, RecallEvent } from '../src/shared/types'
import type { TraceDrivers, TraceEventDetail, TraceReplay, TraceTimeline } from '../src/shared/trace'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher, type Dispatch } from '../src/main/api/register'
import { eventLogOf } from '../src/main/events/eventLog'
import { createAgentsSession } from './helpers/frameworks/openaiAgents'
import { sha256File, tmpDir } from './helpers/tmp'

let t: ReturnType<typeof tmpDir>
let app: App
let call: Dispatch
let db: string
let before: string

async function ok<T>(channel: string, input: unknown): Promise<T> {
  const r = await call(channel, input)
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`)
  return r.data as T
}

const S = 'desk-1'
beforeAll(() => {
  t = tmpDir()
  db = path.join(t.dir, 'session.db')
  createAgentsSession(db, [
    { session: S, item: { role: 'user', content: 'My desk is by the window' }, at: '2026-04-01 09:00:00' },
    { session: S, item: { role: 'user', content: 'Where do I sit?' }, at: '2026-04-01 09:00:05' },
    { session: S, item: { type: 'function_call', call_id: 'c1', name: 'search_memory', arguments: '{"query": "desk"}' }, at: '2026-04-01 09:00:06' },
    { session: S, item: { type: 'function_call_output', call_id: 'c1', output: '["My desk is by the window"]' }, at: '2026-04-01 09:00:07' },
    { session: S, item: { role: 'assistant', content: [{ type: 'output_text', text: 'By the window.' }] }, at: '2026-04-01 09:00:08' },
  ])
  before = sha256File(db)
  app = new App({ dataDir: path.join(t.dir, 'data'), mode: 'browser' })
  app.open(db)
  call = createDispatcher(createHandlers(app))
})
afterAll(() => {
  app.close()
  expect(sha256File(db)).toBe(before)
  t.cleanup()
})

describe('event sources over the API', () => {
  it('events.sources and events.page show the session’s memory tool calls; the timeline counts them', async () => {
    const sources = await ok<EventSourceInfo[]>('events.sources', {})
    expect(sources).toMatchObject([{ kind: 'openai-agents', events: 1, matched: { id: 0, text: 1, normalized: 0, unmatched: 0 }, pending: false, error: null }])
    const page = await ok<Page<RecallEvent>>('events.page', {})
    expect(page.rows.map((e) => [e.id, e.results.map((r) => r.id)])).toEqual([[`openai-agents:${S}:c1`, ['1']]])
    expect((await ok<TraceTimeline>('trace.timeline', {})).total).toBe(1)
  })

  it('trace.event / replay / drivers run in the worker on an in-store event and on one only the main thread read', async () => {
    const id = `openai-agents:${S}:c1`
    expect((await ok<TraceEventDetail>('trace.event', { eventId: id })).event.decision?.text).toBe('By the window.')
    expect((await ok<TraceReplay>('trace.replay', { eventId: id, mode: 'logged' })).event.id).toBe(id)
    // A reader added on the main thread only (as a live source would be): the worker gets the event with the task.
    eventLogOf(app.requireStore()).addReader({
      kind: 'otlp-live',
      label: 'test live source',
      read: () => [
        {
          key: 'live:1',
          at: Date.UTC(2026, 3, 1, 10),
          agentId: null,
          userId: null,
          sessionId: S,
          turn: null,
          query: 'window',
          preset: null,
          results: [{ rank: 1, id: '1', text: null, score: 0.9 }],
          origin: { kind: 'otlp-live', tool: 'retrieval' },
          decision: null,
        },
      ],
    })
    const d = await ok<TraceDrivers>('trace.drivers', { eventId: 'live:1' })
    expect(d.eventId).toBe('live:1')
    const r = await ok<TraceReplay>('trace.replay', { eventId: 'live:1', mode: 'logged' })
    expect(r.event.results).toEqual([{ id: '1', score: 0.9, matchedBy: 'id' }])
    const missing = await call('trace.replay', { eventId: 'live:404', mode: 'logged' })
    expect(missing.ok ? null : missing.error.code).toBe('NOT_FOUND')
  })
})
