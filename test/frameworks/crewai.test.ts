/**
 * CrewAI: the unified memory's LanceDB folder (materialized) and the legacy SQLite
 * long-term memory (adapter), opened read-only in place; the `crewai` preset pinned
 * against CrewAI's published composite, computed here from its formula.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
import { buildCrewaiLance, buildCrewaiLtm, pyIsoUtc, type CrewaiRecord } from '../helpers/frameworks/crewai'
import { hashTree } from '../helpers/frameworks/hashTree'
import { sha256File, tmpDir } from '../helpers/tmp'

const DAY = 86_400_000
const NOW = Date.UTC(2026, 5, 1, 12, 0, 0)
const Q = [1, 0, 0, 0]
/** A unit vector whose cosine with Q is s. */
const at = (s: number) => [s, Math.sqrt(1 - s * s), 0, 0]

// cosine, age in days, importance: chosen so that CrewAI's own similarity (1/(1+L2²)) and
// the engine's cosine rank c and e differently (see the last test).
const SPEC = [
  { id: 'a', cos: 0.9, ageDays: 10, importance: 0.8, content: 'The staging deploy needs the VPN up first', scope: '/crew/devops' },
  { id: 'b', cos: 0.6, ageDays: 0, importance: 0.9, content: 'Billing service owner is Dana', scope: '/crew/devops' },
  { id: 'c', cos: 0.95, ageDays: 90, importance: 0.2, content: 'Old note on the deploy pipeline', scope: '/crew/research' },
  { id: 'e', cos: 0.3, ageDays: 5, importance: 0.5, content: 'User prefers short answers', scope: '/crew/research', private: true },
]

let t: ReturnType<typeof tmpDir>
let lanceDir: string

beforeAll(async () => {
  t = tmpDir()
  lanceDir = path.join(t.dir, 'memory')
  const records: CrewaiRecord[] = SPEC.map((s) => ({
    id: s.id,
    content: s.content,
    scope: s.scope,
    categories: ['ops'],
    metadata: { note: s.id },
    importance: s.importance,
    createdAt: pyIsoUtc(NOW - s.ageDays * DAY),
    lastAccessed: pyIsoUtc(NOW - s.ageDays * DAY + 3600_000),
    source: s.private ? 'user-7' : null,
    private: s.private ?? false,
    embedding: at(s.cos),
  }))
  records.push({ id: 'd', content: 'saved while the embedder was down', createdAt: pyIsoUtc(NOW - DAY), embedding: null })
  await buildCrewaiLance(lanceDir, 4, records)
}, 120_000)
afterAll(() => t.cleanup())

describe('CrewAI unified memory (LanceDB folder)', () => {
  it('opens the folder read-only: detection, counts, browse, recall; no file in the folder changes', async () => {
    const before = hashTree(lanceDir)
    const store = openSource({ path: lanceDir, workspacePath: path.join(t.dir, 'crewai.ws') })
    try {
      expect(store.readOnly).toBe(true)
      const f = store.facts()
      expect(f.layout).toBe('crewai-lancedb')
      expect(f.detectedBecause).toMatch(/table 'memories'/)
      expect(f.counts.memories).toBe(5)
      // d was saved with CrewAI's zero placeholder: no vector shown
      expect(f.models).toEqual([expect.objectContaining({ model: 'crewai:4', dim: 4, count: 4 })])
      expect(f.byAgent.map((x) => x.key).sort()).toEqual(['/', '/crew/devops', '/crew/research'])

      const page = store.memoriesPage({ sort: 'created_at', dir: 'desc', limit: 10 })
      expect(page.total).toBe(5)
      const b = page.rows.find((r) => r.id === 'b')!
      expect(b.content).toBe('Billing service owner is Dana')
      expect(b.createdAt).toBe(NOW) // naive isoformat read as UTC
      expect(b.lastUsedAt).toBe(NOW + 3600_000)
      expect(b.salience).toBeCloseTo(0.9, 10)
      expect(b.agentId).toBe('/crew/devops')
      expect(b.metadata).toEqual({ scope: '/crew/devops', categories: ['ops'], private: false, metadata: { note: 'b' } })
      expect(page.rows.find((r) => r.id === 'e')!.userId).toBe('user-7')

      const trace = await runRecall(store, 'deploy', getPreset('crewai').config, NOW, { preset: 'crewai', queryVector: Q })
      // CrewAI's compute_composite_score, computed here with the engine's similarity (cosine):
      // 0.5·sim + 0.3·0.5^(age_days/30) + 0.2·importance
      const expected = SPEC.map((s) => ({ id: s.id, score: 0.5 * s.cos + 0.3 * 0.5 ** (s.ageDays / 30) + 0.2 * s.importance })).sort(
        (x, y) => y.score - x.score,
      )
      expect(trace.results.map((r) => r.id)).toEqual(expected.map((e) => e.id))
      for (const [i, r] of trace.results.entries()) {
        expect(r.score).toBeCloseTo(expected[i].score, 5)
        expect(r.features.recency).toBeCloseTo(0.5 ** (SPEC.find((s) => s.id === r.id)!.ageDays / 30), 6)
      }
      expect(trace.refreshed.sort()).toEqual(['a', 'b', 'c', 'e'])
    } finally {
      store.close()
    }
    expect(hashTree(lanceDir)).toEqual(before)
  })

  it('accepts the memories.lance table folder too, and refuses write mode', () => {
    const store = openSource({ path: path.join(lanceDir, 'memories.lance'), workspacePath: path.join(t.dir, 'crewai2.ws') })
    try {
      expect(store.facts().counts.memories).toBe(5)
    } finally {
      store.close()
    }
    expect(() => openSource({ path: lanceDir, write: true, workspacePath: path.join(t.dir, 'crewai3.ws') })).toThrow(
      expect.objectContaining({ code: 'READ_ONLY' }),
    )
  })

  it("documents the gap: CrewAI's own similarity 1/(1+L2²) reorders c and e", async () => {
    // LanceDB's default metric is squared L2; for unit vectors d = 2 − 2·cos.
    const crewai = SPEC.map((s) => ({ id: s.id, score: 0.5 * (1 / (1 + (2 - 2 * s.cos))) + 0.3 * 0.5 ** (s.ageDays / 30) + 0.2 * s.importance }))
      .sort((x, y) => y.score - x.score)
      .map((x) => x.id)
    expect(crewai).toEqual(['a', 'b', 'e', 'c'])
    const store = openSource({ path: lanceDir, workspacePath: path.join(t.dir, 'crewai4.ws') })
    try {
      const trace = await runRecall(store, 'deploy', getPreset('crewai').config, NOW, { queryVector: Q })
      expect(trace.results.map((r) => r.id)).toEqual(['a', 'b', 'c', 'e'])
    } finally {
      store.close()
    }
  })
})

