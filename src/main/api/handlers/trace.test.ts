import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TraceDrivers, TraceEventDetail, TraceReplay, TraceTimeline, WhyNot } from '../../../shared/trace'
import type { RecallEvent } from '../../../shared/types'
import { tmpDir } from '../../../../test/helpers/tmp'
import { App } from '../app'
import { createDispatcher, type Dispatch } from '../register'
import { createHandlers } from './index'
import { writeDemoDb } from '../../../../test/helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let app: App
let call: Dispatch
let ev: RecallEvent

beforeAll(() => {
  t = tmpDir()
  const db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 800 }).path
  app = new App({ dataDir: path.join(t.dir, 'data'), mode: 'browser' })
  app.open(db)
  call = createDispatcher(createHandlers(app))
  ev = app
    .requireStore()
    .eventsPage({ limit: 1000 })
    .rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 2)!
})
afterAll(() => {
  app.close()
  t.cleanup()
})

async function ok<T>(channel: string, input: unknown): Promise<T> {
  const r = await call(channel, input)
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`)
  return r.data as T
}

describe('trace.* channels', () => {
  it('trace.event: logged results with today’s text and the re-rendered block', async () => {
    const d = await ok<TraceEventDetail>('trace.event', { eventId: ev.id })
    expect(d.event.id).toBe(ev.id)
    expect(d.configSource).toBe('logged')
    expect(d.injected.map((r) => [r.id, r.score])).toEqual(ev.results.map((r) => [r.id, r.score]))
    expect(d.context.source).toBe('rerendered')
    // fieldguide's template prints each memory's text under its provenance label
    for (const r of d.injected) expect(d.context.text).toContain(r.unit!.content)
    expect(d.loggedVector).toBeNull()
  })

  it('trace.replay: logged is identical; current names the config change', async () => {
    const r = await ok<TraceReplay>('trace.replay', { eventId: ev.id })
    expect(r.mode).toBe('logged')
    expect(r.identical).toBe(true)
    const c = await ok<TraceReplay>('trace.replay', { eventId: ev.id, mode: 'current', config: { floor: 0.9 }, now: Date.UTC(2026, 10, 1) })
    expect(c.configChanges).toContainEqual({ path: 'floor', logged: 0.35, replay: 0.9 })
    expect(c.rows.filter((x) => x.status === 'missing').every((x) => x.causes.some((k) => k.code === 'gate'))).toBe(true)
  })

  it('trace.why for an event and ad hoc; trace.drivers; trace.timeline', async () => {
    const rep = await ok<TraceReplay>('trace.replay', { eventId: ev.id })
    const target = rep.trace.dropped[0].id
    const w = await ok<WhyNot>('trace.why', { memoryId: target, eventId: ev.id })
    expect(w.status).toBe('dropped')
    const adhoc = await ok<WhyNot>('trace.why', { memoryId: target, query: ev.query!, config: { scope: { agentId: ev.agentId! } }, now: Date.UTC(2026, 10, 1) })
    expect(adhoc.eventId).toBeNull()
    expect(adhoc.now).toBe(Date.UTC(2026, 10, 1))
    const d = await ok<TraceDrivers>('trace.drivers', { eventId: ev.id })
    expect(d.rows).toHaveLength(ev.results.length)
    const tl = await ok<TraceTimeline>('trace.timeline', { agentId: ev.agentId! })
    expect(tl.total).toBe(app.requireStore().eventsPage({ agentId: ev.agentId!, limit: 1000 }).total)
  })

  it('bad input is BAD_INPUT, unknown ids NOT_FOUND, never a crash', async () => {
    for (const [ch, bad] of [
      ['trace.event', {}],
      ['trace.replay', { eventId: ev.id, mode: 'tomorrow' }],
      ['trace.replay', { eventId: ev.id, mode: 'current', config: { topK: -1 } }],
      ['trace.why', { memoryId: 'm-1' }],
      ['trace.why', { memoryId: 'm-1', query: '   ' }],
      ['trace.why', { memoryId: 'm-1', eventId: ev.id, extra: 1 }],
      ['trace.drivers', { eventId: '' }],
      ['trace.timeline', { bins: 0 }],
    ] as const) {
      const r = await call(ch, bad)
      expect(r.ok, `${ch} ${JSON.stringify(bad)}`).toBe(false)
      if (!r.ok) expect(r.error.code).toBe('BAD_INPUT')
    }
    for (const [ch, input] of [
      ['trace.event', { eventId: 'ev-nope' }],
      ['trace.replay', { eventId: 'ev-nope' }],
      ['trace.drivers', { eventId: 'ev-nope' }],
      ['trace.why', { memoryId: 'm-1', eventId: 'ev-nope' }],
    ] as const) {
      const r = await call(ch, input)
      expect(r.ok).toBe(false)
      if (!r.ok) expect(r.error.code).toBe('NOT_FOUND')
    }
    const nf = await ok<WhyNot>('trace.why', { memoryId: 'no-such-memory', eventId: ev.id })
    expect(nf.status).toBe('not-found')
  })
})
