/**
 * Agno: `agno_memories` (+ `agno_sessions`) opened read-only in place — the JSON-quoted memory
 * text decoded, topics kept, epoch seconds read as such — and the `agno` preset (every memory of
 * the user, Agno's add_memories_to_context) checked against the fixture; bytes unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
import { buildAgno, type AgnoMemory } from '../helpers/frameworks/agno'
import { sha256File, tmpDir } from '../helpers/tmp'

const NOW_S = Date.UTC(2026, 5, 1, 12) / 1000
const MEMS: AgnoMemory[] = [
  {
    id: 'm1',
    memory: 'User likes "mutton" and spicy food',
    userId: 'u1',
    agentId: 'chef',
    topics: ['food'],
    input: 'I love mutton',
    createdAtS: NOW_S - 86_400 * 3,
  },
  {
    id: 'm2',
    memory: 'User is planning a trip to Japan',
    userId: 'u1',
    agentId: 'chef',
    topics: ['travel', 'japan'],
    createdAtS: NOW_S - 86_400,
    updatedAtS: NOW_S - 3600,
  },
  { id: 'm3', memory: 'User prefers short answers', userId: 'u2', teamId: 'support-team', topics: [], createdAtS: NOW_S - 86_400 * 10 },
]

let t: ReturnType<typeof tmpDir>
let file: string

beforeAll(() => {
  t = tmpDir()
  file = buildAgno(t.dir, MEMS, [
    { id: 's1', userId: 'u1', agentId: 'chef', summary: 'Talked about food and a Japan trip', createdAtS: NOW_S - 86_400 * 3, updatedAtS: NOW_S - 3600 },
  ])
})
afterAll(() => t.cleanup())

describe('Agno (agno_memories)', () => {
  it('opens read-only: content without JSON quotes, scope, topics, times; sessions with summaries; bytes unchanged', async () => {
    const before = sha256File(file)
    const store = openSource({ path: file })
    try {
      const f = store.facts()
      expect(f.layout).toBe('agno')
      expect(f.counts).toMatchObject({ memories: 3, sessions: 1 })
      const m1 = store.getMemory('m1')!
      expect(m1.content).toBe('User likes "mutton" and spicy food')
      expect(m1.userId).toBe('u1')
      expect(m1.agentId).toBe('chef')
      expect(m1.createdAt).toBe((NOW_S - 86_400 * 3) * 1000)
      expect(m1.metadata).toMatchObject({ topics: ['food'], input: 'I love mutton' })
      expect(store.getMemory('m3')!.agentId).toBe('support-team') // a team's memory: the team is its agent
      expect(store.getMemory('m2')!.metadata).toMatchObject({ updated_at: (NOW_S - 3600) * 1000 })
      const s = store.getSession('s1')!
      expect(s.summary).toBe('Talked about food and a Japan trip')
      expect(s.agentId).toBe('chef')

      // Agno puts every memory of the run's user in context: the preset returns exactly u1's memories.
      const cfg = getPreset('agno').config
      const trace = await runRecall(store, 'anything', { ...cfg, scope: { ...cfg.scope, userId: 'u1' } }, NOW_S * 1000, { preset: 'agno', embedder: null })
      expect(trace.results.map((r) => r.id).sort()).toEqual(['m1', 'm2'])
      // lexical recall finds the memory by a word of its decoded text
      const lex = await runRecall(
        store,
        'Japan',
        { ...cfg, mode: 'lexical', weights: { similarity: 0, lexical: 1, recency: 0, salience: 0 }, topK: 5 },
        NOW_S * 1000,
        { embedder: null },
      )
      expect(lex.results[0]?.id).toBe('m2')
    } finally {
      store.close()
    }
    expect(sha256File(file)).toBe(before)
  })
})
