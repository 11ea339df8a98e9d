/**
 * The event-source conformance spec (eventSpec.ts) run against every event source: the in-store
 * readers (Letta server messages, LangGraph checkpoints written by the real SqliteSaver, OpenAI
 * Agents sessions), the log readers (a Claude Code transcript against mcp-memory-service, an OTLP
 * JSON Lines trace file) and live OTLP posts. Each factory writes the canonical recalls in that
 * source's own format with the fixture writers of test/helpers/, plus two malformed records: one
 * the format can hold (a line that is not JSON, a result that is not a list…) and one result item
 * with neither an id nor a text.
 */
import fs from 'node:fs'
import path from 'node:path'
import { eventLogOf } from '../../src/main/events/eventLog'
import { LIVE_SOURCE_KEY, ingestOtlpPayload, liveRecallReader } from '../../src/main/events/otlp/live'
import { openSource } from '../../src/main/store/registry'
import { TranscriptWriter } from '../helpers/claudeTranscript'
import { createLangGraphStore, putLangGraphThread } from '../helpers/frameworks/langgraph'
import { buildLettaServer, lettaToolCall, lettaToolEnvelope, type LettaServerSpec } from '../helpers/frameworks/letta'
import { buildMcpMemoryService, contentHash } from '../helpers/frameworks/mcpMemoryService'
import { createAgentsSession, type AgentItem } from '../helpers/frameworks/openaiAgents'
import { hexId, otlpPayload, otlpSpan } from '../helpers/otlpFixture'
import { describeEventSourceConformance, resultItem, type ConfRecall } from './eventSpec'
import { CONF_DIM, writeCanonicalStore, type ConfMemory } from './spec'

/** A result item with neither an id nor a text: skipped and counted by every reader. */
const NO_ID_NO_TEXT = { note: 'neither an id nor a text' }
/** SQLite CURRENT_TIMESTAMP text (UTC, seconds). */
const sqlTs = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19)

describeEventSourceConformance('Letta server messages (archival_memory_search)', (dir, content, recalls) => {
  const agent = 'agent-a'
  const ts = '2026-03-01 09:00:00+00:00'
  const messages: LettaServerSpec['messages'] = []
  const msg = (x: Omit<LettaServerSpec['messages'][number], 'id' | 'agent' | 'seq'>) =>
    messages.push({ id: `message-${messages.length + 1}`, agent, seq: messages.length + 1, ...x })
  const search = (r: ConfRecall, items: unknown[] | string) => {
    msg({ role: 'user', parts: [r.query], createdAt: r.at - 1000 })
    msg({ role: 'assistant', toolCalls: lettaToolCall(`call-${r.key}`, 'archival_memory_search', { query: r.query }), createdAt: r.at })
    msg({ role: 'tool', name: 'archival_memory_search', toolCallId: `call-${r.key}`, parts: [lettaToolEnvelope(items)], createdAt: r.at })
    msg({ role: 'assistant', toolCalls: lettaToolCall(`send-${r.key}`, 'send_message', { message: r.answer }), createdAt: r.at + 1000 })
  }
  for (const r of recalls) {
    // current Letta: each item carries the passage id beside its timestamp and content
    const items: unknown[] = r.results.map((x) => ({ timestamp: ts, ...resultItem(x, (m) => m.id) }))
    if (r.key === 'r1') items.push(NO_ID_NO_TEXT)
    search(r, items)
  }
  // malformed: a tool message whose text is not Letta's {"status", "message", "time"} envelope
  msg({ role: 'assistant', toolCalls: lettaToolCall('call-bad', 'archival_memory_search', { query: 'broken' }), createdAt: recalls[3].at + 60_000 })
  msg({ role: 'tool', name: 'archival_memory_search', toolCallId: 'call-bad', parts: ['Traceback (most recent call last)'], createdAt: recalls[3].at + 60_000 })
  const file = buildLettaServer(dir, {
    agents: [...new Set(content.memories.map((m) => m.agent))].map((a) => ({ id: a, name: a })),
    blocks: [],
    passages: content.memories.map((m) => ({ id: m.id, agent: m.agent, text: m.content, createdAt: m.createdAt, embedding: m.vector, model: 'conf-model' })),
    messages,
  })
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    kind: 'letta',
    idOf: (m) => m.id,
    carries: { ids: true, scores: true },
    malformed: 2,
  }
})

