/**
 * Mastra memory (LibSQLStore + LibSQLVector in one file): messages as episodic memories with their
 * text parts, threads as sessions, working memory pinned, semantic-recall vectors by message id;
 * the `mastra` (lastMessages 10) and `mastra:semantic` (topK 4) presets; bytes unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mergeConfig } from '../../src/shared/config'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
import { buildMastra, type MastraMessage } from '../helpers/frameworks/mastra'
import { sha256File, tmpDir } from '../helpers/tmp'

const Q = [1, 0, 0]
const v = (s: number) => [s, Math.sqrt(1 - s * s), 0]
const iso = (i: number) => new Date(Date.UTC(2025, 5, 1, 10, i)).toISOString()
// 12 messages in thread t1 (alternating), similarity to Q falling with the index; one in t2
const MSGS: MastraMessage[] = [
  ...Array.from({ length: 12 }, (_, i): MastraMessage => ({
    id: `m${i + 1}`,
    thread: 't1',
    role: i % 2 ? 'assistant' : 'user',
    text: `message ${i + 1} about the ${i === 4 ? 'kayak trip' : 'weather'}`,
    at: iso(i),
    embedding: v(0.95 - i * 0.05),
  })),
  { id: 'x1', thread: 't2', role: 'user', text: 'another thread', at: iso(30), embedding: v(0.99) },
]

let t: ReturnType<typeof tmpDir>
let file: string

beforeAll(async () => {
  t = tmpDir()
  file = await buildMastra(
    t.dir,
    [
      { id: 't1', resource: 'user-1', title: 'Trip planning', at: iso(0), workingMemory: '# Trip\n- Destination: Norway' },
      { id: 't2', resource: 'user-2', title: 'Other', at: iso(30) },
    ],
    MSGS,
    { 'user-1': '# User Information\n- **First Name**: Ana' },
  )
})
afterAll(() => t.cleanup())

describe('Mastra memory (mastra.db)', () => {
  it('opens read-only: messages, threads, working memory, vectors; the presets; bytes unchanged', async () => {
    const before = sha256File(file)
    const store = openSource({ path: file })
    try {
      const f = store.facts()
      expect(f.layout).toBe('mastra')
      expect(f.detectedBecause).toMatch(/vector index memory_messages/)
      expect(f.counts).toMatchObject({ memories: 13 + 2, sessions: 2 })
      const m5 = store.getMemory('m5')!
      expect(m5.content).toBe('message 5 about the kayak trip')
      expect(m5.role).toBe('user')
      expect(m5.sessionId).toBe('t1')
      expect(m5.userId).toBe('user-1')
      expect(m5.createdAt).toBe(Date.parse(iso(4)))
      const wm = store.getMemory('wm:user-1')!
      expect(wm.tier).toBe('working')
      expect(wm.content).toContain('Ana')
      expect(wm.metadata).toMatchObject({ pinned: true, scope: 'resource' })
      expect(store.getMemory('wm:thread:t1')!.content).toContain('Norway')
      expect(store.getSession('t1')!.summary).toBe('Trip planning')
      expect(f.models).toEqual([expect.objectContaining({ model: 'mastra:memory_messages', dim: 3, count: 13 })])

      // lastMessages 10: the ten newest messages of the thread
      const last = getPreset('mastra').config
      const lt = await runRecall(store, 'hi', { ...last, scope: { ...last.scope, sessionId: 't1' } }, Date.UTC(2026, 0, 1), { embedder: null })
      expect(lt.results.map((r) => r.id).sort()).toEqual(
        MSGS.slice(2, 12)
          .map((m) => m.id)
          .sort(),
      )

      // semantic recall, topK 4 over the resource's messages, by cosine (Q = e1: the first component)
      const sem = mergeConfig(getPreset('mastra:semantic').config, { model: 'mastra:memory_messages', scope: { userId: 'user-1' } })
      const st = await runRecall(store, 'trip', sem, Date.UTC(2026, 0, 1), { queryVector: Q })
      const expected = MSGS.filter((m) => m.thread === 't1')
        .sort((a, b) => b.embedding![0] - a.embedding![0])
        .slice(0, 4)
      expect(st.results.map((r) => r.id)).toEqual(expected.map((m) => m.id))
    } finally {
      store.close()
    }
    expect(sha256File(file)).toBe(before)
  })
})
