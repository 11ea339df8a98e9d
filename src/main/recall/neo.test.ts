/**
 * Seed 004 (Neo's conversational recall lane), from the seed's algorithm:
 *   score all turns of one conversation by cosine, sort descending,
 *   accumulate until topK or the token budget is exhausted — cost (len(text) + 3) / 4 —
 *   always returning ≥ 1 if any exist; the agent drops hits already in the live
 *   transcript; a nil embedder yields nothing and embed failures degrade to no hits.
 * Defaults from recall.New: topK 6, budget 2500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../shared/presets'
import type { RecallConfig } from '../../shared/types'
import { tmpDir } from '../../../test/helpers/tmp'
import { createEmbedder } from '../embed/index'
import { runRecall } from './engine'
import { buildDb, downEmbedder, fixedEmbedder, openDb, T0, DAY, type MemSpec } from '../../../test/helpers/testDb'

import type { SqliteSource } from '../store/sqlite/source'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource
const NOW = T0 + DAY
/** (len + 3) / 4 in Go integer arithmetic, len in bytes: the seed's budget heuristic. */
const goCost = (text: string) => Math.floor((Buffer.byteLength(text, 'utf8') + 3) / 4)

const turn = (id: string, sim: number, content: string, extra: Partial<MemSpec> = {}): MemSpec => ({
  id,
  sim,
  content,
  role: 'user',
  session_id: 'conv',
  ...extra,
})
// Budget story (default budget 2500): a (1000) + b (1500) = 2500 fits exactly; c (2) would make 2502.
const A = 'a'.repeat(4000)
const B = 'b'.repeat(6000)

beforeAll(() => {
  t = tmpDir()
  const p = buildDb(t.dir, {
    memories: [
      turn('a', 0.9, A),
      turn('b', 0.8, B, { role: 'assistant' }),
      turn('c', 0.7, 'tiny'),
      turn('d', 0.6, 'also tiny'),
      turn('sys', 0.95, 'a system note', { role: 'system' }), // not a conversation turn
      turn('other', 0.99, 'another conversation', { session_id: 'conv-2' }),
      // a conversation whose best turn alone exceeds the budget
      turn('huge', 0.9, 'h'.repeat(12_000), { session_id: 'conv-big' }),
      turn('small', 0.8, 'fits easily', { session_id: 'conv-big' }),
      // ties (identical text → identical vectors): Neo's stable sort keeps thread order (older first)
      turn('t-old', 0.5, 'same words', { session_id: 'conv-tie', created_at: T0 + 1000, vector: [0.5, 0.5, 0.5, 0.5] }),
      turn('t-new', 0.5, 'same words', { session_id: 'conv-tie', created_at: T0 + 2000, vector: [0.5, 0.5, 0.5, 0.5] }),
      // live-transcript dedupe by text: 'dup-old' repeats what is already in the window
      turn('dup-old', 0.85, 'how do I deploy an ERC-20', { session_id: 'conv-dup' }),
      turn('dup-live', 0.1, 'how do I deploy an ERC-20', { session_id: 'conv-dup' }),
      turn('dup-other', 0.6, 'call paxeer-net deploy_token', { session_id: 'conv-dup', role: 'assistant' }),
      turn('utf', 0.9, 'ééééé', { session_id: 'conv-utf' }),
    ],
  })
  store = openDb(p)
})
afterAll(() => {
  store.close()
  t.cleanup()
})

const neo = (sessionId: string, patch: Partial<RecallConfig> = {}, scope: Partial<RecallConfig['scope']> = {}): RecallConfig => {
  const base = getPreset('neo').config
  return { ...base, ...patch, scope: { ...base.scope, sessionId, ...scope } }
}

