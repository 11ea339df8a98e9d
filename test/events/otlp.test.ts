/**
 * OTLP/HTTP JSON trace files: GenAI retrieval and memory spans, OpenInference RETRIEVER
 * spans, OpenLLMetry db.query.result events, each recall's decision taken from the next
 * LLM span of its trace wherever it sits in the file; malformed lines and spans skipped
 * and counted. Expected values are the ones the fixture wrote.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readTraceFile } from '../../src/main/events/otlp/traceFile'
import { LOG_FORMATS } from '../../src/main/events/logFormats'
import { emptyStats, type LoggedRecall } from '../../src/main/events/types'
import { hexId, otlpPayload, otlpSpan } from '../helpers/otlpFixture'
import { tmpDir } from '../helpers/tmp'

let t: ReturnType<typeof tmpDir>
const T = Date.parse('2026-04-01T12:00:00.000Z')
const A = hexId(16)
const B = hexId(16)
const C = hexId(16)
const ids = { retrieval: hexId(8), memory: hexId(8), chatA: hexId(8), chatA2: hexId(8), retriever: hexId(8), llmB: hexId(8), chroma: hexId(8), llmC: hexId(8) }

/** The payloads, in file order: trace A's chat answer comes a line after its retrieval; trace B's LLM span a line before its retriever. */
function payloads(): unknown[] {
  return [
    otlpPayload('rag-app', [
      otlpSpan({
        traceId: B,
        spanId: ids.llmB,
        name: 'ChatOpenAI',
        start: T + 5_100,
        end: T + 5_900,
        attrs: { 'openinference.span.kind': 'LLM', 'output.value': 'Use the blue line.', 'session.id': 's-9' },
      }),
    ]),
    otlpPayload('travel-agent', [
      otlpSpan({
        traceId: A,
        spanId: ids.retrieval,
        name: 'retrieval travel-notes',
        start: T,
        end: T + 200,
        attrs: {
          'gen_ai.operation.name': 'retrieval',
          'gen_ai.retrieval.query.text': 'hotel near the station',
          'gen_ai.retrieval.documents': JSON.stringify([
            { id: 'm-hotel', score: 0.92 },
            { id: 'm-station', score: 0.61 },
          ]),
          'gen_ai.conversation.id': 'conv-1',
          'user.id': 'ada',
        },
      }),
      otlpSpan({
        traceId: A,
        spanId: ids.memory,
        name: 'search_memory prefs',
        start: T + 1_000,
        end: T + 1_100,
        attrs: {
          'gen_ai.operation.name': 'search_memory',
          'gen_ai.memory.query.text': 'dietary preferences',
          'gen_ai.memory.records': JSON.stringify([{ id: 'p1', content: 'vegetarian', score: 0.8 }, { content: { preference: 'no nuts' } }]),
        },
      }),
    ]),
    'this line is not JSON',
    otlpPayload('travel-agent', [
      otlpSpan({
        traceId: A,
        spanId: ids.chatA,
        name: 'chat gpt-4o',
        start: T + 300,
        end: T + 900,
        attrs: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Book Hotel Central.' }], finish_reason: 'stop' }]),
        },
      }),
      otlpSpan({
        traceId: A,
        spanId: ids.chatA2,
        name: 'chat gpt-4o',
        start: T + 1_200,
        end: T + 1_500,
        attrs: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.output.messages': JSON.stringify([
            { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'order_meal', arguments: { dish: 'falafel' } }] },
          ]),
        },
      }),
      // no trace id: skipped and counted
      { ...otlpSpan({ traceId: A, name: 'broken', start: T, end: T }), traceId: 'zz' },
      otlpSpan({
        traceId: A,
        name: 'retrieval bad',
        start: T + 2_000,
        end: T + 2_100,
        attrs: { 'gen_ai.operation.name': 'retrieval', 'gen_ai.retrieval.documents': 'not json [' },
      }),
    ]),
    otlpPayload('rag-app', [
      otlpSpan({
        traceId: B,
        spanId: ids.retriever,
        name: 'VectorStoreRetriever',
        start: T + 5_000,
        end: T + 5_050,
        attrs: {
          'openinference.span.kind': 'RETRIEVER',
          'input.value': 'how do I get to the museum',
          'retrieval.documents.1.document.id': 'doc-b',
          'retrieval.documents.1.document.score': 0.5,
          'retrieval.documents.1.document.content': 'Bus 12 stops at the museum.',
          'retrieval.documents.0.document.id': 'doc-a',
          'retrieval.documents.0.document.score': 0.75,
          'retrieval.documents.0.document.content': 'The blue metro line goes to the museum.',
          'session.id': 's-9',
        },
      }),
      otlpSpan({ traceId: C, spanId: ids.llmC, name: 'openai.chat', start: T + 8_000, end: T + 8_500, attrs: { 'gen_ai.operation.name': 'chat' } }),
      otlpSpan({
        traceId: C,
        spanId: ids.chroma,
        name: 'chroma.query',
        start: T + 9_000,
        end: T + 9_100,
        attrs: { 'db.system': 'chroma', 'db.operation': 'query' },
        events: [
          {
            name: 'db.query.result',
            at: T + 9_100,
            attrs: { 'db.query.result.id': 'c-1', 'db.query.result.distance': 0.12, 'db.query.result.document': 'first' },
          },
          {
            name: 'db.query.result',
            at: T + 9_100,
            attrs: { 'db.query.result.id': 'c-2', 'db.query.result.distance': 0.3, 'db.query.result.document': 'second' },
          },
        ],
      }),
    ]),
  ]
}

