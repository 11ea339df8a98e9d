import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSource } from './registry'
import { tmpDir } from '../../../test/helpers/tmp'
import { writeDemoDb } from '../../../test/helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let dbPath: string
beforeAll(() => {
  t = tmpDir()
  dbPath = path.join(t.dir, 'demo.db')
  writeDemoDb(dbPath, { memories: 600 })
})
afterAll(() => t.cleanup())

describe('store basics', () => {
  it('pages memories with a capped count and stable order', () => {
    const s = openSource({ path: dbPath })
    try {
      const p1 = s.memoriesPage({ limit: 10 })
      const p2 = s.memoriesPage({ limit: 10, offset: 10 })
      const direct = new Database(dbPath, { readonly: true })
      const n = direct.prepare('SELECT count(*) FROM memories').pluck().get() as number
      const ids = direct.prepare('SELECT id FROM memories ORDER BY created_at DESC, rowid DESC LIMIT 20').pluck().all()
      direct.close()
      expect(p1.total).toBe(n)
      expect(p1.truncated).toBe(false)
      expect([...p1.rows, ...p2.rows].map((r) => r.id)).toEqual(ids)
    } finally {
      s.close()
    }
  })

  it('caps counts and says so', () => {
    const s = openSource({ path: dbPath, countCap: 100 })
    try {
      const p = s.memoriesPage({ limit: 5, tiers: ['working', 'long_term'] })
      expect(p.truncated).toBe(true)
      expect(p.total).toBe(100)
      // Unfiltered counts are exact even past the cap (count(*) is cheap without a WHERE).
      const all = s.memoriesPage({ limit: 5 })
      expect(all.truncated).toBe(false)
      expect(all.total).toBeGreaterThan(100)
    } finally {
      s.close()
    }
  })

  it('filters by facets and full-text search', () => {
    const s = openSource({ path: dbPath })
    try {
      const sem = s.memoriesPage({ kinds: ['semantic'], limit: 1000 })
      expect(sem.rows.length).toBeGreaterThan(0)
      expect(sem.rows.every((r) => r.kind === 'semantic')).toBe(true)
      const hits = s.memoriesPage({ search: 'rollback', limit: 1000 })
      const direct = new Database(dbPath, { readonly: true })
      const expected = direct.prepare(`SELECT count(*) FROM memories WHERE lower(content) LIKE '%rollback%'`).pluck().get() as number
      direct.close()
      expect(hits.total).toBe(expected)
      expect(hits.rows[0].snippet?.some((x) => x.hit && /rollback/i.test(x.text))).toBe(true)
    } finally {
      s.close()
    }
  })

  it('rejects a missing file and a non-SQLite file with typed errors', () => {
    expect(() => openSource({ path: path.join(t.dir, 'nope.db') })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
    const junk = path.join(t.dir, 'junk.db')
    fs.writeFileSync(junk, 'not a database at all, just text')
    expect(() => openSource({ path: junk })).toThrow(expect.objectContaining({ code: 'NOT_SQLITE' }))
    const other = path.join(t.dir, 'other.db')
    const d = new Database(other)
    d.exec('CREATE TABLE foo (x)')
    d.close()
    expect(() => openSource({ path: other })).toThrow(expect.objectContaining({ code: 'UNKNOWN_LAYOUT' }))
  })
})

describe('memo cache', () => {
  it('serves repeated reads from memory and forgets them when another connection commits', () => {
    const s = openSource({ path: dbPath })
    try {
      const id = s.memoriesPage({ limit: 1 }).rows[0].id
      const first = s.getMemories([id]).get(id)!
      // Same object while nothing changed: no second query.
      expect(s.getMemories([id]).get(id)).toBe(first)
      const w = new Database(dbPath)
      w.prepare('UPDATE memories SET content = ? WHERE id = ?').run('edited by the agent', id)
      w.close()
      expect(s.getMemories([id]).get(id)!.content).toBe('edited by the agent')
      // Put it back for the other tests.
      const w2 = new Database(dbPath)
      w2.prepare('UPDATE memories SET content = ? WHERE id = ?').run(first.content, id)
      w2.close()
    } finally {
      s.close()
    }
  })
})

describe('has a vector', () => {
  it('counts backfilled workspace vectors as vectors (facet and flag)', () => {
    const s = openSource({ path: dbPath })
    try {
      const noVec = s.memoriesPage({ hasEmbedding: false, limit: 1000 })
      // The demo plants wrong-dimension vectors, but every memory has some row in embeddings.
      expect(noVec.total).toBe(0)
      const direct = new Database(dbPath, { readonly: true })
      const id = direct.prepare('SELECT id FROM memories ORDER BY rowid LIMIT 1').pluck().get() as string
      direct.close()
      // A memory whose only vector is in the workspace (as a backfill writes it) still "has a vector".
      s.ws
        .prepare(
          `INSERT INTO ws_embeddings (owner_type, owner_id, model, dim, vector, embedder, created_at) VALUES ('memory', 'ws-only', 'm', 2, x'0000803f00000000', 'test', 0)`,
        )
        .run()
      expect(s.idsWithEmbedding([id, 'ws-only', 'nope'])).toEqual(new Set([id, 'ws-only']))
    } finally {
      s.close()
    }
  })
})
