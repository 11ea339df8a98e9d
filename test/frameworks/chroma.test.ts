/**
 * Chroma persistent store: documents and metadata from chroma.sqlite3, vectors from the HNSW
 * segment files (deleted elements left out, a not-yet-flushed vector taken from the queue),
 * collections as agents; dense top-k against a cosine computed here; nothing in the folder changed.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mergeConfig } from '../../src/shared/config'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
import { buildChroma, type ChromaRecord } from '../helpers/frameworks/chroma'
import { hasPython } from '../helpers/frameworks/qdrantLocal'
import { hashTree } from '../helpers/frameworks/hashTree'
import { tmpDir } from '../helpers/tmp'

const PY = hasPython()
if (!PY) console.warn('[chroma.test] python3 not found: the Chroma tests (fixtures written by Python) are skipped')

const NOW = Date.UTC(2026, 0, 1)
const Q = [1, 0, 0]
const v = (s: number) => [s, Math.sqrt(1 - s * s), 0]
const KNOWLEDGE: ChromaRecord[] = [
  {
    id: 'k1',
    document: 'Refunds are processed within 5 days',
    metadata: { source: 'policy.pdf', page: 3 },
    embedding: v(0.8),
    createdAt: '2025-04-01 10:00:00',
  },
  {
    id: 'k2',
    document: 'Shipping to Portugal takes 2 days',
    metadata: { source: 'faq.md', verified: true },
    embedding: v(0.95),
    createdAt: '2025-04-02 11:00:00',
  },
  { id: 'k3', document: 'An old refund rule', metadata: {}, embedding: v(0.99), deleted: true, createdAt: '2025-03-01 09:00:00' },
  {
    id: 'k4',
    document: 'Added just now, not yet in the index',
    metadata: { fresh: 1.5 },
    embedding: v(0.6),
    queuedOnly: true,
    createdAt: '2025-04-03 12:00:00',
  },
  { id: 'k5', document: null, metadata: { note: 'vector only' }, embedding: v(0.5), createdAt: '2025-04-03 12:00:01' },
]

let t: ReturnType<typeof tmpDir>
let dir: string

beforeAll(() => {
  t = tmpDir()
  dir = path.join(t.dir, 'chroma')
  if (!PY) return
  buildChroma(dir, {
    knowledge: { dim: 3, records: KNOWLEDGE },
    short_term: {
      dim: 3,
      records: [{ id: 's1', document: 'User asked about refunds', metadata: { agent: 'support' }, embedding: v(0.3), createdAt: '2025-04-04 08:00:00' }],
    },
  })
})
afterAll(() => t.cleanup())

describe.runIf(PY)('Chroma persistent store', () => {
  it('reads documents, metadata and HNSW vectors read-only; dense top-k by cosine; folder unchanged', async () => {
    const before = hashTree(dir)
    const store = openSource({ path: dir, workspacePath: path.join(t.dir, 'c.ws') })
    try {
      const f = store.facts()
      expect(f.layout).toBe('chroma')
      expect(f.detectedBecause).toMatch(/knowledge \(3 records, 3 vectors; 1 without a document skipped; 1 deleted in the index\)/)
      expect(f.counts.memories).toBe(4)
      const k1 = store.getMemory('knowledge/k1')!
      expect(k1.content).toBe('Refunds are processed within 5 days')
      expect(k1.agentId).toBe('knowledge')
      expect(k1.createdAt).toBe(Date.UTC(2025, 3, 1, 10))
      expect(k1.metadata).toEqual({ collection: 'knowledge', metadata: { source: 'policy.pdf', page: 3 } })
      expect(store.getMemory('knowledge/k2')!.metadata).toMatchObject({ metadata: { verified: true } })
      expect(store.getMemory('knowledge/k3')).toBeNull()
      expect(store.getMemory('short_term/s1')!.agentId).toBe('short_term')

      const cfg = mergeConfig(getPreset('langgraph-store').config, { model: 'chroma:knowledge:3', topK: 5 })
      const trace = await runRecall(store, 'refund', cfg, NOW, { queryVector: Q })
      // cosine with Q = e1 is each vector's first component (unit vectors): k2 0.95, k1 0.8, k4 0.6 (from the queue)
      const expected = KNOWLEDGE.filter((r) => r.document !== null && !r.deleted)
        .map((r) => ({ id: `knowledge/${r.id}`, s: r.embedding[0] }))
        .sort((a, b) => b.s - a.s)
      expect(trace.results.map((r) => r.id)).toEqual(expected.map((e) => e.id))
      trace.results.forEach((r, i) => expect(r.features.similarity).toBeCloseTo(expected[i].s, 5))
    } finally {
      store.close()
    }
    expect(hashTree(dir)).toEqual(before)
  })
})
