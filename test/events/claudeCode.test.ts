/**
 * Claude Code transcripts against a memory.jsonl written by the real
 * @modelcontextprotocol/server-memory: the tool results in the transcript are the server's
 * own answers to search_nodes / open_nodes (called over stdio here), and the expected
 * memory ids are read from the store opened on that memory.jsonl (matched by content),
 * never from the reader.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventLogOf } from '../../src/main/events/eventLog'
import { readTranscript } from '../../src/main/events/claudeCode/transcript'
import { emptyStats, type LoggedRecall } from '../../src/main/events/types'
import { openSource } from '../../src/main/store/registry'
import { TranscriptWriter } from '../helpers/claudeTranscript'
import { callMcpMemoryTools, createMcpMemoryFixture } from '../helpers/frameworks/mcpMemory'
import { contentHash } from '../helpers/frameworks/mcpMemoryService'
import { tmpDir } from '../helpers/tmp'

let t: ReturnType<typeof tmpDir>
/** memory content → its id in the opened store */
let idByContent: Map<string, string>
let transcript: string
let recalls: LoggedRecall[]
let stats: ReturnType<typeof emptyStats>
type ToolAnswer = { content: { type: string; text: string }[]; structuredContent: unknown }
let search: ToolAnswer
let open: ToolAnswer
const T0 = Date.parse('2026-03-02T10:00:00.000Z')

beforeAll(async () => {
  t = tmpDir()
  const memFile = path.join(t.dir, 'memory.jsonl')
  await createMcpMemoryFixture(memFile)
  ;[search, open] = (await callMcpMemoryTools(memFile, [
    { name: 'search_nodes', args: { query: 'compilers' } },
    { name: 'open_nodes', args: { names: ['Lisbon', 'Thursday'] } },
  ])) as ToolAnswer[]
  const s = openSource({ path: memFile, workspacePath: path.join(t.dir, 'ws.recallscope') })
  try {
    idByContent = new Map(s.memoriesPage({ limit: 100 }).rows.map((m) => [m.content, m.id]))
  } finally {
    s.close()
  }

  const w = new TranscriptWriter('5c1f7a0e-1111-4222-8333-944455556666', T0)
  w.summary('Ada notes')
  w.user('What does Ada work on?')
  const searchAt = w.now
  const a = w.toolUse('mcp__memory__search_nodes', { query: 'compilers' })
  const searchLine = w.lines.length
  // the structured form: toolUseResult holds the server's whole answer
  w.toolResult(a, search, { toolUseResult: search })
  w.thinking('The graph says compilers.')
  w.text('Ada works on compilers, and she is allergic to peanuts.')
  w.raw('{"type":"assistant", this line is cut')
  const cutLine = w.lines.length
  const openAt = w.now
  const b = w.toolUse('mcp__memory__open_nodes', { names: ['Lisbon', 'Thursday'] })
  // the text form only: the content block's JSON text, no toolUseResult
  w.toolResult(b, { content: open.content })
  w.toolUse('Bash', { command: 'ls' })
  const c = w.toolUse('mcp__memory__search_nodes', { query: 'x' })
  w.toolResult(c, { content: [{ type: 'text', text: 'MCP error -32603: boom' }] }, { isError: true })
  const d = w.toolUse('mcp__memory__search_nodes', { query: 'y' })
  w.toolResult(d, { content: [{ type: 'text', text: 'not a graph' }] })
  // mcp-memory-service, classic text answer (doobidoo handlers/memory.py retrieve_memory)
  const svcAt = w.now
  const e = w.toolUse('mcp__memory-service__retrieve_memory', { query: 'peanut allergy', n_results: 2 })
  const hash = contentHash('Allergic to peanuts')
  w.toolResult(e, {
    content: [
      {
        type: 'text',
        text: `Found the following memories:\n\nMemory 1:\nTimestamp: 2026-03-01 09:00:00\nContent: Allergic to peanuts\nHash: ${hash}\nRelevance Score: 0.91\nTags: health\n---\nMemory 2:\nContent: Something else\nspanning two lines\nHash: ${contentHash('x')}\nRelevance Score: 0.40\n---`,
      },
    ],
  })
  transcript = path.join(t.dir, 'projects', '-home-ada-project', `${w.sessionId}.jsonl`)
  fs.mkdirSync(path.dirname(transcript), { recursive: true })
  fs.writeFileSync(transcript, w.toString())
  stats = emptyStats()
  recalls = []
  for await (const r of readTranscript(transcript, stats)) recalls.push(r)
  Object.assign(globalThis, { __times: { searchAt, openAt, svcAt, searchLine, cutLine } })
})
afterAll(() => t.cleanup())

const times = () => (globalThis as unknown as { __times: { searchAt: number; openAt: number; svcAt: number; searchLine: number; cutLine: number } }).__times

