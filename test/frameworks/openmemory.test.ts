/**
 * OpenMemory (mem0's memory server): its SQLite file opened read-only in place — users, apps,
 * categories and states mapped; the access log's 'search' rows grouped into recall events with
 * the dashed memory ids the MCP tools return; the file's bytes unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mergeConfig } from '../../src/shared/config'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { eventLogOf } from '../../src/main/events/eventLog'
import { openSource } from '../../src/main/store/registry'
import { replayEvent } from '../../src/main/trace/replay'
import { buildOpenMemory, dashed, uuidHex, type OmMemory } from '../helpers/frameworks/openmemory'
import { sha256File, tmpDir } from '../helpers/tmp'

const DAY = 86_400_000
const NOW = Date.UTC(2026, 5, 1, 12, 0, 0)
const MEMS: OmMemory[] = [
  { key: 'a', content: 'Prefers dark roast coffee in the morning', app: 'claude', createdAt: NOW - 9 * DAY, categories: ['preferences', 'food'] },
  { key: 'b', content: 'Works on the billing service deploy pipeline', app: 'cursor', createdAt: NOW - 5 * DAY, categories: ['work'] },
  { key: 'c', content: 'Allergic to peanuts', app: 'claude', createdAt: NOW - 3 * DAY, metadata: { source: 'chat' } },
  { key: 'd', content: 'Old address in Porto', app: 'claude', createdAt: NOW - 20 * DAY, state: 'archived' },
  { key: 'e', content: 'A deleted coffee note', app: 'claude', createdAt: NOW - 2 * DAY, state: 'deleted' },
]
const id = (k: string) => dashed(uuidHex(`mem:${k}`))

let t: ReturnType<typeof tmpDir>
let file: string

beforeAll(() => {
  t = tmpDir()
  file = buildOpenMemory(t.dir, 'alice', ['claude', 'cursor'], MEMS, [
    {
      app: 'claude',
      query: 'what coffee does she like',
      at: NOW - DAY,
      results: [
        { key: 'a', score: 0.83 },
        { key: 'c', score: 0.41 },
      ],
    },
    // another app, one second later: its own event
    { app: 'cursor', query: 'what coffee does she like', at: NOW - DAY + 1000, results: [{ key: 'b', score: 0.2 }] },
    // the same query again a minute later: a new event
    { app: 'claude', query: 'what coffee does she like', at: NOW - DAY + 60_000, results: [{ key: 'a', score: 0.8 }] },
  ])
})
afterAll(() => t.cleanup())

describe('OpenMemory (openmemory.db)', () => {
  it('opens read-only: detection, scope from users and apps, states, categories; bytes unchanged', async () => {
    const before = sha256File(file)
    const store = openSource({ path: file })
    try {
      const f = store.facts()
      expect(f.layout).toBe('openmemory')
      expect(f.detectedBecause).toMatch(/memory_access_logs/)
      expect(f.counts.memories).toBe(4) // the deleted one is not shown
      const page = store.memoriesPage({ sort: 'created_at', dir: 'desc', limit: 10, tiers: ['long_term', 'archived'] })
      expect(page.rows.map((r) => r.id)).toEqual([id('c'), id('b'), id('a'), id('d')])
      const a = store.getMemory(id('a'))!
      expect(a.content).toBe(MEMS[0].content)
      expect(a.userId).toBe('alice')
      expect(a.agentId).toBe('claude')
      expect(a.tier).toBe('long_term')
      expect(a.createdAt).toBe(MEMS[0].createdAt)
      expect(a.metadata).toMatchObject({ categories: expect.arrayContaining(['preferences', 'food']), state: 'active', app: 'claude' })
      // two searches returned it: its last use is the later one (accessed_at of its row, ms precision)
      expect(a.useCount).toBe(2)
      expect(Math.floor(a.lastUsedAt! / 1000)).toBe(Math.floor((NOW - DAY + 60_000) / 1000))
      expect(store.getMemory(id('d'))!.tier).toBe('archived')
      expect(store.getMemory(id('e'))).toBeNull()

      const cfg = mergeConfig(getPreset('mem0').config, {
        mode: 'lexical',
        weights: { similarity: 0, lexical: 1, recency: 0, salience: 0 },
        minSimilarity: null,
      })
      const trace = await runRecall(store, 'peanuts', cfg, NOW, { embedder: null })
      expect(trace.results.map((r) => r.id)).toEqual([id('c')])
    } finally {
      store.close()
    }
    expect(sha256File(file)).toBe(before)
  })

  it("turns the access log's search rows into recall events: one per (app, query, moment), results in logged order with scores", async () => {
    const store = openSource({ path: file })
    try {
      expect(store.capabilities().recallEvents).toBe(true)
      const page = store.eventsPage({ dir: 'asc', limit: 10 })
      expect(page.total).toBe(3)
      const [e1, e2, e3] = page.rows
      expect(e1.query).toBe('what coffee does she like')
      expect(e1.agentId).toBe('claude')
      expect(e1.userId).toBe('alice')
      expect(e1.preset).toBe('mem0')
      expect(e1.results).toEqual([
        { id: id('a'), score: 0.83 },
        { id: id('c'), score: 0.41 },
      ])
      expect(e2.agentId).toBe('cursor')
      expect(e2.results.map((r) => r.id)).toEqual([id('b')])
      expect(e3.results).toEqual([{ id: id('a'), score: 0.8 }])
      expect(e3.at - e1.at).toBeGreaterThanOrEqual(59_000)
      // each event says where it came from, and the event sources list names the access log (not a recall_events table)
      for (const e of page.rows) expect(e.origin).toEqual({ kind: 'openmemory', tool: 'search_memory' })
      expect(store.getEvent(e1.id)!.origin?.kind).toBe('openmemory')
      expect(
        eventLogOf(store)
          .sources()
          .map((s) => [s.kind, s.label, s.events]),
      ).toEqual([['openmemory', 'OpenMemory access log (memory_access_logs, search rows)', 3]])
      expect(
        store
          .eventsForMemory(id('a'))
          .map((r) => r.eventId)
          .sort(),
      ).toEqual([e1.id, e3.id].sort())
      // the decision trace runs on it (replayed with the mem0 preset, which the event names)
      const replay = await replayEvent(store, e1.id, { mode: 'logged', embedder: 'none' })
      expect(replay.rows.map((r) => r.id)).toEqual(expect.arrayContaining([id('a'), id('c')]))
    } finally {
      store.close()
    }
  })
})
