import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tmpDir } from '../../../../test/helpers/tmp'
import { HASHING_MODEL } from '../../embed/hashing'
import { openSource } from '../registry'
import { importJsonl, readLines } from './jsonl'

let t: ReturnType<typeof tmpDir>
beforeAll(() => (t = tmpDir()))
afterAll(() => t.cleanup())

const T = Date.UTC(2025, 2, 1, 12, 0, 0)
const vec = (seed: number, dim = 4) => Array.from({ length: dim }, (_, i) => Math.cos(seed + i))

/** Lines of a JSONL file, each with what it exercises. Line numbers are 1-based positions here. */
function fixtureLines(): { text: string; note: string }[] {
  return [
    {
      text: JSON.stringify({
        id: 'a1',
        agentId: 'bot',
        userId: 'u1',
        sessionId: 's1',
        role: 'user',
        kind: 'episodic',
        tier: 'working',
        content: 'camelCase row',
        createdAt: T,
        embedding: vec(1),
        model: 'm4',
      }),
      note: 'camel',
    },
    {
      text: JSON.stringify({
        id: 'a2',
        agent_id: 'bot',
        user_id: 'u1',
        session_id: 's1',
        role: 'assistant',
        content: 'snake_case row',
        created_at: '2025-03-01T12:05:00Z',
        last_used_at: T + 3600_000,
        use_count: 2,
        turn: 2,
        salience: 0.4,
        source: 'chat',
        metadata: { topic: 'x' },
        embedding: vec(2),
        model: 'm4',
        session_summary: 'first session',
      }),
      note: 'snake',
    },
    { text: '', note: 'blank' },
    { text: '{"id": "a3", "content": "broken', note: 'bad JSON' },
    { text: JSON.stringify({ id: 'a4', role: 'user' }), note: 'missing content' },
    { text: JSON.stringify({ id: 'a5', content: 'salience as text', salience: 'high' }), note: 'wrong type' },
    { text: JSON.stringify({ id: 'a1', content: 'duplicate of the first id' }), note: 'duplicate id' },
    { text: JSON.stringify({ content: 'no id here', sessionId: 's2', createdAt: '2025-03-02 08:00:00', tenantId: 'acme' }), note: 'derived id, zone-less ISO' },
    {
      text: JSON.stringify({ id: 'a8', content: 'wrong dimension vector', sessionId: 's2', createdAt: T + 86_400_000 * 2, embedding: vec(8, 6), model: 'm4' }),
      note: 'wrong dim',
    },
    { text: JSON.stringify({ id: 'a9', content: 'vector with a NaN', embedding: [0.1, null, 0.3, 0.4], model: 'm4' }), note: 'NaN vector' },
    { text: JSON.stringify({ id: 'a10', content: 'robot speaks', role: 'robot', metadata: '{"ok": true}' }), note: 'unknown role' },
    { text: JSON.stringify({ id: 'a11', content: 'bad metadata text', metadata: 'not {json', role: 'USER' }), note: 'bad metadata string' },
    { text: '[1, 2, 3]', note: 'not an object' },
    { text: JSON.stringify({ id: 'a13', content: 'default model vector', embedding: vec(13), extra_field: 1 }), note: 'no model' },
    { text: '   ', note: 'whitespace only' },
    { text: JSON.stringify({ id: 'a15', content: 'created in seconds?', createdAt: 'yesterday' }), note: 'bad date' },
  ]
}

function writeFixture(name: string, eol = '\n', bom = false): string {
  const p = path.join(t.dir, name)
  fs.writeFileSync(
    p,
    (bom ? '\ufeff' : '') +
      fixtureLines()
        .map((l) => l.text)
        .join(eol) +
      eol,
  )
  return p
}

const lineOf = (note: string) => fixtureLines().findIndex((l) => l.note === note) + 1

