import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page, RecallEvent } from '../../shared/types'
import type { TraceDrivers, TraceReplay, WhyNot } from '../../shared/trace'
import { sha256File, tmpDir } from '../../../test/helpers/tmp'
import { openSource } from '../store/registry'

import { main } from './index'
import { writeDemoDb } from '../../../test/helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let db: string
let ev: RecallEvent
let dropped: string

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

beforeAll(async () => {
  t = tmpDir()
  db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 800 }).path
  const s = openSource({ path: db, workspacePath: path.join(t.dir, 'probe.ws') })
  ev = s.eventsPage({ limit: 1000 }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 2)!
  const { replayEvent } = await import('../trace/replay')
  dropped = (await replayEvent(s, ev.id)).trace.dropped.find((d) => d.gate === 'topK' || d.gate === 'floor')!.id
  s.close()
})
afterAll(() => t.cleanup())

describe('recallscope trace', () => {
  it('list --json pages the log with filters', async () => {
    const r = await run('trace', 'list', '--db', db, '--agent', ev.agentId!, '--limit', '5', '--json')
    expect(r.code).toBe(0)
    const page = JSON.parse(r.out) as Page<RecallEvent>
    expect(page.rows.length).toBeLessThanOrEqual(5)
    expect(page.rows.every((e) => e.agentId === ev.agentId)).toBe(true)
    const human = await run('trace', 'list', '--db', db, '--memory', ev.results[0].id)
    expect(human.code).toBe(0)
    expect(human.out).toContain(ev.id)
  })

  it('replay --json reproduces the log; --current with --set explains the config change', async () => {
    const before = sha256File(db)
    const r = await run('trace', 'replay', '--db', db, '--event', ev.id, '--json')
    expect(r.code).toBe(0)
    const rep = JSON.parse(r.out) as TraceReplay
    expect(rep.identical).toBe(true)
    expect(rep.trace.results.map((x) => x.id)).toEqual(ev.results.map((x) => x.id))
    const c = await run('trace', 'replay', '--db', db, '--event', ev.id, '--current', '--now', '2026-11-01T00:00:00Z', '--set', 'topK=2', '--json')
    expect(c.code).toBe(0)
    const cur = JSON.parse(c.out) as TraceReplay
    expect(cur.now).toBe(Date.parse('2026-11-01T00:00:00Z'))
    expect(cur.configChanges).toContainEqual({ path: 'topK', logged: ev.config!.topK, replay: 2 })
    expect(cur.trace.results.length).toBeLessThanOrEqual(2)
    const human = await run('trace', 'replay', '--db', db, '--event', ev.id)
    expect(human.out).toContain('IDENTICAL to the log')
    expect(sha256File(db)).toBe(before)
  })

  it('why --json for an event: the smallest change, verified', async () => {
    const r = await run('trace', 'why', '--db', db, '--event', ev.id, '--memory', dropped, '--json')
    expect(r.code).toBe(0)
    const w = JSON.parse(r.out) as WhyNot
    expect(w.eventId).toBe(ev.id)
    expect(w.status).toBe('dropped')
    expect(w.best).not.toBeNull()
    expect(w.best!.verified?.engine).toBe(true)
    const human = await run('trace', 'why', '--db', db, '--event', ev.id, '--memory', dropped)
    expect(human.out).toContain('Smallest change')
    expect(human.out).toContain('★')
  })

  it('why for an ad-hoc query takes the recall flags', async () => {
    const r = await run(
      'trace',
      'why',
      '--db',
      db,
      '--memory',
      dropped,
      '--query',
      ev.query!,
      '--agent',
      ev.agentId!,
      '--set',
      'topK=1',
      '--now',
      '2026-10-31T00:00:00Z',
      '--json',
    )
    expect(r.code).toBe(0)
    const w = JSON.parse(r.out) as WhyNot
    expect(w.eventId).toBeNull()
    expect(w.config.topK).toBe(1)
    expect(w.config.scope.agentId).toBe(ev.agentId)
  })

  it('drivers --json ranks the injected memories', async () => {
    const r = await run('trace', 'drivers', '--db', db, '--event', ev.id, '--json')
    expect(r.code).toBe(0)
    const d = JSON.parse(r.out) as TraceDrivers
    expect(d.rows.map((x) => x.id)).toEqual(ev.results.map((x) => x.id))
    expect(new Set(d.byInfluence)).toEqual(new Set(d.byShare))
    // the demo logs a decision: evidence per returned memory, in returned order
    expect(d.evidence!.rows.map((x) => x.id)).toEqual(ev.results.map((x) => x.id))
    const text = await run('trace', 'drivers', '--db', db, '--event', ev.id)
    expect(text.out).toContain('evidence in the decision')
    for (const x of d.evidence!.rows) expect(text.out).toMatch(new RegExp(`\\n ?\\d+  ${x.id} +\\d+% +-?\\d\\.\\d{3}  `))
  })

  it('bad usage: exit 2 with a clear message; unknown event: exit 2 NOT_FOUND', async () => {
    expect((await run('trace', '--db', db)).code).toBe(2)
    expect((await run('trace', 'nope', '--db', db)).code).toBe(2)
    const noMem = await run('trace', 'why', '--db', db, '--event', ev.id)
    expect(noMem.code).toBe(2)
    expect(noMem.err).toContain('--memory is required')
    const logged = await run('trace', 'replay', '--db', db, '--event', ev.id, '--set', 'topK=2')
    expect(logged.code).toBe(2)
    const missing = await run('trace', 'replay', '--db', db, '--event', 'ev-nope', '--json')
    expect(missing.code).toBe(2) // issue 10: an unknown id is bad input
    expect(JSON.parse(missing.out).error.code).toBe('NOT_FOUND')
  })
})
