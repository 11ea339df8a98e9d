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
import { CanonicalWriter } from '../../src/main/store/sqlite/canonicalWriter'
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

/** `true`, or why the format cannot carry it (the suite then checks the source says so, instead of skipping). */
export type Carried = true | string

/** What a factory built: how to open it, the files to hash, and what its format can carry. */
export interface BuiltSource {
  /** open read-only, with its workspace at `workspacePath` */
  open(workspacePath: string): MemorySource
  /** files whose bytes must not change (empty for a server: its read-only session is tested elsewhere) */
  files: string[]
  carries: {
    /** the agent id survives as the memory's agent (else: a filter by it selects nothing) */
    agent: Carried
    /** the user id survives as the memory's user (else: a filter by it selects nothing) */
    user: Carried
    /** vectors survive (else: the source lists no memory vectors and a dense recall ranks nothing) */
    vectors: Carried
    /** which bad vectors the format can hold (they must be skipped and counted) */
    malformed: ConfBadMemory['problem'][]
    /** the session id survives as the memory's session (else: a filter by it selects nothing) */
    session: Carried
    /** each memory's creation time survives (else the format stamps its own, e.g. the write time: recalls then run at a `now` after the test began) */
    times: Carried
  }
  /** The agent / user value the format stores for a memory when it is not the canonical id (a CrewAI scope path, a LangGraph namespace). */
  scopeOf?: { agent?: (m: ConfMemory) => string; user?: (m: ConfMemory) => string; session?: (m: ConfMemory) => string }
  /** The vector the format holds for a memory when its writer embeds the text itself (mem0 through its embedder); default `m.vector`. */
  vectorOf?: (m: ConfMemory) => number[] | null
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

/** Write memories as a canonical SQLite store (vectors under the model `conf-model`); returns the file. */
export function writeCanonicalStore(file: string, rows: (ConfMemory | ConfBadMemory)[]): string {
  const w = new CanonicalWriter(file, { force: true })
  for (const m of rows) {
    w.memory({
      id: m.id,
      agent_id: m.agent,
      user_id: m.user,
      session_id: m.session,
      role: 'user',
      kind: 'episodic',
      tier: 'working',
      content: m.content,
      summary: null,
      salience: 0.5,
      created_at: m.createdAt,
      last_used_at: null,
      use_count: 0,
      turn: null,
      source: null,
      metadata: null,
    })
    if (m.vector) w.embedding('memory', m.id, 'conf-model', m.vector)
  }
  // canonical sessions are rows of their own table
  for (const id of new Set(rows.map((m) => m.session))) {
    const ms = rows.filter((m) => m.session === id)
    w.session({
      id,
      agent_id: ms[0].agent,
      user_id: ms[0].user,
      tenant_id: null,
      started_at: Math.min(...ms.map((m) => m.createdAt)),
      ended_at: Math.max(...ms.map((m) => m.createdAt)),
      summary: null,
      is_archived: 0,
    })
  }
  w.finish()
  return file
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

/** One sha256 over files and folders (a folder: every file's relative path and bytes, in name order). */
export function hashFiles(files: string[]): string {
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
    /** the recall time: after every memory (a format that stamps its own times stamped them before the suite began) */
    let now = CONF_NOW

    beforeAll(async () => {
      t = tmpDir()
      built = await factory(t.dir, content)
      held = [...content.memories, ...content.bad.filter((b) => built.carries.malformed.includes(b.problem))]
      if (built.carries.times !== true) now = Date.now() + 86_400_000
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

    it('rows by id: every listed id reads back with its content', () => {
      const byId = store.getMemories([...contentOf.keys()])
      expect(byId.size).toBe(held.length)
      for (const [id, text] of contentOf) {
        expect(byId.get(id)?.content.trim()).toBe(text)
        expect(store.getMemory(id)?.content.trim()).toBe(text)
      }
    })

    it('browse search: a word only one memory has finds that memory alone', () => {
      const page = store.memoriesPage({ search: UNIQUE[6], limit: 10 })
      expect(page.rows.map((r) => r.content.trim())).toEqual([content.memories[6].content])
    })

    it('the vector filter: memories with a usable vector have one, the one without has none', () => {
      const vectorOf = built.vectorOf ?? ((m: ConfMemory) => m.vector)
      const withVec = new Set(store.idsWhere({ hasEmbedding: true }).map((id) => contentOf.get(id)))
      const without = new Set(store.idsWhere({ hasEmbedding: false }).map((id) => contentOf.get(id)))
      for (const m of content.memories) {
        const has = built.carries.vectors === true && vectorOf(m) !== null
        expect([m.content, withVec.has(m.content), without.has(m.content)]).toEqual([m.content, has, !has])
      }
    })

    it('sessions: a filter by session selects exactly its memories; the sessions are counted', () => {
      const probe = content.memories[2]
      if (built.carries.session !== true) {
        expect(store.idsWhere({ sessionId: probe.session })).toEqual([])
        return
      }
      const of = built.scopeOf?.session ?? ((m: ConfMemory) => m.session)
      const value = of(probe)
      const want = held.filter((m) => of(m) === value).map((m) => m.content)
      expect(
        store
          .idsWhere({ sessionId: value })
          .map((id) => contentOf.get(id))
          .sort(),
      ).toEqual(want.sort())
      expect(store.counts().sessions).toBe(new Set(held.map(of)).size)
      expect(store.getSession(value)?.id).toBe(value)
    })

    for (const key of ['agent', 'user'] as const) {
      const filterKey = key === 'agent' ? 'agentId' : 'userId'
      // memory 0 is agent-b / user-1, memory 1 agent-a / user-2: each value splits the content
      const probe = content.memories[key === 'agent' ? 0 : 1]
      it(`scope: a filter by ${key} selects exactly the memories with that ${key}`, () => {
        const carried = built.carries[key]
        if (carried !== true) {
          // Not carried: the filter must not pretend (no memory holds the canonical value).
          expect(store.idsWhere({ [filterKey]: probe[key] })).toEqual([])
          expect(store.countWhere({ [filterKey]: probe[key] }).total).toBe(0)
          return
        }
        const of = built.scopeOf?.[key] ?? ((m: ConfMemory) => m[key])
        const value = of(probe)
        const want = held.filter((m) => of(m) === value).map((m) => m.content)
        expect(want.length).toBeGreaterThan(0)
        expect(want.length).toBeLessThan(held.length)
        const got = store.idsWhere({ [filterKey]: value }).map((id) => contentOf.get(id))
        expect(got.sort()).toEqual(want.sort())
        expect(store.countWhere({ [filterKey]: value }).total).toBe(want.length)
        // the facet lists every value once (what the filter menus offer)
        expect([...store.facets()[key === 'agent' ? 'agents' : 'users']].sort()).toEqual([...new Set(held.map(of))].sort())
      })
    }

    it('creation times: each memory keeps its own (when the format carries them)', () => {
      if (built.carries.times !== true) {
        // Not carried: whatever the format stamped is a real time no later than now.
        for (const m of store.getMemories([...idOf.values()]).values()) expect(m.createdAt).toBeLessThanOrEqual(now)
        return
      }
      const byId = store.getMemories([...idOf.values()])
      for (const m of held) expect([m.content, byId.get(idOf.get(m.content)!)?.createdAt]).toEqual([m.content, m.createdAt])
      const times = held.map((m) => m.createdAt)
      expect(store.facets().timeRange).toEqual({ min: Math.min(...times), max: Math.max(...times) })
    })

    it('the age histogram: every memory in its total, each in the bin of its age (computed here)', () => {
      const ages = store.ageHistogram({ before: now }, now, 'created', 30)
      expect(ages.total).toBe(held.length)
      if (built.carries.times !== true) return // ages from the format's own stamps: the total is what is checked
      const want = new Map<number, number>()
      for (const m of held) {
        const b = Math.floor((now - m.createdAt) / ages.binMs)
        want.set(b, (want.get(b) ?? 0) + 1)
      }
      const got = new Map(ages.bins.map((bin, i) => [i, bin.count] as const).filter(([, n]) => n > 0))
      expect(got).toEqual(want)
      expect(ages.bins.length).toBeLessThanOrEqual(31)
    })

    it('the dense top-k equals a cosine ranking computed here', async () => {
      const q = conformanceQuery()
      if (built.carries.vectors !== true) {
        // Not carried: the source says it has no memory vectors, and a dense recall ranks nothing.
        expect(store.capabilities().vectorModels.filter((v) => v.ownerType === 'memory')).toEqual([])
        const tr = await runRecall(store, 'q', denseConfig(), now, { queryVector: q })
        expect(tr.candidates.filter((c) => c.denseRank !== null)).toEqual([])
        return
      }
      const vectorOf = built.vectorOf ?? ((m: ConfMemory) => m.vector)
      const tr = await runRecall(store, 'q', denseConfig(), now, { queryVector: q })
      const want = content.memories
        .map((m) => ({ content: m.content, v: vectorOf(m) }))
        .filter((m) => m.v)
        .map((m) => ({ content: m.content, sim: cosine(m.v!, q) }))
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
      const m = store.facts().malformed
      expect(m.wrongDimension + m.badVectorShape + m.nonFiniteVector).toBe(built.carries.malformed.length)
    })

    it('lexical recall finds the memory with a unique word first', async () => {
      const target = content.memories[4]
      const word = UNIQUE[4]
      const tr = await runRecall(store, word, { ...denseConfig(), mode: 'lexical' }, now, { embedder: null })
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
