/**
 * OpenAI Agents SDK sessions opened in place (tables from the SDK's DDL, rows as its
 * _insert_items writes them). Expected values come from the fixture items, read here.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../../../shared/presets'
import { main } from '../../../cli/index'
import { runRecall } from '../../../recall/engine'
import { openSource } from '../../registry'
import { createAgentsSession, ITEMS, type AgentItem } from '../../../../../test/helpers/frameworks/openaiAgents'
import { sha256File, tmpDir } from '../../../../../test/helpers/tmp'

let t: ReturnType<typeof tmpDir>
let basic: string
let advanced: string
const utc = (s: string) => Date.parse(`${s.replace(' ', 'T')}Z`)
const isJson = (x: AgentItem['item']) => typeof x !== 'string'

/** What each item should read as: [role, content]. */
const EXPECTED: [string | null, string][] = [
  ['user', 'What is the weather in Oslo?'],
  ['assistant', 'get_weather({"city": "Oslo"})'],
  ['tool', 'Sunny, 21C'],
  ['assistant', 'It is sunny and 21C in Oslo.'],
  ['system', 'Answer briefly.'],
  ['user', 'Summarise this\nand that'],
  [null, 'not json {'],
  ['user', 'Thanks!'],
]

const ADVANCED: AgentItem[] = [
  {
    session: 'conv-1',
    item: { role: 'user', content: 'Plan a trip' },
    at: '2025-06-03 10:00:00',
    structure: { branch: 'main', type: 'user', seq: 1, userTurn: 1, branchTurn: 1, tool: null },
  },
  {
    session: 'conv-1',
    item: { type: 'function_call', call_id: 'c', name: 'search_flights', arguments: '{}' },
    at: '2025-06-03 10:00:01',
    structure: { branch: 'main', type: 'function_call', seq: 2, userTurn: 1, branchTurn: 1, tool: 'search_flights' },
  },
  {
    session: 'conv-1',
    item: { role: 'user', content: 'Plan a cheaper trip' },
    at: '2025-06-03 10:05:00',
    structure: { branch: 'alt', type: 'user', seq: 1, userTurn: 1, branchTurn: 1, tool: null },
  },
]

beforeAll(() => {
  t = tmpDir()
  basic = path.join(t.dir, 'agents.db')
  advanced = path.join(t.dir, 'advanced.db')
  createAgentsSession(basic)
  createAgentsSession(advanced, ADVANCED, true)
})
afterAll(() => t.cleanup())

