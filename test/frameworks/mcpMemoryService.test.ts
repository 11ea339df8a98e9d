/**
 * mcp-memory-service: its sqlite-vec DB opened read-only in place (vec0 vectors through the
 * sqlite-vec extension, its own trigram FTS, soft deletes and supersession honoured), and the
 * `mcp-memory-service` preset pinned against its weighted fusion computed here.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
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
    const store = openSource({ path: file })
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

describe('mcp-memory-service:rrf preset', () => {
  it('orders results exactly as its _fuse_rrf does (k=60, +0.1 consensus), computed here from its own BM25 query', async () => {
    const dir = path.join(t.dir, 'rrf')
    fs.mkdirSync(dir)
    const specs = [
      { content: 'alpha notes', cos: 0.95 },
      { content: 'deploy deploy deploy checklist', cos: 0.9 },
      { content: 'beta notes', cos: 0.8 },
      { content: 'gamma notes', cos: 0.7 },
      { content: 'how to deploy', cos: 0.6 },
      { content: 'delta notes', cos: 0.5 },
      { content: 'epsilon notes', cos: 0.4 },
      { content: 'a very long note that mentions deploy once among many other words here', cos: 0.3 },
    ]
    const db = buildMcpMemoryService(
      dir,
      4,
      specs.map((s, i) => ({ content: s.content, createdAt: SEC - i * 60, embedding: at(s.cos) })),
    )
    // Its two lists: vector by cosine distance (limit n_results*2 = 20), BM25 by its own SQL.
    const vector = [...specs]
      .sort((a, b) => b.cos - a.cos)
      .map((s) => contentHash(s.content))
      .slice(0, 20)
    const raw = new Database(db, { readonly: true })
    const bm25 = (
      raw
        .prepare(
          `SELECT m.content_hash, bm25(memory_content_fts) as rank FROM memory_content_fts f JOIN memories m ON f.rowid = m.id
                  WHERE memory_content_fts MATCH ? AND m.deleted_at IS NULL ORDER BY rank LIMIT ?`,
        )
        .all('"deploy"', 20) as { content_hash: string }[]
    ).map((r) => r.content_hash)
    raw.close()
    expect(bm25).toHaveLength(3)
    const scores = new Map<string, number>()
    vector.forEach((h, i) => scores.set(h, (scores.get(h) ?? 0) + 1 / (60 + i + 1)))
    bm25.forEach((h, i) => scores.set(h, (scores.get(h) ?? 0) + 1 / (60 + i + 1)))
    for (const h of bm25) if (vector.includes(h)) scores.set(h, scores.get(h)! + 0.1)
    const theirs = [...scores.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([h]) => h)

    const store = openSource({ path: db })
    try {
      const trace = await runRecall(store, 'deploy', getPreset('mcp-memory-service:rrf').config, NOW, { queryVector: Q })
      expect(trace.results.map((r) => r.id)).toEqual(theirs)
      // engine score = 61/(60+rank) per list (no boost): the first result is the best consensus memory
      const top = trace.results[0]
      const rv = vector.indexOf(top.id) + 1
      const rb = bm25.indexOf(top.id) + 1
      expect(top.score).toBeCloseTo(61 / (60 + rv) + 61 / (60 + rb), 6)
    } finally {
      store.close()
    }
  })
})
