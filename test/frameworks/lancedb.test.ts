/**
 * Any LanceDB folder: a Cognee-shaped table (id, vector, payload struct with the text) and a
 * LangChain-shaped one (id, text, vector, metadata) written with the real @lancedb/lancedb client;
 * a table without text listed, not read; dense top-k against a cosine computed here; CrewAI's
 * folder still taken by its own reader; nothing in the folder changed.
 */
import path from 'node:path'
import * as lancedb from '@lancedb/lancedb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mergeConfig } from '../../src/shared/config'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
import { hashTree } from '../helpers/frameworks/hashTree'
import { tmpDir } from '../helpers/tmp'

const Q = [1, 0, 0, 0]
const unit = (s: number) => [s, Math.sqrt(1 - s * s), 0, 0]
const COGNEE = [
  { id: 'c-1', vector: unit(0.7), payload: { id: 'c-1', text: 'Cognee chunk about deploy windows', created_at: '2025-06-01T10:00:00Z', user_id: 'u1' } },
  { id: 'c-2', vector: unit(0.9), payload: { id: 'c-2', text: 'Cognee chunk about the billing team', created_at: '2025-06-02T10:00:00Z', user_id: 'u1' } },
]
const DOCS = [
  { id: 'd-1', text: 'LangChain doc: staging needs the VPN', vector: unit(0.5), metadata: JSON.stringify({ source: 'ops.md' }) },
  { id: 'd-2', text: 'LangChain doc: lunch at noon', vector: unit(0.2), metadata: JSON.stringify({ source: 'office.md' }) },
]

let t: ReturnType<typeof tmpDir>
let dir: string

beforeAll(async () => {
  t = tmpDir()
  dir = path.join(t.dir, 'cognee.lancedb')
  const db = await lancedb.connect(dir)
  await db.createTable('DocumentChunk_text', COGNEE)
  await db.createTable('vectorstore', DOCS)
  await db.createTable('counters', [{ name: 'runs', value: 3 }])
}, 120_000)
afterAll(() => t.cleanup())

describe('LanceDB folder (any table with a text column)', () => {
  it('reads payload and column text, scope, vectors; lists the table without text; dense top-k by cosine; folder unchanged', async () => {
    const before = hashTree(dir)
    const store = openSource({ path: dir, workspacePath: path.join(t.dir, 'l.ws') })
    try {
      const f = store.facts()
      expect(f.layout).toBe('lancedb')
      expect(f.detectedBecause).toMatch(/DocumentChunk_text \(text payload\.text, vector vector: 2 rows, 2 vectors\)/)
      expect(f.detectedBecause).toMatch(/counters \(no text column: not read\)/)
      expect(f.counts.memories).toBe(4)
      const c2 = store.getMemory('DocumentChunk_text/c-2')!
      expect(c2.content).toBe('Cognee chunk about the billing team')
      expect(c2.userId).toBe('u1')
      expect(c2.createdAt).toBe(Date.UTC(2025, 5, 2, 10))
      const d1 = store.getMemory('vectorstore/d-1')!
      expect(d1.content).toBe('LangChain doc: staging needs the VPN')
      expect(d1.metadata).toMatchObject({ table: 'vectorstore', columns: { metadata: JSON.stringify({ source: 'ops.md' }) }, created_from_mtime: true })
      expect(f.models.map((m) => m.model).sort()).toEqual(['lancedb:DocumentChunk_text:4', 'lancedb:vectorstore:4'])

      const cfg = mergeConfig(getPreset('langgraph-store').config, { model: 'lancedb:DocumentChunk_text:4' })
      const trace = await runRecall(store, 'billing', cfg, Date.now() + 86_400_000, { queryVector: Q })
      const expected = COGNEE.map((c) => ({ id: `DocumentChunk_text/${c.id}`, s: c.vector[0] })).sort((a, b) => b.s - a.s)
      expect(trace.results.map((r) => r.id)).toEqual(expected.map((e) => e.id))
      trace.results.forEach((r, i) => expect(r.features.similarity).toBeCloseTo(expected[i].s, 5))
    } finally {
      store.close()
    }
    expect(hashTree(dir)).toEqual(before)
  })
})
