/**
 * The batched eval gather (gatherCases → gatherRecallBatch, one PassReads for the whole call,
 * query vectors embedded in batches) against the unbatched path kept as the reference here: one
 * `prepareVector` + `gatherRecallSync` per case, each with its own reads. Same candidates, arms
 * and numbers, case for case, over presets that reach every arm and scope kind; the similarities
 * it reuses from the dense arm checked against a dot product computed here; and the run's
 * `timings` by phase.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { armTexts } from '../../shared/cue'
import { getPreset } from '../../shared/presets'
import type { EvalCaseRow } from '../../shared/eval'
import type { RecallConfig } from '../../shared/types'
import { tmpDir } from '../../../test/helpers/tmp'
import { demoWithCases, FIXTURE_NOW } from '../../../test/helpers/evalFixture'
import { createEmbedder } from '../embed/index'
import type { Embedder } from '../embed/types'
import { gatherRecallSync, prepareVector } from '../recall/engine'
import type { SqliteSource } from '../store/sqlite/source'
import { saveCase } from './cases'
import { runEval } from './evaluate'
import { caseConfig, GatherCache, gatherCases, zeroGatherMs } from './replay'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource
let cases: EvalCaseRow[]
/** a user with memories outside sessions' reach, for Engram's blend (a config scope field) */
let blendUser = ''

beforeAll(() => {
  t = tmpDir()
  store = demoWithCases(t.dir, { memories: 1200, cases: 40 }).store
  // Scope kinds the generated cases do not have: a session, a user with Engram's blend, no scope,
  // an earlier moment (time travel), a cue, and two cases with the same query (one query vector).
  const m = store.db
    .prepare(`SELECT id, agent_id AS a, user_id AS u, session_id AS s, content FROM memories WHERE user_id IS NOT NULL ORDER BY rowid LIMIT 1 OFFSET 200`)
    .get() as {
    a: string
    u: string
    s: string
    content: string
  }
  blendUser = m.u
  const words = m.content.split(/\s+/).slice(0, 4).join(' ')
  const extra = [
    { id: 'x-session', query: words, scope: { agentId: m.a, sessionId: m.s }, now: FIXTURE_NOW },
    { id: 'x-user', query: words, scope: { agentId: m.a, userId: m.u }, now: FIXTURE_NOW },
    { id: 'x-all', query: `${words} and more`, scope: {}, now: FIXTURE_NOW },
    { id: 'x-early', query: words, scope: { agentId: m.a }, now: FIXTURE_NOW - 20 * 86_400_000 },
    { id: 'x-cue', query: 'what about it', cue: { goal: words, currentStep: 'looking it up', openQuestions: [] }, scope: { agentId: m.a }, now: FIXTURE_NOW },
    { id: 'x-same', query: words, scope: { agentId: m.a }, now: FIXTURE_NOW },
  ]
  for (const c of extra) saveCase(store.workspace, { ...c, relevant: [{ id: 'x', grade: 1 }] }, 0)
  cases = store.workspace.loadCases()
})
afterAll(() => {
  store?.close()
  t.cleanup()
})

const embedder = createEmbedder('hashing')

/** The reference: one query vector and one engine gather per case, nothing shared between cases. */
async function oneByOne(config: RecallConfig, embedder: Embedder) {
  const out = []
  for (const c of cases) {
    const cfg = caseConfig(config, c)
    const prepared = await prepareVector(store, armTexts(c.query, c.cue, cfg.cueUse).dense, { embedder })
    out.push(gatherRecallSync(store, { text: c.query, cue: c.cue }, cfg, c.now ?? FIXTURE_NOW, { prepared }))
  }
  return out
}

