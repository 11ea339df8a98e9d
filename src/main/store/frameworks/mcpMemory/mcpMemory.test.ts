/**
 * The MCP knowledge-graph memory server's memory.jsonl, written by the real server (driven over
 * stdio JSON-RPC), opened in place. Expected values come from the JSONL read here line by line
 * and from cosine computed here.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../../../shared/presets'
import type { RecallConfig } from '../../../../shared/types'
import { backfillEmbeddings } from '../../../embed/backfill'
import { hashEmbed } from '../../../embed/hashing'
import { HashingEmbedder } from '../../../embed/hashingEmbedder'
import { runRecall } from '../../../recall/engine'
import { openSource } from '../../registry'
import { createMcpMemoryFixture, type McpMemoryFixture } from '../../../../../test/helpers/frameworks/mcpMemory'
import { sha256File, tmpDir } from '../../../../../test/helpers/tmp'

let t: ReturnType<typeof tmpDir>
let fx: McpMemoryFixture
let lines: Record<string, unknown>[]

beforeAll(async () => {
  t = tmpDir()
  fx = await createMcpMemoryFixture(path.join(t.dir, 'memory.jsonl'))
  lines = fs
    .readFileSync(fx.path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>)
})
afterAll(() => t.cleanup())

const entities = () => lines.filter((l) => l.type === 'entity') as { name: string; entityType: string; observations: string[] }[]
const relations = () =>
  (lines.filter((l) => l.type === 'relation') as { from: string; to: string; relationType: string }[]).map(({ from, to, relationType }) => ({
    from,
    to,
    relationType,
  }))

describe('MCP knowledge-graph memory (memory.jsonl, written by @modelcontextprotocol/server-memory)', () => {
  it('the server wrote the graph the tools were asked for', () => {
    expect(new Map(entities().map((e) => [e.name, { entityType: e.entityType, observations: e.observations }]))).toEqual(
      new Map([
        ...fx.observations,
        ...fx.bare.map((b): [string, { entityType: string; observations: string[] }] => [b, { entityType: 'weekday', observations: [] }]),
      ]),
    )
    expect(relations()).toEqual(fx.relations)
  })

  it('opens the file or its folder, says why, and counts one memory per observation and one session per entity', () => {
    for (const p of [fx.path, path.dirname(fx.path)]) {
      const s = openSource({ path: p })
      try {
        const f = s.facts()
        expect(f.layout).toBe('mcp-memory')
        expect(f.detectedBecause).toContain(`JSONL with ${entities().length} entity and ${relations().length} relation line(s)`)
        const obs = entities().reduce((n, e) => n + e.observations.length, 0)
        expect(f.counts.memories).toBe(obs)
        expect(f.counts.sessions).toBe(entities().filter((e) => e.observations.length > 0).length)
        expect(f.counts.embeddings).toBe(0)
        expect(f.readOnly).toBe(true)
        // write mode has nothing to write to (the memories are a copy in memory): asked for, it is refused, typed
        expect(() => openSource({ path: p, write: true })).toThrow(expect.objectContaining({ code: 'READ_ONLY' }))
      } finally {
        s.close()
      }
    }
  })

  it('browses observations with their entity, type and relations for the memory detail', () => {
    const s = openSource({ path: fx.path })
    try {
      const page = s.memoriesPage({ limit: 100 })
      for (const e of entities()) {
        const mine = page.rows.filter((r) => r.sessionId === e.name)
        expect(mine.map((r) => r.content).sort()).toEqual([...e.observations].sort())
        for (const m of mine) {
          expect(m.turn).toBe(e.observations.indexOf(m.content))
          expect(m.summary).toBe(`${e.name} (${e.entityType})`)
          const meta = m.metadata as { entity: string; entityType: string; relations: unknown[] }
          expect(meta.entity).toBe(e.name)
          expect(meta.entityType).toBe(e.entityType)
          expect(meta.relations).toEqual(relations().filter((r) => r.from === e.name || r.to === e.name))
        }
      }
      // one entity's observations, in order: the session view
      const ada = s.memoriesPage({ sessionId: 'Ada', sort: 'turn', dir: 'asc', limit: 10 })
      expect(ada.rows.map((r) => r.content)).toEqual(entities().find((e) => e.name === 'Ada')!.observations)
      expect(s.getSession('Compiler Club')?.summary).toContain('Ada is member of Compiler Club')
    } finally {
      s.close()
    }
  })

  it('recalls through the offline hashing embedder (backfilled into the workspace) in cosine order', async () => {
    const s = openSource({ path: fx.path })
    try {
      const e = new HashingEmbedder()
      await backfillEmbeddings(s, e, {})
      const query = 'where does Ada live'
      const q = hashEmbed(query)
      const cos = (a: Float32Array, b: Float32Array) => {
        let d = 0
        let na = 0
        let nb = 0
        for (let i = 0; i < a.length; i++) {
          d += a[i] * b[i]
          na += a[i] * a[i]
          nb += b[i] * b[i]
        }
        return na && nb ? d / Math.sqrt(na * nb) : 0
      }
      const all = entities().flatMap((en) => en.observations.map((o) => ({ text: o, sim: cos(q, hashEmbed(o)) })))
      const expected = all.sort((a, b) => b.sim - a.sim).slice(0, 3)
      const cfg: RecallConfig = {
        ...getPreset('fieldguide').config,
        mode: 'dense',
        weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
        floor: null,
        topK: 3,
      }
      const trace = await runRecall(s, query, cfg, Date.now() + 60_000, { embedder: e })
      const page = s.memoriesPage({ limit: 100 })
      const text = new Map(page.rows.map((r) => [r.id, r.content]))
      expect(trace.results.map((r) => text.get(r.id))).toEqual(expected.map((x) => x.text))
      trace.results.forEach((r, i) => expect(r.score).toBeCloseTo(expected[i].sim, 5))
    } finally {
      s.close()
    }
  })

  it('leaves memory.jsonl byte-identical after a full session', async () => {
    const before = sha256File(fx.path)
    const s = openSource({ path: path.dirname(fx.path) })
    try {
      s.facts()
      s.facets()
      s.memoriesPage({ search: 'compilers', limit: 10 })
      s.sessionsPage({})
      await runRecall(s, 'peanuts', { ...getPreset('fieldguide').config, mode: 'lexical', floor: null }, Date.now())
    } finally {
      s.close()
    }
    expect(sha256File(fx.path)).toBe(before)
    expect(fs.readdirSync(path.dirname(fx.path)).filter((n) => !n.includes('.recallscope'))).toEqual(['memory.jsonl'])
  })

  it('rebuilds the search index when the file is edited between opens (row keys follow file order)', () => {
    const copy = path.join(t.dir, 'edit', 'memory.jsonl')
    fs.mkdirSync(path.dirname(copy))
    fs.copyFileSync(fx.path, copy)
    const search = (word: string) => {
      const s = openSource({ path: copy })
      try {
        return s.memoriesPage({ search: word, limit: 10 }).rows.map((r) => r.content)
      } finally {
        s.close()
      }
    }
    expect(search('peanuts')).toEqual(['Allergic to peanuts'])
    // The server rewrites the whole file on every change: drop Ada's first observation and add one to Lisbon
    // (same row count, every row after Ada's moved by one).
    const edited = lines.map((l) =>
      l.type === 'entity' && l.name === 'Ada'
        ? { ...l, observations: (l.observations as string[]).slice(1) }
        : l.type === 'entity' && l.name === 'Lisbon'
          ? { ...l, observations: [...(l.observations as string[]), 'Trams climb its hills'] }
          : l,
    )
    fs.writeFileSync(copy, edited.map((l) => JSON.stringify(l)).join('\n'))
    expect(search('peanuts')).toEqual(['Allergic to peanuts'])
    // the entity Compiler Club still matches through its summary; Ada's deleted observation does not
    expect(search('compilers')).toEqual(['Meets every Thursday evening'])
    expect(search('trams')).toEqual(['Trams climb its hills'])
  })

  it('skips lines that are not entities or relations, counting them; rejects a JSONL of something else clearly', () => {
    const bad = path.join(t.dir, 'bad', 'memory.jsonl')
    fs.mkdirSync(path.dirname(bad))
    fs.writeFileSync(bad, `${JSON.stringify({ type: 'entity', name: 'X', entityType: 't', observations: ['one'] })}\nnot json\n{"type":"mystery"}\n`)
    const s = openSource({ path: bad })
    try {
      expect(s.facts().counts.memories).toBe(1)
      expect(s.facts().detectedBecause).toContain('2 line(s) skipped')
    } finally {
      s.close()
    }
    const other = path.join(t.dir, 'other.jsonl')
    fs.writeFileSync(other, '{"role":"user","content":"hi"}\n')
    expect(() => openSource({ path: other })).toThrow(expect.objectContaining({ code: 'NOT_SQLITE', message: expect.stringContaining('memory.jsonl') }))
  })
})
