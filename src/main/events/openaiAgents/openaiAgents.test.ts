/**
 * OpenAI Agents SDK session → recall events: `function_call` /
 * `function_call_output` items paired by `call_id` in a SQLiteSession written
 * the way the SDK writes it (test/helpers/frameworks/openaiAgents.ts:
 * json.dumps(item), CURRENT_TIMESTAMP). The session items are the store's
 * memories (id = row id), so a memory tool's results match them by text.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentsSession, type AgentItem } from '../../../../test/helpers/frameworks/openaiAgents'
import { expectTraceRuns, openFixtureStore } from '../../../../test/helpers/eventChecks'
import type { MemorySource } from '../../store/source'
import { eventLogOf } from '../eventLog'

const S = 'trip-42'
const at = (s: number) => `2026-03-01 12:00:${String(s).padStart(2, '0')}`
const fc = (callId: string, name: string, args: unknown) => ({
  type: 'function_call',
  call_id: callId,
  name,
  arguments: JSON.stringify(args),
  id: `fc_${callId}`,
})
const out = (callId: string, output: string) => ({ type: 'function_call_output', call_id: callId, output })

/** Row ids follow insertion order (AUTOINCREMENT from 1): the memory ids of these items. */
const ITEMS: AgentItem[] = [
  { session: S, item: { role: 'user', content: 'I prefer window seats' }, at: at(1) }, // 1
  { session: S, item: { role: 'user', content: 'My budget is 800 EUR' }, at: at(2) }, // 2
  { session: S, item: { role: 'user', content: 'Book me a flight to Rome' }, at: at(3) }, // 3
  { session: S, item: fc('call_1', 'search_memory', { query: 'seat preference' }), at: at(4) }, // 4
  {
    session: S,
    item: out(
      'call_1',
      JSON.stringify({ results: [{ text: 'I prefer window seats', score: 0.8 }, { text: 'my budget is 800 eur' }, { text: 'User is vegetarian' }] }),
    ),
    at: at(5),
  }, // 5
  {
    session: S,
    item: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Booked a window seat to Rome.', annotations: [] }],
    },
    at: at(6),
  }, // 6
  { session: S, item: fc('call_2', 'get_weather', { city: 'Rome' }), at: at(7) }, // 7: not a memory tool, plain output
  { session: S, item: out('call_2', 'Sunny, 24C'), at: at(8) },
  { session: S, item: fc('call_3', 'lookup_profile', { user: 'me' }), at: at(9) }, // 9: not named memory, but lists a memory
  { session: S, item: out('call_3', JSON.stringify(['I prefer window seats'])), at: at(10) },
  { session: S, item: fc('call_4', 'lookup_orders', { user: 'me' }), at: at(11) }, // 11: lists nothing of the store
  { session: S, item: out('call_4', JSON.stringify(['order 1234 shipped'])), at: at(12) },
  { session: S, item: 'not json {', at: at(13) },
  { session: S, item: fc('call_5', 'recall', { q: 'budget' }), at: at(14) },
  { session: S, item: out('call_5', '- My budget is 800 EUR\n- I prefer window seats'), at: at(15) },
]

describe('OpenAI Agents SDK sessions as an event source', () => {
  let fx: Awaited<ReturnType<typeof openFixtureStore>>
  let store: MemorySource
  beforeAll(async () => {
    fx = await openFixtureStore((dir) => {
      const file = path.join(dir, 'conversations.db')
      createAgentsSession(file, ITEMS)
      return file
    })
    store = fx.store
  })
  afterAll(() => fx.done())

  it('pairs function calls with their outputs by call_id: memory tools, and other tools whose output lists memories', async () => {
    expect(store.layout).toBe('openai-agents')
    const rows = (await eventLogOf(store).eventsPage({ dir: 'asc' })).rows
    expect(rows.map((e) => e.id)).toEqual([`openai-agents:${S}:call_1`, `openai-agents:${S}:call_3`, `openai-agents:${S}:call_5`])
    const [e1, e3, e5] = rows
    expect(e1).toMatchObject({ query: 'seat preference', sessionId: S, preset: 'openai-agents', at: Date.UTC(2026, 2, 1, 12, 0, 4) })
    expect(e1.origin).toMatchObject({ kind: 'openai-agents', tool: 'search_memory', callId: 'call_1', messageId: '5' })
    expect(e1.results).toEqual([
      { id: '1', score: 0.8, matchedBy: 'text' },
      { id: '2', score: NaN, matchedBy: 'normalized' },
    ])
    expect(e1.unmatched).toEqual([{ rank: 3, loggedId: null, text: 'User is vegetarian', score: null }])
    expect(e1.decision).toMatchObject({ text: 'Booked a window seat to Rome.', via: 'assistant message' })
    expect(e3.results).toEqual([{ id: '1', score: NaN, matchedBy: 'text' }])
    expect(e3.decision?.toolCall?.name).toBe('lookup_orders')
    // plain-text output of a memory tool: one result per line, bullets dropped
    expect(e5.query).toBe('budget')
    expect(e5.results.map((r) => [r.id, r.matchedBy])).toEqual([
      ['2', 'text'],
      ['1', 'text'],
    ])
    expect(e5.decision).toBeNull()
  })

  it('skips and counts the item that is not JSON', () => {
    const src = eventLogOf(store)
      .sources()
      .find((s) => s.kind === 'openai-agents')!
    expect(src.stats.skipped).toBe(1)
    expect(src.stats.problems).toEqual([{ where: 'item 13', why: 'message_data is not a JSON object' }])
    expect(src.events).toBe(3)
  })

  it('replay, why and drivers run on each event', async () => {
    await expectTraceRuns(store, `openai-agents:${S}:call_1`, '1')
    await expectTraceRuns(store, `openai-agents:${S}:call_3`, '1')
    await expectTraceRuns(store, `openai-agents:${S}:call_5`, '2')
  })
})
