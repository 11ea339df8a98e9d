/**
 * Seed 000 (Portal, episodic recall), from the seed's own code and numbers:
 *   episodes of this agent+user with a summary embedding, not archived;
 *   .OrderByDescending(Score).Take(topK = 3).Where(Score >= MinRecallScore = 0.65)
 *   FormatEpisodeContext: "[Past Conversation Context]" … ordered by date, "- yyyy-MM-dd: summary".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../shared/presets'
import { tmpDir } from '../../../test/helpers/tmp'
import { runRecall } from './engine'
import { buildDb, DAY, fixedEmbedder, openDb, QUERY, T0 } from '../../../test/helpers/testDb'

import type { SqliteSource } from '../store/sqlite/source'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource
const NOW = T0 + 30 * DAY

beforeAll(() => {
  t = tmpDir()
  const day = (n: number) => T0 + n * DAY
  const p = buildDb(t.dir, {
    sessions: [
      // Dates are deliberately not in score order: the block must come out ordered by date.
      { id: 'ep-070', sim: 0.7, started_at: day(10), ended_at: day(10) + 3600_000, summary: 'Planned the Lisbon trip' },
      { id: 'ep-066', sim: 0.66, started_at: day(2), ended_at: day(2) + 3600_000, summary: 'Booked the hotel near the old town' },
      { id: 'ep-064', sim: 0.64, started_at: day(5), ended_at: day(5) + 3600_000, summary: 'Talked about flights' },
      { id: 'ep-063', sim: 0.63, started_at: day(12), ended_at: day(12) + 3600_000, summary: 'Gift ideas' },
      { id: 'ep-archived', sim: 0.95, started_at: day(3), ended_at: day(3) + 3600_000, is_archived: 1 },
      { id: 'ep-other-user', sim: 0.99, user_id: 'user-b', started_at: day(4), ended_at: day(4) + 3600_000 },
      { id: 'ep-other-agent', sim: 0.98, agent_id: 'agent-b', started_at: day(4), ended_at: day(4) + 3600_000 },
      { id: 'ep-no-vector', started_at: day(20), ended_at: day(20) + 3600_000, summary: 'never embedded' },
      { id: 'ep-later', sim: 0.97, started_at: NOW - 3600_000, ended_at: NOW + 3600_000, summary: 'still running at now' },
    ],
    memories: [
      { id: 'm1', session_id: 'ep-066', turn: 2, role: 'assistant', content: 'Booked it.', created_at: day(2) + 120_000 },
      { id: 'm2', session_id: 'ep-066', turn: 1, role: 'user', content: 'Book the hotel.', created_at: day(2) + 60_000 },
      { id: 'm3', session_id: 'ep-066', turn: 3, role: 'user', content: 'Thanks.', created_at: day(2) + 180_000 },
    ],
  })
  store = openDb(p)
})
afterAll(() => {
  store.close()
  t.cleanup()
})

const scope = { agentId: 'agent-a', userId: 'user-a' }

describe('preset portal-episodic (seed 000)', () => {
  it('takes topK = 3 THEN drops below 0.65: the 0.64 third is dropped, the 0.66 second kept', async () => {
    const cfg = getPreset('portal-episodic').config
    const trace = await runRecall(store, 'where am I staying in Lisbon?', { ...cfg, scope: { ...cfg.scope, ...scope } }, NOW, { embedder: fixedEmbedder() })
    expect(trace.results.map((r) => r.id)).toEqual(['ep-070', 'ep-066'])
    expect(trace.results[0].score).toBeCloseTo(0.7, 6)
    expect(trace.results[1].score).toBeCloseTo(0.66, 6)
    const gate = Object.fromEntries(trace.dropped.map((d) => [d.id, d.gate]))
    // taken by Take(3), then removed by Where(Score >= 0.65)
    expect(gate['ep-064']).toBe('floor')
    // never taken: fourth by score
    expect(gate['ep-063']).toBe('topK')
    // out of scope: archived, other user, other agent, not finished by `now`
    for (const id of ['ep-archived', 'ep-other-user', 'ep-other-agent', 'ep-later']) expect(trace.candidates.some((c) => c.id === id)).toBe(false)
    // no summary embedding: never ranked (the recency arm knows it, for a local switch to recency mode)
    const ranked = [...trace.results, ...trace.dropped].map((r) => r.id)
    expect(ranked).not.toContain('ep-no-vector')
    expect(ranked.sort()).toEqual(['ep-063', 'ep-064', 'ep-066', 'ep-070'])
    expect(trace.unit).toBe('session')
  })

  it('the same numbers with floor before topK blame the floor for the fourth too (gate order is recorded)', async () => {
    const cfg = getPreset('portal-episodic').config
    const trace = await runRecall(store, 'q', { ...cfg, gateOrder: 'floor-then-topk', scope: { ...cfg.scope, ...scope } }, NOW, { embedder: fixedEmbedder() })
    expect(trace.results.map((r) => r.id)).toEqual(['ep-070', 'ep-066'])
    expect(trace.dropped.find((d) => d.id === 'ep-063')?.gate).toBe('floor')
  })

  it('renders "[Past Conversation Context]" ordered by date with yyyy-MM-dd', async () => {
    const cfg = getPreset('portal-episodic').config
    const trace = await runRecall(store, 'q', { ...cfg, scope: { ...cfg.scope, ...scope } }, NOW, { embedder: fixedEmbedder() })
    const d = (n: number) => new Date(T0 + n * DAY).toISOString().slice(0, 10)
    expect(trace.context).toBe(
      `[Past Conversation Context]\nRelevant past conversations with this user:\n- ${d(2)}: Booked the hotel near the old town\n- ${d(10)}: Planned the Lisbon trip\n`,
    )
  })

  it('returns an empty string (not a header) when nothing passes MinRecallScore', async () => {
    const cfg = getPreset('portal-episodic').config
    const far = [0, 0, 0, 1] // orthogonal to every summary vector
    const trace = await runRecall(store, 'q', { ...cfg, scope: { ...cfg.scope, ...scope } }, NOW, { queryVector: far })
    expect(trace.results).toEqual([])
    expect(trace.context).toBe('')
    expect(trace.contextTokens).toBe(0)
  })

  it('recency variant: the RecentSessionsToInject = 2 most recent sessions, no threshold', async () => {
    const cfg = getPreset('portal-episodic:recency').config
    const trace = await runRecall(store, 'q', { ...cfg, scope: { ...cfg.scope, ...scope } }, NOW, { queryVector: QUERY })
    // in scope and finished by now: ep-no-vector (day 20), ep-063 (day 12) are the newest two
    expect(trace.results.map((r) => r.id)).toEqual(['ep-no-vector', 'ep-063'])
    expect(trace.mode).toBe('recency')
  })

  it('session variant: one session’s messages in turn order', async () => {
    const cfg = getPreset('portal-episodic:session').config
    const trace = await runRecall(store, '', { ...cfg, scope: { ...cfg.scope, sessionId: 'ep-066' } }, NOW, { queryVector: QUERY })
    expect(trace.results.map((r) => r.id)).toEqual(['m2', 'm1', 'm3'])
    expect(trace.unit).toBe('memory')
  })

  it('UseSessionSummaries = false injects the full message thread', async () => {
    const cfg = getPreset('portal-episodic:full').config
    const trace = await runRecall(store, 'q', { ...cfg, scope: { ...cfg.scope, ...scope } }, NOW, { embedder: fixedEmbedder() })
    expect(trace.units['ep-066'].content).toBe('user: Book the hotel.\nassistant: Booked it.\nuser: Thanks.')
    const summary = await runRecall(store, 'q', { ...getPreset('portal-episodic').config, scope: { ...cfg.scope, ...scope } }, NOW, {
      embedder: fixedEmbedder(),
    })
    expect(trace.results.find((r) => r.id === 'ep-066')!.tokens).toBeGreaterThan(summary.results.find((r) => r.id === 'ep-066')!.tokens)
  })
})
