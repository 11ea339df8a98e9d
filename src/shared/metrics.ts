/**
 * Retrieval-quality metrics for eval cases (docs/internals/design.md "Evaluation"). Pure: no
 * Node, no DOM, so the renderer can show a case's score while it is being
 * graded, and main's replay, tune and compare all use the same definitions.
 *
 * A case is judged one of three ways:
 *  - graded:      relevant memories with grades 1–3 (1 = useful, 3 = essential);
 *  - expect-empty: the correct recall is nothing (an off-topic query);
 *  - unjudged:    neither (e.g. a LoCoMo question without evidence).
 * "Retrieved" is what the config actually injects, in injected order (every gate
 * applied); metrics "@k" look at its first k entries.
 *
 * Definitions (README "Evaluation metrics" repeats them):
 *  recall@k     |rel ∩ R_k| / |rel|                                  graded cases
 *  precision@k  |rel ∩ R_k| / |R_k|, 0 when R_k is empty              graded cases
 *  nDCG@k       DCG_k / IDCG_k, gain 2^grade − 1, discount log2(rank + 1);
 *               IDCG_k = DCG of the relevant grades sorted high→low, cut at k   graded cases
 *  mrr          1 / rank of the first relevant injected memory, 0 when none     graded cases
 *  hit@k        1 when R_k holds any relevant memory                 graded cases
 *  abstention   1 when nothing is injected                            expect-empty cases
 *  falseInjection memories injected (count)                          expect-empty cases
 *  tokens       tokens injected (the config's estimator)              every case
 *  budgetRecall relevant memories inside the first B tokens of the injected list / |rel|
 *  locomo@k     LoCoMo's retrieval score: |evidence ∩ R_k| / |evidence|, 1 without evidence
 *               (every case but expect-empty), comparable with the paper's Table 3
 *  recallAny@k  LongMemEval's recall_any@k: 1 when R_k holds at least one relevant memory   graded cases
 *  recallAll@k  LongMemEval's recall_all@k: 1 when R_k holds every relevant memory          graded cases
 * where R_k = the first k injected memories. Means are macro averages over the
 * cases where the metric is defined; a metric with no such case is null.
 */
import { mulberry32 } from './random'

/** A judgment: graded relevant ids, or "nothing should be recalled". */
export interface Judgment {
  relevant: readonly { id: string; grade: number }[]
  expectEmpty: boolean
}

/** One case's metrics at k; null where the metric does not apply to the case. */
export interface CaseMetrics {
  recall: number | null
  precision: number | null
  ndcg: number | null
  mrr: number | null
  hit: number | null
  abstention: number | null
  falseInjection: number | null
  tokens: number
  budgetRecall: number | null
  locomo: number | null
  /** LongMemEval recall_any@k */
  recallAny: number | null
  /** LongMemEval recall_all@k */
  recallAll: number | null
}

export const METRIC_IDS = [
  'recall',
  'precision',
  'ndcg',
  'mrr',
  'hit',
  'abstention',
  'falseInjection',
  'tokens',
  'budgetRecall',
  'locomo',
  'recallAny',
  'recallAll',
] as const
export type MetricId = (typeof METRIC_IDS)[number]

/** Metrics whose key carries k (`recall@10`). */
const AT_K: ReadonlySet<MetricId> = new Set<MetricId>(['recall', 'precision', 'ndcg', 'hit', 'locomo', 'recallAny', 'recallAll'])
/** Lower is better for these; every other metric is higher-is-better in 0..1. */
export const LOWER_IS_BETTER: ReadonlySet<MetricId> = new Set<MetricId>(['falseInjection', 'tokens'])

/** Human labels and one-line definitions, for tables, pickers and the CLI. */
export const METRIC_INFO: Record<MetricId, { label: string; about: string }> = {
  recall: { label: 'recall', about: 'share of the relevant memories among the first k injected (graded cases)' },
  precision: { label: 'precision', about: 'share of the first k injected that are relevant (graded cases; 0 when nothing is injected)' },
  ndcg: { label: 'nDCG', about: 'graded ranking quality: gain 2^grade − 1, discount log2(rank+1), ideal = relevant by grade, cut at k' },
  mrr: { label: 'MRR', about: '1 / rank of the first relevant injected memory, 0 when none (graded cases)' },
  hit: { label: 'hit', about: '1 when any relevant memory is among the first k injected (graded cases)' },
  abstention: { label: 'abstention', about: 'expect-empty cases where nothing was injected' },
  falseInjection: { label: 'false injection', about: 'memories injected per expect-empty case (lower is better)' },
  tokens: { label: 'tokens', about: 'tokens injected per case (lower is cheaper)' },
  budgetRecall: { label: 'budget recall', about: 'relevant memories that fit in the first B tokens of the injected list / relevant' },
  locomo: { label: 'LoCoMo R', about: "LoCoMo's retrieval score: evidence among the first k / evidence; a case without evidence counts 1" },
  recallAny: { label: 'recall_any', about: "LongMemEval's recall_any@k: 1 when any relevant memory is among the first k injected (graded cases)" },
  recallAll: { label: 'recall_all', about: "LongMemEval's recall_all@k: 1 when every relevant memory is among the first k injected (graded cases)" },
}

