/**
 * The lexical arm's prefix read by exact top-k over the JS BM25 index (path 'topk') against two
 * independent full scorings of every match: a BM25 computed here from the memories' own words
 * (FTS5's formula: k1 = 1.2, b = 0.75, IDF clamped to 1e-6), and FTS5's bm25() itself (the JS
 * index switched off). A word every memory holds, random queries, limits and dense-hit lookups:
 * same ids in the same order; the very same doubles as bm25(), and the test's own numbers to 1e-12.
 */
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tmpDir } from '../../../../test/helpers/tmp'
import { buildDb, openDb } from '../../../../test/helpers/testDb'
import { openSource } from '../registry'
import { mulberry32 } from '../../../shared/random'
import { bm25Counts, bm25Settings, whenBm25IndexesBuilt } from './bm25'
import type { SqliteSource } from './source'

const N = 3000
const VOCAB = 60

describe('lexical arm: top-k BM25 = full scoring', () => {
  const t = tmpDir()
  let store: SqliteSource
  const rnd = mulberry32(31)
  // "topic" in every memory (once or twice: per-row factors differ), a Zipf-like tail of w<r>
  const texts = Array.from({ length: N }, () => {
    const words = ['topic']
    if (rnd() < 0.2) words.push('topic')
    const n = 2 + Math.floor(rnd() * 8)
    for (let j = 0; j < n; j++) words.push(`w${Math.floor(Math.pow(VOCAB, rnd()))}`)
    return words.join(' ')
  })
  beforeAll(() => {
    store = openDb(buildDb(t.dir, { name: 'topk.db', memories: texts.map((content, i) => ({ id: `m${i}`, content })) }))
  })
  afterAll(() => {
    bm25Settings.enabled = true
    store.close()
    t.cleanup()
  })

  /** Every memory matching a query word scored from its words; sorted by (bm25, rowid). */
  function fullBm25(query: string[]): { id: string; bm25: number }[] {
    const { ids, rids } = store.scopeRows({}, N + 1)
    const docs = ids.map((id) => texts[Number(id.slice(1))].split(' '))
    const avgdl = docs.reduce((s, d) => s + d.length, 0) / N
    const nHit = query.map((w) => docs.filter((d) => d.includes(w)).length)
    const idf = nHit.map((n) => Math.max(1e-6, Math.log((N - n + 0.5) / (n + 0.5))))
    const rows: { id: string; rid: number; bm25: number }[] = []
    docs.forEach((d, i) => {
      let score = 0
      let hit = false
      query.forEach((w, qi) => {
        const f = d.filter((x) => x === w).length
        if (!f) return
        hit = true
        score += (idf[qi] * (f * 2.2)) / (f + 1.2 * (0.25 + (0.75 * d.length) / avgdl))
      })
      if (hit) rows.push({ id: ids[i], rid: rids[i], bm25: -score })
    })
    return rows.sort((a, b) => a.bm25 - b.bm25 || a.rid - b.rid)
  }

  it('same ids, order and numbers on random queries, limits and looked-up rows', () => {
    let cases = 0
    for (let q = 0; q < 40; q++) {
      const words = [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => (rnd() < 0.4 ? 'topic' : `w${1 + Math.floor(rnd() * VOCAB)}`)))]
      const limit = [1, 10, 30, 100, 1000][q % 5]
      const alsoIds = Array.from({ length: 20 }, () => `m${Math.floor(rnd() * N)}`)
      const req = { text: words.join(' '), filter: {}, limit, ridRange: null, alsoIds }
      bm25Settings.enabled = true
      const got = store.lexicalPass(req)
      bm25Settings.enabled = false
      const fts = store.lexicalPass(req)
      bm25Settings.enabled = true
      expect(got.path).toBe('topk')
      expect(fts.path).not.toBe('topk')
      // FTS5's bm25(): the very same doubles
      expect(got.hits).toEqual(fts.hits)
      expect([...got.also].sort()).toEqual([...fts.also].sort())
      // the test's own full scoring: same ids in the same order, numbers to 1e-12
      const full = fullBm25(words)
      const want = full.slice(0, limit)
      expect(got.hits.map((h) => h.id)).toEqual(want.map((h) => h.id))
      got.hits.forEach((h, i) => expect(Math.abs(h.bm25 - want[i].bm25)).toBeLessThanOrEqual(1e-12 * Math.abs(want[i].bm25)))
      const byId = new Map(full.map((r) => [r.id, r.bm25]))
      for (const id of alsoIds) {
        const b = byId.get(id)
        if (b === undefined) expect(got.also.has(id)).toBe(false)
        else expect(Math.abs(got.also.get(id)! - b)).toBeLessThanOrEqual(1e-12 * Math.abs(b))
      }
      if (words.includes('topic') && got.hits.length === limit) cases++
    }
    // the case top-k is for was exercised: a word in every memory, a full page of hits
    expect(cases).toBeGreaterThan(5)
  })

  /** A copy of the fixture in the given journal mode (opened by nobody yet). */
  function fixtureIn(mode: 'wal' | 'delete', name: string): string {
    const p = buildDb(t.dir, { name, memories: texts.map((content, i) => ({ id: `m${i}`, content })) })
    const db = new Database(p)
    db.pragma(`journal_mode = ${mode}`)
    db.close()
    return p
  }

  /**
   * A fixture copy opened with its index built in the background from 100 rows (bm25Settings.syncRows), beside an
   * agent's own connection to the file; both closed after `run` (a test may close the store itself first).
   */
  async function withSlicedBuild(mode: 'wal' | 'delete', name: string, run: (other: SqliteSource, agent: Database.Database) => Promise<void>): Promise<void> {
    bm25Settings.syncRows = 100
    const file = fixtureIn(mode, name)
    const other = openSource({ path: file, workspacePath: `${file}.ws` })
    const agent = new Database(file)
    try {
      await run(other, agent)
    } finally {
      agent.close()
      other.close()
      bm25Settings.syncRows = 20_000
    }
  }

  it('a big index of a WAL file is built in the background: FTS5 answers until it is ready, then top-k, the same hits', () =>
    withSlicedBuild('wal', 'bg.db', async (other) => {
      const req = { text: 'topic w3 w7', filter: {}, limit: 30, ridRange: null }
      const reruns = bm25Counts.rerunAtBuild
      const before = other.lexicalPass(req)
      expect(before.path).toBe('prefix')
      // Two queries while it builds: the latest runs once more as the build ends, before its promise resolves.
      expect(other.lexicalPass({ ...req, text: 'w5' }).path).toBe('prefix')
      await whenBm25IndexesBuilt(other)
      expect(bm25Counts.rerunAtBuild - reruns).toBe(1)
      const after = other.lexicalPass(req)
      expect(after.path).toBe('topk')
      expect(after.hits).toEqual(before.hits)
      // A query on the built index (none in flight) registers nothing.
      await whenBm25IndexesBuilt(other)
      expect(bm25Counts.rerunAtBuild - reruns).toBe(1)
    }))

  it('a commit while the index builds: the query asked meanwhile is not run again, and no other build starts unasked', () =>
    withSlicedBuild('wal', 'moved.db', async (other, agent) => {
      const req = { text: 'topic w3', filter: {}, limit: 10, ridRange: null }
      const [reruns, builds] = [bm25Counts.rerunAtBuild, bm25Counts.builds]
      expect(other.lexicalPass(req).path).toBe('prefix')
      // an agent's commit: a memory and its FTS row
      const rid = agent.prepare(`INSERT INTO memories (id, content, created_at) VALUES ('late', 'topic zebra', 0)`).run().lastInsertRowid
      agent.prepare(`INSERT INTO memories_fts (rowid, content, summary) VALUES (?, 'topic zebra', NULL)`).run(rid)
      await whenBm25IndexesBuilt(other)
      await new Promise((r) => setTimeout(r, 50))
      expect(bm25Counts.rerunAtBuild).toBe(reruns)
      expect(bm25Counts.builds).toBe(builds + 1)
      await whenBm25IndexesBuilt(other)
      // the next query sees the new row
      expect(other.lexicalPass({ ...req, text: 'zebra' }).hits.map((h) => h.id)).toEqual(['late'])
    }))

  it('closing the store mid-build ends the build (its promise settles, nothing throws)', () =>
    withSlicedBuild('wal', 'close.db', async (other) => {
      const reruns = bm25Counts.rerunAtBuild
      expect(other.lexicalPass({ text: 'topic', filter: {}, limit: 5, ridRange: null }).path).toBe('prefix')
      const built = whenBm25IndexesBuilt(other)
      other.close()
      await built
      // the query asked during the build is not run again on a closed store
      await new Promise((r) => setImmediate(r))
      expect(bm25Counts.rerunAtBuild).toBe(reruns)
    }))

  it('a rollback-journal file is not read in slices (its read lock would block the agent’s commits): FTS5 answers', () =>
    withSlicedBuild('delete', 'journal.db', async (other, agent) => {
      agent.pragma('busy_timeout = 0')
      const req = { text: 'topic w3', filter: {}, limit: 10, ridRange: null }
      expect(other.lexicalPass(req).path).toBe('prefix')
      // the agent commits while recallscope has the store open and has answered a big lexical query
      expect(() => agent.exec(`UPDATE memories SET content = content WHERE rowid = 1`)).not.toThrow()
      await whenBm25IndexesBuilt(other)
      expect(other.lexicalPass(req).path).toBe('prefix')
    }))
})
