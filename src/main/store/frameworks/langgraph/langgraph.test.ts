/**
 * LangGraph opened in place: checkpoints written by the real JS SqliteSaver (JSON serde), Python's
 * msgpack checkpoints and SqliteStore tables from their DDL. Expected values come from the fixture
 * specs and from cosine computed here.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../../../shared/presets'
import type { RecallConfig } from '../../../../shared/types'
import { runRecall } from '../../../recall/engine'
import { openSource } from '../../registry'
import { fakeUnitVector } from '../../../../../test/helpers/fakeOllama'
import {
  createLangGraphJsCheckpoints,
  createLangGraphPyCheckpoints,
  createLangGraphStore,
  THREADS,
  type StoreItem,
} from '../../../../../test/helpers/frameworks/langgraph'
import { sha256File, tmpDir } from '../../../../../test/helpers/tmp'

const DIM = 8
let t: ReturnType<typeof tmpDir>
let jsPath: string
let pyPath: string

const vec = (text: string) => fakeUnitVector(text, DIM)
const ITEMS: StoreItem[] = [
  {
    namespace: ['memories', 'alice'],
    key: 'm1',
    value: { content: 'Alice is vegetarian' },
    vectors: { $: vec('Alice is vegetarian') },
    createdAt: '2025-04-01 10:00:00',
  },
  {
    namespace: ['memories', 'alice'],
    key: 'm2',
    value: { kind: 'Memory', content: { content: 'Alice runs every morning' } },
    vectors: { $: vec('Alice runs every morning') },
    createdAt: '2025-04-02 10:00:00',
  },
  {
    namespace: ['memories', 'alice'],
    key: 'm3',
    value: { text: 'Alice works in Porto' },
    vectors: { $: vec('Alice works in Porto') },
    createdAt: '2025-04-03 10:00:00',
  },
  { namespace: ['memories', 'alice'], key: 'm4', value: { text: 'Alice dislikes olives' }, vectors: null, createdAt: '2025-04-04 10:00:00' },
  {
    namespace: ['memories', 'alice'],
    key: 'old',
    value: { text: 'Alice was in Paris last week' },
    vectors: { $: vec('Alice was in Paris last week') },
    createdAt: '2025-04-05 10:00:00',
    expiresAt: '2025-04-06 10:00:00',
    ttlMinutes: 1440,
  },
  {
    namespace: ['memories', 'bob'],
    key: 'b1',
    value: { content: 'Bob plays chess' },
    vectors: { $: vec('Bob plays chess') },
    createdAt: '2025-04-06 10:00:00',
  },
  { namespace: ['profile'], key: 'p1', value: { name: 'Alice', age: 31 }, vectors: null, createdAt: '2025-04-07 10:00:00' },
]
const itemText = (it: StoreItem): string => {
  const v = it.value
  if (typeof v.content === 'string') return v.content
  if (v.content && typeof (v.content as { content?: unknown }).content === 'string') return (v.content as { content: string }).content
  if (typeof v.text === 'string') return v.text
  return JSON.stringify(v)
}
/** CURRENT_TIMESTAMP text is UTC */
const utc = (s: string) => Date.parse(`${s.replace(' ', 'T')}Z`)

beforeAll(async () => {
  t = tmpDir()
  fs.mkdirSync(path.join(t.dir, 'js'))
  fs.mkdirSync(path.join(t.dir, 'py'))
  jsPath = path.join(t.dir, 'js', 'checkpoints.sqlite')
  pyPath = path.join(t.dir, 'py', 'langgraph.sqlite')
  await createLangGraphJsCheckpoints(jsPath)
  createLangGraphPyCheckpoints(pyPath)
  createLangGraphStore(pyPath, ITEMS)
})
afterAll(() => t.cleanup())

/** Expected turns: the final message list of each thread, each dated by the step that added it. */
function expectedTurns(): { thread: string; id: string; role: string; content: string; turn: number; createdAt: number }[] {
  const out: { thread: string; id: string; role: string; content: string; turn: number; createdAt: number }[] = []
  for (const th of THREADS) {
    let turn = 0
    th.steps.forEach((step, i) => {
      for (const m of step) out.push({ thread: th.threadId, id: m.id, role: m.role, content: m.content, turn: turn++, createdAt: Date.parse(th.ts[i]) })
    })
  }
  return out
}