/** The key of a metric at k: `recall@10`, `mrr`. */
export function metricKey(id: MetricId, k: number): string {
  return AT_K.has(id) ? `${id}@${k}` : id
}

/** All metric keys at k, in display order (the eval --json `metrics` object's keys). */
export function metricKeys(k: number): string[] {
  return METRIC_IDS.map((m) => metricKey(m, k))
}

/** `ndcg@10` → {id: 'ndcg', k: 10}; `mrr` → {id: 'mrr', k: null}. Also accepts `recall@k` with `defaultK`. null when unknown. */
export function parseMetricKey(key: string, defaultK?: number): { id: MetricId; k: number | null } | null {
  // LongMemEval spells its metrics recall_any / recall_all: underscores are ignored.
  const m = /^([A-Za-z]+)(?:@(\d+|k))?$/.exec(key.trim().replace(/_/g, ''))
  if (!m) return null
  const id = (METRIC_IDS as readonly string[]).find((x) => x.toLowerCase() === m[1].toLowerCase()) as MetricId | undefined
  if (!id) return null
  if (!AT_K.has(id)) return m[2] === undefined ? { id, k: null } : null
  if (m[2] === undefined || m[2] === 'k') return defaultK === undefined ? null : { id, k: defaultK }
  const k = Number(m[2])
  return k >= 1 ? { id, k } : null
}

/** Gain of a grade: 2^grade − 1 (grade 1 → 1, 2 → 3, 3 → 7). */
function gain(grade: number): number {
  return Math.pow(2, grade) - 1
}

/** DCG of grades in rank order, first k: Σ (2^g − 1) / log2(rank + 1). */
function dcg(grades: ArrayLike<number>, k: number): number {
  let s = 0
  const n = Math.min(k, grades.length)
  for (let i = 0; i < n; i++) if (grades[i] > 0) s += gain(grades[i]) / Math.log2(i + 2)
  return s
}

/** Ideal DCG at k: the relevant grades sorted high → low. */
function idealDcg(relevantGrades: readonly number[], k: number): number {
  return dcg(
    [...relevantGrades].sort((a, b) => b - a),
    k,
  )
}

/**
 * A judgment compiled for repeated scoring (tune scores one case thousands of
 * times): grades by id, their count, and the ideal DCG at k.
 */
export interface CompiledJudgment {
  grades: Map<string, number>
  nRelevant: number
  expectEmpty: boolean
  idcg: number
  k: number
}

export function compileJudgment(j: Judgment, k: number): CompiledJudgment {
  const grades = new Map<string, number>()
  // A duplicated id keeps its highest grade (one memory counts once).
  for (const r of j.relevant) if (r.grade > 0) grades.set(r.id, Math.max(grades.get(r.id) ?? 0, r.grade))
  return { grades, nRelevant: grades.size, expectEmpty: j.expectEmpty, idcg: idealDcg([...grades.values()], k), k }
}

/**
 * Metrics of one case from the grades of what was injected (0 = not relevant),
 * in injected order, and each injected memory's tokens. The one implementation
 * behind every path (ids via `caseMetrics`, tune's compiled scorer).
 * @param budget token budget B for budget-aware recall
 */
export function metricsFromGrades(
  injectedGrades: ArrayLike<number>,
  injectedTokens: ArrayLike<number>,
  j: Pick<CompiledJudgment, 'nRelevant' | 'expectEmpty' | 'idcg' | 'k'>,
  budget: number,
  /** entries to read (tune passes reused scratch buffers). @default injectedGrades.length */
  length?: number,
): CaseMetrics {
  const n = length ?? injectedGrades.length
  const k = j.k
  let tokens = 0
  for (let i = 0; i < n; i++) tokens += injectedTokens[i]
  const out: CaseMetrics = {
    recall: null,
    precision: null,
    ndcg: null,
    mrr: null,
    hit: null,
    abstention: null,
    falseInjection: null,
    tokens,
    budgetRecall: null,
    locomo: null,
    recallAny: null,
    recallAll: null,
  }
  if (j.expectEmpty) {
    out.abstention = n === 0 ? 1 : 0
    out.falseInjection = n
    return out
  }
  if (j.nRelevant === 0) {
    // LoCoMo: "questions without evidence count as 1"; nothing else can be scored.
    out.locomo = 1
    return out
  }
  const inK = Math.min(k, n)
  let hits = 0
  let firstRank = 0
  for (let i = 0; i < n; i++) {
    if (injectedGrades[i] > 0) {
      if (i < inK) hits++
      if (firstRank === 0) firstRank = i + 1
    }
  }
  let used = 0
  let inBudget = 0
  for (let i = 0; i < n; i++) {
    used += injectedTokens[i]
    // The context is filled in injected order: once B is spent, the rest does not reach the model.
    if (used > budget) break
    if (injectedGrades[i] > 0) inBudget++
  }
  out.recall = hits / j.nRelevant
  out.precision = inK === 0 ? 0 : hits / inK
  out.ndcg = j.idcg > 0 ? dcg(injectedGrades, Math.min(k, n)) / j.idcg : 0
  out.mrr = firstRank === 0 ? 0 : 1 / firstRank
  out.hit = hits > 0 ? 1 : 0
  out.budgetRecall = inBudget / j.nRelevant
  out.locomo = out.recall
  out.recallAny = hits > 0 ? 1 : 0
  out.recallAll = hits === j.nRelevant ? 1 : 0
  return out
}