describe('CrewAI LanceDB, reopened after CrewAI rewrote a record', () => {
  it('rebuilds the workspace index: lexical hits still point at the right memories', async () => {
    const dir = path.join(t.dir, 'memory-rw')
    const rec = (id: string, content: string): CrewaiRecord => ({ id, content, createdAt: pyIsoUtc(NOW), embedding: at(0.5) })
    await buildCrewaiLance(dir, 4, [rec('p', 'apples and pears'), rec('q', 'bicycles and trains'), rec('r', 'violins and cellos')])
    const ws = path.join(t.dir, 'crewai-rw.ws')
    const lexical = { ...getPreset('fieldguide').config, mode: 'lexical' as const, floor: null }
    const open = () => openSource({ path: dir, workspacePath: ws })
    let store = open()
    try {
      expect((await runRecall(store, 'trains', lexical, NOW)).results.map((r) => r.id)).toEqual(['q'])
    } finally {
      store.close()
    }
    // Memory.update() = delete + add (lancedb_storage.py `update`): same row count, new row order.
    const lancedb = await import('@lancedb/lancedb')
    const db = await lancedb.connect(dir)
    const table = await db.openTable('memories')
    await table.delete("id = 'p'")
    await table.add([
      {
        id: 'p',
        content: 'apples and plums',
        scope: '/',
        categories_str: '[]',
        metadata_str: '{}',
        importance: 0.5,
        created_at: pyIsoUtc(NOW),
        last_accessed: pyIsoUtc(NOW),
        source: '',
        private: false,
        vector: at(0.5),
      },
    ])
    table.close()
    db.close()
    store = open()
    try {
      expect((await runRecall(store, 'trains', lexical, NOW)).results.map((r) => r.id)).toEqual(['q'])
      expect((await runRecall(store, 'plums', lexical, NOW)).results.map((r) => r.id)).toEqual(['p'])
      expect((await runRecall(store, 'pears', lexical, NOW)).results).toEqual([])
    } finally {
      store.close()
    }
  })
})

describe('CrewAI legacy long-term memory (SQLite)', () => {
  it('opens long_term_memories in place: detection, counts, browse, lexical recall; file unchanged', async () => {
    const file = buildCrewaiLtm(t.dir, [
      {
        task: 'Research the billing API rate limits',
        metadata: { suggestions: ['cache tokens'], quality: 8, agent: 'Researcher', expected_output: 'a list' },
        datetime: String((NOW - 2 * DAY) / 1000),
        score: 8,
      },
      {
        task: 'Write the deploy checklist',
        metadata: { suggestions: [], quality: 5, agent: 'Writer', expected_output: 'markdown' },
        datetime: '2026-05-30 12:00:00.250000',
        score: 5,
      },
    ])
    const before = sha256File(file)
    const store = openSource({ path: file })
    try {
      const f = store.facts()
      expect(f.layout).toBe('crewai-ltm')
      expect(f.detectedBecause).toMatch(/long_term_memories/)
      expect(f.counts.memories).toBe(2)
      expect(f.byAgent.map((x) => x.key).sort()).toEqual(['Researcher', 'Writer'])
      const rows = store.memoriesPage({ sort: 'created_at', dir: 'asc' }).rows
      expect(rows.map((r) => r.id)).toEqual(['ltm-1', 'ltm-2'])
      expect(rows[0].createdAt).toBe(NOW - 2 * DAY)
      expect(rows[1].createdAt).toBe(Date.UTC(2026, 4, 30, 12, 0, 0, 250))
      expect(rows[0].salience).toBeCloseTo(0.8, 10)
      expect(rows[0].kind).toBe('reflection')
      const trace = await runRecall(store, 'deploy checklist', { ...getPreset('fieldguide').config, mode: 'lexical', floor: null }, NOW)
      expect(trace.results[0]?.id).toBe('ltm-2')
    } finally {
      store.close()
    }
    expect(sha256File(file)).toBe(before)
  })
})