describe('Claude Code transcript reader', () => {
  it('reads each memory recall with the store’s memory ids, in the order the server returned them', () => {
    expect(recalls.map((r) => r.origin.tool)).toEqual(['mcp__memory__search_nodes', 'mcp__memory__open_nodes', 'mcp__memory-service__retrieve_memory'])
    const [s, o] = recalls
    // The server's own answer: which entities and observations it returned (read from its structuredContent).
    const ents = (search.structuredContent as { entities: { name: string; observations: string[] }[] }).entities
    expect(ents.map((x) => x.name)).toEqual(['Ada'])
    expect(s.query).toBe('compilers')
    expect(s.at).toBe(times().searchAt)
    expect(s.results.map((r) => r.id)).toEqual(ents[0].observations.map((obs) => idByContent.get(obs)))
    expect(s.results.map((r) => r.text)).toEqual(['Works on compilers', 'Allergic to peanuts'])
    expect(s.results.every((r) => r.id !== undefined && r.id !== null)).toBe(true)
    // open_nodes: Lisbon's two observations, then Thursday (no observations: listed by name, matches no memory)
    expect(o.query).toBe('Lisbon, Thursday')
    expect(o.at).toBe(times().openAt)
    expect(o.results.map((r) => r.id)).toEqual([idByContent.get('Ada moved here in 2024'), idByContent.get('Rainy in November'), 'Thursday'])
    expect(idByContent.has('Thursday')).toBe(false)
  })

  it('the decision is the next assistant text or tool call (thinking passed over)', () => {
    const [s, o, svc] = recalls
    expect(s.decision).toMatchObject({ text: 'Ada works on compilers, and she is allergic to peanuts.', toolCall: null, via: 'assistant message' })
    expect(o.decision).toMatchObject({ text: null, toolCall: { name: 'Bash', arguments: '{"command":"ls"}' }, via: 'tool call' })
    // the transcript ends after the last result: no decision
    expect(svc.decision).toBeNull()
  })

  it('reads mcp-memory-service text answers: content hash, content, relevance score', () => {
    const svc = recalls[2]
    expect(svc.query).toBe('peanut allergy')
    expect(svc.results).toEqual([
      { rank: 1, id: contentHash('Allergic to peanuts'), text: 'Allergic to peanuts', score: 0.91 },
      { rank: 2, id: contentHash('x'), text: 'Something else\nspanning two lines', score: 0.4 },
    ])
  })

  it('carries where each recall came from', () => {
    const s = recalls[0]
    expect(s.key).toMatch(/^claude-code:5c1f7a0e-1111-4222-8333-944455556666:toolu_/)
    expect(s.sessionId).toBe('5c1f7a0e-1111-4222-8333-944455556666')
    expect(s.origin).toMatchObject({ kind: 'claude-code', file: transcript, line: times().searchLine })
    expect(s.origin.callId).toMatch(/^toolu_/)
  })

  it('skips and counts a cut line, a tool error and an unreadable result; never throws', () => {
    expect(recalls).toHaveLength(3)
    expect(stats.skipped).toBe(3)
    expect(stats.problems.map((p) => p.why)).toEqual([
      expect.stringMatching(/^not JSON/),
      expect.stringMatching(/returned an error: MCP error -32603: boom/),
      expect.stringMatching(/not a knowledge-graph answer/),
    ])
    expect(stats.problems[0].where).toBe(`${path.basename(transcript)}:${times().cutLine}`)
  })

  it('added as a folder (~/.claude/projects) to the MCP store’s event log: every result matched by id, the bare entity unmatched', async () => {
    fs.writeFileSync(path.join(t.dir, 'projects', 'notes.jsonl'), '{"hello":1}\n')
    const s = openSource({ path: path.join(t.dir, 'memory.jsonl'), workspacePath: path.join(t.dir, 'ws2.recallscope') })
    try {
      const log = eventLogOf(s)
      const added = log.addLogFile(path.join(t.dir, 'projects'))
      expect(added.map((a) => [a.file, a.kind])).toEqual([[transcript, 'claude-code']])
      const page = await log.eventsPage({ dir: 'asc', limit: 10 })
      expect(page.rows.map((e) => e.id)).toEqual(recalls.map((r) => r.key))
      const [sEv, oEv, svcEv] = page.rows
      expect(sEv.results).toEqual(recalls[0].results.map((r) => ({ id: r.id, score: NaN, matchedBy: 'id' })))
      expect(oEv.results.map((r) => [r.id, r.matchedBy])).toEqual([
        [idByContent.get('Ada moved here in 2024'), 'id'],
        [idByContent.get('Rainy in November'), 'id'],
      ])
      expect(oEv.unmatched).toEqual([{ rank: 3, loggedId: 'Thursday', text: null, score: null }])
      // the mcp-memory-service hashes name no memory of this store: its text still matches one
      expect(svcEv.results.map((r) => [r.id, r.matchedBy])).toEqual([[idByContent.get('Allergic to peanuts'), 'text']])
      expect(svcEv.unmatched?.map((u) => u.loggedId)).toEqual([contentHash('x')])
      expect(sEv.decision?.text).toBe('Ada works on compilers, and she is allergic to peanuts.')
    } finally {
      s.close()
    }
  })

  it('a path that is not a trace log is a typed error', () => {
    const s = openSource({ path: path.join(t.dir, 'memory.jsonl'), workspacePath: path.join(t.dir, 'ws3.recallscope') })
    try {
      expect(() => eventLogOf(s).addLogFile(path.join(t.dir, 'memory.jsonl'))).toThrow(expect.objectContaining({ code: 'BAD_INPUT' }))
      expect(() => eventLogOf(s).addLogFile(path.join(t.dir, 'nope.jsonl'))).toThrow(expect.objectContaining({ code: 'BAD_INPUT' }))
    } finally {
      s.close()
    }
  })
})
