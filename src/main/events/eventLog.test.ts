/**
 * The event log: the store's own recall_events merged with added readers
 * (paging, filters, timeline, lookups), log files by format (a file, a folder,
 * remembered in the workspace), typed errors, and a reader that fails whole.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tmpDir } from '../../../test/helpers/tmp'
import { openSource } from '../store/registry'
import type { MemorySource } from '../store/source'
import { EventLog, eventLogOf } from './eventLog'
import { LOG_FORMATS, type LogFormat } from './logFormats'
import { parsePyLiteral } from './pyLiteral'
import { skip, type EventReader, type LoggedRecall } from './types'
import { writeDemoDb } from '../../../test/helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let dbPath: string
let store: MemorySource
beforeAll(() => {
  t = tmpDir()
  dbPath = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 300, seed: 5 }).path
  store = openSource({ path: dbPath, workspacePath: `${dbPath}.ws` })
})
afterAll(() => {
  store.close()
  t.cleanup()
})

const recall = (key: string, at: number, results: LoggedRecall['results'], extra: Partial<LoggedRecall> = {}): LoggedRecall => ({
  key,
  at,
  agentId: 'agent-x',
  userId: null,
  sessionId: null,
  turn: null,
  query: `query ${key}`,
  preset: null,
  results,
  origin: { kind: 'otlp', tool: 'retrieve' },
  decision: null,
  ...extra,
})

const readerOf = (recalls: LoggedRecall[]): EventReader => ({ kind: 'otlp', label: 'test reader', read: () => recalls })

describe('EventLog over a store with recall_events', () => {
  it('merges read events with the store’s own, by time, under one filter; totals and timeline add up', async () => {
    const own = store.eventsPage({ limit: 1000, dir: 'asc' })
    expect(own.total).toBeGreaterThan(3)
    // Memories whose text is unique in the demo (a repeated text matches the first in storage order).
    const mems = store
      .memoriesPage({ limit: 200 })
      .rows.filter((m) => store.memoryIdsByText({ texts: [m.content], normalized: [] }).exact.get(m.content)?.length === 1)
      .slice(0, 2)
    const mid = own.rows[Math.floor(own.rows.length / 2)].at
    const log = new EventLog(store)
    log.addReader(
      readerOf([
        recall('x:1', mid, [{ rank: 1, id: mems[0].id, text: null, score: 0.5 }]),
        recall('x:2', own.rows[0].at - 1, [{ rank: 1, id: null, text: mems[1].content, score: null }]),
        recall('x:3', own.rows.at(-1)!.at + 1, [{ rank: 1, id: 'nope', text: 'no such memory text', score: null }]),
      ]),
    )
    const all = await log.eventsPage({ dir: 'asc', limit: 1000 })
    expect(all.total).toBe(own.total + 3)
    expect(all.rows[0].id).toBe('x:2')
    expect(all.rows.at(-1)!.id).toBe('x:3')
    const sorted = [...all.rows].sort((a, b) => a.at - b.at)
    expect(all.rows.map((e) => e.at)).toEqual(sorted.map((e) => e.at))
    // A page in the middle is the same slice of the merged order.
    const page = await log.eventsPage({ dir: 'asc', offset: 5, limit: 7 })
    expect(page.rows.map((e) => e.id)).toEqual(all.rows.slice(5, 12).map((e) => e.id))
    // Newest first by default.
    expect((await log.eventsPage({ limit: 1 })).rows[0].id).toBe('x:3')
    // Filters apply to both.
    const byAgent = await log.eventsPage({ agentId: 'agent-x' })
    expect(byAgent.rows.map((e) => e.id).sort()).toEqual(['x:1', 'x:2', 'x:3'])
    expect((await log.eventsPage({ memoryId: mems[0].id, limit: 1000 })).total).toBe(store.eventsPage({ memoryId: mems[0].id }).total + 1)
    const x2 = (await log.getEvent('x:2'))!
    expect(x2.results).toEqual([{ id: mems[1].id, score: NaN, matchedBy: 'text' }])
    expect((await log.getEvent('x:3'))!.unmatched).toEqual([{ rank: 1, loggedId: 'nope', text: 'no such memory text', score: null }])
    expect(await log.getEvent(own.rows[0].id)).toEqual(store.getEvent(own.rows[0].id))
    expect(log.eventExtras('x:1')).toEqual({ queryVector: null, queryVectorProblem: null, context: null })
    const tl = await log.eventTimeline({})
    expect(tl.total).toBe(own.total + 3)
    expect(tl.agents).toContain('agent-x')
    expect(tl.counts(3_600_000, tl.range!.min).reduce((a, c) => a + c.count, 0)).toBe(own.total + 3)
    const src = log.sources()
    expect(src.map((s) => [s.kind, s.events])).toEqual([
      ['recall_events', own.total],
      ['otlp', 3],
    ])
    expect(src[1].matched).toEqual({ id: 1, text: 1, normalized: 0, unmatched: 1 })
  })

  it('a reader that fails whole is reported with its error; the others are still read', async () => {
    const log = new EventLog(store)
    log.addReader({
      kind: 'otlp',
      label: 'broken',
      // oxlint-disable-next-line require-yield -- a reader that fails before its first record
      *read() {
        throw new Error('disk went away')
      },
    })
    log.addReader(readerOf([recall('ok:1', 1, [])]))
    expect((await log.getEvent('ok:1'))?.id).toBe('ok:1')
    expect(log.sources().find((s) => s.label === 'broken')?.error).toBe('disk went away')
  })

  it('NOT_FOUND for an unknown id names the sources read', async () => {
    await expect(new EventLog(store).requireEvent('nope')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: /No recall event nope \(read from: recall_events table/,
    })
  })
})

describe('log files', () => {
  const format: LogFormat = {
    name: 'test-jsonl',
    label: 'test recall log (*.recalls.jsonl)',
    sniff: (file, head) => file.endsWith('.recalls.jsonl') && head.startsWith('{'),
    reader: (file) => ({
      kind: 'otlp',
      label: 'test recall log',
      *read(stats) {
        fs.readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => void (line.trim() && !line.startsWith('{') && skip(stats, `line ${i + 1}`, 'not JSON')))
        for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
          if (!line.startsWith('{')) continue
          const o = JSON.parse(line) as { key: string; at: number }
          yield recall(o.key, o.at, [], { origin: { kind: 'otlp', tool: 't', file } })
        }
      },
    }),
  }
  beforeAll(() => LOG_FORMATS.push(format))
  afterAll(() => LOG_FORMATS.splice(LOG_FORMATS.indexOf(format), 1))

  it('BAD_INPUT for a missing path and for a file of no known format, naming the formats looked for', () => {
    const log = new EventLog(store)
    expect(() => log.addLogFile(path.join(t.dir, 'missing.jsonl'))).toThrow(/no such file or folder/)
    const other = path.join(t.dir, 'notes.txt')
    fs.writeFileSync(other, 'hello')
    try {
      log.addLogFile(other)
      expect.unreachable()
    } catch (e) {
      expect(e).toMatchObject({ code: 'BAD_INPUT' })
      expect((e as Error).message).toMatch(/looked for: .*test recall log \(\*\.recalls\.jsonl\)/)
    }
    const empty = path.join(t.dir, 'empty-folder')
    fs.mkdirSync(empty)
    expect(() => log.addLogFile(empty)).toThrow(/no file in this folder is a known trace log/)
  })

  it('a folder adds every matching file; remembered logs come back in a new log of the same workspace', async () => {
    const folder = path.join(t.dir, 'logs')
    fs.mkdirSync(path.join(folder, 'deep'), { recursive: true })
    fs.writeFileSync(path.join(folder, 'a.recalls.jsonl'), '{"key":"f:1","at":10}\nnot json\n')
    fs.writeFileSync(path.join(folder, 'deep', 'b.recalls.jsonl'), '{"key":"f:2","at":20}\n')
    fs.writeFileSync(path.join(folder, 'readme.md'), '# not a log')
    const log = new EventLog(store)
    const added = log.addLogFile(folder, { remember: true })
    expect(added.map((s) => path.relative(folder, s.file!))).toEqual(['a.recalls.jsonl', path.join('deep', 'b.recalls.jsonl')])
    expect((await log.eventsPage({ agentId: 'agent-x', dir: 'asc' })).rows.map((e) => e.id)).toEqual(['f:1', 'f:2'])
    expect(log.sources().find((s) => s.file?.endsWith('a.recalls.jsonl'))?.stats.skipped).toBe(1)
    // Another log over the same store's workspace (the job worker's, a reopened app) re-adds it.
    const again = new EventLog(store)
    expect(again.rememberedLogs()).toEqual([folder])
    expect((await again.eventsPage({ agentId: 'agent-x' })).total).toBe(2)
    again.forgetLogFile(folder)
    expect(again.rememberedLogs()).toEqual([])
    expect((await again.eventsPage({ agentId: 'agent-x' })).total).toBe(0)
  })

  it('one log per store object', () => {
    expect(eventLogOf(store)).toBe(eventLogOf(store))
  })
})

describe('parsePyLiteral', () => {
  it('reads what Python’s repr prints', () => {
    expect(
      parsePyLiteral(`[{'id': 'passage-1', 'content': "It's here", 'tags': ['a', "b"], 'score': -1.5e-3, 'n': 3, 'x': None, 't': True, 'f': False}]`),
    ).toEqual([{ id: 'passage-1', content: "It's here", tags: ['a', 'b'], score: -0.0015, n: 3, x: null, t: true, f: false }])
    expect(parsePyLiteral(`('a\\nb\\t\\'q\\' \\x41\\u00e9\\U0001F600', 2)`)).toEqual([`a\nb\t'q' Aé😀`, 2])
    expect(parsePyLiteral(`{1, 2}`)).toEqual([1, 2])
    expect(parsePyLiteral(`{}`)).toEqual({})
    expect(parsePyLiteral(`r'a\\b'`)).toBe('a\\b')
    expect(parsePyLiteral(`'''multi\nline'''`)).toBe('multi\nline')
  })

  it('refuses anything that is not a literal (nothing is evaluated)', () => {
    expect(() => parsePyLiteral(`[datetime.datetime(2024, 1, 1)]`)).toThrow(SyntaxError)
    expect(() => parsePyLiteral(`__import__('os')`)).toThrow(SyntaxError)
    expect(() => parsePyLiteral(`['unterminated]`)).toThrow(/unterminated/)
    expect(() => parsePyLiteral(`[1] extra`)).toThrow(/after the value/)
    expect(() => parsePyLiteral('['.repeat(500))).toThrow(/nested too deeply/)
    // A key named like an Object prototype member stays plain data.
    const v = parsePyLiteral(`{'__proto__': {'polluted': True}}`) as Record<string, unknown>
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.keys(v)).toEqual(['__proto__'])
  })
})
