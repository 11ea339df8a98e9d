/**
 * Every performance goal `npm run bench` judges, in one list: a bench names the goal it measures
 * (`measure({ goal: GOALS['rerank.idle'], … })`), its record carries the goal's id and comparison, and
 * the docs table (scripts/benchTable.ts) lists every goal here with the latest saved figure for it, or
 * says that none is saved. docs/internals/performance.md "Bench results" shows the table.
 */

/** The units a figure is measured in (docs/internals/performance.md "The results file"). */
export const UNITS = ['ms', 's', 'MiB', 'MB', 'GB', 'GB/s', 'MB/s', '×', 'count', 'fraction', 'points', 'configs/s'] as const
export type Unit = (typeof UNITS)[number]

interface GoalBase {
  /** Stable id, `<bench>.<what>`: saved results refer to it. */
  id: string
  /** The bench that measures it (a name in bench/registry.ts). */
  bench: string
  /** What is measured, in words. */
  what: string
  /** Where the goal was asked for (an issue and its item). */
  from: string
}

/** A limit on the figure itself: `≤ 100 ms`. */
export interface LimitGoal extends GoalBase {
  kind: 'limit'
  op: '<=' | '>='
  limit: number
  unit: Unit
}

/** A limit on the figure's ratio to a peer or floor measured in the same run: `≤ 1.5× C floor`. */
export interface RatioGoal extends GoalBase {
  kind: 'ratio'
  op: '<=' | '>='
  limit: number
  /** The peer's name, as the bench gives it in the record's `peer`. */
  of: string
}

/** An exactness check: every case must pass (same ids in the same order as the reference). */
export interface AllGoal extends GoalBase {
  kind: 'all'
}

export type Goal = LimitGoal | RatioGoal | AllGoal

type Spec = Omit<LimitGoal, 'id' | 'bench'> | Omit<RatioGoal, 'id' | 'bench'> | Omit<AllGoal, 'id' | 'bench'>
const limit = (what: string, from: string, op: '<=' | '>=', value: number, unit: Unit): Spec => ({ kind: 'limit', what, from, op, limit: value, unit })
const ratio = (what: string, from: string, value: number, of: string): Spec => ({ kind: 'ratio', what, from, op: '<=', limit: value, of })
const all = (what: string, from: string): Spec => ({ kind: 'all', what, from })

