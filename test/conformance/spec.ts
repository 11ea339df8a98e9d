/**
 * The source conformance suite (after langgraphjs' `libs/checkpoint-validation`): one spec that
 * every memory source runs, given a factory that writes the same canonical content in that
 * source's own format. A source is done when it passes. docs/internals/adding-a-source.md says how
 * to add one.
 *
 * Everything is compared by content text (each format has its own ids) and every expected number
 * is computed here from the canonical content: counts, pages, scope filters, malformed vectors
 * skipped and counted, the dense top-k against a cosine computed in this file, a lexical hit,
 * events, and the store's bytes unchanged after all of it.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runRecall } from '../../src/main/recall/engine'
import type { MemorySource } from '../../src/main/store/source'
import { getPreset } from '../../src/shared/presets'
import { mulberry32 } from '../../src/shared/random'
import type { RecallConfig } from '../../src/shared/types'
import { tmpDir } from '../helpers/tmp'

export const CONF_DIM = 8
export const CONF_T0 = Date.UTC(2026, 2, 1, 9, 0, 0)
export const CONF_NOW = CONF_T0 + 40 * 86_400_000

/** One memory of the canonical content. */
export interface ConfMemory {
  id: string
  agent: string
  user: string
  session: string
  content: string
  createdAt: number
  /** CONF_DIM long, or null for a memory without a vector */
  vector: number[] | null
}

/** A memory whose vector is bad: another length, or a NaN in it. */
export interface ConfBadMemory extends Omit<ConfMemory, 'vector'> {
  problem: 'wrongDimension' | 'nan'
  vector: number[]
}

export interface ConfContent {
  memories: ConfMemory[]
  bad: ConfBadMemory[]
}

/** What a factory built: how to open it, the files to hash, and what its format can carry. */
export interface BuiltSource {
  /** open read-only, with its workspace at `workspacePath` */
  open(workspacePath: string): MemorySource
  /** files whose bytes must not change (empty for a server: its read-only session is tested elsewhere) */
  files: string[]
  carries: {
    /** agent and user ids survive (else scope filters are not checked) */
    scope: boolean
    /** vectors survive (else the dense checks are skipped) */
    vectors: boolean
    /** which bad vectors the format can hold (they must be skipped and counted) */
    malformed: ConfBadMemory['problem'][]
  }
}

export type SourceFactory = (dir: string, content: ConfContent) => BuiltSource | Promise<BuiltSource>

/** A word per memory that no other memory has, for the lexical check. */
const UNIQUE = ['saxophone', 'glacier', 'tangerine', 'lighthouse', 'origami', 'volcano', 'harmonica', 'quarry', 'meadow', 'zeppelin', 'walrus', 'cathedral']
const COMMON = ['coffee', 'paris', 'budget', 'garden']

/** mulberry32 (src/shared/random.ts): the same content on every run. */
const rng = mulberry32

/** Round to float32, so every format (float32 BLOB, JSON, pgvector) holds the same numbers. */
const f32 = (v: number[]) => Array.from(new Float32Array(v))

/** The canonical content: 12 memories (two agents, two users, three sessions; one without a vector) and the bad vectors. */
export function conformanceContent(): ConfContent {
  const r = rng(11)
  const memories: ConfMemory[] = UNIQUE.map((word, i) => ({
    id: `conf-${String(i).padStart(2, '0')}`,
    agent: i % 3 === 0 ? 'agent-b' : 'agent-a',
    user: i % 2 === 0 ? 'user-1' : 'user-2',
    session: `sess-${i % 3}`,
    content: `note ${i}: the ${word} and ${COMMON[i % COMMON.length]}`,
    createdAt: CONF_T0 + i * 3_600_000,
    vector: i === 7 ? null : f32(Array.from({ length: CONF_DIM }, () => r() * 2 - 1)),
  }))
  const bad: ConfBadMemory[] = [
    { ...memories[0], id: 'conf-bad-dim', content: 'bad vector: another length', problem: 'wrongDimension', vector: [0.5, 0.5, 0.5] },
    {
      ...memories[1],
      id: 'conf-bad-nan',
      content: 'bad vector: not a number',
      problem: 'nan',
      vector: Array.from({ length: CONF_DIM }, (_, i) => (i === 2 ? Number.NaN : 0.25)),
    },
  ]
  return { memories, bad }
}

/** The query of the dense check (seeded, dense, so no ties). */
export function conformanceQuery(): number[] {
  const r = rng(99)
  return f32(Array.from({ length: CONF_DIM }, () => r() * 2 - 1))
}

/** Cosine, computed here (independent of the engine). */
function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0
  let aa = 0
  let bb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i]
    aa += a[i] * a[i]
    bb += b[i] * b[i]
  }
  return dot / Math.sqrt(aa * bb)
}

function hashFiles(files: string[]): string {
  const h = crypto.createHash('sha256')
  for (const f of files) {
    const st = fs.statSync(f)
    if (st.isDirectory()) {
      for (const e of fs.readdirSync(f, { recursive: true, withFileTypes: true }).sort((x, y) => x.name.localeCompare(y.name))) {
        const p = path.join(e.parentPath, e.name)
        if (e.isFile()) h.update(`${path.relative(f, p)}\u0000`).update(fs.readFileSync(p))
      }
    } else h.update(fs.readFileSync(f))
  }
  return h.digest('hex')
}