describe('JSONL import: malformed rows are skipped and counted, never fatal', () => {
  it('imports the good lines and reports each bad one with its line number', async () => {
    const input = writeFixture('mem.jsonl')
    const out = path.join(t.dir, 'mem.db')
    const r = await importJsonl({ input, output: out })
    const skipped = r.issues.filter((i) => i.action === 'skipped').map((i) => [i.line, i.reason])
    expect(skipped).toEqual([
      [lineOf('bad JSON'), 'bad JSON'],
      [lineOf('missing content'), 'missing content'],
      [lineOf('wrong type'), 'wrong type'],
      [lineOf('duplicate id'), 'duplicate id (first kept)'],
      [lineOf('NaN vector'), 'embedding has NaN/null/infinite values'],
      [lineOf('not an object'), 'not a JSON object'],
      [lineOf('bad date'), 'wrong type'],
      // Found after loading: the model's other vectors have 4 values.
      [undefined, 'vector of the wrong dimension'],
    ])
    expect(r.issues.find((i) => i.reason === 'vector of the wrong dimension')!.id).toBe('a8')
    const lines = fixtureLines()
    const good = lines.filter(
      (l) => !['blank', 'whitespace only', 'bad JSON', 'missing content', 'wrong type', 'duplicate id', 'not an object', 'bad date'].includes(l.note),
    )
    expect(r.written.memories).toBe(good.length)
    expect(r.written.sessions).toBe(2)
    expect(r.repaired).toBe(2)
    expect(r.reasons).toContainEqual({ action: 'repaired', reason: 'unknown role (kept, role cleared)', count: 1 })
    expect(r.notes).toContain("unknown field 'extra_field' ignored on 1 line")
    // a1, a2 (m4, 4 values) and a13 (no model → default) have vectors; a8 (6 values) was pruned, a9 skipped.
    expect(r.models.map((m) => [m.model, m.dim, m.count]).sort()).toEqual([
      ['m4', 4, 2],
      ['nomic-embed-text', 4, 1],
    ])

    const s = openSource({ path: out })
    try {
      const m = s.getMemories(['a1', 'a2', 'a10', 'a11'])
      expect(m.get('a1')).toMatchObject({ agentId: 'bot', userId: 'u1', sessionId: 's1', role: 'user', kind: 'episodic', tier: 'working', createdAt: T })
      expect(m.get('a2')).toMatchObject({
        role: 'assistant',
        createdAt: T + 5 * 60_000,
        lastUsedAt: T + 3600_000,
        useCount: 2,
        turn: 2,
        salience: 0.4,
        source: 'chat',
        metadata: { topic: 'x' },
      })
      expect(m.get('a10')).toMatchObject({ role: null, metadata: { ok: true, _import: { role: 'robot' } } })
      // Role names are case-insensitive; unparseable metadata text is kept, not dropped.
      expect(m.get('a11')).toMatchObject({ role: 'user', metadata: { _import: { invalidMetadata: 'not {json' } } })
      const derived = s.memoriesPage({ sessionId: 's2', sort: 'created_at', dir: 'asc' }).rows
      expect(derived[0].content).toBe('no id here')
      expect(derived[0].id).toMatch(/^jsonl-[0-9a-f]{16}$/)
      // Zone-less ISO is UTC, whatever the machine's zone.
      expect(derived[0].createdAt).toBe(Date.UTC(2025, 2, 2, 8, 0, 0))
      const s1 = s.getSession('s1')!
      expect(s1).toMatchObject({ agentId: 'bot', userId: 'u1', startedAt: T, endedAt: T + 5 * 60_000, summary: 'first session', memoryCount: 2 })
      expect(s.getSession('s2')!.tenantId).toBe('acme')
      expect(s.facts().malformed.badMetadata).toBe(0)
    } finally {
      s.close()
    }
  })

  it('derives the same ids on every run, CRLF and a BOM included', async () => {
    // Lines without createdAt are dated to the file's last change: the same for both copies.
    const same = (p: string) => (fs.utimesSync(p, 1_700_000_000, 1_700_000_000), p)
    const a = await importJsonl({ input: same(writeFixture('lf.jsonl')), output: path.join(t.dir, 'lf.db') })
    const b = await importJsonl({ input: same(writeFixture('crlf.jsonl', '\r\n', true)), output: path.join(t.dir, 'crlf.db') })
    expect(b.written).toEqual(a.written)
    const ids = (p: string) => {
      const d = new Database(p, { readonly: true })
      const x = d.prepare('SELECT id, content, created_at FROM memories ORDER BY id').all()
      d.close()
      return x
    }
    expect(ids(path.join(t.dir, 'crlf.db'))).toEqual(ids(path.join(t.dir, 'lf.db')))
  })

  it('--embed hashing adds offline vectors for memories and session summaries', async () => {
    const r = await importJsonl({ input: writeFixture('h.jsonl'), output: path.join(t.dir, 'h.db'), embed: 'hashing' })
    const h = r.models.filter((m) => m.model === HASHING_MODEL)
    expect(h).toEqual([
      { model: HASHING_MODEL, ownerType: 'memory', dim: 256, count: r.written.memories },
      { model: HASHING_MODEL, ownerType: 'session', dim: 256, count: 1 },
    ])
  })

  it('a file without a single usable line is an error and leaves no output', async () => {
    const p = path.join(t.dir, 'junk.jsonl')
    fs.writeFileSync(p, 'this is not json\n{"no": "content"}\n')
    const out = path.join(t.dir, 'junk.db')
    await expect(importJsonl({ input: p, output: out })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('line 1: bad JSON') })
    expect(fs.readdirSync(t.dir).filter((x) => x.startsWith('junk.db'))).toEqual([])
  })

  it('cancelling mid-import discards the output', async () => {
    const p = path.join(t.dir, 'big.jsonl')
    fs.writeFileSync(p, Array.from({ length: 5000 }, (_, i) => JSON.stringify({ id: `x${i}`, content: `memory number ${i}` })).join('\n'))
    const ac = new AbortController()
    const out = path.join(t.dir, 'big.db')
    await expect(
      importJsonl({ input: p, output: out, signal: ac.signal, onProgress: (done) => (done >= 2000 ? ac.abort() : undefined) }),
    ).rejects.toMatchObject({
      code: 'CANCELLED',
    })
    expect(fs.readdirSync(t.dir).filter((x) => x.startsWith('big.db'))).toEqual([])
  })
})

describe('readLines', () => {
  it('splits across chunk boundaries and keeps multi-byte characters whole', () => {
    const p = path.join(t.dir, 'long.txt')
    // > 1 MiB so lines straddle the reader's chunk boundary; 'é' and '😀' straddle it too, eventually.
    const lines = Array.from({ length: 30_000 }, (_, i) => `${i} é😀 ${'x'.repeat(i % 50)}`)
    fs.writeFileSync(p, lines.join('\n'))
    const got = [...readLines(p)]
    expect(got.length).toBe(lines.length)
    expect(got.every((g, i) => g.text === lines[i] && g.line === i + 1)).toBe(true)
  })
})