describe.each([
  ['JS SqliteSaver (json serde)', () => jsPath, 'json'],
  ['Python SqliteSaver (msgpack serde)', () => pyPath, 'msgpack'],
])('LangGraph checkpointer: %s', (_label, file, serde) => {
  it('detects the checkpointer, says why, and maps threads to sessions and messages to turns', () => {
    const s = openSource({ path: file() })
    try {
      const f = s.facts()
      expect(f.layout).toBe('langgraph')
      expect(f.detectedBecause).toContain('checkpoints(thread_id, checkpoint_ns, checkpoint_id, type, checkpoint) + writes')
      expect(f.detectedBecause).toContain(`${THREADS.length} thread(s), ${THREADS.reduce((n, th) => n + th.steps.length, 0)} checkpoint(s) (${serde} serde)`)
      expect(f.counts.sessions).toBe(THREADS.length)
      const turns = expectedTurns()
      const page = s.memoriesPage({ kinds: ['episodic'], limit: 100 })
      expect(page.total).toBe(turns.length)
      for (const e of turns) {
        const m = page.rows.find((r) => r.id === e.id)!
        expect([m.sessionId, m.role, m.content, m.turn, m.createdAt, m.tier]).toEqual([e.thread, e.role, e.content, e.turn, e.createdAt, 'working'])
      }
      // a session lists its turns in order (session-mode recall replays them)
      const a = s.memoriesPage({ sessionId: 'thread-a', sort: 'turn', dir: 'asc', limit: 50 })
      expect(a.rows.map((r) => r.content)).toEqual(turns.filter((x) => x.thread === 'thread-a').map((x) => x.content))
      const sess = s.getSession('thread-b')!
      expect([sess.startedAt, sess.endedAt, sess.memoryCount]).toEqual([Date.parse(THREADS[1].ts[0]), Date.parse(THREADS[1].ts[1]), 3])
    } finally {
      s.close()
    }
  })

  it('replays a thread through session-mode recall and leaves the file unchanged', async () => {
    const before = sha256File(file())
    const s = openSource({ path: file() })
    try {
      const cfg: RecallConfig = {
        ...getPreset('neo').config,
        mode: 'session',
        tokenBudget: null,
        topK: 100,
        scope: { tiers: ['working'], sessionId: 'thread-a' },
      }
      const trace = await runRecall(s, '', cfg, Date.parse('2025-06-01T00:00:00Z'))
      expect(trace.results.map((r) => r.id)).toEqual(
        expectedTurns()
          .filter((x) => x.thread === 'thread-a')
          .map((x) => x.id),
      )
      s.facts()
      s.memoriesPage({ search: 'Lisbon' })
      s.sessionsPage({})
    } finally {
      s.close()
    }
    expect(sha256File(file())).toBe(before)
  })
})

describe('LangGraph checkpointer read back by the framework itself', () => {
  it("each thread's turns are what SqliteSaver.getTuple returns for its latest checkpoint", async () => {
    const { SqliteSaver } = await import('@langchain/langgraph-checkpoint-sqlite')
    const Database = (await import('better-sqlite3')).default
    // a copy, so the framework's own connection (it sets WAL on setup) never touches the file under test
    const copy = path.join(t.dir, 'readback.sqlite')
    fs.copyFileSync(jsPath, copy)
    const saver = new SqliteSaver(new Database(copy))
    const s = openSource({ path: jsPath })
    try {
      for (const th of THREADS) {
        const tuple = await saver.getTuple({ configurable: { thread_id: th.threadId, checkpoint_ns: '' } })
        const msgs = (tuple!.checkpoint.channel_values.messages as { id?: string; content: string; _getType(): string }[]).map((m) => [
          m.id,
          m._getType(),
          m.content,
        ])
        const ours = s.memoriesPage({ sessionId: th.threadId, sort: 'turn', dir: 'asc', limit: 100 }).rows.map((r) => [r.id, r.role, r.content])
        const role: Record<string, string> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool' }
        expect(ours).toEqual(msgs.map(([id, type, content]) => [id, role[String(type)], content]))
      }
    } finally {
      s.close()
      saver.db.close()
    }
  })
})

