/**
 * Issue 15: the same N × 768 store in SQLite and in Postgres (PGlite + pgvector,
 * over the wire through pglite-socket, the server in its own process), and:
 *
 *  exactness  the exact pushed-down dense top-30 (runRecall, dense mode) returns
 *             the same ids in the same order as the SQLite engine, for each query
 *  timings    first page of memories (100 rows, newest first) and a full recall,
 *             medians over the queries, on both stores
 *  ANN        with an HNSW index built in Postgres, `?ann=hnsw&ef_search=…`:
 *             recall@30 against the exact answer and its latency
 *
 * PGlite is Postgres compiled to WebAssembly, single-threaded: much slower than
 * a native server, and the load of 100k × 768 text vectors takes long on a
 * shared 2-core box. N defaults to 20,000; RECALLSCOPE_BENCH_PG_N=100000 runs
 * the full size (RECALLSCOPE_BENCH_PG_ANN=0 skips the HNSW build, which
 * takes minutes in PGlite). Numbers are printed, never assumed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { getPreset } from '../src/shared/presets'
import { mulberry32 } from '../src/shared/random'
import type { RecallConfig } from '../src/shared/types'
import { runRecall } from '../src/main/recall/engine'
import { openSource, openStore } from '../src/main/store/registry'
import { CanonicalWriter } from '../src/main/store/sqlite/canonicalWriter'
import type { MemorySource } from '../src/main/store/source'
import { startPgServer } from '../test/helpers/pgServer'
import { GOALS } from './goals'
import { check, measure, statusWord } from './report'
import { scaled, SMOKE } from './scale'
import { CACHE, fmtMs, gaussianUnit, median } from './util'

const N = Number(process.env.RECALLSCOPE_BENCH_PG_N ?? scaled(20_000, 300))
const DIM = scaled(768, 32)
const K = 30
const MODEL = 'bench-768'
const T0 = Date.UTC(2025, 0, 1)
const NOW = Date.UTC(2026, 0, 1)
const QUERIES = scaled(7, 2)

const memId = (i: number) => `m-${String(i).padStart(6, '0')}`

function rowOf(all: Float32Array, r: number): Float32Array {
  return all.subarray(r * DIM, (r + 1) * DIM)
}

export async function runPg(): Promise<void> {
  console.log(`N = ${N.toLocaleString('en-US')} × ${DIM} (RECALLSCOPE_BENCH_PG_N to change)`)
  const rng = mulberry32(1515)
  const all = new Float32Array(N * DIM)
  for (let r = 0; r < N; r++) gaussianUnit(rng, DIM, all, r * DIM)

  fs.mkdirSync(CACHE, { recursive: true })
  const file = path.join(CACHE, `pg-same-${N}x${DIM}.db`)
  if (!fs.existsSync(file)) {
    const w = new CanonicalWriter(file, { force: true })
    for (let r = 0; r < N; r++) {
      w.memory({
        id: memId(r),
        agent_id: 'a',
        user_id: `u${r % 50}`,
        session_id: null,
        role: 'user',
        kind: 'episodic',
        tier: 'working',
        content: `memory ${r}`,
        summary: null,
        salience: 0.5,
        created_at: T0 + r * 1000,
        last_used_at: null,
        use_count: 0,
        turn: null,
        source: null,
        metadata: null,
      })
      w.embedding('memory', memId(r), MODEL, rowOf(all, r))
    }
    w.finish()
  }

  const t0 = performance.now()
  // the optimising tier as PGlite's users get it: these are the timings reported (the smoke run only checks the path)
  const srv = await startPgServer({ tierUp: !SMOKE })
  console.log(`PGlite + pgvector up in ${fmtMs(performance.now() - t0)}`)
  try {
    const tl = performance.now()
    await srv.seed(`CREATE SCHEMA b;
      CREATE TABLE b.memories (id text PRIMARY KEY, agent_id text, user_id text, session_id text, role text, kind text, tier text, content text NOT NULL,
        summary text, salience real, created_at bigint, last_used_at bigint, use_count int, turn int, source text, metadata text);
      CREATE TABLE b.embeddings (owner_type text NOT NULL, owner_id text NOT NULL, model text NOT NULL, dim int NOT NULL, vector vector(${DIM}) NOT NULL, PRIMARY KEY (owner_type, owner_id, model));
      CREATE INDEX memories_created ON b.memories (created_at);`)
    const BATCH = 500
    for (let s = 0; s < N; s += BATCH) {
      const mem: string[] = []
      const emb: string[] = []
      for (let r = s; r < Math.min(N, s + BATCH); r++) {
        mem.push(
          `('${memId(r)}', 'a', 'u${r % 50}', NULL, 'user', 'episodic', 'working', 'memory ${r}', NULL, 0.5, ${T0 + r * 1000}, NULL, 0, NULL, NULL, NULL)`,
        )
        emb.push(`('memory', '${memId(r)}', '${MODEL}', ${DIM}, '[${Array.from(rowOf(all, r)).join(',')}]')`)
      }
      await srv.seed(`INSERT INTO b.memories VALUES ${mem.join(',')}; INSERT INTO b.embeddings VALUES ${emb.join(',')};`)
    }
    console.log(`loaded ${N.toLocaleString('en-US')} rows into Postgres in ${fmtMs(performance.now() - tl)}`)

    const lite = openSource({ path: file, workspacePath: `${file}.ws` })
    const pg = openStore({ path: `${srv.url}&schema=b&statement_timeout_ms=600000`, workspacePath: path.join(CACHE, `pg-${N}.recallscope`) })
    const cfg = { ...getPreset('fieldguide').config, mode: 'dense', topK: K, candidatePool: K, minSimilarity: null } as RecallConfig
    const qrng = mulberry32(77)
    const queries: Float32Array[] = []
    for (let i = 0; i < QUERIES; i++) {
      const q = new Float32Array(DIM)
      gaussianUnit(qrng, DIM, q, 0)
      queries.push(q)
    }
    const top = async (s: MemorySource, q: Float32Array) => {
      const t = performance.now()
      const tr = await runRecall(s, 'q', cfg, NOW, { queryVector: q })
      const ms = performance.now() - t
      // The dense arm's ranking (random 768-d vectors sit near cosine 0, so gates may drop every result).
      const ids = tr.candidates
        .filter((c) => c.denseRank !== null && c.denseRank <= K)
        .sort((a, b) => a.denseRank! - b.denseRank!)
        .map((c) => c.id)
      return { ms, ids, tr }
    }
    // Warm both (SQLite loads its vector index once; Postgres plans once).
    await top(lite, queries[0])
    await top(pg, queries[0])
    const liteMs: number[] = []
    const pgMs: number[] = []
    const exact: string[][] = []
    let same = 0
    for (const q of queries) {
      const a = await top(lite, q)
      const b = await top(pg, q)
      liteMs.push(a.ms)
      pgMs.push(b.ms)
      exact.push(b.ids)
      if (a.ids.length === K && JSON.stringify(a.ids) === JSON.stringify(b.ids)) same++
      else console.log(`  MISMATCH: sqlite ${a.ids.slice(0, 5).join(',')}… vs pg ${b.ids.slice(0, 5).join(',')}…`)
    }
    const exactFig = check({ name: `exact pushed-down top-${K} = SQLite engine top-${K} (queries)`, passed: same, total: QUERIES, goal: GOALS['pg.exact'] })
    console.log(`exact pushed-down top-${K} == SQLite engine top-${K} (same ids, same order): ${same}/${QUERIES} queries  ${statusWord(exactFig)}`)
    const pgvector = { name: 'pgvector via PGlite', value: median(pgMs) }
    measure({ name: `full recall (dense, top-${K}), SQLite engine, median`, value: median(liteMs), unit: 'ms', peer: pgvector })
    measure({ name: `full recall (dense, top-${K}), Postgres/PGlite exact, median`, value: median(pgMs), unit: 'ms' })
    console.log(`full recall (dense, top-${K}), median of ${QUERIES}: SQLite ${fmtMs(median(liteMs))} · Postgres/PGlite exact ${fmtMs(median(pgMs))}`)
    const page = (s: MemorySource) => {
      const xs: number[] = []
      for (let i = 0; i < 5; i++) {
        const t = performance.now()
        s.memoriesPage({ limit: 100 })
        xs.push(performance.now() - t)
      }
      return median(xs)
    }
    const litePage = page(lite)
    const pgPage = page(pg)
    measure({ name: 'first page of memories (100 rows), SQLite, median', value: litePage, unit: 'ms', peer: { name: 'Postgres/PGlite', value: pgPage } })
    console.log(`first page of memories (100 rows, newest first, capped count), median of 5: SQLite ${fmtMs(litePage)} · Postgres/PGlite ${fmtMs(pgPage)}`)
    pg.close()

    // ANN: an HNSW index, then recall@30 against the exact answer (RECALLSCOPE_BENCH_PG_ANN=0 skips it: the build is slow in PGlite).
    const ti = performance.now()
    if (process.env.RECALLSCOPE_BENCH_PG_ANN === '0') console.log('ANN skipped (RECALLSCOPE_BENCH_PG_ANN=0)')
    else
      try {
        await srv.seed(
          `SET maintenance_work_mem = '256MB'; CREATE INDEX emb_hnsw ON b.embeddings USING hnsw (vector vector_cosine_ops) WITH (m = 16, ef_construction = 64);`,
        )
        console.log(`HNSW index (m 16, ef_construction 64) built in ${fmtMs(performance.now() - ti)}`)
        // smoke: one ef_search (the index and the hnsw path run either way)
        for (const ef of scaled([40, 100], [40])) {
          const ann = openStore({
            path: `${srv.url}&schema=b&ann=hnsw&ef_search=${ef}&statement_timeout_ms=600000`,
            workspacePath: path.join(CACHE, `pg-${N}.recallscope`),
          })
          await top(ann, queries[0])
          const ms: number[] = []
          let hit = 0
          let method = ''
          for (const [i, q] of queries.entries()) {
            const r = await top(ann, q)
            ms.push(r.ms)
            method = JSON.stringify(r.tr.arms?.dense.pushdown)
            const want = new Set(exact[i])
            hit += r.ids.filter((id) => want.has(id)).length
          }
          measure({ name: `ANN hnsw ef_search ${ef}: recall@${K} vs exact`, value: hit / (K * QUERIES), unit: 'fraction' })
          measure({ name: `ANN hnsw ef_search ${ef}: full recall, median`, value: median(ms), unit: 'ms', peer: pgvector })
          console.log(
            `ANN hnsw ef_search ${ef}: recall@${K} vs exact ${((hit / (K * QUERIES)) * 100).toFixed(1)}% · median recall ${fmtMs(median(ms))} · trace ${method}`,
          )
          ann.close()
        }
      } catch (e) {
        console.log(`ANN skipped: ${(e as Error).message}`)
      }
    lite.close()
  } finally {
    await srv.stop()
  }
}
