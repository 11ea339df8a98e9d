/**
 * Opening an Engram file directly (no import): all three historic layouts, the
 * malformed rows they carry, and the promise that the agent's file is never
 * written (docs/internals/design.md "Non-negotiables": bytes unchanged after a full session).
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSource } from '../src/main/store/registry'

import { createEngramFixture, validVectorIds, type EngramFixture, type EngramVersion } from './helpers/engramFixture'
import { sha256File, tmpDir } from './helpers/tmp'

const VERSIONS: EngramVersion[] = ['v0.2', 'v0.5', 'v1.0']
let t: ReturnType<typeof tmpDir>
const fixtures = new Map<EngramVersion, EngramFixture>()

beforeAll(() => {
  t = tmpDir()
  for (const v of VERSIONS) {
    const dir = path.join(t.dir, v)
    fs.mkdirSync(dir)
    fixtures.set(v, createEngramFixture(path.join(dir, 'engram.db'), v))
  }
})
afterAll(() => t.cleanup())

function countBy<T>(xs: T[], key: (x: T) => string): Map<string, number> {
  const m = new Map<string, number>()
  for (const x of xs) m.set(key(x), (m.get(key(x)) ?? 0) + 1)
  return m
}

describe.each(VERSIONS)("Engram's three layouts: %s opened directly", (version) => {
  it('detects the layout and counts memories, sessions, tiers, users and malformed rows from the raw file', () => {
    const f = fixtures.get(version)!
    const s = openSource({ path: f.path })
    try {
      const facts = s.facts()
      expect(facts.layout).toBe(f.layout)
      expect(facts.readOnly).toBe(true)
      expect(facts.counts.memories).toBe(f.rows.length)
      expect(facts.counts.sessions).toBe(f.sessions.length)
      expect(facts.counts.embeddings).toBe(f.rows.filter((r) => r.embedding !== null).length)
      expect(facts.malformed.badMetadata).toBe(f.planted.badMetadata.length)
      expect(facts.malformed.unknownRole).toBe(f.planted.unknownRole.length)
      // v0.2 has no tier column: everything is working memory.
      const tiers = countBy(f.rows, (r) => r.tier ?? 'working')
      expect(new Map(facts.byTier.map((x) => [x.key, x.count]))).toEqual(tiers)
      const users = countBy(f.rows, (r) => r.userId ?? '(none)')
      expect(new Map(facts.byUser.map((x) => [x.key, x.count]))).toEqual(users)
      // Shape problems are visible from SQL alone: unparseable JSON and other lengths.
      expect(facts.models).toEqual([
        {
          model: 'nomic-embed-text',
          ownerType: 'memory',
          dim: f.dim,
          count: f.rows.filter((r) => r.embedding !== null).length,
          malformed: f.planted.badJsonEmbedding.length + f.planted.wrongDimension.length,
          badShape: f.planted.badJsonEmbedding.length,
        },
      ])
      expect(facts.malformed.badVectorShape).toBe(f.planted.badJsonEmbedding.length)
      expect(facts.malformed.wrongDimension).toBe(f.planted.wrongDimension.length)
    } finally {
      s.close()
    }
  })

  it('loads the JSON vectors under nomic-embed-text, skipping and counting malformed ones', () => {
    const f = fixtures.get(version)!
    const s = openSource({ path: f.path })
    try {
      const idx = s.vectors('nomic-embed-text')
      expect(idx.dim).toBe(f.dim)
      expect([...idx.ids].sort()).toEqual(validVectorIds(f).sort())
      expect(idx.malformed).toEqual({
        badVectorShape: f.planted.badJsonEmbedding.length + f.planted.stringEntry.length,
        nonFiniteVector: f.planted.nullEntry.length,
        wrongDimension: f.planted.wrongDimension.length,
      })
      // Stored vectors are not normalised (Ollama's legacy endpoint); the index is.
      const raw = JSON.parse(f.rows.find((r) => r.id === 'm-00')!.embedding!) as number[]
      const norm = Math.hypot(...raw)
      const unit = idx.get('m-00')!
      raw.forEach((x, i) => expect(unit[i]).toBeCloseTo(x / norm, 5))
      // Once loaded, every vector problem shows in the facts.
      const m = s.facts().malformed
      const planted = f.planted.badJsonEmbedding.length + f.planted.stringEntry.length + f.planted.nullEntry.length + f.planted.wrongDimension.length
      expect(m.nonFiniteVector).toBe(f.planted.nullEntry.length)
      expect(m.badVectorShape + m.nonFiniteVector + m.wrongDimension).toBe(planted)
    } finally {
      s.close()
    }
  })

  it('pages memories with canonical fields, user facts without a session, malformed fields nulled', () => {
    const f = fixtures.get(version)!
    const s = openSource({ path: f.path })
    try {
      const page = s.memoriesPage({ limit: 1000 })
      expect(page.total).toBe(f.rows.length)
      const expectedOrder = [...f.rows].sort((a, b) => b.timestamp - a.timestamp).map((r) => r.id)
      expect(page.rows.map((r) => r.id)).toEqual(expectedOrder)
      const byId = new Map(page.rows.map((r) => [r.id, r]))
      for (const r of f.rows) {
        const m = byId.get(r.id)!
        expect(m.content).toBe(r.content)
        expect(m.createdAt).toBe(r.timestamp)
        expect(m.sessionId).toBe(r.sessionId)
        expect(m.userId).toBe(r.userId)
        expect(m.role).toBe(f.planted.unknownRole.includes(r.id) ? null : r.role)
        expect(m.metadata).toEqual(f.planted.badMetadata.includes(r.id) ? null : JSON.parse(r.metadata!))
        expect(m.hasEmbedding).toBe(r.embedding !== null)
        if (r.v1) {
          expect(m.salience).toBe(Math.min(1, r.v1.importance))
          expect(m.useCount).toBe(r.v1.reinforcementCount)
          expect(m.kind).toBe(['episodic', 'semantic', 'procedural', 'reflection'].includes(r.v1.memoryType) ? r.v1.memoryType : 'episodic')
        } else {
          expect(m.kind).toBe('episodic')
          expect(m.salience).toBeNull()
        }
      }
      const userFacts = s.memoriesPage({ noSession: true, limit: 100 })
      expect(userFacts.rows.map((r) => r.id).sort()).toEqual(f.rows.filter((r) => r.table === 'user_memories').map((r) => r.id))
      if (version !== 'v0.2') {
        expect(s.memoriesPage({ tiers: ['archived'] }).rows.map((r) => r.id)).toEqual(f.rows.filter((r) => r.tier === 'archived').map((r) => r.id))
        const sessions = s.sessionsPage({ limit: 10 })
        expect(sessions.rows.map((x) => x.id).sort()).toEqual([...f.sessions].sort())
        expect(sessions.rows.find((x) => x.id === 's-alpha')!.memoryCount).toBe(f.rows.filter((r) => r.sessionId === 's-alpha').length)
      }
    } finally {
      s.close()
    }
  })

  it('searches lexically through the workspace FTS (contentless, beside the file)', () => {
    const f = fixtures.get(version)!
    const s = openSource({ path: f.path })
    try {
      expect(s.workspacePath).toBe(`${f.path}.recallscope`)
      expect(s.lexicalPass({ text: f.uniqueWord.word, filter: {}, limit: 10 }).hits.map((r) => r.id)).toEqual([f.uniqueWord.id])
      const hit = s.memoriesPage({ search: 'webhook backoff' })
      expect(hit.rows[0].id).toBe(f.rows.find((r) => r.content.includes('webhook'))!.id)
      if (version !== 'v0.2') {
        // user_memories rows live at odd _rids: they must be found too.
        expect(s.lexicalPass({ text: 'Lisbon', filter: {}, limit: 10 }).hits.map((r) => r.id)).toEqual(['u-00'])
        expect(s.lexicalPass({ text: 'release manager', filter: { userId: 'ben' }, limit: 10 }).hits[0].id).toBe('u-02')
      }
      expect(s.facts().hasFts).toBe('workspace')
      // Contentless: the workspace holds the index, not a copy of the agent's text.
      const contentTables = s.ws.prepare(`SELECT count(*) FROM sqlite_master WHERE name = 'ws_fts_content'`).pluck().get() as number
      expect(contentTables).toBe(0)
    } finally {
      s.close()
    }
  })
})

describe('read-only bytes: a full session over an Engram file leaves it byte-identical', () => {
  it.each(VERSIONS)('%s', (version) => {
    const f = fixtures.get(version)!
    const dir = path.dirname(f.path)
    const before = sha256File(f.path)
    const mtime = fs.statSync(f.path).mtimeMs
    const filesBefore = new Set(fs.readdirSync(dir))
    for (let round = 0; round < 2; round++) {
      const s = openSource({ path: f.path })
      try {
        s.facts()
        s.facets()
        s.memoriesPage({ limit: 5 })
        s.memoriesPage({ limit: 5, offset: 5, sort: 'salience', dir: 'asc' })
        s.memoriesPage({ search: 'deploy migration', hasEmbedding: true })
        s.sessionsPage({})
        s.getMemories(f.rows.map((r) => r.id))
        s.getSession('s-beta')
        s.vectors('nomic-embed-text')
        s.vectorInfo('m-00')
        s.vectorInfo(f.planted.nullEntry[0])
        void s.lexicalPass({ text: 'backups verified', filter: {}, limit: 5 }).hits
        s.idsWhere({ roles: ['user'] })
        s.countWhere({ tiers: ['working', 'long_term'] })
        // The agent connection refuses writes outright.
        expect(() => s.db.prepare(`DELETE FROM memories`).run()).toThrow()
        expect(() => s.db.exec(`CREATE TABLE x (y)`)).toThrow()
      } finally {
        s.close()
      }
    }
    expect(sha256File(f.path)).toBe(before)
    expect(fs.statSync(f.path).mtimeMs).toBe(mtime)
    // Nothing appears beside the agent's file except our workspace (no -wal, -shm, -journal of the agent DB).
    const added = fs.readdirSync(dir).filter((x) => !filesBefore.has(x))
    expect(added.every((x) => x.startsWith('engram.db.recallscope'))).toBe(true)
  })
})
