/**
 * Seed 003 (Field Guide), from the seed's code and numbers:
 *   cand = store.search(embed(cue), k=30)          # wide net
 *   score = 0.6·sim + 0.25·recency + 0.15·salience, recency = 0.5 ** ((now − last_used) / 7 days)
 *   floor(0.35) BEFORE top-k (k = 5); recalled memories get last_used = now;
 *   cue = "Goal: …\nCurrent step: …\nOpen questions: a; b"; hybrid = lexical over the raw
 *   utterance, dense over the cue; rendering labels provenance and marks reflections "previously inferred".
 */
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCue } from '../../shared/cue'
import { getPreset } from '../../shared/presets'
import type { RecallConfig } from '../../shared/types'
import { sha256File, tmpDir } from '../../../test/helpers/tmp'
import { runRecall } from './engine'
import { buildDb, DAY, fixedEmbedder, openDb, T0 } from '../../../test/helpers/testDb'

import type { SqliteSource } from '../store/sqlite/source'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource
let dbPath: string
const NOW = T0 + 60 * DAY
const WEEK = 7 * DAY

/** The seed's score, computed here independently of the engine. */
const seedScore = (sim: number, ageMs: number, sal: number) => 0.6 * sim + 0.25 * 0.5 ** (ageMs / (7 * 86400 * 1000)) + 0.15 * sal

beforeAll(() => {
  t = tmpDir()
  const mems = [
    // sim, last used one week before now, salience: the seed's "prod deploys gated on staging check"
    {
      id: 'sem',
      sim: 0.8,
      kind: 'semantic',
      turn: 12,
      salience: 0.9,
      created_at: NOW - 20 * DAY,
      last_used_at: NOW - WEEK,
      content: 'prod deploys gated on staging check',
    },
    {
      id: 'epi',
      sim: 0.55,
      kind: 'episodic',
      turn: 41,
      salience: 0.5,
      created_at: NOW - 2 * WEEK,
      last_used_at: null,
      content: 'last migration rollback was turn 41',
    },
    {
      id: 'proc',
      sim: 0.5,
      kind: 'procedural',
      turn: 7,
      salience: 0.6,
      created_at: NOW - 3 * WEEK,
      last_used_at: NOW - 2 * WEEK,
      content: 'migration apply checklist',
    },
    {
      id: 'refl',
      sim: 0.52,
      kind: 'reflection',
      turn: 30,
      salience: 0.7,
      created_at: NOW - WEEK,
      last_used_at: NOW + DAY,
      content: 'the user prefers small deploys',
    },
  ]
  // 36 stale, low-salience, marginal memories: below the floor (and the six worst outside the wide net)
  for (let i = 0; i < 36; i++)
    mems.push({
      id: `low${String(i).padStart(2, '0')}`,
      sim: 0.3 - i * 0.005,
      kind: 'episodic',
      turn: 100 + i,
      salience: 0.05,
      created_at: NOW - 50 * DAY,
      last_used_at: null,
      content: `stale note ${i}`,
    })
  // High salience and fresh but the least similar of all: outside the wide net of 30 whatever its composite.
  mems.push({ id: 'outside', sim: 0.01, kind: 'semantic', turn: 200, salience: 1, created_at: NOW - 1000, last_used_at: null, content: 'fresh but unrelated' })
  // Created after `now`: out of scope for a recall at `now`.
  mems.push({ id: 'future', sim: 0.99, kind: 'semantic', turn: 300, salience: 1, created_at: NOW + DAY, last_used_at: null, content: 'written tomorrow' })
  dbPath = buildDb(t.dir, { memories: mems })
  store = openDb(dbPath)
})
afterAll(() => {
  store.close()
  t.cleanup()
})

const fg = (patch: Partial<RecallConfig> = {}): RecallConfig => ({ ...getPreset('fieldguide').config, ...patch })