/** Metrics of one case from the injected ids (in order) and their tokens. */
export function caseMetrics(j: Judgment | CompiledJudgment, injected: readonly string[], tokens: readonly number[], k: number, budget: number): CaseMetrics {
  const cj = 'grades' in j && j.k === k ? j : compileJudgment(j as Judgment, k)
  const g = injected.map((id) => cj.grades.get(id) ?? 0)
  return metricsFromGrades(g, tokens, cj, budget)
}

export interface MetricSummary {
  /** metric key (at k) → macro mean over the cases where it applies; null when none */
  metrics: Record<string, number | null>
  counts: { cases: number; graded: number; expectEmpty: number; unjudged: number }
}

/** Macro means of per-case metrics, keyed at k. */
export function summarize(perCase: readonly CaseMetrics[], k: number): MetricSummary {
  const sums = new Map<MetricId, { s: number; n: number }>()
  for (const id of METRIC_IDS) sums.set(id, { s: 0, n: 0 })
  let graded = 0
  let expectEmpty = 0
  for (const m of perCase) {
    if (m.abstention !== null) expectEmpty++
    else if (m.recall !== null) graded++
    for (const id of METRIC_IDS) {
      const v = m[id]
      if (v === null) continue
      const a = sums.get(id)!
      a.s += v
      a.n++
    }
  }
  const metrics: Record<string, number | null> = {}
  for (const id of METRIC_IDS) {
    const a = sums.get(id)!
    metrics[metricKey(id, k)] = a.n === 0 ? null : a.s / a.n
  }
  return { metrics, counts: { cases: perCase.length, graded, expectEmpty, unjudged: perCase.length - graded - expectEmpty } }
}

/** Per-case metrics keyed at k (the `perCase[].metrics` object). */
export function keyed(m: CaseMetrics, k: number): Record<string, number | null> {
  const out: Record<string, number | null> = {}
  for (const id of METRIC_IDS) out[metricKey(id, k)] = m[id]
  return out
}

// ---------------------------------------------------------------------------
// How sure: bootstrap intervals and the sign test
// ---------------------------------------------------------------------------

/** A small seeded PRNG: the same seed gives the same interval on every machine. */
export const seededRandom = mulberry32

/**
 * Percentile bootstrap interval of the mean (resampling cases with replacement).
 * null for an empty sample. @param level @default 0.95 @param iterations @default 1000
 */
export function bootstrapMeanCI(
  values: readonly number[],
  opts: { level?: number; iterations?: number; seed?: number } = {},
): { mean: number; lo: number; hi: number } | null {
  const n = values.length
  if (n === 0) return null
  const level = opts.level ?? 0.95
  const iters = opts.iterations ?? 1000
  const rnd = seededRandom(opts.seed ?? 1)
  let mean = 0
  for (const v of values) mean += v
  mean /= n
  const means = new Float64Array(iters)
  for (let b = 0; b < iters; b++) {
    let s = 0
    for (let i = 0; i < n; i++) s += values[Math.floor(rnd() * n)]
    means[b] = s / n
  }
  means.sort()
  const a = (1 - level) / 2
  const at = (q: number) => means[Math.min(iters - 1, Math.max(0, Math.floor(q * iters)))]
  return { mean, lo: at(a), hi: at(1 - a) }
}

/**
 * Two-sided exact sign test: the probability of a split at least this uneven
 * between wins and losses if neither config were better (ties dropped). 1 when
 * there are no wins or losses.
 */
export function signTestP(wins: number, losses: number): number {
  const n = wins + losses
  if (n === 0) return 1
  const k = Math.min(wins, losses)
  // P(X ≤ k) for X ~ Binomial(n, 1/2), summed in log space so large n does not underflow.
  let logC = 0 // log C(n, 0)
  let tail = 0
  const log2n = n * Math.log(2)
  for (let i = 0; i <= k; i++) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i)
    tail += Math.exp(logC - log2n)
  }
  return Math.min(1, 2 * tail)
}