describe('LangGraph SQLite store (+ checkpointer in the same file)', () => {
  it('maps namespaces to scope, values to content, expired items to archived, vectors to langgraph:<dim>', () => {
    const s = openSource({ path: pyPath })
    try {
      const f = s.facts()
      expect(f.detectedBecause).toMatch(
        /^LangGraph SQLite store \+ checkpointer: store\(prefix, key, value, created_at, updated_at, expires_at, ttl_minutes\); store_vectors\(prefix, key, field_name, embedding\) with 1 indexed field/,
      )
      expect(f.models).toEqual([
        { model: `langgraph:${DIM}`, ownerType: 'memory', dim: DIM, count: ITEMS.filter((i) => i.vectors).length, malformed: 0, badShape: 0 },
      ])
      const page = s.memoriesPage({ kinds: ['semantic'], limit: 100 })
      expect(page.total).toBe(ITEMS.length)
      for (const it of ITEMS) {
        const m = page.rows.find((r) => r.id === `${it.namespace.join('.')}/${it.key}`)!
        expect(m.content).toBe(itemText(it))
        expect(m.userId).toBe(it.namespace.join('.'))
        expect(m.agentId).toBe(it.namespace[0])
        expect(m.createdAt).toBe(utc(it.createdAt))
        expect(m.tier).toBe(it.expiresAt ? 'archived' : 'long_term')
        expect(m.hasEmbedding).toBe(it.vectors !== null)
        expect((m.metadata as { value: unknown }).value).toEqual(it.value)
      }
    } finally {
      s.close()
    }
  })

  it('preset langgraph-store: cosine over the indexed items of the namespace, best first, top 10, no threshold', async () => {
    const query = 'what does Alice eat'
    const q = vec(query)
    const cos = (a: number[], b: number[]) =>
      a.reduce((n, x, i) => n + x * b[i], 0) / Math.sqrt(a.reduce((n, x) => n + x * x, 0) * b.reduce((n, x) => n + x * x, 0))
    // store.search(("memories", "alice"), query=…): indexed, unexpired items of the namespace
    const expected = ITEMS.filter((i) => i.namespace.join('.') === 'memories.alice' && i.vectors && !i.expiresAt)
      .map((i) => ({ id: `memories.alice/${i.key}`, score: cos(q, i.vectors!.$) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10)
    const s = openSource({ path: pyPath })
    try {
      const cfg = getPreset('langgraph-store').config
      const trace = await runRecall(s, query, { ...cfg, scope: { ...cfg.scope, userId: 'memories.alice' } }, Date.parse('2025-06-01T00:00:00Z'), {
        queryVector: q,
      })
      expect(trace.results.map((r) => r.id)).toEqual(expected.map((r) => r.id))
      trace.results.forEach((r, i) => expect(r.score).toBeCloseTo(expected[i].score, 5))
    } finally {
      s.close()
    }
  })

  it('labels each field when several are indexed', () => {
    const p = path.join(t.dir, 'multi.sqlite')
    createLangGraphStore(p, [
      { namespace: ['docs'], key: 'd1', value: { title: 'A', body: 'B' }, vectors: { title: vec('A'), body: vec('B') }, createdAt: '2025-01-01 00:00:00' },
    ])
    const s = openSource({ path: p })
    try {
      expect(
        s
          .facts()
          .models.map((m) => m.model)
          .sort(),
      ).toEqual([`langgraph:${DIM}:body`, `langgraph:${DIM}:title`])
    } finally {
      s.close()
    }
  })

  it('leaves every file of the folder byte-identical after a full session', async () => {
    const dir = path.dirname(pyPath)
    const hash = () =>
      new Map(
        fs
          .readdirSync(dir)
          .filter((n) => !n.includes('.recallscope'))
          .map((n) => [n, sha256File(path.join(dir, n))]),
      )
    const before = hash()
    const s = openSource({ path: pyPath })
    try {
      s.facts()
      s.facets()
      s.memoriesPage({ search: 'Alice', limit: 20 })
      s.sessionsPage({})
      await runRecall(s, 'Porto', { ...getPreset('langgraph-store').config, scope: { tiers: ['long_term'], userId: 'memories.alice' } }, Date.now(), {
        queryVector: vec('Porto'),
      })
    } finally {
      s.close()
    }
    expect(hash()).toEqual(before)
  })
})
