/**
 * mem0 opened in place: the TypeScript OSS files written by the real `mem0ai` client, and
 * Python's history.db from its DDL. Expected values come from the raw files (read here with
 * plain SQL) and from cosine computed here, never from the adapter's own output.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../../../shared/presets'
import type { RecallConfig } from '../../../../shared/types'
import { main } from '../../../cli/index'
import { runRecall } from '../../../recall/engine'
import { openSource } from '../../registry'
import { fakeUnitVector } from '../../../../../test/helpers/fakeOllama'
import {
  createMem0PyHistory,
  createMem0TsFixture,
  MEM0_DIM,
  searchMem0,
  type Mem0PyFixture,
  type Mem0TsFixture,
} from '../../../../../test/helpers/frameworks/mem0'
import { sha256File, tmpDir } from '../../../../../test/helpers/tmp'

let t: ReturnType<typeof tmpDir>
let ts: Mem0TsFixture
let py: Mem0PyFixture

beforeAll(async () => {
  t = tmpDir()
  ts = await createMem0TsFixture(path.join(t.dir, 'ts'))
  fs.mkdirSync(path.join(t.dir, 'py'))
  py = createMem0PyHistory(path.join(t.dir, 'py', 'history.db'))
})
afterAll(() => t.cleanup())

/** The raw vector store rows, read with plain SQL. */
function rawVectors(file: string): { id: string; vector: number[]; payload: Record<string, unknown> }[] {
  const db = new Database(file, { readonly: true })
  try {
    return (db.prepare(`SELECT id, vector, payload FROM vectors`).all() as { id: string; vector: Buffer; payload: string }[]).map((r) => ({
      id: r.id,
      vector: Array.from(new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength))),
      payload: JSON.parse(r.payload) as Record<string, unknown>,
    }))
  } finally {
    db.close()
  }
}

function cosine(a: number[], b: number[]): number {
  let d = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return d / Math.sqrt(na * nb)
}

/** sha256 of every agent file in a folder (the workspace files recallscope writes beside them, `*.recallscope*`, are ours). */
function hashFolder(dir: string): Map<string, string> {
  return new Map(
    fs
      .readdirSync(dir)
      .filter((n) => fs.statSync(path.join(dir, n)).isFile() && !n.includes('.recallscope'))
      .map((n) => [n, sha256File(path.join(dir, n))]),
  )
}

const withUser = (cfg: RecallConfig, userId: string): RecallConfig => ({ ...cfg, scope: { ...cfg.scope, userId } })

