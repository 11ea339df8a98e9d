import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LOCOMO_DEV, requireSharedData } from '../../../test/helpers/sharedData'
import { sha256File, tmpDir } from '../../../test/helpers/tmp'
import { importLocomo } from '../store/importers/locomo'
import { openSource } from '../store/registry'
import type { SqliteSource } from '../store/sqlite/source'
import { exportJsonl, importJsonl, importLocomoQa, saveCase } from './cases'
import { writeDemoDb } from '../../../test/helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource
let db: string

beforeAll(() => {
  t = tmpDir()
  db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 300, events: false, cases: false }).path
  store = openSource({ path: db })
})
afterAll(() => {
  store.close()
  t.cleanup()
})

describe('eval cases', () => {
  it('saves, reads back, edits and deletes a case; the agent DB is untouched', () => {
    const before = sha256File(db)
    const c = saveCase(
      store.workspace,
      {
        query: 'deploy to staging',
        scope: { agentId: 'agent-coder' },
        now: 1000,
        relevant: [
          { id: 'm1', grade: 3 },
          { id: 'm2', grade: 1 },
          { id: 'm1', grade: 2 },
        ],
        tags: ['smoke'],
      },
      5,
    )
    expect(c.id).toMatch(/^case-/)
    expect(c.name).toBe('deploy to staging') // defaults to the query
    expect(c.relevant).toEqual([
      { id: 'm1', grade: 3 },
      { id: 'm2', grade: 1 },
    ]) // a repeated id keeps its best grade
    expect(['train', 'test']).toContain(c.split)
    const edited = saveCase(store.workspace, { ...c, name: 'renamed', relevant: [], expectEmpty: true, note: 'off-topic on purpose' }, 6)
    expect(store.workspace.getCase(c.id)).toEqual({ ...edited, name: 'renamed', expectEmpty: true, relevant: [], note: 'off-topic on purpose' })
    // Saving without a note leaves the note alone.
    expect(saveCase(store.workspace, { ...edited, note: undefined, tags: ['x'] }, 7).note).toBe('off-topic on purpose')
    expect(store.workspace.deleteCases([c.id, 'nope'])).toBe(1)
    expect(() => store.workspace.getCase(c.id)).toThrow(/No eval case/)
    expect(sha256File(db)).toBe(before)
  })

  it('rejects a bad case with a typed error naming the field', () => {
    expect(() => saveCase(store.workspace, { query: '   ' }, 0)).toThrow(/query/)
    expect(() => saveCase(store.workspace, { query: 'q', relevant: [{ id: 'a', grade: 4 }] }, 0)).toThrow(/relevant\.0\.grade/)
    expect(() => saveCase(store.workspace, { query: 'q', relevant: [{ id: 'a', grade: 1 }], expectEmpty: true }, 0)).toThrow(/expect-empty/)
    expect(() => saveCase(store.workspace, { query: 'q', split: 'dev' as 'train' }, 0)).toThrow(
      expect.objectContaining({ code: 'BAD_INPUT', message: expect.stringMatching(/split/) }),
    )
  })

  it('JSONL: imports lenient lines, reports bad ones by line, and round-trips through export', () => {
    const text = [
      JSON.stringify({
        id: 'j1',
        query: 'refund policy',
        scope: { agent_id: 'agent-support' },
        relevant: ['m7', { id: 'm8', grade: 2 }],
        tags: ['billing'],
        split: 'test',
        now: '2026-10-01T00:00:00Z',
      }),
      '{ not json',
      JSON.stringify({ query: 'nothing here', expect_empty: true }),
      JSON.stringify({ id: 'j3', query: 'x', relevant: [{ id: 'a', grade: 9 }] }),
      '',
      JSON.stringify([1, 2]),
    ].join('\n')
    const r = importJsonl(store.workspace, text, 1)
    expect(r).toMatchObject({ format: 'jsonl', added: 2, updated: 0, skipped: 3 })
    expect(r.issues.map((i) => i.where)).toEqual(['line 2', 'line 4', 'line 6'])
    const j1 = store.workspace.getCase('j1')
    expect(j1).toMatchObject({
      scope: { agentId: 'agent-support' },
      relevant: [
        { id: 'm7', grade: 1 },
        { id: 'm8', grade: 2 },
      ],
      split: 'test',
      now: Date.parse('2026-10-01T00:00:00Z'),
    })
    // Re-importing the same file updates instead of duplicating (ids by content for id-less lines).
    expect(importJsonl(store.workspace, text, 2)).toMatchObject({ added: 0, updated: 2 })
    const exported = exportJsonl(store.workspace)
    expect(exported.count).toBe(store.workspace.loadCases().length)
    const t2 = tmpDir()
    try {
      const other = writeDemoDb(path.join(t2.dir, 'o.db'), { memories: 50, events: false, cases: false }).path
      const s2 = openSource({ path: other })
      try {
        expect(importJsonl(s2.workspace, exported.text, 3)).toMatchObject({ added: exported.count, skipped: 0 })
        expect(s2.workspace.loadCases()).toEqual(store.workspace.loadCases())
      } finally {
        s2.close()
      }
    } finally {
      t2.cleanup()
    }
  })

  it('lists with filters, paging and facets', () => {
    for (let i = 0; i < 12; i++)
      saveCase(
        store.workspace,
        {
          id: `p-${i}`,
          query: `question ${i}`,
          relevant: i % 3 ? [{ id: `m${i}`, grade: 1 }] : [],
          expectEmpty: i % 3 === 0 && i % 2 === 0,
          tags: i < 4 ? ['early'] : [],
          split: i % 2 ? 'test' : 'train',
        },
        0,
      )
    const page = store.workspace.listCases({ search: 'question', limit: 5, offset: 5 })
    expect(page.total).toBe(12)
    // natural order: p-2 before p-10
    expect(page.rows.map((r) => r.id)).toEqual(['p-5', 'p-6', 'p-7', 'p-8', 'p-9'])
    expect(store.workspace.listCases({ tag: 'early' }).total).toBe(4)
    expect(store.workspace.listCases({ search: 'question', split: 'test' }).total).toBe(6)
    expect(store.workspace.listCases({ search: 'question', kind: 'expectEmpty' }).rows.map((r) => r.id)).toEqual(['p-0', 'p-6'])
    expect(store.workspace.listCases({ search: 'question', kind: 'unjudged' }).rows.map((r) => r.id)).toEqual(['p-3', 'p-9'])
    const f = store.workspace.listCases().facets
    expect(f.tags.find((x) => x.tag === 'early')?.count).toBe(4)
    expect(f.train + f.test).toBe(f.total)
  })
})

