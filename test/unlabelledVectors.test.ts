/**
 * Stores that record no model name for their vectors (mem0, CrewAI, LangGraph…):
 * recallscope labels them `<source>:<dim>`, and the embedder the user picks is
 * taken to be the one that wrote them when the lengths agree — the dense arm runs
 * and says so. No embedder is guessed by default.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../src/shared/presets'
import { runRecall } from '../src/main/recall/engine'
import { defaultEmbedderSpec } from '../src/main/recall/request'
import { openSource } from '../src/main/store/registry'
import { CanonicalWriter } from '../src/main/store/sqlite/canonicalWriter'
import { fixedEmbedder, T0, unitAt } from './helpers/testDb'
import { tmpDir } from './helpers/tmp'

let t: ReturnType<typeof tmpDir>
let db: string
const SIMS = { a: 0.9, b: 0.2, c: 0.6 }

beforeAll(() => {
  t = tmpDir()
  db = path.join(t.dir, 'unlabelled.db')
  const w = new CanonicalWriter(db, { force: true })
  for (const [id, sim] of Object.entries(SIMS)) {
    w.memory({
      id,
      agent_id: 'a',
      user_id: 'u',
      session_id: null,
      role: 'user',
      kind: 'semantic',
      tier: 'long_term',
      content: `note ${id}`,
      summary: null,
      salience: 0.5,
      created_at: T0,
      last_used_at: null,
      use_count: 0,
      turn: null,
      source: null,
      metadata: null,
    })
    w.embedding('memory', id, 'mem0:4', unitAt(sim))
  }
  w.finish()
})
afterAll(() => t.cleanup())

describe('vectors with no recorded model', () => {
  it('are ranked by cosine with the picked embedder when the dimensions agree, and the trace says so', async () => {
    const s = openSource({ path: db })
    try {
      const cfg = { ...getPreset('fieldguide').config, mode: 'dense' as const, floor: null, minSimilarity: null }
      const trace = await runRecall(s, 'anything', cfg, T0 + 1000, { embedder: fixedEmbedder(undefined, 'nomic-embed-text') })
      expect(trace.arms?.dense.ran).toBe(true)
      expect(trace.arms?.dense.reason).toMatch(/does not record which model.*mem0:4/)
      // unitAt(s) has cosine s with the query: the order is by the given similarities.
      const bySim = Object.entries(SIMS)
        .sort((x, y) => y[1] - x[1])
        .map(([id]) => id)
      expect(trace.results.map((r) => r.id)).toEqual(bySim)
      for (const r of trace.results) expect(r.features.similarity).toBeCloseTo(SIMS[r.id as keyof typeof SIMS], 5)
    } finally {
      s.close()
    }
  })

  it('a query of another length leaves the dense arm off with a reason, and no embedder is guessed by default', async () => {
    const s = openSource({ path: db })
    try {
      const cfg = { ...getPreset('fieldguide').config, mode: 'dense' as const }
      const trace = await runRecall(s, 'anything', cfg, T0 + 1000, { embedder: fixedEmbedder(() => [1, 0, 0], 'other-3d') })
      expect(trace.arms?.dense.ran).toBe(false)
      expect(trace.results).toEqual([])
      expect(defaultEmbedderSpec(s)).toBe('none')
    } finally {
      s.close()
    }
  })
})
