/**
 * Qdrant local mode (mem0 Python's default vector store): real pickles (python3's own pickle of
 * a pydantic-v2-shaped PointStruct), every collection, mem0 payloads as content and scope, dense
 * top-k against a cosine computed here, a hostile pickle never executed, nothing in the folder
 * changed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mergeConfig } from '../../src/shared/config'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { openSource } from '../../src/main/store/registry'
import { readPickle } from '../../src/main/store/frameworks/qdrantLocal/pickle'
import { buildQdrantLocal, hasPython, type QPoint } from '../helpers/frameworks/qdrantLocal'
import { hashTree } from '../helpers/frameworks/hashTree'
import { tmpDir } from '../helpers/tmp'

const PY = hasPython()
if (!PY) console.warn('[qdrantLocal.test] python3 not found: the Qdrant local tests (which need real pickles) are skipped')

const Q = [1, 0, 0, 0]
const unit = (s: number) => [s, Math.sqrt(1 - s * s), 0, 0]
const MEM0: QPoint[] = [
  {
    id: '8f14e45f-ceea-467f-a0e6-7e2c2f0a1b01',
    vector: unit(0.9),
    payload: { data: 'Alice is vegetarian', hash: 'h1', created_at: '2025-05-01T10:00:00.123456-07:00', user_id: 'alice', agent_id: 'chef' },
  },
  {
    id: '8f14e45f-ceea-467f-a0e6-7e2c2f0a1b02',
    vector: unit(0.4),
    payload: { data: 'Alice lives in Lisbon', hash: 'h2', created_at: '2025-05-02T10:00:00-07:00', user_id: 'alice', run_id: 'run-7' },
  },
  {
    id: '8f14e45f-ceea-467f-a0e6-7e2c2f0a1b03',
    vector: unit(0.7),
    payload: { data: 'Bob likes jazz', created_at: '2025-05-03T09:00:00+00:00', user_id: 'bob' },
  },
  { id: 42, vector: null, payload: { note: 'no text here' } },
]

let t: ReturnType<typeof tmpDir>
let dir: string
let marker: string

beforeAll(() => {
  t = tmpDir()
  dir = path.join(t.dir, 'qdrant')
  marker = path.join(t.dir, 'PWNED')
  if (!PY) return
  buildQdrantLocal(
    dir,
    {
      mem0: { vectors: { size: 4, distance: 'Cosine' }, points: MEM0, evil: true },
      docs: {
        vectors: { text: { size: 4, distance: 'Cosine' } },
        points: [{ id: 7, vector: { text: unit(0.95) }, payload: { page_content: 'Deploys happen on Tuesdays', metadata: { source: 'ops.md' } } }],
      },
    },
    marker,
  )
})
afterAll(() => t.cleanup())

describe.runIf(PY)('Qdrant local folder', () => {
  it('reads every collection without running a pickle: content, scope, dates, vectors; dense top-k by cosine; folder unchanged', async () => {
    const before = hashTree(dir)
    const store = openSource({ path: dir, workspacePath: path.join(t.dir, 'q.ws') })
    try {
      const f = store.facts()
      expect(f.layout).toBe('qdrant-local')
      expect(f.detectedBecause).toMatch(/mem0 \(3 points; 1 without text, 1 unreadable skipped\)/)
      expect(f.counts.memories).toBe(4)
      const a = store.getMemory('mem0/8f14e45f-ceea-467f-a0e6-7e2c2f0a1b01')!
      expect(a.content).toBe('Alice is vegetarian')
      expect(a.userId).toBe('alice')
      expect(a.agentId).toBe('chef')
      expect(a.createdAt).toBe(Date.parse('2025-05-01T10:00:00.123-07:00'))
      expect(a.metadata).toMatchObject({ collection: 'mem0', payload: { hash: 'h1', user_id: 'alice' } })
      expect(store.getMemory('mem0/8f14e45f-ceea-467f-a0e6-7e2c2f0a1b02')!.sessionId).toBe('run-7')
      const doc = store.getMemory('docs/7')!
      expect(doc.content).toBe('Deploys happen on Tuesdays')
      expect(f.models.map((m) => m.model).sort()).toEqual(['qdrant:docs:text:4', 'qdrant:mem0:4'])

      const cfg = mergeConfig(getPreset('mem0').config, {
        mode: 'dense',
        model: 'qdrant:mem0:4',
        weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
      })
      const trace = await runRecall(store, 'food', cfg, Date.UTC(2026, 0, 1), { queryVector: Q })
      const cos = (v: number[]) => v[0] // Q = e1 and every vector is unit length
      const expected = MEM0.filter((p) => Array.isArray(p.vector))
        .map((p) => ({ id: `mem0/${p.id}`, s: cos(p.vector as number[]) }))
        .sort((x, y) => y.s - x.s)
      expect(trace.results.map((r) => r.id)).toEqual(expected.map((e) => e.id))
      trace.results.forEach((r, i) => expect(r.features.similarity).toBeCloseTo(expected[i].s, 6))
    } finally {
      store.close()
    }
    expect(fs.existsSync(marker)).toBe(false) // the os.system pickle was read as data, never run
    expect(hashTree(dir)).toEqual(before)
  })

  it('the pickle reader refuses truncated input and hostile lengths with an error, without allocating them', () => {
    expect(() => readPickle(Uint8Array.from([0x80, 0x04, 0x58, 0xff, 0xff, 0xff, 0x7f]))).toThrow(/truncated/)
    expect(() => readPickle(Uint8Array.from([0x80, 0x04, 0x8d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]))).toThrow(/truncated|too large/)
    expect(() => readPickle(Uint8Array.from([0x80, 0x04, 0x51]))).toThrow(/persistent/)
  })
})
