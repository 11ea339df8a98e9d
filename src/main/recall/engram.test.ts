/**
 * Seed 002 (Engram `recall`), on a real Engram v0.5 file (JSON-text vectors, raw
 * Ollama-style, not normalised), from the seed's code and docs/internals/recall-systems/engram.md:
 *  - rows of one session, tiers working + long_term by default, role/before/after filters;
 *  - semantic: every scoped row by cosine (no threshold; a row without a usable
 *    embedding stays with similarity 0), first `limit` (default 10);
 *  - embedder down → keyword fallback: words longer than 2 chars, any of them in
 *    LOWER(content), newest first, `limit`;
 *  - userId: up to ceil(limit/2) user memories appended after the session results,
 *    skipping identical content, the whole list cut to `limit`.
 */
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../shared/presets'
import type { RecallConfig } from '../../shared/types'
import { tmpDir } from '../../../test/helpers/tmp'
import { createEmbedder } from '../embed/index'
import { openSource } from '../store/registry'
import type { SqliteSource } from '../store/sqlite/source'
import { runRecall } from './engine'
import { downEmbedder } from '../../../test/helpers/testDb'

let t: ReturnType<typeof tmpDir>
let store: SqliteSource
const T = Date.UTC(2025, 2, 1)
const NOW = T + 86_400_000
const Q = [1, 0, 0]

interface Row {
  id: string
  content: string
  emb: number[] | string | null
  ts: number
  role?: string
  tier?: string
}
const SESSION: Row[] = [
  { id: 'e1', content: 'Deploy the billing service', emb: [2, 0, 0], ts: T + 1000 },
  { id: 'e2', content: 'Other things entirely', emb: [1, 1, 0], ts: T + 2000, role: 'assistant' },
  { id: 'e3', content: 'nothing here', emb: [1, 2, 2], ts: T + 3000 },
  { id: 'e4', content: 'db of stuff', emb: [-1, 1, 0], ts: T + 4000 },
  { id: 'e5', content: 'DEPLOYMENT done', emb: null, ts: T + 5000 }, // embedder was down when written
  { id: 'e6', content: 'x', emb: '[1, 3', ts: T + 6000 }, // JSON that does not parse
  { id: 'e7', content: 'archived deploy', emb: [3, 0, 0], ts: T + 7000, tier: 'archived' },
]
const USER: Row[] = [
  { id: 'u1', content: 'fact A', emb: [1, 0, 0], ts: T + 100 },
  { id: 'u2', content: 'Deploy the billing service', emb: [1, 1, 0], ts: T + 200 },
  { id: 'u3', content: 'fact C', emb: [1, 2, 2], ts: T + 300 },
  { id: 'u4', content: 'fact D', emb: [-1, 0, 0], ts: T + 400 },
]
const cos = (v: number[]) => v[0] / Math.hypot(...v) // against Q = e₁

beforeAll(() => {
  t = tmpDir()
  const p = path.join(t.dir, 'engram.db')
  const db = new Database(p)
  db.exec(`
    CREATE TABLE memories (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, content TEXT NOT NULL,
      role TEXT CHECK(role IN ('user','assistant','system')), timestamp INTEGER NOT NULL, metadata TEXT,
      content_hash TEXT NOT NULL, embedding TEXT, tier TEXT NOT NULL DEFAULT 'working', consolidated_from TEXT);
    CREATE TABLE user_memories (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, content TEXT NOT NULL,
      role TEXT CHECK(role IN ('user','assistant','system')), timestamp INTEGER NOT NULL, metadata TEXT,
      content_hash TEXT NOT NULL, embedding TEXT, tier TEXT NOT NULL DEFAULT 'working', consolidated_from TEXT);`)
  const ins = (table: string, owner: string, r: Row) =>
    db
      .prepare(`INSERT INTO ${table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`)
      .run(
        r.id,
        owner,
        r.content,
        r.role ?? 'user',
        r.ts,
        r.id === 'e1' ? '{"k":1}' : null,
        'h',
        r.emb === null ? null : typeof r.emb === 'string' ? r.emb : JSON.stringify(r.emb),
        r.tier ?? 'working',
      )
  for (const r of SESSION) ins('memories', 'sess-1', r)
  ins('memories', 'sess-2', { id: 'x1', content: 'deploy elsewhere', emb: [5, 0, 0], ts: T })
  for (const r of USER) ins('user_memories', 'u-1', r)
  ins('user_memories', 'u-2', { id: 'y1', content: 'someone else', emb: [1, 0, 0], ts: T })
  db.close()
  store = openSource({ path: p, workspacePath: `${p}.ws` })
})
afterAll(() => {
  store.close()
  t.cleanup()
})

const engram = (patch: Partial<RecallConfig> = {}, scope: Partial<RecallConfig['scope']> = {}): RecallConfig => {
  const base = getPreset('engram').config
  return { ...base, ...patch, scope: { ...base.scope, sessionId: 'sess-1', ...scope } }
}

