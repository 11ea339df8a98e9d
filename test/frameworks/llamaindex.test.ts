/**
 * LlamaIndex default storage (./storage): nodes as memories, source documents as sessions,
 * embedding_dict as vectors; dense top-k against a cosine computed here; nothing in the folder
 * changes.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mergeConfig } from '../../src/shared/config'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
import { buildLlamaIndexStorage, type LiNode } from '../helpers/frameworks/llamaindex'
import { hashTree } from '../helpers/frameworks/hashTree'
import { tmpDir } from '../helpers/tmp'

// after the files' mtime: n3 and n4 carry no date, so they are dated to docstore.json's mtime (a recall at an earlier `now` would not see them)
const NOW = Date.now() + 86_400_000
const Q = [1, 0, 0, 0]
const NODES: LiNode[] = [
  { id: 'n1', text: 'The billing service deploys every Tuesday.', doc: 'doc-a', fileName: 'ops.md', creationDate: '2025-03-04', embedding: [0.6, 0.8, 0, 0] },
  {
    id: 'n2',
    text: 'Staging needs the VPN before a deploy.',
    doc: 'doc-a',
    fileName: 'ops.md',
    creationDate: '2025-03-04',
    embedding: [0.9, 0, 0.435889894354, 0],
  },
  { id: 'n3', text: 'Lunch is at noon on Fridays.', doc: 'doc-b', fileName: 'office.md', embedding: [0.1, 0, 0, 0.99498743710662] },
  { id: 'n4', text: 'A node whose vector is malformed.', doc: 'doc-b', fileName: 'office.md', embedding: null },
]

let t: ReturnType<typeof tmpDir>
let dir: string

beforeAll(() => {
  t = tmpDir()
  dir = buildLlamaIndexStorage(path.join(t.dir, 'storage'), NODES)
})
afterAll(() => t.cleanup())

const cos = (a: number[], b: number[]) => {
  let d = 0,
    na = 0,
    nb = 0
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return d / Math.sqrt(na * nb)
}

describe('LlamaIndex storage folder', () => {
  it('opens the folder (or its parent) read-only: nodes, documents, vectors, dense and lexical recall; no file changes', async () => {
    const before = hashTree(dir)
    for (const p of [dir, t.dir]) {
      const store = openSource({ path: p, workspacePath: path.join(t.dir, `li-${path.basename(p)}.ws`) })
      try {
        const f = store.facts()
        expect(f.layout).toBe('llamaindex')
        expect(f.counts).toMatchObject({ memories: 4, sessions: 2 })
        expect(f.models).toEqual([expect.objectContaining({ model: 'llamaindex:4', dim: 4, count: 3 })])
        const n1 = store.getMemory('n1')!
        expect(n1.content).toBe(NODES[0].text)
        expect(n1.sessionId).toBe('doc-a')
        expect(n1.createdAt).toBe(Date.UTC(2025, 2, 4))
        expect(n1.metadata).toMatchObject({ metadata: { file_name: 'ops.md' }, class_name: 'TextNode' })
        expect(store.getMemory('n3')!.metadata).toMatchObject({ created_from_mtime: true })
        expect(store.getSession('doc-b')!.summary).toBe('office.md')

        const dense = mergeConfig(getPreset('langgraph-store').config, { model: 'llamaindex:4', topK: 3 })
        const trace = await runRecall(store, 'deploy', dense, NOW, { queryVector: Q })
        const expected = NODES.filter((n) => n.embedding)
          .map((n) => ({ id: n.id, s: cos(n.embedding!, Q) }))
          .sort((a, b) => b.s - a.s)
        expect(trace.results.map((r) => r.id)).toEqual(expected.map((e) => e.id))
        trace.results.forEach((r, i) => expect(r.features.similarity).toBeCloseTo(expected[i].s, 6))

        const lex = mergeConfig(dense, { mode: 'lexical', weights: { similarity: 0, lexical: 1, recency: 0, salience: 0 } })
        const lt = await runRecall(store, 'lunch', lex, NOW, { embedder: null })
        expect(lt.results[0]?.id).toBe('n3')
      } finally {
        store.close()
      }
    }
    expect(hashTree(dir)).toEqual(before)
  })
})
