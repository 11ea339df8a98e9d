/**
 * The demo DB's recall events are what this engine computes at each event's own
 * time: replaying every event at `at` with its logged config and the hashing
 * embedder gives the same ids, in the same order, with the same scores.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { validateConfig } from '../../shared/presets'
import { tmpDir } from '../../../test/helpers/tmp'
import { createEmbedder } from '../embed/index'
import { generateDemo } from './generate'
import { openSource } from '../store/registry'
import type { SqliteSource } from '../store/sqlite/source'
import { runRecall } from '../recall/engine'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource
let generated: ReturnType<typeof generateDemo>

beforeAll(() => {
  t = tmpDir()
  generated = generateDemo({ out: path.join(t.dir, 'demo.db'), memories: 2000, seed: 11 })
  store = openSource({ path: generated.path, workspacePath: path.join(t.dir, 'demo.ws') })
})
afterAll(() => {
  store.close()
  t.cleanup()
})

describe('demo recall events', () => {
  it('logs a few hundred events across sessions, each with the full config', () => {
    const events = store.eventsPage({ limit: 1000 }).rows
    expect(events.length).toBe(generated.events)
    expect(events.length).toBeGreaterThan(50)
    expect(new Set(events.map((e) => e.sessionId)).size).toBeGreaterThan(10)
    expect(new Set(events.map((e) => e.preset))).toEqual(new Set(['fieldguide', 'portal-semantic', 'engram', 'neo', 'portal-episodic']))
    for (const e of events) {
      expect(() => validateConfig(e.config)).not.toThrow() // the FULL config, not a partial
      expect(e.query).toBeTruthy()
      // logged before the user turn it answers was stored
      const turn = store.memoriesWhere({ sessionId: e.sessionId!, roles: ['user'] }).find((m) => m.turn === e.turn)!
      expect(e.at).toBe(turn.createdAt - 1)
    }
    expect(events.filter((e) => e.preset === 'fieldguide').every((e) => e.cue && e.cue.currentStep === e.query)).toBe(true)
    expect(events.some((e) => e.results.length > 0)).toBe(true)
  })

  it('every event replays identically at its own `now` with its logged config', async () => {
    const hashing = createEmbedder('hashing')
    const events = store.eventsPage({ limit: 1000 }).rows
    let compared = 0
    for (const e of events) {
      const trace = await runRecall(store, { text: e.query ?? '', cue: e.cue }, validateConfig(e.config), e.at, { embedder: hashing, preset: e.preset })
      expect(trace.results.map((r) => ({ id: r.id, score: r.score }))).toEqual(e.results)
      compared += e.results.length
    }
    expect(compared).toBeGreaterThan(100)
  })

  it('every event logs a decision (the optional `decision` column) written from what it injected, after the recall', () => {
    const events = store.eventsPage({ limit: 1000 }).rows
    let tools = 0
    for (const e of events) {
      const d = store.eventExtras(e.id).decision
      expect(d).toBeTruthy()
      expect(d!.at).toBeGreaterThan(e.at)
      const said = d!.text ?? d!.toolCall!.arguments
      const texts = [...store.getMemories(e.results.map((r) => r.id)).values()].map((m) => m.content)
      const sessions = [...store.getSessions(e.results.map((r) => r.id)).values()].map((x) => x.summary ?? '')
      const sources = [...texts, ...sessions].map((t) =>
        t
          .trim()
          .split(/(?<=[.!?])\s+/)[0]
          .replace(/[.!?]+$/, ''),
      )
      if (e.results.length === 0) expect(said).toMatch(/nothing saved/)
      else expect(sources.some((x) => x && said.toLowerCase().includes(x.toLowerCase().slice(1)))).toBe(true)
      if (d!.toolCall) {
        tools++
        expect(d!.toolCall.name).toBe('create_ticket')
        expect(e.agentId).toBe('agent-coder')
      }
    }
    expect(tools).toBeGreaterThan(0)
  })

  it('neo events never inject a turn of their live transcript', () => {
    for (const e of store.eventsPage({ limit: 1000 }).rows.filter((x) => x.preset === 'neo')) {
      const live = new Set(e.config!.scope!.excludeIds)
      for (const r of e.results) expect(live.has(r.id)).toBe(false)
    }
  })
})