/** id (`<bench>.<what>`) → goal, in the order the docs table lists them. */
const SPECS = {
  // the slider step, in the browser and in the engine
  'ui.step': limit('main-thread work per slider step at 1,000 candidates, p95', 'issue 24 · 1', '<=', 16, 'ms'),
  'rerank.idle': limit('re-rank 1,000 candidates, median per call', 'issue 13 · 6', '<=', 2, 'ms'),
  'rerank.busy': limit('re-rank 1,000 candidates while a tune runs in the job worker, median', 'issue 13 · 6', '<=', 2, 'ms'),
  // a million memories
  'millionapp.dense': limit('1M × 768 in the app: dense top-30 through the engine, p95', 'issue 24 · 2', '<=', 100, 'ms'),
  'millionapp.recall': limit('1M × 768 in the app: a whole recall (dense + lexical + recency), p95', 'issue 24 · 2', '<=', 100, 'ms'),
  'millionapp.open': limit('1M × 768 in the app: first open (vectors from SQL)', 'issue 24 · 2', '<=', 10_000, 'ms'),
  'millionapp.close': limit('1M × 768 in the app: close', 'issue 24 · 2', '<=', 200, 'ms'),
  'millionapp.rss': limit('1M × 768 in the app: peak RSS', 'issue 13 · 3', '<=', 1.5, 'GB'),
  'millionapp.exact': all('1M × 768 in the app: same 30 ids in the same order as the float32 brute force', 'issue 24 · 2'),
  'million.search': limit('1M × 768 bare int8 scan + exact rescoring, median', 'issue 13 · 3', '<=', 100, 'ms'),
  'million.rss': limit('1M × 768 bare search: peak RSS', 'issue 13 · 3', '<=', 1.5, 'GB'),
  'million.exact': all('1M × 768 bare search: same 30 rows in the same order as the float32 brute force', 'issue 13 · 3'),
  'firstpage.open': limit('1M-memory demo DB: open + first page, fresh process, median of 3', 'issue 13 · 6', '<=', 500, 'ms'),
  'firstpage.rss': limit('1M-memory demo DB: peak RSS', 'issue 13 · 6', '<=', 1024, 'MiB'),
  // the lexical arm
  'lexical.p95': limit('top-30 BM25 on 1M rows (synthetic postings), p95 per query', 'issue 24 · 2', '<=', 100, 'ms'),
  'lexical.exact': all('top-k BM25: same ids, order and scores as full scoring', 'issue 24 · 2'),
  'lexicalapp.slowest': limit('whole recall on a store with a word in every memory (`--rows`, default 100,000), slowest', 'issue 24 · 2', '<=', 100, 'ms'),
  'lexicalapp.exact': all('top-k BM25 recall: same candidates, order and scores as FTS5', 'issue 24 · 2'),
  // dense scans
  'dense.cfloor': ratio('100k × 768 exact dense top-30 (runRecall, whole DB), median', 'issue 13 · 2', 1.5, 'C floor'),
  'dense.plain': ratio('100k × 768 dense arm as fast as a plain JS scan, median', 'issue 3', 1, 'plain JS scan'),
  'dense.exact': all('100k × 768: every method the same 30 ids in the same order as the plain scan', 'issue 3'),
  'pg.exact': all('Postgres exact pushed-down top-30 = the SQLite engine top-30', 'issue 15'),
  // why-not, eval, tune
  'why.pool5000': limit('why-not at candidate pool 5,000, median', 'issue 13 · 1a', '<=', 1000, 'ms'),
  'why.same': all('why-not: the same answer as a full re-rank per tried value', 'issue 13 · 1a'),
  'eval.cold': limit('cold eval, 999 LoCoMo-dev cases (engine pass, vectors ready), median', 'issue 24 · 3', '<=', 500, 'ms'),
  'eval.lexical': all('cold eval: JS bm25 lexical top-k = FTS5 bm25() on every case', 'issue 13 · 4'),
  'eval.recall': limit('cold eval: recall@10 difference JS bm25 vs FTS5', 'issue 13 · 4', '<=', 0.1, 'points'),
  'eval.replay': limit('replay 999 cases from cached candidates, median', 'issue 13 · 6', '<=', 1000, 'ms'),
  'eval.tune': limit('tune 1,000 configs × 999 cases', 'issue 13 · 6', '<=', 20_000, 'ms'),
  'eval.tuneBusy': limit('tune 1,000 configs × 999 cases while another tune runs in the job worker', 'issue 13 · 6', '<=', 20_000, 'ms'),
  // the map
  'map.pca': limit('embedding map: PCA frame', 'issue 24 · 4', '<=', 200, 'ms'),
  'map.umap5k': limit('embedding map: UMAP of 5,000 points', 'issue 24 · 4', '<=', 5000, 'ms'),
  'map.umap20k': limit('embedding map: UMAP of 20,000 points', 'issue 24 · 4', '<=', 20_000, 'ms'),
  // the store host
  'storehost.info': limit('`app.info` while the store works (store host), slowest poll', 'issue 21 · 1', '<=', 200, 'ms'),
} satisfies Record<string, Spec>

export type GoalId = keyof typeof SPECS

/** Every goal by id (its bench is the id's first part). */
export const GOALS = Object.fromEntries(Object.entries(SPECS).map(([id, s]): [string, Goal] => [id, { ...s, id, bench: id.split('.')[0] }])) as Readonly<
  Record<GoalId, Goal>
>

/** Every goal, in the order the docs table lists them. */
export function listGoals(): Goal[] {
  return Object.values(GOALS)
}
