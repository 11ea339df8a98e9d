/**
 * Every benchmark `npm run bench` knows, in run order. Each entry imports its
 * module only when it runs: one bench whose imports break (a native module, a
 * helper that pulls in a test framework) then fails alone instead of taking
 * every other bench down with it at load time.
 */
export interface Bench {
  name: string
  title: string
  run: () => Promise<void>
}

export const BENCHES: Bench[] = [
  { name: 'firstpage', title: 'open a 1M-memory DB and show the first page', run: async () => (await import('./firstPage')).runFirstPage() },
  {
    name: 'dense',
    title: 'dense top-30 on 100k × 768: ours vs plain JS scan, sqlite-vec, Engram-style JSON scan, memory bandwidth',
    run: async () => (await import('./dense')).runDense(),
  },
  {
    name: 'million',
    title: 'exact dense top-30 on 1M × 768: int8 scan on every core + exact rescoring, vs the float32 brute force',
    run: async () => (await import('./million')).runMillion(),
  },
  {
    name: 'millionapp',
    title: 'the app on a 1M × 768 SQLite DB: compact vector index, exact dense top-30 through the engine, load time, RSS',
    run: async () => (await import('./millionApp')).runMillionApp(),
  },
  {
    name: 'lexical',
    title: 'exact top-30 BM25 on 1M rows by MaxScore vs full scoring of every match (synthetic postings)',
    run: async () => (await import('./lexical')).runLexical(),
  },
  {
    name: 'lexicalapp',
    title: 'whole recalls on a 100k-memory DB (--rows=N) with a word in every memory: the JS top-k BM25 vs FTS5, same answers',
    run: async () => (await import('./lexicalApp')).runLexicalApp(),
  },
  {
    name: 'ui',
    title: 'Recall sliders in Chromium: main-thread work per step of a 21-step drag at 1,000 candidates, beside the engine re-rank',
    run: async () => (await import('./ui')).runUiBench(),
  },
  { name: 'rerank', title: 're-rank 1,000 candidates with the shared scoring code', run: async () => (await import('./rerank')).runRerank() },
  { name: 'why', title: 'why-not at candidate pools of 1,000 / 3,000 / 5,000 (demo DB)', run: async () => (await import('./why')).runWhyBench() },
  {
    name: 'map',
    title: 'the embedding map: PCA frame and UMAP layout of 5,000 and 20,000 points at 256 and 768 dimensions',
    run: async () => (await import('./map')).runMapBench(),
  },
  { name: 'eval', title: 'LoCoMo eval: replay 999 cases, tune 1,000 configs', run: async () => (await import('./eval')).runEvalBench() },
  {
    name: 'pg',
    title: 'Postgres + pgvector (PGlite): exact pushed-down top-30 vs the SQLite engine, first page, full recall, HNSW recall@30',
    run: async () => (await import('./pg')).runPg(),
  },
  {
    name: 'tracelog',
    title: 'read a ~100 MB Claude Code transcript and a ~100 MB OTLP JSON Lines file: time and peak RSS growth (bounded memory)',
    run: async () => (await import('./tracelog')).runTraceLogBench(),
  },
  // last: its stuck-call case leaves a thread spinning in SQLite, and the process is then ended by signal
  {
    name: 'storehost',
    title:
      'store host: app.info latency while a slow recall / a big open / a stuck call runs, before (store on the calling thread) and after; the hop per call',
    run: async () => (await import('./storeHost')).runStoreHost(),
  },
]
