/**
 * Seed 001 (Portal, semantic knowledge): SemanticTopK = 5, SemanticMinScore = 0.7 (cosine),
 * filter TenantId, SemanticContextMaxTokens = 2000; FormatForContext writes
 * "[Retrieved Knowledge]\n" then "Source: …", the content and "---" per record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../shared/presets'
import type { RecallConfig } from '../../shared/types'
import { tmpDir } from '../../../test/helpers/tmp'
import { runRecall } from './engine'
import { buildDb, fixedEmbedder, openDb, T0, DAY } from '../../../test/helpers/testDb'

import type { SqliteSource } from '../store/sqlite/source'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource
const NOW = T0 + 10 * DAY

beforeAll(() => {
  t = tmpDir()
  const fact = (id: string, sim: number, extra: Record<string, unknown> = {}) => ({
    id,
    sim,
    kind: 'semantic',
    role: 'system',
    source: `doc-${id}`,
    content: `fact ${id}`,
    ...extra,
  })
  const p = buildDb(t.dir, {
    sessions: [
      { id: 's1', tenant_id: 'tenant-a' },
      { id: 's2', tenant_id: 'tenant-b' },
    ],
    memories: [
      fact('k95', 0.95),
      fact('k90', 0.9, { kind: 'procedural' }),
      fact('k85', 0.85),
      fact('k80', 0.8),
      fact('k75', 0.75),
      fact('k72', 0.72),
      fact('k69', 0.69),
      fact('other-tenant', 0.99, { session_id: 's2' }),
      fact('episodic', 0.98, { kind: 'episodic' }),
      // budget fixtures: 3000 characters = 750 tokens each under ceil(len/4)
      fact('big1', 0.97, { session_id: 's1', content: 'a'.repeat(3000), tier: 'archived' }),
    ],
  })
  store = openDb(p)
})
afterAll(() => {
  store.close()
  t.cleanup()
})

const withTenant = (cfg: RecallConfig, tenantId = 'tenant-a'): RecallConfig => ({ ...cfg, scope: { ...cfg.scope, tenantId } })

describe('preset portal-semantic (seed 001)', () => {
  it('keeps the top 5 at cosine ≥ 0.7 within the tenant', async () => {
    const trace = await runRecall(store, 'what do we know?', withTenant(getPreset('portal-semantic').config), NOW, { embedder: fixedEmbedder() })
    expect(trace.results.map((r) => r.id)).toEqual(['k95', 'k90', 'k85', 'k80', 'k75'])
    const gate = Object.fromEntries(trace.dropped.map((d) => [d.id, d.gate]))
    expect(gate.k72).toBe('topK')
    expect(gate.k69).toBe('minSimilarity')
    // another tenant's chunk and an episodic memory are not knowledge of this agent's collection
    expect(trace.candidates.map((c) => c.id)).not.toContain('other-tenant')
    expect(trace.candidates.map((c) => c.id)).not.toContain('episodic')
  })

  it('formats "[Retrieved Knowledge]" with Source lines and --- separators', async () => {
    const cfg = { ...withTenant(getPreset('portal-semantic').config), topK: 2 }
    const trace = await runRecall(store, 'q', cfg, NOW, { embedder: fixedEmbedder() })
    expect(trace.context).toBe('[Retrieved Knowledge]\nSource: doc-k95\nfact k95\n---\nSource: doc-k90\nfact k90\n---\n')
  })

  it('writes the header even for zero records (FormatForContext starts the builder with it)', async () => {
    const trace = await runRecall(store, 'q', withTenant(getPreset('portal-semantic').config, 'tenant-none'), NOW, { embedder: fixedEmbedder() })
    expect(trace.results).toEqual([])
    expect(trace.context).toBe('[Retrieved Knowledge]\n')
  })

  it('bounds the injected chunks by SemanticContextMaxTokens = 2000 (ceil(len/4))', async () => {
    const cfg = {
      ...withTenant(getPreset('portal-semantic').config),
      scope: { ...withTenant(getPreset('portal-semantic').config).scope, tiers: ['working', 'long_term', 'archived'] },
    }
    const trace = await runRecall(store, 'q', cfg, NOW, { embedder: fixedEmbedder() })
    // big1 (750 tokens) + k95…k80: each "fact kNN" is 8 chars → 2 tokens; 750 + 4 × 2 = 758 ≤ 2000
    expect(trace.results[0].id).toBe('big1')
    expect(trace.results[0].tokens).toBe(Math.ceil(3000 / 4))
    const tight = await runRecall(store, 'q', { ...cfg, tokenBudget: 751 }, NOW, { embedder: fixedEmbedder() })
    // 750 fits, the next 2-token chunk does not (752 > 751): stop there
    expect(tight.results.map((r) => r.id)).toEqual(['big1'])
    expect(tight.dropped.filter((d) => d.gate === 'budget').map((d) => d.id)).toEqual(['k95', 'k90', 'k85', 'k80'])
  })
})