describe('mem0 TypeScript OSS (vector_store.db + memory.db, written by mem0ai)', () => {
  it('detects the layout from either file or the folder, finds the sibling, and says why', () => {
    for (const p of [ts.vectorPath, ts.historyPath, ts.dir]) {
      const s = openSource({ path: p })
      try {
        const f = s.facts()
        expect(f.layout).toBe('mem0')
        expect(f.detectedBecause).toMatch(/vectors\(id, vector, payload\)/)
        expect(f.detectedBecause).toMatch(/memory_history/)
        // the sibling is named: the history file from the vector store, and the other way round
        expect(f.detectedBecause).toContain(p === ts.historyPath ? 'vector_store.db' : 'memory.db')
        expect(f.readOnly).toBe(true)
      } finally {
        s.close()
      }
    }
  })

  it('counts memories, sessions (run_id) and vectors (labelled mem0:<dim>) from the raw files', () => {
    const raw = rawVectors(ts.vectorPath)
    const s = openSource({ path: ts.vectorPath })
    try {
      const f = s.facts()
      expect(f.counts.memories).toBe(raw.length)
      expect(raw.length).toBe(Object.keys(ts.current).length)
      const runs = new Set(raw.map((r) => r.payload.run_id).filter((x) => x !== undefined))
      expect(f.counts.sessions).toBe(runs.size)
      expect(f.models).toEqual([{ model: `mem0:${MEM0_DIM}`, ownerType: 'memory', dim: MEM0_DIM, count: raw.length, malformed: 0, badShape: 0 }])
      const users = new Map<string, number>()
      for (const r of raw) users.set(String(r.payload.user_id), (users.get(String(r.payload.user_id)) ?? 0) + 1)
      expect(new Map(f.byUser.map((x) => [x.key, x.count]))).toEqual(users)
    } finally {
      s.close()
    }
  })

  it('browses memories with payload keys mapped to canonical fields and the history timeline in metadata', () => {
    const raw = rawVectors(ts.vectorPath)
    const s = openSource({ path: ts.dir })
    try {
      const page = s.memoriesPage({ limit: 100 })
      const ms = (p: Record<string, unknown>) => Date.parse(String(p.createdAt))
      expect(page.rows.map((r) => r.id)).toEqual([...raw].sort((a, b) => ms(b.payload) - ms(a.payload)).map((r) => r.id))
      for (const r of raw) {
        const m = page.rows.find((x) => x.id === r.id)!
        expect(m.content).toBe(r.payload.data)
        expect(m.userId).toBe(r.payload.user_id)
        expect(m.agentId).toBe(r.payload.agent_id ?? null)
        expect(m.sessionId).toBe(r.payload.run_id ?? null)
        expect(m.createdAt).toBe(ms(r.payload))
        expect(m.kind).toBe('semantic')
        expect(m.hasEmbedding).toBe(true)
        const meta = m.metadata as Record<string, unknown>
        expect(meta.hash).toBe(r.payload.hash)
        expect(meta.data).toBeUndefined()
      }
      expect(page.rows.map((r) => r.id)).not.toContain(ts.deleted[0])
      const updated = page.rows.find((x) => x.id === ts.ids[ts.updated.label])!
      expect(updated.content).toBe(ts.updated.after)
      const history = (updated.metadata as { history: { event: string; old_memory: string | null; new_memory: string }[] }).history
      expect(history.map((h) => h.event)).toEqual(['ADD', 'UPDATE'])
      expect(history[1].old_memory).toBe(ts.updated.before)
      // scope filters work on the mapped fields
      expect(s.memoriesPage({ userId: 'bob', limit: 100 }).total).toBe(Object.values(ts.current).filter((c) => c.userId === 'bob').length)
    } finally {
      s.close()
    }
  })

  it("preset mem0:semantic reproduces Memory.search's semantic path: cosine ≥ 0.1, best first, top 20, in the user's scope", async () => {
    const raw = rawVectors(ts.vectorPath)
    const query = 'what milk does she take'
    const q = fakeUnitVector(query, MEM0_DIM)
    const expected = raw
      .filter((r) => r.payload.user_id === 'alice')
      .map((r) => ({ id: r.id, score: cosine(q, r.vector) }))
      .filter((r) => r.score >= 0.1)
      .sort((a, b) => b.score - a.score)
      .slice(0, 20)
    const below = raw.filter((r) => r.payload.user_id === 'alice' && cosine(q, r.vector) < 0.1).map((r) => r.id)
    // the fixture exercises both sides of the threshold
    expect(expected.length).toBeGreaterThan(1)
    expect(below.length).toBeGreaterThan(0)
    const s = openSource({ path: ts.vectorPath })
    try {
      const trace = await runRecall(s, query, withUser(getPreset('mem0:semantic').config, 'alice'), Date.now() + 60_000, { queryVector: q })
      expect(trace.results.map((r) => r.id)).toEqual(expected.map((r) => r.id))
      trace.results.forEach((r, i) => expect(r.score).toBeCloseTo(expected[i].score, 5))
      for (const id of below) expect(trace.dropped.find((d) => d.id === id)?.gate).toBe('minSimilarity')
    } finally {
      s.close()
    }
  })

  it('preset mem0 (hybrid) scores (cosine + keyword) / 2 when one memory matches the keyword, cosine / 2 otherwise', async () => {
    const raw = rawVectors(ts.vectorPath)
    const query = 'Lisbon'
    const q = fakeUnitVector(query, MEM0_DIM)
    const hit = raw.find((r) => String(r.payload.data).includes('Lisbon'))!
    // One lexical match: normalised by the best match it is 1; maxPossible = 2.
    const expected = raw
      .filter((r) => r.payload.user_id === 'alice')
      .map((r) => ({ id: r.id, cos: cosine(q, r.vector) }))
      .filter((r) => r.cos >= 0.1)
      .map((r) => ({ id: r.id, score: (r.cos + (r.id === hit.id ? 1 : 0)) / 2 }))
      .sort((a, b) => b.score - a.score)
    const s = openSource({ path: ts.vectorPath })
    try {
      const trace = await runRecall(s, query, withUser(getPreset('mem0').config, 'alice'), Date.now() + 60_000, { queryVector: q })
      expect(trace.results.map((r) => r.id)).toEqual(expected.map((r) => r.id))
      trace.results.forEach((r, i) => expect(r.score).toBeCloseTo(expected[i].score, 5))
    } finally {
      s.close()
    }
  })

  it('loads vectors through the bulk connection too, with the sibling attached there', async () => {
    // Opened from the history file: the vectors live in the sibling vector_store.db.
    const s = openSource({ path: ts.historyPath, vectorLoad: { bulkMinRows: 1 } })
    try {
      const idx = s.vectors(`mem0:${MEM0_DIM}`)
      expect(idx.count).toBe(rawVectors(ts.vectorPath).length)
    } finally {
      s.close()
    }
  })

  it("agrees with mem0's own Memory.search (explain) where the engine can express it, and shows where it cannot", async () => {
    const [none, milk, lis] = await searchMem0(ts, [
      { query: 'xylophone', userId: 'alice' },
      { query: 'what milk does she take', userId: 'alice' },
      { query: 'Lisbon', userId: 'alice' },
    ])
    const s = openSource({ path: ts.vectorPath })
    const now = Date.now() + 60_000
    const recall = async (preset: string, query: string) =>
      (await runRecall(s, query, withUser(getPreset(preset).config, 'alice'), now, { queryVector: fakeUnitVector(query, MEM0_DIM) })).results
    try {
      // No keyword or entity hit: maxPossible = 1, the score is the cosine — mem0:semantic, exactly.
      expect(none.every((h) => h.score_details.maxPossibleScore === 1 && h.score_details.bm25Score === 0)).toBe(true)
      const sem = await recall('mem0:semantic', 'xylophone')
      expect(sem.map((r) => r.id)).toEqual(none.map((h) => h.id))
      sem.forEach((r, i) => expect(r.score).toBeCloseTo(none[i].score, 5))
      // A keyword hit on a memory below the threshold: mem0 still divides by 2 — the mem0 preset, exactly.
      expect(milk.every((h) => h.score_details.maxPossibleScore === 2 && h.score_details.bm25Score === 0)).toBe(true)
      const hyb = await recall('mem0', 'what milk does she take')
      expect(hyb.map((r) => r.id)).toEqual(milk.map((h) => h.id))
      hyb.forEach((r, i) => expect(r.score).toBeCloseTo(milk[i].score, 5))
      // A keyword hit that survives: the same order, the same semantic part, but mem0's sigmoid BM25
      // (midpoint 5, steepness 0.7 for a one-term query) is small where the engine's max-normalised bm25 is 1.
      const ours = await recall('mem0', 'Lisbon')
      expect(ours.map((r) => r.id)).toEqual(lis.map((h) => h.id))
      const hit = lis.find((h) => h.score_details.bm25Score > 0)!
      expect(hit.score_details.bm25Score).toBeLessThan(0.5)
      const mine = ours.find((r) => r.id === hit.id)!
      expect(mine.features.similarity).toBeCloseTo(hit.score_details.semanticScore, 5)
      expect(mine.features.lexical).toBe(1)
      for (const h of lis.filter((x) => x.score_details.bm25Score === 0)) expect(ours.find((r) => r.id === h.id)!.score).toBeCloseTo(h.score, 5)
    } finally {
      s.close()
    }
  })

  it('works through the CLI on the folder: recall with the preset and an explicit query vector', async () => {
    const raw = rawVectors(ts.vectorPath)
    const query = 'green tea'
    const q = fakeUnitVector(query, MEM0_DIM)
    const expected = raw
      .filter((r) => r.payload.user_id === 'alice')
      .map((r) => ({ id: r.id, score: cosine(q, r.vector) }))
      .filter((r) => r.score >= 0.1)
      .sort((a, b) => b.score - a.score)
      .map((r) => r.id)
    let out = ''
    const code = await main(
      ['recall', '--db', ts.dir, '--preset', 'mem0:semantic', '--user', 'alice', '--query', query, '--query-vector', JSON.stringify(q), '--json'],
      {
        out: (x) => (out += x),
        err: () => undefined,
      },
    )
    expect(code).toBe(0)
    expect((JSON.parse(out) as { results: { id: string }[] }).results.map((r) => r.id)).toEqual(expected)
  })

  it('leaves every file of the folder byte-identical after a full session', async () => {
    const before = hashFolder(ts.dir)
    for (const p of [ts.vectorPath, ts.historyPath, ts.dir]) {
      const s = openSource({ path: p })
      s.facts()
      s.facets()
      s.memoriesPage({ limit: 50, search: 'coffee' })
      s.sessionsPage({})
      await runRecall(s, 'coffee', withUser(getPreset('mem0').config, 'alice'), Date.now(), { queryVector: fakeUnitVector('coffee', MEM0_DIM) })
      s.close()
    }
    expect([...before.keys()].sort()).toEqual(['memory.db', 'vector_store.db', 'vector_store_entities.db'])
    expect(hashFolder(ts.dir)).toEqual(before)
  })
})

