/**
 * mcp-memory-service: its sqlite-vec DB opened read-only in place (vec0 vectors through the
 * sqlite-vec extension, its own trigram FTS, soft deletes and supersession honoured), and the
 * `mcp-memory-service` preset pinned against its weighted fusion computed here.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { Store } from '../../src/main/store/open'
import { buildMcpMemoryService, contentHash } from '../helpers/frameworks/mcpMemoryService'
import { sha256File, tmpDir } from '../helpers/tmp'

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0)
const SEC = NOW / 1000
const Q = [1, 0, 0, 0]
const at = (s: number) => [s, Math.sqrt(1 - s * s), 0, 0]

const MEMS = [
  { content: 'deploy the billing service to staging', cos: 0.9, tags: ['deploy', 'billing'] },
  { content: 'staging deploy failed with error E42', cos: 0.5, tags: ['deploy'] },
  { content: 'dinner reservations in Lisbon', cos: 0.8, tags: [] },
  { content: 'an old deploy note, deleted', cos: 0.95, tags: [], deleted: true },
  { content: 'deploy uses the old VPN', cos: 0.85, tags: [], superseded: true },
]
const H = (i: number) => contentHash(MEMS[i].content)

let t: ReturnType<typeof tmpDir>
let file: string

beforeAll(() => {
  t = tmpDir()
  file = buildMcpMemoryService(
    t.dir,
    4,
    MEMS.map((m, i) => ({
      content: m.content,
      tags: m.tags,
      memoryType: 'note',
      metadata: { n: i },
      createdAt: SEC - (i + 1) * 3600,
      lastAccessed: i === 0 ? SEC - 60 : null,
      confidence: 0.9,
      deletedAt: m.deleted ? SEC - 10 : null,
      supersededBy: m.superseded ? contentHash(MEMS[0].content) : null,
      embedding: at(m.cos),
    })),
    [{ from: contentHash(MEMS[0].content), to: contentHash(MEMS[1].content), type: 'causes', similarity: 0.7 }],
  )
})
afterAll(() => t.cleanup())

describe('mcp-memory-service (sqlite-vec)', () => {
  it('opens in place read-only: detection, counts, browse, recall with the preset; file unchanged', async () => {
    const before = sha256File(file)
    const store = Store.open({ path: file })
    try {
      const f = store.facts()
      expect(f.layout).toBe('mcp-memory-service')
      expect(f.detectedBecause).toMatch(/memory_embeddings \(vec0, dim 4\)/)
      expect(f.detectedBecause).toMatch(/memory_graph/)
      expect(f.counts.memories).toBe(4) // the soft-deleted row is not shown
      expect(f.models).toEqual([expect.objectContaining({ model: 'mcp-memory-service:4', dim: 4, count: 4 })])
      expect(f.hasFts).toBe('agent')
      expect(Object.fromEntries(f.byTier.map((x) => [x.key, x.count]))).toEqual({ long_term: 3, archived: 1 })

      const page = store.memoriesPage({ sort: 'created_at', dir: 'desc' })
      expect(page.total).toBe(4)
      const first = page.rows[0]
      expect(first.id).toBe(H(0))
      expect(first.createdAt).toBe(NOW - 3600_000)
      expect(first.lastUsedAt).toBe(NOW - 60_000)
      expect(first.salience).toBeCloseTo(0.9, 10)
      expect(first.metadata).toMatchObject({
        tags: 'deploy,billing',
        memory_type: 'note',
        metadata: { n: 0 },
        graph: [{ target: H(1), type: 'causes', similarity: 0.7, connection_types: ['semantic'] }],
      })
      expect(page.rows.some((r) => r.id === H(3))).toBe(false)

      // A query with no keyword match: only the semantic part of the fusion applies.
      const cfg = getPreset('mcp-memory-service').config
      const dense = await runRecall(store, 'qqqxx', cfg, NOW, { queryVector: Q })
      const live = [0, 1, 2] // deleted (3) and superseded (4) are out
      const engine = live.map((i) => ({ id: H(i), score: 0.7 * MEMS[i].cos })).sort((a, b) => b.score - a.score)
      expect(dense.results.map((r) => r.id)).toEqual(engine.map((e) => e.id))
      for (const [i, r] of dense.results.entries()) expect(r.score).toBeCloseTo(engine[i].score, 5)
      // its own semantic score (1+cos)/2 keeps that order (gap documented in the preset)
      const own = live.map((i) => ({ id: H(i), score: 0.7 * ((1 + MEMS[i].cos) / 2) })).sort((a, b) => b.score - a.score)
      expect(own.map((o) => o.id)).toEqual(engine.map((e) => e.id))

      // Keyword arm on its own trigram index: 'E42' only matches memory 1.
      const hybrid = await runRecall(store, 'E42', cfg, NOW, { queryVector: Q })
      expect(hybrid.counts.lexical).toBe(1)
      const e42 = hybrid.results.find((r) => r.id === H(1))!
      expect(e42.features.lexical).toBe(1)
      expect(e42.score).toBeCloseTo(0.7 * 0.5 + 0.3 * 1, 5)
    } finally {
      store.close()
    }
    expect(sha256File(file)).toBe(before)
  })
})
