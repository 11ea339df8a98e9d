import { runDense } from './dense'
import { runEvalBench } from './eval'
import { runFirstPage } from './firstPage'
import { runMillion } from './million'
import { runMillionApp } from './millionApp'
import { runPg } from './pg'
import { runRerank } from './rerank'
import { runStoreHost } from './storeHost'
import { runWhyBench } from './why'

export interface Bench {
  name: string
  title: string
  run: () => Promise<void>
}

/** Every benchmark `npm run bench` knows, in run order. */
export const BENCHES: Bench[] = [
  { name: 'firstpage', title: 'open a 1M-memory DB and show the first page', run: runFirstPage },
  { name: 'dense', title: 'dense top-30 on 100k × 768: ours vs plain JS scan, sqlite-vec, Engram-style JSON scan, memory bandwidth', run: runDense },
  { name: 'million', title: 'exact dense top-30 on 1M × 768: int8 scan on every core + exact rescoring, vs the float32 brute force', run: runMillion },
  {
    name: 'millionapp',
    title: 'the app on a 1M × 768 SQLite DB: compact vector index, exact dense top-30 through the engine, load time, RSS',
    run: runMillionApp,
  },
  { name: 'rerank', title: 're-rank 1,000 candidates with the shared scoring code', run: runRerank },
  { name: 'why', title: 'why-not at candidate pools of 1,000 / 3,000 / 5,000 (demo DB)', run: runWhyBench },
  { name: 'eval', title: 'LoCoMo eval: replay 999 cases, tune 1,000 configs', run: runEvalBench },
  { name: 'pg', title: 'Postgres + pgvector (PGlite): exact pushed-down top-30 vs the SQLite engine, first page, full recall, HNSW recall@30', run: runPg },
  // last: its stuck-call case leaves a thread spinning in SQLite, and the process is then ended by signal
  {
    name: 'storehost',
    title:
      'store host: app.info latency while a slow recall / a big open / a stuck call runs, before (store on the calling thread) and after; the hop per call',
    run: runStoreHost,
  },
]