describeEventSourceConformance('LangGraph checkpoints (langmem search_memory, written by SqliteSaver)', async (dir, content, recalls) => {
  const file = path.join(dir, 'agent.sqlite')
  const NS = ['memories', 'conf']
  createLangGraphStore(
    file,
    content.memories.map((m) => ({ namespace: NS, key: m.id, value: { content: m.content }, vectors: null, createdAt: sqlTs(m.createdAt) })),
  )
  const { HumanMessage, AIMessage, ToolMessage } = await import('@langchain/core/messages')
  const steps: unknown[][] = []
  const ts: string[] = []
  const step = (at: number, ...msgs: unknown[]) => {
    steps.push(msgs)
    ts.push(new Date(at).toISOString())
  }
  const toolCall = (key: string, query: string) =>
    new AIMessage({ id: `a-${key}`, content: '', tool_calls: [{ id: `tc-${key}`, name: 'search_memory', args: { query }, type: 'tool_call' }] })
  for (const r of recalls) {
    // langmem's items: {namespace, key, value, score}; a result logged by text only has no namespace/key
    const items: unknown[] = r.results.map((x) => {
      const it = resultItem(x, (m) => m.id)
      return typeof it.id === 'string'
        ? { namespace: NS, key: it.id, value: it.content === undefined ? {} : { content: it.content }, score: it.score }
        : { value: { content: it.content }, score: it.score }
    })
    if (r.key === 'r1') items.push(NO_ID_NO_TEXT)
    step(r.at - 1000, new HumanMessage({ id: `h-${r.key}`, content: r.query }))
    step(r.at, toolCall(r.key, r.query))
    step(r.at + 500, new ToolMessage({ id: `t-${r.key}`, tool_call_id: `tc-${r.key}`, name: 'search_memory', content: JSON.stringify(items) }))
    step(r.at + 1000, new AIMessage({ id: `ans-${r.key}`, content: r.answer }))
  }
  // malformed: a search_memory result that is not a JSON list of items
  step(recalls[3].at + 60_000, toolCall('bad', 'broken'))
  step(recalls[3].at + 60_500, new ToolMessage({ id: 't-bad', tool_call_id: 'tc-bad', name: 'search_memory', content: 'the store timed out' }))
  await putLangGraphThread(file, 'conf-thread', steps, ts)
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    kind: 'langgraph',
    idOf: (m) => `${NS.join('.')}/${m.id}`,
    carries: { ids: true, scores: true },
    malformed: 2,
  }
})

describeEventSourceConformance('OpenAI Agents SDK session (function_call / function_call_output)', (dir, content, recalls) => {
  const file = path.join(dir, 'session.db')
  const S = 'conf-session'
  // The session's items are the store's memories (id = row id): the canonical memories first, in order.
  const items: AgentItem[] = content.memories.map((m) => ({ session: S, item: { role: 'user', content: m.content }, at: sqlTs(m.createdAt) }))
  const rowId = new Map(content.memories.map((m, i) => [m.id, String(i + 1)]))
  for (const r of recalls) {
    const results: unknown[] = r.results.map((x) => resultItem(x, (m) => rowId.get(m.id)!))
    if (r.key === 'r1') results.push(NO_ID_NO_TEXT)
    items.push(
      {
        session: S,
        item: { type: 'function_call', call_id: `call_${r.key}`, name: 'search_memory', arguments: JSON.stringify({ query: r.query }) },
        at: sqlTs(r.at),
      },
      { session: S, item: { type: 'function_call_output', call_id: `call_${r.key}`, output: JSON.stringify({ results }) }, at: sqlTs(r.at) },
      { session: S, item: { role: 'assistant', content: [{ type: 'output_text', text: r.answer, annotations: [] }] }, at: sqlTs(r.at + 1000) },
    )
  }
  // malformed: a row that is not JSON (the SDK skips it too)
  items.push({ session: S, item: 'not json {', at: sqlTs(recalls[3].at + 60_000) })
  createAgentsSession(file, items)
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    kind: 'openai-agents',
    idOf: (m: ConfMemory) => rowId.get(m.id)!,
    carries: { ids: true, scores: true },
    malformed: 2,
  }
})