describe('preset engram (seed 002)', () => {
  it('ranks every scoped row by cosine with no threshold; unembedded rows stay at similarity 0 (newest first)', async () => {
    const trace = await runRecall(store, 'deploy', engram(), NOW, { queryVector: Q })
    expect(store.layout).toBe('engram-v0.5')
    // e7 is archived (tiers default working + long_term), x1 is another session
    expect(trace.results.map((r) => r.id)).toEqual(['e1', 'e2', 'e3', 'e6', 'e5', 'e4'])
    const sim = Object.fromEntries(trace.candidates.map((c) => [c.id, c.similarity]))
    for (const r of SESSION.slice(0, 4)) expect(sim[r.id]).toBeCloseTo(cos(r.emb as number[]), 6)
    expect(trace.results.find((r) => r.id === 'e4')!.score).toBeLessThan(0) // negative cosine is still returned
    expect(trace.degraded).toBe(false)
  })

  it('cuts at `limit` (topK) and honours role / before / after', async () => {
    expect((await runRecall(store, 'deploy', engram({ topK: 4 }), NOW, { queryVector: Q })).results.map((r) => r.id)).toEqual(['e1', 'e2', 'e3', 'e6'])
    expect((await runRecall(store, 'deploy', engram({}, { roles: ['assistant'] }), NOW, { queryVector: Q })).results.map((r) => r.id)).toEqual(['e2'])
    const windowed = await runRecall(store, 'deploy', engram({}, { after: T + 2000, before: T + 4000 }), NOW, { queryVector: Q })
    expect(windowed.results.map((r) => r.id)).toEqual(['e2', 'e3', 'e4'])
    const archived = await runRecall(store, 'deploy', engram({}, { tiers: ['working', 'long_term', 'archived'] }), NOW, { queryVector: Q })
    expect(archived.results[0].id).toBe('e7')
  })

  it('falls back to keywords when the embedder is down: words > 2 chars, substring of LOWER(content), newest first', async () => {
    const trace = await runRecall(store, 'The DEPLOY of db', engram(), NOW, { embedder: downEmbedder('nomic-embed-text') })
    // keywords: "the", "deploy" ("of" and "db" are too short). "Other" contains "the"; "DEPLOYMENT" contains "deploy".
    expect(trace.mode).toBe('keyword')
    expect(trace.results.map((r) => r.id)).toEqual(['e5', 'e2', 'e1'])
    expect(trace.degraded).toBe(true)
    expect(trace.degradedReason).toMatch(/ECONNREFUSED/)
    // Engram prints no similarity after a keyword search
    expect(JSON.parse(trace.context).every((e: Record<string, unknown>) => !('similarity' in e))).toBe(true)
  })

  it('keyword fallback also runs with the `none` embedder, and a query of short words returns the newest rows', async () => {
    const none = createEmbedder('none')
    expect((await runRecall(store, 'of db', engram({ topK: 2 }), NOW, { embedder: none })).results.map((r) => r.id)).toEqual(['e6', 'e5'])
  })

  it('blends up to ceil(limit/2) user memories after the session results, skipping identical content', async () => {
    const trace = await runRecall(store, 'deploy', engram({}, { blendUserId: 'u-1' }), NOW, { queryVector: Q })
    // ceil(10/2) = 5 ≥ 4 user memories; u2 has the same content as e1 → skipped; y1 belongs to another user
    expect(trace.results.map((r) => r.id)).toEqual(['e1', 'e2', 'e3', 'e6', 'e5', 'e4', 'u1', 'u3', 'u4'])
    expect(trace.dropped.find((d) => d.id === 'u2')?.gate).toBe('dedupe')
    const entries = JSON.parse(trace.context) as Record<string, unknown>[]
    expect(entries[6]).toMatchObject({ id: 'u1', sessionId: 'user:u-1', content: 'fact A', metadata: { _userMemory: true, userId: 'u-1' } })
    expect(entries[0]).toMatchObject({
      id: 'e1',
      sessionId: 'sess-1',
      role: 'user',
      tier: 'working',
      metadata: { k: 1 },
      timestamp: new Date(T + 1000).toISOString(),
    })
    expect(entries[0].similarity as number).toBeCloseTo(1, 6)
  })

  it('cuts the blended list to `limit`: 6 session rows + 3 user rows under limit 7 keep one user row', async () => {
    const trace = await runRecall(store, 'deploy', engram({ topK: 7 }, { blendUserId: 'u-1' }), NOW, { queryVector: Q })
    // recallUser(limit = ceil(7/2) = 4) → u1, u2, u3, u4; u2 skipped; 6 + 3 = 9 → first 7
    expect(trace.results.map((r) => r.id)).toEqual(['e1', 'e2', 'e3', 'e6', 'e5', 'e4', 'u1'])
    const gate = Object.fromEntries(trace.dropped.map((d) => [d.id, d.gate]))
    expect(gate).toMatchObject({ u2: 'dedupe', u3: 'topK', u4: 'topK' })
    const full = await runRecall(store, 'deploy', engram({ topK: 4 }, { blendUserId: 'u-1' }), NOW, { queryVector: Q })
    expect(full.results.every((r) => r.id.startsWith('e'))).toBe(true)
  })

  it('ceil(limit/2) caps the user memories taken before dedupe (limit 3 → 2 user rows considered)', async () => {
    const trace = await runRecall(store, 'deploy', engram({ topK: 3 }, { sessionId: 'sess-none', blendUserId: 'u-1' }), NOW, { queryVector: Q })
    // no session rows; recallUser(limit 2) = u1, u2 → both appended (nothing to dedupe against)
    expect(trace.results.map((r) => r.id)).toEqual(['u1', 'u2'])
    expect(trace.dropped.find((d) => d.id === 'u3')?.gate).toBe('topK')
  })
})
