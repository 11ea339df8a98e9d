/**
 * A recall's scope at "now" (`before` = now) is counted and listed once per data version, whatever
 * `now` is, as long as no memory was created after it; the answers are the same rows as the filter
 * with its `before`, counted here on a separate connection. And the content signature (under which
 * the Library's summaries are cached) is read once per data version, yet follows every commit. The age histogram
 * (the decay chart, the Recall screen's exact scope count) is read once per scope, time and data version.
 */
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tmpDir } from '../../../../test/helpers/tmp'
import { buildDb, openDb } from '../../../../test/helpers/testDb'
import { mulberry32 } from '../../../shared/random'
import { contentSignature } from './facts'
import type { SqliteSource } from './source'

const N = 400
const T0 = Date.UTC(2025, 5, 1)

describe('scope memo at "now"', () => {
  const t = tmpDir()
  let file: string
  let store: SqliteSource
  const rnd = mulberry32(11)
  // Random creation times (some NULL: they exist at every moment), tiers and users.
  const rows = Array.from({ length: N }, (_, i) => ({
    id: `m${i}`,
    created_at: rnd() < 0.05 ? (null as unknown as number) : T0 + Math.floor(rnd() * 1e9),
    tier: rnd() < 0.8 ? 'working' : 'archive',
    user_id: `u${i % 7}`,
  }))
  beforeAll(() => {
    file = buildDb(t.dir, { name: 'scope.db', memories: rows })
    store = openDb(file)
  })
  afterAll(() => {
    store.close()
    t.cleanup()
  })

  /** The filter's rows counted on a connection of its own (the test's SQL, not the store's). */
  function expected(before: number, tiers: string[], userId?: string): string[] {
    const db = new Database(file, { readonly: true })
    try {
      const ids = db
        .prepare(
          `SELECT id FROM memories WHERE tier IN (${tiers.map(() => '?').join(',')}) AND (created_at IS NULL OR created_at <= ?) ${userId ? 'AND user_id = ?' : ''} ORDER BY rowid`,
        )
        .pluck()
        .all(...tiers, before, ...(userId ? [userId] : [])) as string[]
      return ids
    } finally {
      db.close()
    }
  }

  it('counts and lists the same rows as the filter with its before, at any now', () => {
    const latest = Math.max(...rows.map((r) => r.created_at ?? 0))
    for (const before of [T0 - 1, T0 + 3e8, T0 + 7e8, latest - 1, latest, latest + 1, latest + 86_400_000]) {
      for (const [tiers, userId] of [
        [['working'], undefined],
        [['working', 'archive'], 'u3'],
      ] as const) {
        const want = expected(before, [...tiers], userId)
        const f = { tiers: [...tiers], userId, before }
        const listed = store.scopeRows(f, N + 1)
        expect([...listed.ids].sort()).toEqual([...want].sort())
        expect(store.countScope(f, N + 1)).toEqual({ count: want.length, capped: false })
        expect(store.countScope(f, 10)).toEqual(want.length > 10 ? { count: 10, capped: true } : { count: want.length, capped: false })
      }
    }
  })

  it('a later now reuses the listing; a memory created after now is left out, then in', () => {
    const latest = Math.max(...rows.map((r) => r.created_at ?? 0))
    const a = store.scopeRows({ tiers: ['working'], before: latest + 5 }, N + 1)
    const b = store.scopeRows({ tiers: ['working'], before: latest + 5000 }, N + 1)
    expect(b).toBe(a) // one listing for both: the same memo entry
    const sig = contentSignature(store)
    expect(contentSignature(store)).toBe(sig)
    // Another connection (the agent) commits a memory created later than `latest`.
    const db = new Database(file)
    try {
      db.prepare(
        `INSERT INTO memories (id, agent_id, user_id, session_id, role, kind, tier, content, salience, created_at, use_count, turn)
         VALUES ('late', 'agent-a', 'u1', 's1', 'user', 'episodic', 'working', 'late memory', 0.5, ?, 0, 0)`,
      ).run(latest + 1000)
    } finally {
      db.close()
    }
    const before = store.scopeRows({ tiers: ['working'], before: latest + 5 }, N + 2)
    expect(before.ids).not.toContain('late')
    expect([...before.ids].sort()).toEqual([...expected(latest + 5, ['working'])].sort())
    const after = store.scopeRows({ tiers: ['working'], before: latest + 1000 }, N + 2)
    expect(after.ids).toContain('late')
    expect(store.countScope({ tiers: ['working'], before: latest + 999 }, N + 2).count).toBe(expected(latest + 999, ['working']).length)
    expect(store.countScope({ tiers: ['working'], before: latest + 1000 }, N + 2).count).toBe(expected(latest + 1000, ['working']).length)
    // The signature follows the commit: one more row.
    const sig2 = contentSignature(store)
    expect(sig2).not.toBe(sig)
    expect(sig2.split('|')[1]).toBe(String(N + 1))
  })

  it('the age histogram: one read per scope, time and data version, its total the filter count', () => {
    const latest = Math.max(...rows.map((r) => r.created_at ?? 0))
    const now = latest + 10_000
    const f = { tiers: ['working'], before: now }
    const a = store.ageHistogram(f, now, 'created', 1)
    expect(store.ageHistogram({ ...f }, now, 'created', 1)).toBe(a) // the memo's entry
    expect(a.total).toBe(expected(now, ['working']).length)
    // another time, bin count or age origin is its own entry
    expect(store.ageHistogram(f, now + 1, 'created', 1)).not.toBe(a)
    expect(store.ageHistogram(f, now, 'created', 30)).not.toBe(a)
    expect(store.ageHistogram(f, now, 'last_used', 1)).not.toBe(a)
    // a commit (another connection) is a new data version: read again, with the new memory in it
    const db = new Database(file)
    try {
      db.prepare(
        `INSERT INTO memories (id, agent_id, user_id, session_id, role, kind, tier, content, salience, created_at, use_count, turn)
         VALUES ('later', 'agent-a', 'u1', 's1', 'user', 'episodic', 'working', 'a later memory', 0.5, ?, 0, 0)`,
      ).run(now - 1)
    } finally {
      db.close()
    }
    const b = store.ageHistogram(f, now, 'created', 1)
    expect(b).not.toBe(a)
    expect(b.total).toBe(a.total + 1)
    expect(b.total).toBe(expected(now, ['working']).length)
  })
})
