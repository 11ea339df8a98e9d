/**
 * LoCoMo end to end: import locomo-dev (QA → eval cases), evaluate the lexical
 * arm alone, and check its LoCoMo retrieval scores against an Okapi BM25
 * computed here from scratch (FTS5's defaults k1 = 1.2, b = 0.75, its IDF
 * ln((N − n + ½)/(n + ½)) floored at 1e-6, document length over all columns).
 * Only the tokens come from SQLite: each memory's from the index's own
 * fts5vocab `instance` table, the query's words stemmed by a scratch FTS5 table
 * with the same `porter unicode61` tokenizer. Skips when ../shared is absent.
 */
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { caseMetrics } from '../../shared/metrics'
import type { EvalRun } from '../../shared/eval'
import { LOCOMO_DEV, requireSharedData } from '../../../test/helpers/sharedData'
import { tmpDir } from '../../../test/helpers/tmp'
import { importLocomo } from '../store/importers/locomo'
import { openSource } from '../store/registry'
import type { SqliteSource } from '../store/sqlite/source'
import { runEval } from './evaluate'

const input = requireSharedData(LOCOMO_DEV, 'LoCoMo eval test (src/main/eval/locomo.test.ts)')

const K1 = 1.2
const B = 0.75
const KS = [5, 10, 25, 50]

describe.skipIf(!input)('LoCoMo: the lexical arm agrees with an independent BM25', () => {
  let t: ReturnType<typeof tmpDir>
  let db: string
  let store: SqliteSource
  let run: EvalRun

  beforeAll(async () => {
    t = tmpDir()
    db = path.join(t.dir, 'locomo.db')
    const r = await importLocomo({ input: input!, output: db, embed: 'none', now: 0 })
    expect(r.written.evalCases).toBe(999)
    store = openSource({ path: db })
    // Lexical arm only: bm25 rank is the whole score; no floor; the 50 best.
    run = await runEval(store, {
      config: { mode: 'lexical', weights: { similarity: 0, lexical: 1, recency: 0, salience: 0 }, floor: null, topK: 50, candidatePool: 50, tokenBudget: null },
      k: 50,
      embedder: 'none',
      now: 0,
      createdAt: 0,
    })
  })
  afterAll(() => {
    store?.close()
    t?.cleanup()
  })

  it('scores every case and matches BM25 recall at k = 5, 10, 25, 50', () => {
    expect(run.counts.cases).toBe(999)
    // --- independent BM25 -------------------------------------------------
    const conn = new Database(db, { readonly: true })
    try {
      const rows = conn.prepare(`SELECT rowid AS rid, id, agent_id AS agent, created_at AS at FROM memories`).all() as {
        rid: number
        id: string
        agent: string
        at: number
      }[]
      conn.exec(`CREATE VIRTUAL TABLE temp.vi USING fts5vocab(main, 'memories_fts', 'instance')`)
      const tf = new Map<number, Map<string, number>>() // doc → term → count
      const len = new Map<number, number>()
      for (const { term, doc } of conn.prepare(`SELECT term, doc FROM temp.vi`).iterate() as Iterable<{ term: string; doc: number }>) {
        let m = tf.get(doc)
        if (!m) tf.set(doc, (m = new Map()))
        m.set(term, (m.get(term) ?? 0) + 1)
        len.set(doc, (len.get(doc) ?? 0) + 1)
      }
      const N = conn.prepare(`SELECT count(*) FROM memories`).pluck().get() as number
      let total = 0
      for (const l of len.values()) total += l
      const avgdl = total / N
      const df = new Map<string, number>()
      for (const m of tf.values()) for (const term of m.keys()) df.set(term, (df.get(term) ?? 0) + 1)
      // The query side: each word through the same tokenizer (porter unicode61) in a scratch table.
      conn.exec(`CREATE VIRTUAL TABLE temp.q USING fts5(x, tokenize='porter unicode61'); CREATE VIRTUAL TABLE temp.qv USING fts5vocab(temp, 'q', 'instance')`)
      const insQ = conn.prepare(`INSERT INTO temp.q (rowid, x) VALUES (1, ?)`)
      const delQ = conn.prepare(`DELETE FROM temp.q`)
      const stemOf = conn.prepare(`SELECT term FROM temp.qv ORDER BY offset`).pluck()
      const stemCache = new Map<string, string[]>()
      const stems = (w: string) => {
        let s = stemCache.get(w)
        if (!s) {
          delQ.run()
          insQ.run(w)
          stemCache.set(w, (s = stemOf.all() as string[]))
        }
        return s
      }
      const idf = (n: number) => {
        const v = Math.log((N - n + 0.5) / (n + 0.5))
        return v <= 0 ? 1e-6 : v
      }

      const cases = store.workspace.loadCases()
      const mine = new Map<string, string[]>()
      for (const c of cases) {
        // The engine ORs every distinct word of the question (letters and digits); each is one phrase.
        const words = [...new Set(c.query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])]
        const phrases = words
          .map(stems)
          .filter((s) => s.length === 1)
          .map((s) => s[0])
        const scored: { r: (typeof rows)[number]; s: number }[] = []
        for (const r of rows) {
          if (r.agent !== c.scope.agentId) continue
          const m = tf.get(r.rid)
          if (!m) continue
          let s = 0
          let any = false
          const D = len.get(r.rid)!
          for (const p of phrases) {
            const f = m.get(p) ?? 0
            if (f === 0) continue
            any = true
            s += idf(df.get(p) ?? 0) * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * D) / avgdl)))
          }
          if (any) scored.push({ r, s })
        }
        // Equal scores: newest first, then id (the engine's documented tie rule).
        scored.sort((a, b) => b.s - a.s || b.r.at - a.r.at || (a.r.id < b.r.id ? -1 : 1))
        mine.set(
          c.id,
          scored.slice(0, 50).map((x) => x.r.id),
        )
      }

      // --- compare --------------------------------------------------------
      const theirs = new Map(run.perCase.map((c) => [c.id, c]))
      let sameTop10 = 0
      let a50 = 0
      for (const k of KS) {
        let a = 0
        let b = 0
        for (const c of cases) {
          const rc = theirs.get(c.id)!
          const ones = (n: number) => Array.from({ length: n }, () => 1)
          a += caseMetrics(c, rc.retrieved, rc.tokens, k, 1e9).locomo!
          const m = mine.get(c.id)!
          b += caseMetrics(c, m, ones(m.length), k, 1e9).locomo!
        }
        a /= cases.length
        b /= cases.length
        console.log(`LoCoMo R@${k}: eval ${a.toFixed(4)} · independent BM25 ${b.toFixed(4)}`)
        // Float summation order can only flip exact near-ties: at most ~2 evidence turns in 999 questions.
        expect(Math.abs(a - b)).toBeLessThan(0.002)
        if (k === 50) a50 = a
      }
      for (const c of cases) if (JSON.stringify(theirs.get(c.id)!.retrieved.slice(0, 10)) === JSON.stringify(mine.get(c.id)!.slice(0, 10))) sameTop10++
      expect(sameTop10 / cases.length).toBeGreaterThan(0.98)
      // The run's own LoCoMo score is the per-case mean computed above.
      expect(run.metrics['locomo@50']).toBeCloseTo(a50, 12)
    } finally {
      conn.close()
    }
  })
})