const locomoDev = requireSharedData(LOCOMO_DEV, 'LoCoMo QA test (src/main/eval/cases.test.ts)')
describe.skipIf(!locomoDev)('LoCoMo QA into an open DB', () => {
  it('maps evidence to the DB’s memory ids exactly as the importer does', async () => {
    const dir = tmpDir()
    try {
      const input = locomoDev!
      const out = path.join(dir.dir, 'l.db')
      await importLocomo({ input, output: out, embed: 'none', now: 0 })
      const s = openSource({ path: out })
      try {
        const imported = s.workspace.loadCases()
        // Wipe the cases, then bring them back from the QA file through cases.import.
        s.workspace.deleteCases(imported.map((c) => c.id))
        const r = importLocomoQa(s, fs.readFileSync(input, 'utf8'), 0)
        expect(r.added).toBe(imported.length)
        expect(s.workspace.loadCases()).toEqual(imported)
      } finally {
        s.close()
      }
      // A DB without those conversations: every QA item is skipped, with the reason.
      const s2 = openSource({ path: db })
      try {
        const r2 = importLocomoQa(s2, fs.readFileSync(input, 'utf8'), 0)
        expect(r2.added).toBe(0)
        expect(r2.issues[0].reason).toMatch(/not in this DB/)
      } finally {
        s2.close()
      }
    } finally {
      dir.cleanup()
    }
  })
})

describe('demo eval cases', () => {
  it("the demo ships judged cases whose relevant memories are that pair's knowledge on the topic, plus off-topic expect-empty ones", async () => {
    const { generateDemo: gen } = await import('../demo/generate')
    const t3 = tmpDir()
    try {
      const r = gen({ out: path.join(t3.dir, 'demo.db'), memories: 1200, events: false })
      const store = openSource({ path: r.path })
      try {
        const cases = store.workspace.loadCases()
        expect(cases.length).toBe(r.cases)
        const judged = cases.filter((c) => !c.expectEmpty)
        const empty = cases.filter((c) => c.expectEmpty)
        expect(judged.length).toBeGreaterThan(5)
        expect(empty.length).toBe(9) // 3 off-topic questions × 3 agents
        for (const c of judged) {
          const topic = c.tags.find((x) => x.startsWith('topic:'))!.slice(6)
          const mems = store.getMemories(c.relevant.map((x) => x.id))
          expect(mems.size).toBe(c.relevant.length)
          for (const x of c.relevant) {
            const m = mems.get(x.id)!
            // Checked against the rows themselves: same agent and user, the topic in the metadata, not episodic, not archived.
            expect([m.agentId, m.userId]).toEqual([c.scope.agentId, c.scope.userId])
            // (a few demo rows carry deliberately broken metadata JSON: their source names the topic too)
            expect((m.metadata as { topic?: string } | null)?.topic ?? m.source?.split('/')[1]).toBe(topic)
            expect(m.kind).not.toBe('episodic')
            expect(m.tier).not.toBe('archived')
            expect(x.grade).toBe(m.kind === 'reflection' ? 1 : 2)
          }
        }
      } finally {
        store.close()
      }
    } finally {
      t3.cleanup()
    }
  })
})
