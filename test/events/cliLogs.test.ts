/**
 * `recallscope trace list|replay|why|drivers --db STORE --log PATH --json` on the two
 * log-file formats: a Claude Code transcript against a memory.jsonl written by the real
 * server-memory, and an OTLP JSON Lines file against the demo DB whose retrieval span
 * names demo memories. Expected ids come from the stores (read here), never from the CLI.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/main/cli/index'
import { openSource } from '../../src/main/store/registry'
import type { TraceDrivers, TraceReplay, WhyNot } from '../../src/shared/trace'
import type { Page, RecallEvent } from '../../src/shared/types'
import { TranscriptWriter } from '../helpers/claudeTranscript'
import { callMcpMemoryTools, createMcpMemoryFixture } from '../helpers/frameworks/mcpMemory'
import { hexId, otlpPayload, otlpSpan } from '../helpers/otlpFixture'
import { sha256File, tmpDir } from '../helpers/tmp'
import { writeDemoDb } from '../helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let memFile: string
let transcript: string
let idByContent: Map<string, string>
let demo: string
let otlpFile: string
let demoIds: string[]
let demoQuery: string
/** the observations the server's search_nodes answer held, in order */
let returned: string[]

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

beforeAll(async () => {
  t = tmpDir()
  memFile = path.join(t.dir, 'mcp', 'memory.jsonl')
  fs.mkdirSync(path.dirname(memFile))
  await createMcpMemoryFixture(memFile)
  const [search] = (await callMcpMemoryTools(memFile, [{ name: 'search_nodes', args: { query: 'Ada' } }])) as { content: unknown; structuredContent: unknown }[]
  returned = (search.structuredContent as { entities: { observations: string[] }[] }).entities.flatMap((e) => e.observations)
  const s = openSource({ path: memFile, workspacePath: path.join(t.dir, 'probe.ws') })
  idByContent = new Map(s.memoriesPage({ limit: 100 }).rows.map((m) => [m.content, m.id]))
  s.close()
  const w = new TranscriptWriter('0f0e0d0c-1111-4222-8333-944455556666', Date.parse('2026-03-02T10:00:00Z'))
  w.user('Where does Ada live?')
  const id = w.toolUse('mcp__memory__search_nodes', { query: 'Ada' })
  w.toolResult(id, search, { toolUseResult: search })
  w.text('Ada lives in Lisbon.')
  transcript = path.join(t.dir, 'session.jsonl')
  fs.writeFileSync(transcript, w.toString())

  demo = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 300 }).path
  const d = openSource({ path: demo, workspacePath: path.join(t.dir, 'probe2.ws') })
  const rows = d.memoriesPage({ limit: 3, sort: 'created_at', dir: 'asc' }).rows
  d.close()
  demoIds = rows.map((r) => r.id)
  demoQuery = rows[0].content.split(/\s+/).slice(0, 6).join(' ')
  const trace = hexId(16)
  const at = rows[2].createdAt + 86_400_000
  otlpFile = path.join(t.dir, 'otel.jsonl')
  fs.writeFileSync(
    otlpFile,
    [
      otlpPayload('demo-agent', [
        otlpSpan({
          traceId: trace,
          name: 'retrieval',
          start: at,
          end: at + 20,
          attrs: {
            'gen_ai.operation.name': 'retrieval',
            'gen_ai.retrieval.query.text': demoQuery,
            'gen_ai.retrieval.documents': JSON.stringify(demoIds.map((x, i) => ({ id: x, score: 0.9 - i / 10 }))),
          },
        }),
        otlpSpan({
          traceId: trace,
          name: 'chat',
          start: at + 30,
          end: at + 90,
          attrs: { 'gen_ai.operation.name': 'chat', 'gen_ai.completion.0.content': 'Done.' },
        }),
      ]),
    ]
      .map((p) => JSON.stringify(p))
      .join('\n') + '\n',
  )
})
afterAll(() => t.cleanup())

describe('trace … --log PATH --json', () => {
  it('Claude Code + MCP memory: list, replay, why, drivers run on the transcript’s event; the store is not written', async () => {
    const before = sha256File(memFile)
    const list = await run('trace', 'list', '--db', memFile, '--log', transcript, '--workspace', path.join(t.dir, 'a.ws'), '--json')
    expect(list.code).toBe(0)
    const page = JSON.parse(list.out) as Page<RecallEvent>
    expect(page.rows).toHaveLength(1)
    const ev = page.rows[0]
    expect(returned).toContain('Works on compilers')
    expect(ev.results.map((r) => [r.id, r.matchedBy])).toEqual(returned.map((o) => [idByContent.get(o), 'id']))
    expect(ev.decision?.text).toBe('Ada lives in Lisbon.')
    const common = ['--db', memFile, '--log', transcript, '--workspace', path.join(t.dir, 'a.ws'), '--json']
    const replay = await run('trace', 'replay', '--event', ev.id, ...common)
    expect(replay.code).toBe(0)
    expect((JSON.parse(replay.out) as TraceReplay).rows.length).toBeGreaterThan(0)
    const notReturned = [...idByContent.keys()].find((c) => !returned.includes(c))!
    const why = await run('trace', 'why', '--event', ev.id, '--memory', idByContent.get(notReturned)!, ...common)
    expect(why.code).toBe(0)
    expect((JSON.parse(why.out) as WhyNot).memoryId).toBe(idByContent.get(notReturned))
    const drivers = await run('trace', 'drivers', '--event', ev.id, ...common)
    expect(drivers.code).toBe(0)
    // drivers describe the replay (the log's recall is server-memory's substring search, not a ranking recallscope reproduces)
    expect((JSON.parse(drivers.out) as TraceDrivers).eventId).toBe(ev.id)
    expect(sha256File(memFile)).toBe(before)
  })

  it('OTLP JSON Lines on the demo DB: the retrieval span’s documents are demo memories, matched by id', async () => {
    const common = ['--db', demo, '--log', otlpFile, '--workspace', path.join(t.dir, 'b.ws'), '--json']
    const list = await run('trace', 'list', '--search', demoQuery, ...common)
    expect(list.code).toBe(0)
    const rows = (JSON.parse(list.out) as Page<RecallEvent>).rows.filter((e) => e.origin?.kind === 'otlp')
    expect(rows).toHaveLength(1)
    expect(rows[0].results.map((r) => [r.id, r.matchedBy, r.score])).toEqual(demoIds.map((x, i) => [x, 'id', 0.9 - i / 10]))
    expect(rows[0]).toMatchObject({ agentId: 'demo-agent', query: demoQuery, decision: { text: 'Done.' } })
    const drivers = await run('trace', 'drivers', '--event', rows[0].id, ...common)
    expect(drivers.code).toBe(0)
    // The span's service (demo-agent) is not one of the demo's agents: the replay is not scoped by it, so the
    // logged memories are found in scope (scoping by it put every memory out of scope)
    const replay = await run('trace', 'replay', '--event', rows[0].id, ...common)
    expect(replay.code).toBe(0)
    const r = JSON.parse(replay.out) as TraceReplay
    for (const id of demoIds) {
      const row = r.rows.find((x) => x.id === id)
      expect(row?.causes.some((c) => c.code === 'out-of-scope') ?? false, id).toBe(false)
    }
  })

  it('a --log that is not a trace log exits non-zero with BAD_INPUT', async () => {
    const r = await run('trace', 'list', '--db', demo, '--log', memFile, '--json')
    expect(r.code).not.toBe(0)
    expect(r.out + r.err).toMatch(/BAD_INPUT/)
  })
})
