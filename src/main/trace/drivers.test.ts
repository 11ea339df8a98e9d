/**
 * Drivers: share of the composite and leave-one-out on a hand-built DB where
 * every score is known, and on a demo event; the timeline's counts.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset, validateConfig } from '../../shared/presets'
import type { CandidateRaw } from '../../shared/types'
import { tmpDir } from '../../../test/helpers/tmp'
import { runRecall } from '../recall/engine'
import { buildDb, MODEL, openDb, QUERY, T0 } from '../../../test/helpers/testDb'
import { generateDemo } from '../demo/generate'
import { openSource } from '../store/registry'
import type { SqliteSource } from '../store/sqlite/source'
import { computeDrivers, eventDrivers, withoutCandidate } from './drivers'
import { eventTimeline } from './timeline'
import { HASHING_MODEL, hashEmbed } from '../embed/hashing'
import { termSet } from '../../shared/evidence'
import { writeDemoDb } from '../../../test/helpers/demoDb'

let t: ReturnType<typeof tmpDir>
beforeAll(() => {
  t = tmpDir()
})
afterAll(() => t.cleanup())

describe('withoutCandidate', () => {
  const c = (id: string, dense: number | null, lex: number | null, bm25: number | null): CandidateRaw => ({
    id,
    similarity: 0.5,
    lexical: 0,
    bm25,
    ageLastUsedMs: 0,
    ageCreatedMs: 0,
    salience: 0,
    denseRank: dense,
    lexicalRank: lex,
    recencyRank: null,
    textLength: 10,
  })
  it('closes the ranks below it and re-normalises lexical when it was the best match', () => {
    const cands = [c('a', 1, 2, -2), c('b', 2, 1, -4), c('c', 3, null, null), c('d', null, 3, -1)]
    const out = withoutCandidate(cands, 'b')
    const by = Object.fromEntries(out.map((x) => [x.id, x]))
    expect(out.map((x) => x.id)).toEqual(['a', 'c', 'd'])
    expect([by.a.denseRank, by.c.denseRank]).toEqual([1, 2])
    expect([by.a.lexicalRank, by.d.lexicalRank]).toEqual([1, 2])
    // lexical = −bm25 / max(−bm25): the max was b's 4, now a's 2
    expect(by.a.lexical).toBe(1)
    expect(by.d.lexical).toBe(0.5)
  })
})

describe('drivers on a hand-built DB', () => {
  it('an event whose log has no decision column has no evidence attribution (and drivers still run)', async () => {
    const p = generateDemo({
      out: path.join(t.dir, 'nodecision.db'),
      memories: 100,
      cases: false,
      addEvents: (w) => {
        const m = w.db.prepare('SELECT id FROM memories LIMIT 2').pluck().all() as string[]
        w.event({
          id: 'e1',
          at: T0,
          agent_id: null,
          user_id: null,
          session_id: null,
          turn: null,
          query: 'q',
          cue: null,
          preset: 'engram',
          config: null,
          results: JSON.stringify(m.map((id) => ({ id, score: 0.5 }))),
        })
      },
    }).path
    const store = openSource({ path: p, workspacePath: `${p}.ws` })
    try {
      expect(store.eventExtras('e1').decision).toBeUndefined()
      const d = await eventDrivers(store, 'e1')
      expect(d.evidence).toBeNull()
    } finally {
      store.close()
    }
  })

  it('shares sum to 1; leaving one out promotes the next best by score', async () => {
    // similarity only: score = similarity; topK 3 injects .9, .8, .7; the 4th (.6) replaces whichever leaves.
    const store = openDb(
      buildDb(t.dir, { name: 'drivers.db', memories: [0.9, 0.8, 0.7, 0.6, 0.3].map((sim, i) => ({ id: `m${i}`, sim, content: `note ${i}` })) }),
    )
    try {
      const cfg = validateConfig({ ...getPreset('engram').config, model: MODEL, topK: 3, scope: { tiers: ['working', 'long_term'] } })
      const trace = await runRecall(store, 'q', cfg, T0 + 86_400_000, { queryVector: QUERY })
      expect(trace.results.map((r) => r.id)).toEqual(['m0', 'm1', 'm2'])
      const d = computeDrivers(trace)
      const total = 0.9 + 0.8 + 0.7
      const s = Object.fromEntries(d.rows.map((r) => [r.id, r]))
      expect(s.m0.share).toBeCloseTo(0.9 / total, 6)
      expect(d.rows.reduce((a, r) => a + r.share, 0)).toBeCloseTo(1, 12)
      expect(s.m0.featureShares.similarity).toBeCloseTo(1, 12)
      for (const r of d.rows) {
        expect(r.loo.replacement?.id).toBe('m3')
        expect(r.loo.scoreLoss).toBeCloseTo(r.score - 0.6, 6)
      }
      expect(s.m0.loo.topChanged).toBe(true)
      expect(s.m0.loo.topAfter).toBe('m1')
      expect(s.m2.loo.topChanged).toBe(false)
      expect(s.m2.loo.after).toEqual(['m0', 'm1', 'm3'])
      // The set change without m2, read off the two lists: m3 comes in, nobody else leaves.
      expect(s.m2.loo.entered).toEqual(['m3'])
      expect(s.m2.loo.left).toEqual([])
      // RBO is top-weighted: losing the top moves the list most.
      expect(s.m0.loo.rbo).toBeLessThan(s.m1.loo.rbo)
      expect(s.m1.loo.rbo).toBeLessThan(s.m2.loo.rbo)
      expect(d.byInfluence).toEqual(['m0', 'm1', 'm2'])
      expect(d.byShare).toEqual(['m0', 'm1', 'm2'])
      expect(d.mattersMost?.id).toBe('m0')
    } finally {
      store.close()
    }
  })
})

describe('on the demo DB', () => {
  let store: SqliteSource
  beforeAll(() => {
    const p = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 1200, seed: 3 }).path
    store = openSource({ path: p, workspacePath: `${p}.ws` })
  })
  afterAll(() => store.close())

  it('drivers of a logged event cover its injected memories in logged order', async () => {
    const ev = store.eventsPage({ limit: 1000 }).rows.find((e) => e.preset === 'fieldguide' && e.results.length >= 3)!
    const d = await eventDrivers(store, ev.id)
    expect(d.identical).toBe(true)
    expect(d.rows.map((r) => r.id)).toEqual(ev.results.map((r) => r.id))
    expect(d.rows.map((r) => r.score)).toEqual(ev.results.map((r) => r.score))
    expect(d.total).toBeCloseTo(
      ev.results.reduce((a, r) => a + r.score, 0),
      12,
    )
    expect(d.mattersMost).not.toBeNull()
    for (const r of d.rows) expect(r.loo.after).not.toContain(r.id)
  })

  it('evidence attribution: shared words per memory, and the hashing cosine of the decision and each stored vector', async () => {
    const evs = store.eventsPage({ limit: 1000 }).rows.filter((e) => e.results.length >= 3 && e.preset === 'fieldguide')
    let checked = 0
    for (const ev of evs.slice(0, 8)) {
      const dec = store.eventExtras(ev.id).decision!
      const text = dec.text ?? `${dec.toolCall!.name} ${dec.toolCall!.arguments}`
      const d = await eventDrivers(store, ev.id)
      const e = d.evidence!
      expect(e.text).toBe(text)
      expect(e.rows.map((r) => r.id)).toEqual(ev.results.map((r) => r.id))
      expect(e.embedder).toMatchObject({ spec: 'hashing', model: HASHING_MODEL, available: true, reason: null })
      const mems = store.getMemories(ev.results.map((r) => r.id))
      const dv = hashEmbed(text)
      for (const r of e.rows) {
        const content = mems.get(r.id)!.content
        // shared words: the decision's content words that the memory has
        const want = [...termSet(text)].filter((t) => termSet(content).has(t)).sort()
        expect(r.shared.map((x) => x.term).sort()).toEqual(want)
        expect(r.token === 0).toBe(want.length === 0)
        // the demo stores hashEmbed(content): the cosine, computed here
        const mv = hashEmbed(content)
        let dot = 0
        let na = 0
        let nb = 0
        for (let i = 0; i < dv.length; i++) {
          dot += dv[i] * mv[i]
          na += dv[i] ** 2
          nb += mv[i] ** 2
        }
        expect(r.embedding).toBeCloseTo(dot / Math.sqrt(na * nb), 5)
        expect(r.embeddingWhy).toBeNull()
      }
      // the decision is written from one of them: some memory shares words with it
      expect(Math.max(...e.rows.map((r) => r.token))).toBeGreaterThan(0)
      checked++
    }
    expect(checked).toBeGreaterThan(3)
  })

  it('timeline bins count every event, by preset; the memory filter matches events.page', async () => {
    const all = store.eventsPage({ limit: 1000 }).rows
    const tl = await eventTimeline(store, { bins: 40 })
    expect(tl.total).toBe(all.length)
    expect(tl.bins.reduce((a, b) => a + b.count, 0)).toBe(all.length)
    expect(tl.bins.length).toBeLessThanOrEqual(41)
    const byPreset: Record<string, number> = {}
    for (const e of all) byPreset[e.preset ?? '(none)'] = (byPreset[e.preset ?? '(none)'] ?? 0) + 1
    const fromBins: Record<string, number> = {}
    for (const b of tl.bins) for (const [k, n] of Object.entries(b.byPreset)) fromBins[k] = (fromBins[k] ?? 0) + n
    expect(fromBins).toEqual(byPreset)
    expect(tl.agents.sort()).toEqual([...new Set(all.map((e) => e.agentId!))].sort())
    const mem = all.find((e) => e.results.length > 0)!.results[0].id
    const withMem = all.filter((e) => e.results.some((r) => r.id === mem)).length
    expect((await eventTimeline(store, { memoryId: mem })).total).toBe(withMem)
    const agent = all[0].agentId!
    expect((await eventTimeline(store, { agentId: agent })).total).toBe(all.filter((e) => e.agentId === agent).length)
  })
})