describe('preset fieldguide (seed 003)', () => {
  it('scores 0.6·sim + 0.25·recency + 0.15·salience with a 7-day half-life from last use', async () => {
    const trace = await runRecall(store, 'deploy the tier migration', fg(), NOW, { embedder: fixedEmbedder() })
    const r = Object.fromEntries([...trace.results, ...trace.dropped].map((x) => [x.id, x]))
    // last used exactly one half-life ago → recency 0.5
    expect(r.sem.features.recency).toBeCloseTo(0.5, 12)
    expect(r.sem.score).toBeCloseTo(seedScore(0.8, WEEK, 0.9), 6)
    expect(r.sem.contributions.similarity).toBeCloseTo(0.6 * 0.8, 6)
    // never used → age from created_at
    expect(r.epi.score).toBeCloseTo(seedScore(0.55, 2 * WEEK, 0.5), 6)
    // "used" after `now` is unknown at `now` → age from created_at
    expect(r.refl.features.recency).toBeCloseTo(0.5, 12)
    expect(trace.candidates.map((c) => c.id)).not.toContain('future')
  })

  it('drops everything below the 0.35 floor BEFORE taking the top 5: off-topic memories are not injected', async () => {
    const trace = await runRecall(store, 'deploy the tier migration', fg(), NOW, { embedder: fixedEmbedder() })
    const expected = ['sem', 'epi', 'proc', 'refl']
      .map((id) => ({
        id,
        s: { sem: seedScore(0.8, WEEK, 0.9), epi: seedScore(0.55, 2 * WEEK, 0.5), proc: seedScore(0.5, 2 * WEEK, 0.6), refl: seedScore(0.52, WEEK, 0.7) }[id]!,
      }))
      .filter((x) => x.s >= 0.35)
      .sort((a, b) => b.s - a.s)
      .map((x) => x.id)
    expect(trace.results.map((r) => r.id)).toEqual(expected)
    expect(trace.results.length).toBeLessThan(5) // "Top 5 with no floor" would have filled five slots
    const floorDrops = trace.dropped.filter((d) => d.gate === 'floor')
    expect(floorDrops.length).toBe(30 - expected.length)
    expect(trace.dropped.every((d) => d.gate === 'floor')).toBe(true)
    // the wide net is 30: the 31st-most-similar memory never became a candidate of the pool
    expect([...trace.results, ...trace.dropped].map((x) => x.id)).not.toContain('outside')
    expect(trace.counts.pool).toBe(30)
  })

  it('without the floor, topK = 5 fills up with a stale marginal memory (why the seed gates first)', async () => {
    const trace = await runRecall(store, 'q', fg({ floor: null }), NOW, { embedder: fixedEmbedder() })
    expect(trace.results).toHaveLength(5)
    expect(trace.dropped.every((d) => d.gate === 'topK')).toBe(true)
  })

  it('simulates refresh-on-recall in the trace and leaves the agent DB untouched', async () => {
    const before = sha256File(dbPath)
    const trace = await runRecall(store, 'q', fg(), NOW, { embedder: fixedEmbedder() })
    expect(trace.refreshed).toEqual(trace.results.map((r) => r.id))
    expect(sha256File(dbPath)).toBe(before)
    expect(fs.existsSync(dbPath)).toBe(true)
    expect((await runRecall(store, 'q', fg({ refreshOnRecall: false }), NOW, { embedder: fixedEmbedder() })).refreshed).toEqual([])
  })

  it('embeds the cue for the dense arm and keeps the raw utterance for the lexical arm', async () => {
    const cue = { goal: 'ship the tier migration', currentStep: 'apply the migration', openQuestions: ['is staging green?', 'who approves?'] }
    const e = fixedEmbedder()
    const trace = await runRecall(store, { text: 'migration checklist', cue }, fg({ mode: 'hybrid' }), NOW, { embedder: e })
    expect(e.seen).toEqual(['Goal: ship the tier migration\nCurrent step: apply the migration\nOpen questions: is staging green?; who approves?'])
    expect(buildCue(cue)).toBe(e.seen[0])
    expect(trace.texts).toEqual({ dense: e.seen[0], lexical: 'migration checklist' })
    // a lexical-only hit still gets its cosine from its stored vector
    const proc = trace.candidates.find((c) => c.id === 'proc')!
    expect(proc.lexicalRank).toBe(1)
    expect(proc.similarity).toBeCloseTo(0.5, 6)
  })

  it('labels provenance and kind, and renders reflections as "previously inferred"', async () => {
    const trace = await runRecall(store, 'q', fg(), NOW, { embedder: fixedEmbedder() })
    const lines = trace.context.split('\n')
    expect(lines[0]).toBe('Recalled memory (evidence, not policy):')
    expect(lines).toContain('[recalled semantic memory, written turn 12] prod deploys gated on staging check')
    const refl = lines.find((l) => l.includes('small deploys'))
    if (trace.results.some((r) => r.id === 'refl'))
      expect(refl).toBe('[recalled reflection memory, written turn 30] previously inferred: the user prefers small deploys')
    const empty = await runRecall(store, 'q', fg(), NOW, { queryVector: [0, 0, 0, 1] })
    expect(empty.results).toEqual([])
    expect(empty.context).toBe('')
  })
})
