/**
 * LangGraph checkpoints → recall events: a thread written with the real
 * `@langchain/langgraph-checkpoint-sqlite` SqliteSaver holding langmem-shaped
 * messages (@langchain/core AIMessage tool_calls `search_memory` / `manage_memory`,
 * ToolMessage content = the JSON list of store items langmem's search tool
 * returns: `[{namespace, key, value, created_at, updated_at, score}]`), beside
 * the LangGraph store those items live in (Python SqliteStore layout).
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLangGraphStore, putLangGraphThread } from '../../../../test/helpers/frameworks/langgraph'
import { expectTraceRuns, openFixtureStore } from '../../../../test/helpers/eventChecks'
import type { MemorySource } from '../../store/source'
import { eventLogOf } from '../eventLog'

const NS = ['memories', 'user-7']
const ITEMS = [
  { key: 'k-coffee', content: 'User drinks oat-milk flat whites' },
  { key: 'k-dog', content: 'User has a dog called Miso' },
  { key: 'k-city', content: 'User lives in Ghent' },
]

/** langmem's search_memory output: json of [item.dict() for item in store.search(...)]. */
const searchOutput = (hits: { key: string; score: number }[], extra: unknown[] = []) =>
  JSON.stringify([
    ...hits.map((h) => ({
      namespace: NS,
      key: h.key,
      value: { content: ITEMS.find((i) => i.key === h.key)?.content ?? 'gone' },
      created_at: '2026-02-01T10:00:00+00:00',
      updated_at: '2026-02-01T10:00:00+00:00',
      score: h.score,
    })),
    ...extra,
  ])

async function writeThread(file: string): Promise<void> {
  const { HumanMessage, AIMessage, ToolMessage } = await import('@langchain/core/messages')
  const steps = [
    [new HumanMessage({ id: 'h1', content: 'What should I order at the café?' })],
    [new AIMessage({ id: 'a1', content: '', tool_calls: [{ id: 'tc-1', name: 'search_memory', args: { query: 'coffee preference' }, type: 'tool_call' }] })],
    [
      new ToolMessage({
        id: 't1',
        tool_call_id: 'tc-1',
        name: 'search_memory',
        content: searchOutput(
          [
            { key: 'k-coffee', score: 0.91 },
            { key: 'k-gone', score: 0.4 },
          ],
          [{ note: 'no key, no text' }],
        ),
      }),
    ],
    [new AIMessage({ id: 'a2', content: 'An oat-milk flat white, as usual.' })],
    [new HumanMessage({ id: 'h2', content: 'Remember that I moved to Ghent.' })],
    // manage_memory writes: not a recall.
    [
      new AIMessage({
        id: 'a3',
        content: '',
        tool_calls: [{ id: 'tc-2', name: 'manage_memory', args: { content: 'User lives in Ghent', action: 'create' }, type: 'tool_call' }],
      }),
    ],
    [new ToolMessage({ id: 't2', tool_call_id: 'tc-2', name: 'manage_memory', content: 'created memory k-city' })],
    [new AIMessage({ id: 'a4', content: '', tool_calls: [{ id: 'tc-3', name: 'search_memory', args: { query: 'pets' }, type: 'tool_call' }] })],
    [new ToolMessage({ id: 't3', tool_call_id: 'tc-3', name: 'search_memory', content: searchOutput([{ key: 'k-dog', score: 0.77 }]) })],
    [new AIMessage({ id: 'a5', content: '', tool_calls: [{ id: 'tc-4', name: 'send_reply', args: { text: 'Say hi to Miso' }, type: 'tool_call' }] })],
    // Malformed: a search result that is not a list of items.
    [new AIMessage({ id: 'a6', content: '', tool_calls: [{ id: 'tc-5', name: 'search_memory', args: { query: 'broken' }, type: 'tool_call' }] })],
    [new ToolMessage({ id: 't5', tool_call_id: 'tc-5', name: 'search_memory', content: 'the store timed out' })],
  ]
  await putLangGraphThread(
    file,
    'thread-1',
    steps,
    steps.map((_, i) => new Date(Date.UTC(2026, 1, 2, 9, 0, i)).toISOString()),
  )
}

describe('LangGraph checkpoints as an event source (langmem search_memory)', () => {
  let fx: Awaited<ReturnType<typeof openFixtureStore>>
  let store: MemorySource
  beforeAll(async () => {
    fx = await openFixtureStore(async (dir) => {
      const file = path.join(dir, 'agent.sqlite')
      createLangGraphStore(
        file,
        ITEMS.map((i) => ({ namespace: NS, key: i.key, value: { content: i.content }, vectors: null, createdAt: '2026-02-01 10:00:00' })),
      )
      await writeThread(file)
      return file
    })
    store = fx.store
  })
  afterAll(() => fx.done())

  it('reads each search_memory call with its items as the store memories <namespace>/<key>, and the next AI message', async () => {
    expect(store.layout).toBe('langgraph')
    const rows = (await eventLogOf(store).eventsPage({ dir: 'asc' })).rows
    expect(rows.map((e) => e.id)).toEqual(['langgraph:thread-1:tc-1', 'langgraph:thread-1:tc-3'])
    const [e1, e2] = rows
    expect(e1).toMatchObject({
      query: 'coffee preference',
      sessionId: 'thread-1',
      agentId: 'memories',
      userId: 'memories.user-7',
      // the first checkpoint holding the AIMessage that made the call (step 1)
      at: Date.UTC(2026, 1, 2, 9, 0, 1),
      preset: 'langgraph-store',
      origin: { kind: 'langgraph', tool: 'search_memory', callId: 'tc-1', messageId: 't1' },
    })
    expect(e1.results).toEqual([{ id: 'memories.user-7/k-coffee', score: 0.91, matchedBy: 'id' }])
    expect(e1.unmatched).toEqual([{ rank: 2, loggedId: 'memories.user-7/k-gone', text: 'gone', score: 0.4 }])
    expect(e1.decision).toMatchObject({ text: 'An oat-milk flat white, as usual.', via: 'assistant message' })
    expect(e2.results).toEqual([{ id: 'memories.user-7/k-dog', score: 0.77, matchedBy: 'id' }])
    expect(e2.decision).toMatchObject({ text: null, toolCall: { name: 'send_reply', arguments: JSON.stringify({ text: 'Say hi to Miso' }) }, via: 'tool call' })
  })

  it('counts what it skipped (an item with neither key nor text, a result that is not a list); manage_memory is no recall', () => {
    const src = eventLogOf(store)
      .sources()
      .find((s) => s.kind === 'langgraph')!
    expect(src.events).toBe(2)
    expect(src.stats.skipped).toBe(2)
    expect(src.stats.problems.map((p) => p.why)).toEqual([
      'a result item has neither namespace/key nor text',
      'the search_memory result is not a JSON list of items',
    ])
  })

  it('replay, why and drivers run on each event with the LangGraph preset', async () => {
    await expectTraceRuns(store, 'langgraph:thread-1:tc-1', 'memories.user-7/k-coffee')
    await expectTraceRuns(store, 'langgraph:thread-1:tc-3', 'memories.user-7/k-dog')
  })
})