const none = createEmbedder('none')
const variants: [string, () => RecallConfig, Embedder?][] = [
  ['fieldguide (dense)', () => getPreset('fieldguide').config],
  ['fieldguide:hybrid', () => getPreset('fieldguide:hybrid').config],
  ['lexical, cue for the dense text', () => ({ ...getPreset('fieldguide').config, mode: 'lexical', cueUse: { dense: 'cue', lexical: 'utterance' } })],
  ['engram (missing vectors at 0)', () => getPreset('engram').config],
  ['engram with a user blend', () => ({ ...getPreset('engram').config, scope: { ...getPreset('engram').config.scope, blendUserId: blendUser } })],
  ['neo', () => getPreset('neo').config],
  ['mem0', () => getPreset('mem0').config],
  ['portal-episodic (session units)', () => getPreset('portal-episodic').config],
  ['recency mode', () => ({ ...getPreset('fieldguide').config, mode: 'recency' })],
  ['engram without an embedder (keyword fallback)', () => getPreset('engram').config, none],
  ['hybrid without an embedder (degraded)', () => getPreset('fieldguide:hybrid').config, none],
  ['hybrid, pool 300', () => ({ ...getPreset('fieldguide:hybrid').config, candidatePool: 300 })],
]

describe('gatherCases in batches = one gatherRecallSync per case', () => {
  it.each(variants)('%s: same candidates, arms and numbers for every case', async (_name, configOf, e = embedder) => {
    const config = configOf()
    const ref = await oneByOne(config, e)
    const ms = zeroGatherMs()
    const got = await gatherCases(store, cases, config, { embedder: e, now: FIXTURE_NOW, ms })
    expect(got.length).toBe(cases.length)
    let candidates = 0
    for (let i = 0; i < cases.length; i++) {
      expect(got[i].case.id).toBe(cases[i].id)
      // toStrictEqual: the same keys too (an undefined left on a candidate would show in a saved run).
      expect({ c: got[i].candidates, a: got[i].arms, m: got[i].mode, d: got[i].degraded, e: got[i].embedder }).toStrictEqual({
        c: ref[i].candidates,
        a: ref[i].arms,
        m: ref[i].mode,
        d: ref[i].degraded,
        e: ref[i].embedder,
      })
      candidates += got[i].candidates.length
    }
    expect(candidates).toBeGreaterThan(cases.length) // not a vacuous comparison
    expect(ms.gathered).toBe(cases.length)
  })

  it('reuses the dense arm’s numbers only for the right rows: every similarity is the stored vector’s cosine with the query', async () => {
    const config = { ...getPreset('fieldguide:hybrid').config, candidatePool: 200 }
    const got = await gatherCases(store, cases, config, { embedder, now: FIXTURE_NOW })
    const idx = store.vectors(embedder.model!, 'memory')
    let lexicalOnly = 0
    for (const g of got) {
      const [q] = await embedder.embed([armTexts(g.case.query, g.case.cue, config.cueUse).dense])
      const qn = Math.sqrt(q.reduce((s, x) => s + x * x, 0))
      for (const c of g.candidates) {
        const row = idx.rowOf.get(c.id)
        if (row === undefined) {
          expect(c.similarity).toBeNull()
          continue
        }
        const v = idx.rowVector(row)
        let dot = 0
        let vn = 0
        for (let i = 0; i < v.length; i++) {
          dot += v[i] * q[i]
          vn += v[i] * v[i]
        }
        expect(c.similarity).toBeCloseTo(dot / (qn * Math.sqrt(vn)), 6)
        if (c.denseRank === null) lexicalOnly++
      }
    }
    expect(lexicalOnly).toBeGreaterThan(50)
  })

  it('a case whose query vector is shared with another gets the same one (embedded once)', async () => {
    const config = getPreset('fieldguide').config
    let calls = 0
    let texts = 0
    const counting = { ...embedder, name: embedder.name, model: embedder.model, enabled: true, cacheable: false, health: embedder.health.bind(embedder) }
    counting.embed = async (xs: string[]) => {
      calls++
      texts += xs.length
      return embedder.embed(xs)
    }
    const got = await gatherCases(store, cases, config, { embedder: counting, now: FIXTURE_NOW })
    const distinct = new Set(cases.map((c) => armTexts(c.query, c.cue, config.cueUse).dense)).size
    expect(distinct).toBeLessThan(cases.length)
    expect(texts).toBe(distinct)
    expect(calls).toBe(1) // fewer than 256 texts: one batch
    const a = got.find((g) => g.case.id === 'x-same')!
    const b = got.find((g) => g.case.id === 'x-early')!
    expect(a.candidates.length).toBeGreaterThan(0)
    expect(b.candidates.length).toBeGreaterThan(0)
  })
})