function denseConfig(): RecallConfig {
  return { ...getPreset('fieldguide').config, mode: 'dense', topK: 5, candidatePool: 30, minSimilarity: null, floor: null, tokenBudget: null }
}

/**
 * Run the conformance spec against one source. `factory` writes `conformanceContent()` in the
 * source's own format under a fresh folder.
 */
export function describeSourceConformance(name: string, factory: SourceFactory, opts: { timeoutMs?: number } = {}): void {
  describe(`source conformance: ${name}`, () => {
    const content = conformanceContent()
    const all = [...content.memories, ...content.bad]
    let t: ReturnType<typeof tmpDir>
    let built: BuiltSource
    let store: MemorySource
    let before: string
    /** content → the source's id */
    const idOf = new Map<string, string>()
    const contentOf = new Map<string, string>()
    /** which canonical memories this source holds (a bad vector a format cannot carry is left out) */
    let held: (ConfMemory | ConfBadMemory)[]

    beforeAll(async () => {
      t = tmpDir()
      built = await factory(t.dir, content)
      held = [...content.memories, ...content.bad.filter((b) => built.carries.malformed.includes(b.problem))]
      before = hashFiles(built.files)
      store = built.open(path.join(t.dir, 'conformance.recallscope'))
      for (const row of store.memoriesPage({ limit: 1000 }).rows) {
        idOf.set(row.content.trim(), row.id)
        contentOf.set(row.id, row.content.trim())
      }
    }, opts.timeoutMs ?? 120_000)

    afterAll(() => {
      store?.close()
      t?.cleanup()
    })

    it('counts every memory once', () => {
      expect(store.counts().memories).toBe(held.length)
      expect([...idOf.keys()].sort()).toEqual(held.map((m) => m.content).sort())
    })

    it('pages cover every memory exactly once, in a stable order', () => {
      const seen: string[] = []
      for (let offset = 0; offset < held.length + 3; offset += 3) seen.push(...store.memoriesPage({ offset, limit: 3 }).rows.map((r) => r.id))
      expect(seen.length).toBe(held.length)
      expect(new Set(seen).size).toBe(held.length)
      expect(store.memoriesPage({ offset: 0, limit: 3 }).total).toBe(held.length)
    })

    it('scope filters (agent, user) select exactly the memories with that id', () => {
      if (!built.carries.scope) return
      for (const [key, value] of [
        ['agentId', 'agent-b'],
        ['userId', 'user-2'],
      ] as const) {
        const want = held.filter((m) => (key === 'agentId' ? m.agent : m.user) === value).map((m) => m.content)
        const got = store.idsWhere({ [key]: value }).map((id) => contentOf.get(id))
        expect(got.sort()).toEqual(want.sort())
        expect(store.countWhere({ [key]: value }).total).toBe(want.length)
      }
    })

    it('the dense top-k equals a cosine ranking computed here', async () => {
      if (!built.carries.vectors) return
      const q = conformanceQuery()
      const tr = await runRecall(store, 'q', denseConfig(), CONF_NOW, { queryVector: q })
      const want = content.memories
        .filter((m) => m.vector)
        .map((m) => ({ content: m.content, sim: cosine(m.vector!, q) }))
        .sort((a, b) => b.sim - a.sim)
      const got = tr.candidates
        .filter((c) => c.denseRank !== null)
        .sort((a, b) => a.denseRank! - b.denseRank!)
        .map((c) => ({ content: contentOf.get(c.id), sim: c.similarity }))
      expect(got.map((g) => g.content)).toEqual(want.map((w) => w.content))
      got.forEach((g, i) => expect(g.sim).toBeCloseTo(want[i].sim, 5))
      expect(tr.results.length).toBe(5)
    })

    // After the dense recall: NaN/Infinity show only once a model's vectors are loaded (SQL sees the shape alone).
    it('malformed vectors are skipped and counted, never fatal', () => {
      if (!built.carries.vectors) return
      const m = store.facts().malformed
      const expected = built.carries.malformed.length
      expect(m.wrongDimension + m.badVectorShape + m.nonFiniteVector).toBe(expected)
    })

    it('lexical recall finds the memory with a unique word first', async () => {
      const target = content.memories[4]
      const word = UNIQUE[4]
      const tr = await runRecall(store, word, { ...denseConfig(), mode: 'lexical' }, CONF_NOW, { embedder: null })
      expect(tr.results.length).toBeGreaterThan(0)
      expect(contentOf.get(tr.results[0].id)).toBe(target.content)
    })

    it('events: the log is empty (the content logs no recalls)', () => {
      const page = store.eventsPage({ limit: 10 })
      expect(page.total).toBe(0)
      expect(page.rows).toEqual([])
    })

    it('read-only: the store bytes are unchanged after all of the above', () => {
      store.close()
      expect(hashFiles(built.files)).toBe(before)
      store = built.open(path.join(t.dir, 'conformance.recallscope'))
      expect(store.counts().memories).toBe(held.length)
    })

    // All the canonical memories must be present (a source never drops a good row).
    it('keeps every good memory', () => {
      for (const m of all.filter((x) => !('problem' in x))) expect(idOf.has(m.content)).toBe(true)
    })
  })
}