describeEventSourceConformance('Claude Code transcript (mcp-memory-service retrieve_memory)', (dir, content, recalls) => {
  const file = buildMcpMemoryService(
    dir,
    CONF_DIM,
    content.memories.map((m) => ({ content: m.content, createdAt: m.createdAt / 1000, embedding: m.vector })),
  )
  const logDir = path.join(dir, 'projects')
  fs.mkdirSync(logDir)
  const w = new TranscriptWriter('conf-session', recalls[0].at - 1000)
  for (const r of recalls) {
    // the FastMCP server's structured answer: {memories: [{content, content_hash, similarity_score}]}
    const memories: unknown[] = r.results.map((x) => {
      const it = resultItem(x, (m) => contentHash(m.content))
      return {
        ...(it.id === undefined ? {} : { content_hash: it.id }),
        ...(it.content === undefined ? {} : { content: it.content }),
        similarity_score: it.score,
      }
    })
    if (r.key === 'r1') memories.push(NO_ID_NO_TEXT)
    w.at(r.at - 1000).user(r.query)
    const id = w.toolUse('mcp__memory__retrieve_memory', { query: r.query })
    w.toolResult(id, { content: [{ type: 'text', text: JSON.stringify({ memories }) }] }, { toolUseResult: { memories } })
    w.text(r.answer)
  }
  // malformed: a line that is not JSON
  w.raw('{"type": "assistant", "message": ')
  const log = path.join(logDir, 'conf-session.jsonl')
  fs.writeFileSync(log, w.toString())
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    attach: (store) => void eventLogOf(store).addLogFile(log),
    files: [file, log],
    kind: 'claude-code',
    idOf: (m) => contentHash(m.content),
    carries: { ids: true, scores: true },
    malformed: 2,
  }
})

/** The canonical recalls as OTLP payloads: a GenAI search_memory span (records {id?, content?, score}) then its chat span, one trace each. */
function otlpRecallPayloads(recalls: ConfRecall[]): Record<string, unknown>[] {
  return recalls.map((r) => {
    const traceId = hexId(16)
    const records: unknown[] = r.results.map((x) => resultItem(x, (m) => m.id))
    if (r.key === 'r1') records.push(NO_ID_NO_TEXT)
    return otlpPayload('conf-agent', [
      otlpSpan({
        traceId,
        name: 'search_memory conf',
        start: r.at,
        end: r.at + 200,
        attrs: { 'gen_ai.operation.name': 'search_memory', 'gen_ai.memory.query.text': r.query, 'gen_ai.memory.records': JSON.stringify(records) },
      }),
      otlpSpan({
        traceId,
        name: 'chat',
        start: r.at + 300,
        end: r.at + 900,
        attrs: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: r.answer }], finish_reason: 'stop' }]),
        },
      }),
    ])
  })
}

describeEventSourceConformance('OTLP JSON Lines trace file (GenAI search_memory)', (dir, content, recalls) => {
  const file = writeCanonicalStore(path.join(dir, 'canonical.db'), content.memories)
  const log = path.join(dir, 'traces.jsonl')
  // newest first (an exporter's batches need not arrive in order: the log sorts by time); malformed: a line that is not JSON
  fs.writeFileSync(
    log,
    [
      ...otlpRecallPayloads(recalls)
        .reverse()
        .map((p) => JSON.stringify(p)),
      '{"resourceSpans": [',
      '',
    ].join('\n'),
  )
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    attach: (store) => void eventLogOf(store).addLogFile(log),
    files: [file, log],
    kind: 'otlp',
    idOf: (m) => m.id,
    carries: { ids: true, scores: true },
    malformed: 2,
  }
})

describeEventSourceConformance('live OTLP (POST /v1/traces payloads)', (dir, content, recalls) => {
  const file = writeCanonicalStore(path.join(dir, 'canonical.db'), content.memories)
  let rejected = 0
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    // as the receiver does (api/otlpLive.ts): store each post in the workspace, then (re)read the live source
    attach: (store) => {
      const posts: unknown[] = [...otlpRecallPayloads(recalls).reverse(), { resourceSpans: [{ scopeSpans: [{ spans: ['not a span'] }] }] }]
      for (const p of posts) rejected += ingestOtlpPayload(store.workspace, p, recalls[3].at + 3_600_000).rejected
      eventLogOf(store).addReader(liveRecallReader(store.workspace), { persistKey: LIVE_SOURCE_KEY })
    },
    files: [file],
    kind: 'otlp-live',
    idOf: (m) => m.id,
    carries: { ids: true, scores: true },
    // the bad span is counted by the post that carried it (its receipt), the bad item when the recall is read
    malformed: 2,
    rejectedAtIngest: () => rejected,
  }
})