let jsonl: string
let single: string
let fromLines: LoggedRecall[]
let linesStats: ReturnType<typeof emptyStats>

beforeAll(async () => {
  t = tmpDir()
  const ps = payloads()
  jsonl = path.join(t.dir, 'traces.jsonl')
  fs.writeFileSync(jsonl, ps.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join('\n') + '\n')
  // one pretty-printed document holding every valid payload's resourceSpans
  single = path.join(t.dir, 'export.json')
  const all = ps.filter((p): p is { resourceSpans: unknown[] } => typeof p !== 'string').flatMap((p) => p.resourceSpans)
  fs.writeFileSync(single, JSON.stringify({ resourceSpans: all }, null, 2))
  linesStats = emptyStats()
  fromLines = []
  for await (const r of readTraceFile(jsonl, linesStats)) fromLines.push(r)
})
afterAll(() => t.cleanup())

const byKey = (rs: LoggedRecall[], spanId: string) => rs.find((r) => r.key.endsWith(`:${spanId}`))!

describe('OTLP JSON trace files', () => {
  it('reads a GenAI retrieval span: query, documents with scores, scope, and the next chat span’s answer', () => {
    const r = byKey(fromLines, ids.retrieval)
    expect(r).toMatchObject({
      key: `otlp:${A}:${ids.retrieval}`,
      at: T,
      agentId: 'travel-agent',
      userId: 'ada',
      sessionId: 'conv-1',
      query: 'hotel near the station',
    })
    expect(r.results).toEqual([
      { rank: 1, id: 'm-hotel', text: null, score: 0.92 },
      { rank: 2, id: 'm-station', text: null, score: 0.61 },
    ])
    expect(r.origin).toMatchObject({ kind: 'otlp', file: jsonl, traceId: A, spanId: ids.retrieval })
    expect(r.decision).toEqual({ text: 'Book Hotel Central.', toolCall: null, at: T + 900, via: 'chat span' })
  })

  it('reads a GenAI search_memory span (records with content, an object content as JSON) and a tool-call decision', () => {
    const r = byKey(fromLines, ids.memory)
    expect(r.query).toBe('dietary preferences')
    expect(r.results).toEqual([
      { rank: 1, id: 'p1', text: 'vegetarian', score: 0.8 },
      { rank: 2, id: null, text: '{"preference":"no nuts"}', score: null },
    ])
    expect(r.decision).toMatchObject({ text: null, toolCall: { name: 'order_meal', arguments: '{"dish":"falafel"}' } })
  })

  it('reads an OpenInference RETRIEVER span in document index order; its LLM span came earlier in the file', () => {
    const r = byKey(fromLines, ids.retriever)
    expect(r).toMatchObject({ agentId: 'rag-app', sessionId: 's-9', query: 'how do I get to the museum' })
    expect(r.results).toEqual([
      { rank: 1, id: 'doc-a', text: 'The blue metro line goes to the museum.', score: 0.75 },
      { rank: 2, id: 'doc-b', text: 'Bus 12 stops at the museum.', score: 0.5 },
    ])
    expect(r.decision).toMatchObject({ text: 'Use the blue line.', via: 'LLM span' })
  })

  it('reads OpenLLMetry db.query.result events (a distance is not a score); an LLM span before the recall is not its decision', () => {
    const r = byKey(fromLines, ids.chroma)
    expect(r.query).toBeNull()
    expect(r.results).toEqual([
      { rank: 1, id: 'c-1', text: 'first', score: null },
      { rank: 2, id: 'c-2', text: 'second', score: null },
    ])
    expect(r.decision).toBeNull()
  })

  it('skips and counts a line that is not JSON, a span without ids and unreadable documents', () => {
    expect(fromLines).toHaveLength(4)
    expect(linesStats.skipped).toBe(3)
    expect(linesStats.problems.map((p) => p.why)).toEqual([
      expect.stringMatching(/^not JSON/),
      expect.stringMatching(/without a hex traceId/),
      expect.stringMatching(/gen_ai.retrieval.documents is not a JSON list/),
    ])
    expect(linesStats.problems[0].where).toBe('traces.jsonl:3')
  })

  it('one pretty-printed document gives the same recalls as the JSON Lines file', async () => {
    const stats = emptyStats()
    const out: LoggedRecall[] = []
    for await (const r of readTraceFile(single, stats)) out.push(r)
    const strip = (rs: LoggedRecall[]) => rs.map((r) => ({ ...r, origin: { ...r.origin, file: null } })).sort((a, b) => a.key.localeCompare(b.key))
    expect(strip(out)).toEqual(strip(fromLines))
    expect(stats.skipped).toBe(2) // the JSON line is not in it
  })

  it('is found by sniffing in a folder', () => {
    expect(LOG_FORMATS.filter((f) => f.sniff(jsonl, fs.readFileSync(jsonl, 'utf8').slice(0, 65536))).map((f) => f.name)).toEqual(['otlp'])
    expect(LOG_FORMATS.filter((f) => f.sniff(single, fs.readFileSync(single, 'utf8').slice(0, 65536))).map((f) => f.name)).toEqual(['otlp'])
  })
})
