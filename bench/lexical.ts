/**
 * The lexical arm's top-k at a million rows: exact top-30 BM25 by MaxScore (src/main/store/sqlite/bm25Top.ts)
 * against full scoring of every match (rankBm25, the floor, in the same process on the same postings).
 * The postings are synthetic, built here: 1M rows, stop-words in ~99% / ~60% of rows, a name in 1%,
 * a rare word in 0.3%, per-row factors spread like BM25's (0.3–2.2). Every query's ids, order and
 * doubles are compared with full scoring; goal ≤ 100 ms p95 per query (docs/internals/performance.md).
 */
import type { Bm25Index } from '../src/main/store/sqlite/bm25'
import { topBm25, topBm25ByFullScoring } from '../src/main/store/sqlite/bm25Top'
import { mulberry32 } from '../src/shared/random'
import { GOALS } from './goals'
import { check, measure, statusWord, verdict } from './report'
import { scaled } from './scale'
import { fmtMs, median, percentile } from './util'

const WORDS: [string, number][] = [
  ['the', 0.99],
  ['what', 0.6],
  ['caroline', 0.01],
  ['sunrise', 0.003],
]

function buildPostings(nRow: number): Bm25Index {
  const rnd = mulberry32(24)
  const postings = new Map<string, { rids: Int32Array; tf: Float64Array }>()
  for (const [w, density] of WORDS) {
    const rids = new Int32Array(Math.ceil(nRow * density * 1.1) + 16)
    const tf = new Float64Array(rids.length)
    let n = 0
    for (let r = 1; r <= nRow && n < rids.length; r++) {
      if (rnd() < density) {
        rids[n] = r
        tf[n++] = 0.3 + rnd() * 1.9
      }
    }
    postings.set(w, { rids: rids.slice(0, n), tf: tf.slice(0, n) })
  }
  return {
    nRow,
    avgdl: 12,
    postings,
    tokenOf: (words) => words,
    idfOf: (nHit) => Math.max(1e-6, Math.log((nRow - nHit + 0.5) / (nHit + 0.5))),
    close: () => undefined,
  }
}

export async function runLexical(): Promise<void> {
  const nRow = scaled(1_000_000, 10_000)
  const idx = buildPostings(nRow)
  const queries = [['the'], ['what', 'the'], ['the', 'caroline'], ['what', 'did', 'the', 'caroline', 'sunrise'], ['sunrise']]
  const reps = scaled(5, 1)
  console.log(`lexical top-30 BM25 on ${nRow.toLocaleString('en-US')} rows (synthetic postings; MaxScore vs full scoring of every match)`)
  const all: number[] = []
  let exact = 0
  for (const q of queries) {
    const top: number[] = []
    const full: number[] = []
    let same = true
    for (let r = 0; r < reps; r++) {
      let t = performance.now()
      const a = topBm25(idx, q, 30, 1, nRow)!
      top.push(performance.now() - t)
      t = performance.now()
      const b = topBm25ByFullScoring(idx, q, 30, 1, nRow)!
      full.push(performance.now() - t)
      same &&= a.rids.join() === b.rids.join() && a.bm25.join() === b.bm25.join()
    }
    if (same) exact++
    all.push(...top)
    const mt = median(top)
    const mf = median(full)
    measure({ name: `"${q.join(' ')}": top-k, median`, value: mt, unit: 'ms', peer: { name: 'full scoring', value: mf } })
    console.log(`  "${q.join(' ')}": top-k ${fmtMs(mt)}, full scoring ${fmtMs(mf)} (${(mf / Math.max(mt, 1e-3)).toFixed(1)}× faster)`)
  }
  const p = percentile(all, 0.95)
  const ex = check({ name: 'same ids, order and scores as full scoring (queries)', passed: exact, total: queries.length, goal: GOALS['lexical.exact'] })
  console.log(`  exact (same ids, order, scores as full scoring): ${exact === queries.length ? 'yes' : 'NO'}  goal: yes  ${statusWord(ex)}`)
  const fig = measure({ name: 'top-k, p95 over every query and repetition', value: p, unit: 'ms', goal: GOALS['lexical.p95'] })
  console.log(`  p95 over ${all.length} queries ${fmtMs(p)}  ${verdict(fig)}`)
}