describe('an eval run’s timings by phase', () => {
  it('names every phase, adds up to the gather and the score, and shows a cached gather', async () => {
    const cache = new GatherCache(store)
    const run = await runEval(store, { preset: 'fieldguide:hybrid', now: FIXTURE_NOW, createdAt: 0, embedder: 'hashing', cache })
    const p = run.timings.phases!
    expect(p).toBeDefined()
    for (const k of ['queryVectorsMs', 'scopeMs', 'denseMs', 'lexicalMs', 'featuresMs', 'fusionMs', 'metricsMs', 'otherMs'] as const)
      expect(p[k]).toBeGreaterThanOrEqual(0)
    expect(p.gathered).toBe(cases.length)
    // both arms ran for every case: each took time
    expect(p.denseMs).toBeGreaterThan(0)
    expect(p.lexicalMs).toBeGreaterThan(0)
    expect(p.featuresMs).toBeGreaterThan(0)
    const gatherPhases = p.queryVectorsMs + p.scopeMs + p.denseMs + p.lexicalMs + p.featuresMs + p.otherMs
    expect(gatherPhases).toBeCloseTo(run.timings.gatherMs, 3)
    expect(p.queryVectorsMs + p.scopeMs + p.denseMs + p.lexicalMs + p.featuresMs).toBeLessThanOrEqual(run.timings.gatherMs + 1e-6)
    expect(p.fusionMs + p.metricsMs).toBeCloseTo(run.timings.scoreMs, 6)
    expect(run.timings.gatherMs + run.timings.scoreMs).toBeLessThanOrEqual(run.timings.totalMs + 1e-6)
    // Again with every case in the gather cache: the engine gathers none.
    const again = await runEval(store, { preset: 'fieldguide:hybrid', now: FIXTURE_NOW, createdAt: 0, embedder: 'hashing', cache })
    expect(again.timings.phases!.gathered).toBe(0)
    expect(again.timings.phases!.denseMs).toBe(0)
    expect(again.metrics).toEqual(run.metrics)
  })
})

describe('a cached case list (a tune baseline gathered once per store)', () => {
  it('serves the same cases in the same order under the same embedder and `now`, with the cases as they are now; anything else is a miss', async () => {
    const config = getPreset('fieldguide').config
    const embedder = createEmbedder('hashing')
    const some = cases.slice(0, 12)
    const gs = await gatherCases(store, some, config, { embedder, now: FIXTURE_NOW })
    const cache = new GatherCache(store)
    expect(cache.getList('k', some, FIXTURE_NOW, embedder)).toBeUndefined()
    cache.setList('k', gs)
    expect(cache.getList('k', some, FIXTURE_NOW, embedder)).toEqual(gs)
    // a judgment edited since (not part of what was gathered): served, carrying the edit
    const edited = some.map((c, i) => (i === 3 ? { ...c, relevant: [] } : c))
    const hit = cache.getList('k', edited, FIXTURE_NOW, embedder)!
    expect(hit[3].case).toBe(edited[3])
    expect(hit[3].candidates).toBe(gs[3].candidates)
    // another query, order, case list, embedder or `now` (for cases without one), or key: not served
    const requeried = some.map((c, i) => (i === 5 ? { ...c, query: `${c.query} more` } : c))
    expect(cache.getList('k', requeried, FIXTURE_NOW, embedder)).toBeUndefined()
    expect(cache.getList('k', [...some].reverse(), FIXTURE_NOW, embedder)).toBeUndefined()
    expect(cache.getList('k', some.slice(1), FIXTURE_NOW, embedder)).toBeUndefined()
    expect(cache.getList('k', some, FIXTURE_NOW, null)).toBeUndefined()
    const undated = some.map((c) => ({ ...c, now: null }))
    cache.setList('u', await gatherCases(store, undated, config, { embedder, now: FIXTURE_NOW }))
    expect(cache.getList('u', undated, FIXTURE_NOW + 1, embedder)).toBeUndefined()
    expect(cache.getList('other', some, FIXTURE_NOW, embedder)).toBeUndefined()
    cache.clear()
    expect(cache.getList('k', some, FIXTURE_NOW, embedder)).toBeUndefined()
  })
})
