/**
 * Letta V1 messages → recall events, on a server store in Letta's own tables
 * (test/helpers/frameworks/letta.ts) holding tool calls and tool returns as
 * Letta writes them: `tool_calls` = OpenAI tool-call JSON, the tool message's
 * text = JSON {"status", "message", "time"} whose message is Python's str() of
 * the result list (with passage ids in current Letta, without in older ones).
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildLettaServer, lettaToolCall as call, lettaToolEnvelope as envelope, type LettaServerSpec } from '../../../../test/helpers/frameworks/letta'
import { expectTraceRuns, openFixtureStore } from '../../../../test/helpers/eventChecks'
import { sha256File, tmpDir } from '../../../../test/helpers/tmp'
import type { MemorySource } from '../../store/source'
import { eventLogOf } from '../eventLog'

const T0 = Date.UTC(2026, 0, 10, 10, 0, 0)
const A = 'agent-1'
const P = {
  sushi: 'User loves the sushi at Tasca do Chico',
  allergy: "User's partner is allergic to peanuts",
  porto: 'User visited Porto in May and liked the rain',
  run: 'User runs 10 km on Sundays',
}

function spec(): LettaServerSpec {
  const at = (s: number) => T0 + s * 1000
  const m = (seq: number, x: Partial<LettaServerSpec['messages'][number]> & { role: string }): LettaServerSpec['messages'][number] => ({
    id: `message-${seq}`,
    agent: A,
    createdAt: at(seq),
    seq,
    ...x,
  })
  const ts = '2026-01-01 09:00:00+00:00'
  return {
    agents: [{ id: A, name: 'concierge' }],
    blocks: [],
    passages: Object.entries(P).map(([k, text], i) => ({ id: `passage-${k}`, agent: A, text, createdAt: T0 - 86_400_000 * (i + 1) })),
    messages: [
      m(1, { role: 'user', parts: ['Where should we eat tonight?'] }),
      // 1. current Letta: items carry the passage id; one id the store no longer has.
      m(2, { role: 'assistant', toolCalls: call('call-1', 'archival_memory_search', { query: 'favourite restaurant' }) }),
      m(3, {
        role: 'tool',
        name: 'archival_memory_search',
        toolCallId: 'call-1',
        parts: [
          envelope([
            { timestamp: ts, content: P.sushi, tags: ['food'], id: 'passage-sushi' },
            { timestamp: ts, content: P.allergy, tags: [], id: 'passage-allergy' },
            { timestamp: ts, content: 'User once lived in Lyon', tags: [], id: 'passage-deleted' },
          ]),
        ],
        toolReturns: JSON.stringify([
          {
            tool_call_id: 'call-1',
            status: 'success',
            stdout: null,
            stderr: null,
            func_response: envelope([
              { timestamp: ts, content: P.sushi, tags: ['food'], id: 'passage-sushi' },
              { timestamp: ts, content: P.allergy, tags: [], id: 'passage-allergy' },
              { timestamp: ts, content: 'User once lived in Lyon', tags: [], id: 'passage-deleted' },
            ]),
          },
        ]),
      }),
      m(4, { role: 'assistant', toolCalls: call('call-send-1', 'send_message', { message: 'How about Tasca do Chico? No peanuts there.' }) }),
      m(5, { role: 'user', parts: ['What did I think of Porto?'] }),
      // 2. older Letta: only timestamp + content (one with other spacing / quotes / case), no tool_returns column value.
      m(6, { role: 'assistant', toolCalls: call('call-2', 'archival_memory_search', { query: 'Porto trip' }) }),
      m(7, {
        role: 'tool',
        name: 'archival_memory_search',
        toolCallId: 'call-2',
        parts: [
          envelope([
            { timestamp: ts, content: P.porto },
            { timestamp: ts, content: '  user RUNS 10 km   on "Sundays"' },
          ]),
        ],
      }),
      m(8, { role: 'assistant', parts: ['You liked Porto, even the rain.'] }),
      // 3. conversation_search → a message of the conversation, by its text.
      m(9, { role: 'assistant', toolCalls: call('call-3', 'conversation_search', { query: 'eat tonight' }) }),
      m(10, {
        role: 'tool',
        name: 'conversation_search',
        toolCallId: 'call-3',
        parts: [
          envelope({
            message: 'Showing 1 results:',
            results: [{ timestamp: ts, time_ago: '0s ago', role: 'user', relevance: { rrf_score: 0.5 }, content: 'Where should we eat tonight?' }],
          }),
        ],
      }),
      m(11, { role: 'assistant', toolCalls: call('call-4', 'archival_memory_search', { query: 'broken' }) }),
      // Malformed: a result that is not the JSON envelope; a tool_calls column that is not JSON.
      m(12, { role: 'tool', name: 'archival_memory_search', toolCallId: 'call-4', parts: ['Traceback (most recent call last): …'] }),
      m(13, { role: 'assistant', toolCalls: 'not json [' }),
      m(14, { role: 'assistant', toolCalls: call('call-5', 'archival_memory_search', { query: 'failed' }) }),
      m(15, { role: 'tool', name: 'archival_memory_search', toolCallId: 'call-5', parts: [envelope('Error: timeout', 'Failed')] }),
      m(16, { role: 'assistant', parts: ['Anything else?'] }),
    ],
  }
}

describe('Letta messages as an event source', () => {
  let fx: Awaited<ReturnType<typeof openFixtureStore>>
  let store: MemorySource
  beforeAll(async () => {
    fx = await openFixtureStore((dir) => buildLettaServer(dir, spec()))
    store = fx.store
  })
  afterAll(() => fx.done())

  it('reads each search call with its results, matched by id, text or normalised text, and the decision after it', async () => {
    const log = eventLogOf(store)
    const page = await log.eventsPage({ dir: 'asc', limit: 50 })
    expect(page.rows.map((e) => e.id)).toEqual(['letta:call-1', 'letta:call-2', 'letta:call-3'])
    const [e1, e2, e3] = page.rows

    expect(e1.query).toBe('favourite restaurant')
    expect(e1.at).toBe(T0 + 2000)
    expect(e1.agentId).toBe(A)
    expect(e1.origin).toMatchObject({ kind: 'letta', tool: 'archival_memory_search', callId: 'call-1', messageId: 'message-3' })
    expect(e1.results).toEqual([
      { id: 'passage-sushi', score: NaN, matchedBy: 'id' },
      { id: 'passage-allergy', score: NaN, matchedBy: 'id' },
    ])
    expect(e1.unmatched).toEqual([{ rank: 3, loggedId: 'passage-deleted', text: 'User once lived in Lyon', score: null }])
    expect(e1.decision).toMatchObject({ text: 'How about Tasca do Chico? No peanuts there.', via: 'send_message', at: T0 + 4000 })

    expect(e2.results).toEqual([
      { id: 'passage-porto', score: NaN, matchedBy: 'text' },
      { id: 'passage-run', score: NaN, matchedBy: 'normalized' },
    ])
    expect(e2.unmatched).toEqual([])
    expect(e2.decision).toMatchObject({ text: 'You liked Porto, even the rain.', via: 'assistant message' })

    expect(e3.origin?.tool).toBe('conversation_search')
    expect(e3.results).toEqual([{ id: 'message-1', score: 0.5, matchedBy: 'text' }])
    expect(e3.decision?.toolCall?.name).toBe('archival_memory_search')
  })

  it('skips and counts the malformed results and tool calls, and says what it read', async () => {
    const src = eventLogOf(store)
      .sources()
      .find((s) => s.kind === 'letta')!
    expect(src.events).toBe(3)
    expect(src.stats.read).toBe(3)
    expect(src.stats.skipped).toBe(3)
    expect(src.stats.problems.map((p) => p.where)).toEqual([
      'message message-12 (archival_memory_search)',
      'message message-13',
      'message message-15 (archival_memory_search)',
    ])
    expect(src.matched).toEqual({ id: 2, text: 2, normalized: 1, unmatched: 1 })
  })

  it('filters like events.page: by memory, by text, by time; the timeline counts them', async () => {
    const log = eventLogOf(store)
    expect((await log.eventsPage({ memoryId: 'passage-allergy' })).rows.map((e) => e.id)).toEqual(['letta:call-1'])
    expect((await log.eventsPage({ search: 'PORTO' })).rows.map((e) => e.id)).toEqual(['letta:call-2'])
    expect((await log.eventsPage({ after: T0 + 5000 })).total).toBe(2)
    expect((await log.eventsForMemory('passage-sushi')).map((r) => [r.eventId, r.rank])).toEqual([['letta:call-1', 1]])
    const tl = await log.eventTimeline({})
    expect(tl.total).toBe(3)
    expect(tl.counts(60_000, tl.range!.min).reduce((a, c) => a + c.count, 0)).toBe(3)
  })

  it('replay, why and drivers run on every event (Letta has no preset: the default one, and the notes say so)', async () => {
    await expectTraceRuns(store, 'letta:call-1', 'passage-sushi')
    await expectTraceRuns(store, 'letta:call-2', 'passage-run')
    await expectTraceRuns(store, 'letta:call-3', 'message-1')
    const { replayEvent } = await import('../../trace/replay')
    const r = await replayEvent(store, 'letta:call-1', { mode: 'logged', embedder: 'hashing' })
    expect(r.notes.map((n) => n.text).join(' ')).toMatch(/read from Letta messages, which records no recall config/)
  })
})

describe('recallscope trace / info on a Letta store (CLI)', () => {
  let dir: { dir: string; cleanup: () => void }
  let file: string
  let before: string
  const run = async (...args: string[]) => {
    const { main } = await import('../../cli/index')
    let out = ''
    let err = ''
    const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
    return { code, out, err }
  }
  beforeAll(() => {
    dir = tmpDir()
    file = buildLettaServer(dir.dir, spec())
    before = sha256File(file)
  })
  afterAll(() => {
    expect(sha256File(file)).toBe(before)
    dir.cleanup()
  })

  it('trace list|replay|why|drivers --json work on the events read from the messages', async () => {
    const ws = ['--workspace', path.join(dir.dir, 'cli.ws')]
    const list = await run('trace', 'list', '--db', file, ...ws, '--json')
    expect(list.code).toBe(0)
    const page = JSON.parse(list.out) as { rows: { id: string; results: unknown[] }[]; sources: { kind: string; events: number }[] }
    expect(page.rows.map((e) => e.id)).toEqual(['letta:call-3', 'letta:call-2', 'letta:call-1'])
    expect(page.sources).toMatchObject([{ kind: 'letta', events: 3 }])
    const replay = await run('trace', 'replay', '--db', file, ...ws, '--event', 'letta:call-1', '--embedder', 'hashing', '--json')
    expect(replay.code).toBe(0)
    expect((JSON.parse(replay.out) as { event: { id: string } }).event.id).toBe('letta:call-1')
    const why = await run(
      'trace',
      'why',
      '--db',
      file,
      ...ws,
      '--event',
      'letta:call-2',
      '--memory',
      'passage-run',
      '--embedder',
      'hashing',
      '--no-verify',
      '--json',
    )
    expect(why.code).toBe(0)
    expect((JSON.parse(why.out) as { eventId: string }).eventId).toBe('letta:call-2')
    const drivers = await run('trace', 'drivers', '--db', file, ...ws, '--event', 'letta:call-3', '--embedder', 'hashing', '--json')
    expect(drivers.code).toBe(0)
    expect((JSON.parse(drivers.out) as { eventId: string }).eventId).toBe('letta:call-3')
    // The text list names its source and how results matched.
    const text = await run('trace', 'list', '--db', file, ...ws)
    expect(text.out).toContain(
      'source: Letta messages (archival_memory_search, conversation_search): 3 events · results matched by id 2, text 2, normalised text 1; unmatched 1',
    )
  })

  it('info shows the event sources; --log with no known format is BAD_INPUT (exit 2)', async () => {
    const info = await run('info', '--db', file, '--json')
    expect(info.code).toBe(0)
    expect((JSON.parse(info.out) as { eventSources: { kind: string; events: number; stats: { skipped: number } }[] }).eventSources).toMatchObject([
      { kind: 'letta', events: 3, stats: { skipped: 3 } },
    ])
    const notALog = path.join(dir.dir, 'notes.txt')
    fs.writeFileSync(notALog, 'just text')
    const bad = await run('trace', 'list', '--db', file, '--log', notALog, '--json')
    expect(bad.code).toBe(2)
    // --json: the typed error as JSON on stdout
    expect(JSON.parse(bad.out)).toMatchObject({
      ok: false,
      error: { code: 'BAD_INPUT', message: expect.stringMatching(/not a known trace log \(looked for:/) as unknown },
    })
  })
})
