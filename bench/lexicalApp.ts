/**
 * The lexical arm in the app: whole recalls (fieldguide: dense + lexical + recency) on an N-memory
 * SQLite DB where one query word is in every memory, with the JS BM25 index (exact top-k by MaxScore,
 * src/main/store/sqlite/bm25Top.ts) against FTS5 answering the same recall (bm25Settings off), in the
 * same process. Every recall's ids, order and numbers must be the same both ways.
 *
 * The DB (built once into the bench cache): memory m<i> says "memory <i> about topic <i mod 997>" and
 * six words of a 3,000-word vocabulary (Zipf-like), with a 32-d unit vector. `--rows=N` sets N
 * (default 100,000). Goal: a whole recall ≤ 100 ms (docs/internals/performance.md).
 */
import fs from 'node:fs'
import path from 'node:path'
import { bm25Settings, whenBm25IndexesBuilt } from '../src/main/store/sqlite/bm25'
import { openSource } from '../src/main/store/registry'
import { runRecall } from '../src/main/recall/engine'
import { getPreset } from '../src/shared/presets'
import { mulberry32 } from '../src/shared/random'
import { GOALS } from './goals'
import { check, measure, statusWord, verdict } from './report'
import { scaled } from './scale'
import { benchMemory, CACHE, fmtMs, gaussianUnit, loadLine, median, writeBenchDb } from './util'

const DIM = 32
const MODEL = `bench:${DIM}`
const T0 = Date.UTC(2026, 0, 1)

function rowsArg(): number {
  const a = process.argv.find((x) => x.startsWith('--rows='))
  return a ? Math.max(100, Number(a.slice(7)) | 0) : scaled(100_000, 2_000)
}

/** The N-memory DB, written once. */
function ensureDb(n: number): string {
  const db = path.join(CACHE, `lexical-${n}-wal.db`)
  if (fs.existsSync(db)) return db
  const rnd = mulberry32(2024)
  const vec = new Float32Array(DIM)
  writeBenchDb(db, `a ${n.toLocaleString('en-US')}-memory SQLite DB`, (w) => {
    for (let i = 0; i < n; i++) {
      const words: string[] = []
      // Zipf-like: word w<r> with r ≈ 3000^u
      for (let j = 0; j < 6; j++) words.push(`w${Math.floor(Math.pow(3000, rnd()))}`)
      gaussianUnit(rnd, DIM, vec)
      w.memory(benchMemory(i, `memory ${i} about topic ${i % 997} ${words.join(' ')}`, T0))
      w.embedding('memory', `m${i}`, MODEL, Buffer.from(vec.buffer.slice(0)))
    }
  })
  return db
}

export async function runLexicalApp(): Promise<void> {
  const n = rowsArg()
  const file = ensureDb(n)
  const rnd = mulberry32(7)
  const queries = ['topic', 'what about the topic w17', 'memory w3 w250', 'w1 w2 topic', 'about w999 w4']
  const vectors = queries.map(() => {
    const v = new Float32Array(DIM)
    gaussianUnit(rnd, DIM, v)
    return Array.from(v)
  })
  const cfg = { ...getPreset('fieldguide').config, floor: null }
  // A fresh "now" for every recall, as the app's (Date.now()): a scope memoised under one `now` would hide
  // the per-recall cost of counting and listing it.
  let now = T0 + n * 1000 + 1
  const s = openSource({ path: file })
  try {
    const recall = (qi: number) => runRecall(s, queries[qi], cfg, now++, { queryVector: vectors[qi] })
    /** CPU ms of this process (all threads) since `c0`: beside wall time, which other work on a shared machine inflates. */
    const cpuMs = (c0: NodeJS.CpuUsage) => {
      const c = process.cpuUsage(c0)
      return (c.user + c.system) / 1000
    }
    const key = (t: Awaited<ReturnType<typeof recall>>) => JSON.stringify(t.candidates.map((c) => [c.id, c.bm25, c.lexical, c.lexicalRank, c.denseRank]))
    console.log(`whole recall (fieldguide) on ${n.toLocaleString('en-US')} memories, a 32-d vector each (${loadLine()})`)
    // The first recall loads the vectors and starts the JS index's background build (FTS5 answers until
    // it is ready; once per data version): timed apart.
    let t = performance.now()
    await recall(0)
    const firstMs = performance.now() - t
    t = performance.now()
    await whenBm25IndexesBuilt(s)
    console.log(
      `  first recall (loads the vectors; FTS5 answers): ${fmtMs(firstMs)}; the JS BM25 index then built in the background in ${fmtMs(performance.now() - t)}`,
    )
    measure({ name: 'memories in the DB', value: n, unit: 'count' })
    const reps = scaled(5, 1)
    let exact = 0
    const all: number[] = []
    for (let qi = 0; qi < queries.length; qi++) {
      const js: number[] = []
      const jsCpu: number[] = []
      const jsDense: number[] = []
      const jsLex: number[] = []
      const fts: number[] = []
      const ftsLex: number[] = []
      let a = ''
      let b = ''
      for (let r = 0; r < reps; r++) {
        bm25Settings.enabled = true
        const c0 = process.cpuUsage()
        t = performance.now()
        let tr = await recall(qi)
        js.push(performance.now() - t)
        jsCpu.push(cpuMs(c0))
        jsDense.push(tr.timings.denseMs)
        jsLex.push(tr.timings.lexicalMs)
        a = key(tr)
        bm25Settings.enabled = false
        t = performance.now()
        tr = await recall(qi)
        fts.push(performance.now() - t)
        ftsLex.push(tr.timings.lexicalMs)
        b = key(tr)
        bm25Settings.enabled = true
      }
      if (a === b) exact++
      all.push(...js)
      measure({ name: `"${queries[qi]}": whole recall with top-k BM25, median`, value: median(js), unit: 'ms', peer: { name: 'FTS5', value: median(fts) } })
      measure({ name: `"${queries[qi]}": whole recall with top-k BM25, CPU median`, value: median(jsCpu), unit: 'ms' })
      measure({
        name: `"${queries[qi]}": lexical arm with top-k BM25, median`,
        value: median(jsLex),
        unit: 'ms',
        peer: { name: 'FTS5', value: median(ftsLex) },
      })
      console.log(
        `  "${queries[qi]}": whole recall with top-k BM25 ${fmtMs(median(js))} (CPU ${fmtMs(median(jsCpu))}; dense arm ${fmtMs(median(jsDense))}, lexical arm ${fmtMs(median(jsLex))}), with FTS5 ${fmtMs(median(fts))} (lexical arm ${fmtMs(median(ftsLex))}): ${(median(fts) / median(js)).toFixed(1)}× ${a === b ? '' : '  DIFFERENT'}`,
      )
    }
    const m = Math.max(...all)
    const same = check({
      name: 'same candidates, order, bm25 and scores as FTS5 (queries)',
      passed: exact,
      total: queries.length,
      goal: GOALS['lexicalapp.exact'],
    })
    console.log(`  same candidates, order, bm25 and scores as FTS5: ${exact === queries.length ? 'yes' : 'NO'}  goal: yes  ${statusWord(same)}`)
    const slowest = measure({ name: 'slowest whole recall with top-k BM25', value: m, unit: 'ms', goal: GOALS['lexicalapp.slowest'] })
    console.log(`  slowest whole recall ${fmtMs(m)}  ${verdict(slowest)}  (${loadLine()})`)
  } finally {
    bm25Settings.enabled = true
    s.close()
  }
}