describe('preset neo (seed 004)', () => {
  it('uses recall.New defaults: topK 6, budget 2500, (len+3)/4', () => {
    const c = getPreset('neo').config
    expect([c.topK, c.tokenBudget, c.tokenEstimator, c.atLeastOne, c.overflow]).toEqual([6, 2500, 'neo', true, 'stop'])
  })

  it('stops at the first turn that no longer fits the budget', async () => {
    const trace = await runRecall(store, 'q', neo('conv'), NOW, { embedder: fixedEmbedder() })
    expect(goCost(A) + goCost(B)).toBe(2500)
    expect(trace.results.map((r) => r.id)).toEqual(['a', 'b'])
    expect(trace.results.map((r) => r.tokens)).toEqual([goCost(A), goCost(B)])
    // c would cost 2 more (2502 > 2500): budget; d comes after the stop, even though it would fit alone
    const gate = Object.fromEntries(trace.dropped.map((d) => [d.id, d.gate]))
    expect(gate).toEqual({ c: 'budget', d: 'budget' })
    // only user/assistant turns of this conversation are scored
    expect(trace.candidates.map((c) => c.id).sort()).toEqual(['a', 'b', 'c', 'd'])
  })

  it('returns one turn even when it alone exceeds the budget', async () => {
    const trace = await runRecall(store, 'q', neo('conv-big'), NOW, { embedder: fixedEmbedder() })
    expect(goCost('h'.repeat(12_000))).toBeGreaterThan(2500)
    expect(trace.results.map((r) => r.id)).toEqual(['huge'])
    expect(trace.dropped.map((d) => [d.id, d.gate])).toEqual([['small', 'budget']])
    const noFloor = await runRecall(store, 'q', neo('conv-big', { atLeastOne: false }), NOW, { embedder: fixedEmbedder() })
    expect(noFloor.results).toEqual([])
  })

  it('counts UTF-8 bytes like Go’s len(): five "é" cost (10 + 3) / 4 = 3 tokens, not ceil(5/4) = 2', async () => {
    const trace = await runRecall(store, 'q', neo('conv-utf'), NOW, { embedder: fixedEmbedder() })
    expect(trace.results[0].tokens).toBe(3)
    const ceil4 = await runRecall(store, 'q', neo('conv-utf', { tokenEstimator: 'ceil4' }), NOW, { embedder: fixedEmbedder() })
    expect(ceil4.results[0].tokens).toBe(2)
  })

  it('caps at topK', async () => {
    const trace = await runRecall(store, 'q', neo('conv', { topK: 1 }), NOW, { embedder: fixedEmbedder() })
    expect(trace.results.map((r) => r.id)).toEqual(['a'])
    expect(trace.dropped.find((d) => d.id === 'b')?.gate).toBe('topK')
  })

  it('keeps thread order on ties (sort.SliceStable over the conversation)', async () => {
    const trace = await runRecall(store, 'q', neo('conv-tie', { topK: 1 }), NOW, { embedder: fixedEmbedder() })
    expect(trace.results.map((r) => r.id)).toEqual(['t-old'])
  })

  it('drops hits already in the live transcript after recall (by id or identical text): they spent their slot', async () => {
    // live window holds 'dup-live', whose text equals 'dup-old'
    const trace = await runRecall(store, 'q', neo('conv-dup', { topK: 2 }, { excludeIds: ['dup-live'] }), NOW, { embedder: fixedEmbedder() })
    // Relevant() returned [dup-old, dup-other]; renderRecall skipped dup-old: one line left, not refilled from below
    expect(trace.results.map((r) => r.id)).toEqual(['dup-other'])
    expect(trace.dropped.find((d) => d.id === 'dup-old')?.gate).toBe('dedupe')
    expect(trace.context).toBe(
      'Relevant earlier in this conversation (the live exchange below is more current — it wins on any conflict):\n- Neo: call paxeer-net deploy_token\n',
    )
  })

  it('renders "- User:" / "- Neo:" lines', async () => {
    const trace = await runRecall(store, 'q', neo('conv-dup'), NOW, { embedder: fixedEmbedder() })
    expect(trace.context.split('\n').slice(1)).toEqual([
      '- User: how do I deploy an ERC-20',
      '- Neo: call paxeer-net deploy_token',
      '- User: how do I deploy an ERC-20',
      '',
    ])
  })

  it('never errors without an embedder: no embedder, `none`, or a server that is down → empty result', async () => {
    for (const embedder of [null, createEmbedder('none'), downEmbedder()]) {
      const trace = await runRecall(store, 'q', neo('conv'), NOW, { embedder })
      expect(trace.results).toEqual([])
      expect(trace.context).toBe('')
      expect(trace.degraded).toBe(true)
      expect(trace.mode).toBe('none')
    }
  })
})