describe('mem0 Python OSS history.db (replayed)', () => {
  it('detects the history layout and replays ADD/UPDATE/DELETE into current memories', () => {
    const s = openSource({ path: py.path })
    try {
      const f = s.facts()
      expect(f.layout).toBe('mem0-history')
      expect(f.detectedBecause).toMatch(/history\(memory_id, old_memory, new_memory, event\)/)
      expect(f.counts.memories).toBe(py.current.size + py.messages.length)
      expect(f.counts.embeddings).toBe(0)
      const page = s.memoriesPage({ limit: 100, kinds: ['semantic'] })
      expect(new Set(page.rows.map((r) => r.id))).toEqual(new Set(py.current.keys()))
      for (const [id, c] of py.current) {
        const m = page.rows.find((r) => r.id === id)!
        expect(m.content).toBe(c.text)
        expect(m.role).toBe(c.role)
        // isoformat() with microseconds and an offset → epoch ms
        const [, date, time, frac, off] = /^(.*)T(\d\d:\d\d:\d\d)\.(\d+)([+-]\d\d:\d\d)$/.exec(c.createdAt)!
        expect(m.createdAt).toBe(Date.parse(`${date}T${time}.${frac.slice(0, 3)}${off}`))
        expect((m.metadata as { history: { event: string }[] }).history.map((h) => h.event)).toEqual(py.events.get(id))
      }
      for (const id of py.deleted) expect(page.rows.map((r) => r.id)).not.toContain(id)
      const msgs = s.memoriesPage({ limit: 100, kinds: ['episodic'] })
      expect(msgs.rows.map((r) => [r.content, r.role, r.sessionId])).toEqual(
        [...py.messages].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt)).map((m) => [m.content, m.role, m.scope]),
      )
    } finally {
      s.close()
    }
  })

  it('recalls lexically over the replayed memories and leaves the file unchanged', async () => {
    const before = sha256File(py.path)
    const s = openSource({ path: path.dirname(py.path) })
    try {
      const cfg: RecallConfig = {
        ...getPreset('mem0').config,
        mode: 'lexical',
        minSimilarity: null,
        weights: { similarity: 0, lexical: 1, recency: 0, salience: 0 },
      }
      const trace = await runRecall(s, 'jazz', cfg, Date.parse('2025-04-01T00:00:00Z'))
      const expected = [...py.current].filter(([, c]) => /jazz/i.test(c.text)).map(([id]) => id)
      expect(trace.results.map((r) => r.id)).toEqual(expected)
      s.facts()
      s.sessionsPage({})
    } finally {
      s.close()
    }
    expect(sha256File(py.path)).toBe(before)
  })
})