describe('OpenAI Agents SDK SQLiteSession', () => {
  it('detects the session tables, says why, and maps items to turns of their session', () => {
    const s = openSource({ path: basic })
    try {
      const f = s.facts()
      expect(f.layout).toBe('openai-agents')
      expect(f.detectedBecause).toBe(
        'OpenAI Agents SDK SQLiteSession: agent_sessions(session_id, …) + agent_messages(id, session_id, message_data, created_at)',
      )
      expect(f.counts.memories).toBe(ITEMS.length)
      expect(f.counts.sessions).toBe(new Set(ITEMS.map((i) => i.session)).size)
      const page = s.memoriesPage({ limit: 100, tiers: ['working', 'archived'] })
      const position = new Map<string, number>()
      ITEMS.forEach((it, i) => {
        const m = page.rows.find((r) => r.id === String(i + 1))!
        const turn = position.get(it.session) ?? 0
        position.set(it.session, turn + 1)
        expect([m.role, m.content, m.sessionId, m.createdAt, m.turn, m.tier]).toEqual([
          ...EXPECTED[i],
          it.session,
          utc(it.at),
          turn,
          isJson(it.item) ? 'working' : 'archived',
        ])
        if (isJson(it.item)) expect((m.metadata as { item: unknown }).item).toEqual(it.item)
      })
      const conv1 = s.getSession('conv-1')!
      const c1 = ITEMS.filter((i) => i.session === 'conv-1').map((i) => utc(i.at))
      expect([conv1.startedAt, conv1.endedAt]).toEqual([Math.min(...c1), Math.max(...c1)])
    } finally {
      s.close()
    }
  })

  it("preset openai-agents:last-10 (topK 3) returns get_items(limit=3): the session's latest valid items", async () => {
    const n = 3
    // get_items: ORDER BY id DESC over valid JSON rows, first n (handed back oldest first; listed newest first here)
    const expected = ITEMS.map((it, i) => ({ it, id: String(i + 1) }))
      .filter((x) => x.it.session === 'conv-1' && isJson(x.it.item))
      .reverse()
      .slice(0, n)
      .map((x) => x.id)
    const s = openSource({ path: basic })
    try {
      const cfg = getPreset('openai-agents:last-10').config
      const trace = await runRecall(s, '', { ...cfg, topK: n, scope: { ...cfg.scope, sessionId: 'conv-1' } }, utc('2025-07-01 00:00:00'))
      expect(trace.results.map((r) => r.id)).toEqual(expected)
      const all = await runRecall(
        s,
        '',
        { ...getPreset('openai-agents').config, scope: { tiers: ['working', 'long_term'], sessionId: 'conv-1' } },
        utc('2025-07-01 00:00:00'),
      )
      expect(all.results).toHaveLength(ITEMS.filter((i) => i.session === 'conv-1' && isJson(i.item)).length)
    } finally {
      s.close()
    }
  })

  it('reads the advanced session: branches as sessions, sequence numbers as turns, turn usage in metadata', () => {
    const s = openSource({ path: advanced })
    try {
      const f = s.facts()
      expect(f.detectedBecause).toBe(
        'OpenAI Agents SDK AdvancedSQLiteSession: agent_sessions(session_id, …) + agent_messages(id, session_id, message_data, created_at) + message_structure + turn_usage',
      )
      const page = s.memoriesPage({ limit: 10 })
      ADVANCED.forEach((it, i) => {
        const m = page.rows.find((r) => r.id === String(i + 1))!
        expect(m.sessionId).toBe(it.structure!.branch === 'main' ? it.session : `${it.session}@${it.structure!.branch}`)
        expect(m.turn).toBe(it.structure!.seq)
        const meta = m.metadata as { branch_id: string; tool_name: string | null; usage: { total_tokens: number } | null }
        expect(meta.branch_id).toBe(it.structure!.branch)
        expect(meta.tool_name).toBe(it.structure!.tool)
        expect(meta.usage?.total_tokens ?? null).toBe(it.structure!.branch === 'main' ? 150 : null)
      })
      expect(
        s
          .sessionsPage({})
          .rows.map((r) => r.id)
          .sort(),
      ).toEqual(['conv-1', 'conv-1@alt'])
    } finally {
      s.close()
    }
  })

  it('works through the CLI: info says why, recall runs the SDK preset', async () => {
    const run = async (args: string[]) => {
      let out = ''
      const code = await main(args, { out: (x) => (out += `${x}\n`), err: () => undefined })
      return { code, out }
    }
    const info = await run(['info', '--db', basic])
    expect(info.code).toBe(0)
    expect(info.out).toContain('detected: OpenAI Agents SDK SQLiteSession')
    const r = await run([
      'recall',
      '--db',
      basic,
      '--preset',
      'openai-agents:last-10',
      '--session',
      'conv-2',
      '--query',
      'anything',
      '--now',
      '2025-07-01T00:00:00Z',
      '--json',
    ])
    expect(r.code).toBe(0)
    const trace = JSON.parse(r.out) as { results: { id: string }[] }
    const conv2 = ITEMS.map((it, i) => ({ it, id: String(i + 1) })).filter((x) => x.it.session === 'conv-2')
    expect(trace.results.map((x) => x.id)).toEqual(conv2.reverse().map((x) => x.id))
  })

  it('opens a folder holding one session DB; names the files when it holds several', () => {
    const dir = path.join(t.dir, 'folder')
    fs.mkdirSync(dir)
    fs.copyFileSync(basic, path.join(dir, 'session.db'))
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a DB')
    const s = openSource({ path: dir })
    try {
      expect(s.facts()).toMatchObject({ layout: 'openai-agents', path: path.join(dir, 'session.db') })
    } finally {
      s.close()
    }
    fs.copyFileSync(advanced, path.join(dir, 'advanced.db'))
    expect(() => openSource({ path: dir })).toThrow(
      expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringContaining('advanced.db (openai-agents), session.db (openai-agents)') }),
    )
  })

  it('an unknown SQLite file is refused with one line naming every layout looked for', () => {
    const p = path.join(t.dir, 'other.db')
    const db = new Database(p)
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)')
    db.close()
    let err: unknown
    try {
      openSource({ path: p }).close()
    } catch (e) {
      err = e
    }
    expect(err).toMatchObject({ code: 'UNKNOWN_LAYOUT' })
    const msg = (err as Error).message
    expect(msg.split('\n')).toHaveLength(1)
    for (const part of ['tables: notes', 'canonical: memories', 'Engram: memories', 'mem0: vectors', 'LangGraph: store', 'OpenAI Agents SDK: agent_messages'])
      expect(msg).toContain(part)
  })

  it('leaves both files byte-identical after a full session', async () => {
    for (const p of [basic, advanced]) {
      const before = sha256File(p)
      const s = openSource({ path: p })
      try {
        s.facts()
        s.facets()
        s.memoriesPage({ search: 'Oslo' })
        s.sessionsPage({})
        await runRecall(s, 'weather', { ...getPreset('fieldguide').config, mode: 'lexical', floor: null }, Date.now())
        await runRecall(s, '', { ...getPreset('openai-agents').config, scope: { tiers: ['working'], sessionId: 'conv-1' } }, Date.now())
      } finally {
        s.close()
      }
      expect(sha256File(p)).toBe(before)
    }
  })
})
