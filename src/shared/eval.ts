/**
 * Evaluation shapes shared by main, the CLI and the renderer: eval cases as they
 * cross the boundary, runs (config + metrics + per-case results), run
 * comparisons and tune reports. The case schema validates UI saves and JSONL
 * lines alike. docs/internals/design.md "Evaluation".
 */
import { z } from 'zod'
import { cueSchema, type PartialRecallConfig } from './config'
import type { EvalCase, RecallConfig, EmbedderInfo } from './types'

const finite = z.number().refine(Number.isFinite, 'must be a finite number')

/** Grades: 1 = useful, 2 = important, 3 = essential (nDCG gain 2^g − 1). */
const gradeSchema = z.number().int().min(1, 'grade is 1–3').max(3, 'grade is 1–3')

const caseScopeSchema = z.strictObject({
  agentId: z.string().max(1000).optional(),
  userId: z.string().max(1000).optional(),
  sessionId: z.string().max(1000).optional(),
  tenantId: z.string().max(1000).optional(),
})

/** A case as saved from the UI or read from JSONL (camelCase). `id` absent = a new case. */
export const evalCaseInputSchema = z
  .strictObject({
    id: z.string().trim().min(1).max(1000).optional(),
    name: z.string().max(1000).default(''),
    query: z.string().max(20_000).default(''),
    cue: cueSchema.nullable().default(null),
    scope: caseScopeSchema.default({}),
    /** epoch ms the case is recalled at; null = the caller's now */
    now: finite.nullable().default(null),
    relevant: z
      .array(z.strictObject({ id: z.string().min(1).max(1000), grade: gradeSchema }))
      .max(10_000)
      .default([]),
    /** the correct recall is nothing (an off-topic query) */
    expectEmpty: z.boolean().default(false),
    tags: z.array(z.string().trim().min(1).max(200)).max(100).default([]),
    /** @default by a hash of the id (stable ~50/50, like the LoCoMo importer) */
    split: z.enum(['train', 'test']).optional(),
    /** free text kept beside the case (LoCoMo: the answer) */
    note: z.string().max(20_000).nullable().optional(),
  })
  .refine((c) => c.query.trim() !== '' || !!c.cue, { message: 'a case needs a query (or a cue)', path: ['query'] })
  .refine((c) => !(c.expectEmpty && c.relevant.length > 0), { message: 'an expect-empty case cannot list relevant memories', path: ['expectEmpty'] })

export type EvalCaseInput = z.input<typeof evalCaseInputSchema>

/** A case row for tables: the case plus its note. */
export interface EvalCaseRow extends EvalCase {
  note: string | null
}

export interface CasesPage {
  rows: EvalCaseRow[]
  offset: number
  limit: number
  total: number
  truncated: false
  tookMs: number
  /** over all cases (not just this page) */
  facets: { total: number; train: number; test: number; expectEmpty: number; unjudged: number; tags: { tag: string; count: number }[] }
}

export interface CasesImportReport {
  format: 'jsonl' | 'locomo'
  /** new cases */
  added: number
  /** existing ids overwritten */
  updated: number
  skipped: number
  /** the first problems, with their line (JSONL) or QA id (LoCoMo) */
  issues: { where: string; reason: string }[]
  issuesTruncated: boolean
  tookMs: number
}

// ---------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------

/** One case's outcome in a run: a snapshot of its judgment, what was injected, its metrics at the run's k. */
export interface CaseResult {
  id: string
  name: string
  /** injected ids in order */
  retrieved: string[]
  /** tokens of each injected memory */
  tokens: number[]
  /** the judgment at run time (so a later edit of the case does not rewrite history) */
  relevant: { id: string; grade: number }[]
  expectEmpty: boolean
  split: 'train' | 'test'
  tags: string[]
  /** metric key at k → value (null: does not apply) */
  metrics: Record<string, number | null>
  /** the dense arm did not run (embedder down, no vectors) */
  degraded?: boolean
}

export interface RunCounts {
  cases: number
  graded: number
  expectEmpty: number
  unjudged: number
  /** cases whose dense arm did not run */
  degraded: number
}

/** A run without its per-case results (for lists and the history chart). */
/**
 * Something that makes a run's numbers mean less than they seem, said with the
 * run (UI runs list and detail, `eval` output, `eval --json`).
 * K_ABOVE_TOPK: the config injects at most topK memories, so a metric at k > topK
 * scores the injected list (what the agent sees) and recall@k cannot exceed
 * what topK lets through; evaluate at k = topK, or raise topK, to compare configs.
 */
export interface EvalWarning {
  code: 'K_ABOVE_TOPK'
  message: string
  k: number
  topK: number
}

/** The warnings a run at cutoff `k` under `config` carries (pure: recomputed for saved runs). */
export function evalWarnings(config: Pick<RecallConfig, 'topK'>, k: number): EvalWarning[] {
  const topK = config?.topK
  if (typeof topK !== 'number' || !(topK < k)) return []
  return [
    {
      code: 'K_ABOVE_TOPK',
      k,
      topK,
      message: `k ${k} is above the config's topK ${topK}: at most ${topK} memories are injected, so recall@${k} counts only those (it is capped, not a ranking of ${k}). Evaluate at k ${topK}, or raise topK to ${k}, to compare rankings.`,
    },
  ]
}

/** Where an eval run's time went (ms). */
export interface EvalTimings {
  /** gathering candidates (query vectors + the engine) */
  gatherMs: number
  /** re-scoring and metrics */
  scoreMs: number
  totalMs: number
  /** gatherMs + scoreMs by phase (runs saved before phases were kept have none) */
  phases?: EvalPhaseTimings
}

/** An eval's phases (ms summed over its cases): they add up to gatherMs + scoreMs. */
export interface EvalPhaseTimings {
  /** query vectors: workspace cache and embedder, batched */
  queryVectorsMs: number
  /** listing and counting the cases' scopes */
  scopeMs: number
  /** the dense arm */
  denseMs: number
  /** the lexical arm and the bm25 of candidates it did not rank */
  lexicalMs: number
  /** recency/order arms, rows, missing similarities, building candidates */
  featuresMs: number
  /** re-ranking each case under the config (fusion, gates) */
  fusionMs: number
  /** per-case metrics and their means */
  metricsMs: number
  /** bookkeeping between phases (configs, cache keys, batching) */
  otherMs: number
  /** cases the engine gathered; the others came from the gather cache */
  gathered: number
}

/** A run's phases in one line ("query vectors 12 · scope 1 · dense 80 … ms"), for the CLI and the run detail. */
export function formatPhases(p: EvalPhaseTimings): string {
  const parts: [string, number][] = [
    ['query vectors', p.queryVectorsMs],
    ['scope', p.scopeMs],
    ['dense', p.denseMs],
    ['lexical', p.lexicalMs],
    ['features', p.featuresMs],
    ['fusion', p.fusionMs],
    ['metrics', p.metricsMs],
    ['other', p.otherMs],
  ]
  const cached = p.gathered > 0 ? '' : ' (every case from the gather cache)'
  return `${parts.map(([k, v]) => `${k} ${Math.round(v)}`).join(' · ')} ms${cached}`
}

export interface EvalRunSummary {
  id: string
  createdAt: number
  name: string
  preset: string | null
  config: RecallConfig
  embedder: EmbedderInfo
  k: number
  split: 'train' | 'test' | 'all'
  /** token budget B of budget-aware recall */
  budget: number
  metrics: Record<string, number | null>
  counts: RunCounts
  /** 'ui' | 'cli' | 'tune' */
  source: string
  timings: EvalTimings
  /** what limits these numbers (e.g. k above topK); recomputed from config and k for saved runs */
  warnings: EvalWarning[]
}

export interface EvalRun extends EvalRunSummary {
  perCase: CaseResult[]
}

/** `eval --json` (docs/internals/design.md): the documented keys plus additive ones. */
export interface EvalJson {
  config: RecallConfig
  k: number
  cases: number
  metrics: Record<string, number | null>
  perCase: { id: string; metrics: Record<string, number | null>; retrieved: string[] }[]
  split: 'train' | 'test' | 'all'
  budget: number
  counts: RunCounts
  embedder: EmbedderInfo
  preset: string | null
  /** 95% bootstrap interval of each 0..1 metric's mean */
  intervals: Record<string, { lo: number; hi: number } | null>
  gates?: { metric: string; value: number | null; threshold: number; passed: boolean }[]
  runId?: string
  timings: EvalTimings
  /** what limits these numbers (e.g. k above topK) */
  warnings: EvalWarning[]
}

// ---------------------------------------------------------------------------
// Compare
// ---------------------------------------------------------------------------

export interface RunComparison {
  metric: string
  k: number
  runs: EvalRunSummary[]
  /** per run (index ≥ 1) against run 0, over cases present in both where the metric applies */
  vsBaseline: {
    run: number
    cases: number
    mean: number | null
    baselineMean: number | null
    delta: number | null
    /** 95% paired bootstrap interval of the mean per-case delta */
    deltaCI: { lo: number; hi: number } | null
    wins: number
    losses: number
    ties: number
    /** two-sided sign test on wins vs losses */
    p: number
    /** mean Jaccard / RBO of the injected lists (churn: 1 = same memories / same order) */
    jaccard: number | null
    rbo: number | null
    /** every metric's mean over the shared cases, and its delta vs the baseline */
    metrics: Record<string, { value: number | null; baseline: number | null; delta: number | null }>
  }[]
  /** per case: the metric in each run (null = not in that run / does not apply) */
  perCase: {
    id: string
    name: string
    values: (number | null)[]
    /** vs run 0 */
    deltas: (number | null)[]
    jaccard: (number | null)[]
    rbo: (number | null)[]
    retrieved: string[][]
    /** relevant ids (the baseline run's judgment snapshot) */
    relevant: string[]
  }[]
}

// ---------------------------------------------------------------------------
// Tune
// ---------------------------------------------------------------------------

/** What the tuner may move (false = pinned at the start config's value). */
export interface TuneSpace {
  /** weights on the simplex (sum 1) @default true */
  weights: boolean
  /** recency half-life, log-uniform in [1 h, 1 year] @default true */
  halfLife: boolean
  /** composite floor, off or in [0, 0.8] @default true */
  floor: boolean
  /** topK in [1, maxTopK] @default true */
  topK: boolean
  /** hybrid fusion: rrf (k in [1, 120]) or weighted @default true */
  fusion: boolean
  /** @default max(20, k) */
  maxTopK: number
  /** retrieval mode: dense / lexical / hybrid (those the gathered arms can serve) @default true */
  mode?: boolean
  /** candidate pool from TUNE_POOLS (those the gather fetched deep enough) @default true */
  pool?: boolean
  /** recency measured from last use or from creation @default true */
  ageSource?: boolean
  /** cosine gate: off or in [0, 0.8] @default true */
  minSimilarity?: boolean
  /** token budget: off or one of TUNE_BUDGETS @default true */
  tokenBudget?: boolean
}

/** Every knob name a tune can pin (CLI --fix, the Tune tab's checkboxes). */
export const TUNE_KNOBS = ['mode', 'fusion', 'pool', 'weights', 'halfLife', 'ageSource', 'floor', 'minSimilarity', 'topK', 'tokenBudget'] as const

/** Candidate pools the tuner tries (plus the start config's own). */
export const TUNE_POOLS = [5, 10, 20, 30, 50, 100] as const
/** Token budgets the tuner tries besides "off" (plus the start config's own). */
export const TUNE_BUDGETS = [250, 500, 1000, 2000, 4000] as const

export interface TuneParams {
  weights: { similarity: number; lexical: number; recency: number; salience: number }
  halfLifeHours: number
  floor: number | null
  topK: number
  fusion: { method: 'rrf' | 'weighted'; rrfK: number }
  /** absent in reports written before these knobs were searched */
  mode?: 'dense' | 'lexical' | 'hybrid' | 'recency' | 'session'
  candidatePool?: number
  ageFrom?: 'last_used' | 'created'
  minSimilarity?: number | null
  tokenBudget?: number | null
}

/** How the cases were split for a tune (README "Tuning: the split rule"). */
export interface TuneSplitInfo {
  /** 'group': whole conversations / sessions / users on one side; 'case': each case's own train/test field */
  rule: 'group' | 'case'
  /** what grouped the cases, e.g. "conversation (scope.agentId)"; null for rule 'case' */
  by: string | null
  train: number
  test: number
  trainGroups: string[]
  testGroups: string[]
}

/** A config every tune also scores on the same held-out cases. */
export interface TuneBaseline {
  /** 'start', 'preset:<name>', 'lexical-bm25', 'dense-cosine' */
  name: string
  label: string
  kind: 'start' | 'preset' | 'lexical' | 'dense'
  config: RecallConfig
  /** on the train cases (null when it was only gathered for the held-out ones) */
  train: number | null
  test: number | null
  testCI: { lo: number; hi: number } | null
  testTokens: number | null
  /** tuned − baseline, mean over the held-out cases where both apply (paired) */
  delta: number | null
  /** 95% paired bootstrap interval of delta */
  deltaCI: { lo: number; hi: number } | null
  verdict: 'tuned-better' | 'within-noise' | 'baseline-better' | 'n/a'
  /** why n/a, or what the baseline lacked (e.g. a preset needing sessionId) */
  note: string | null
}

export interface TuneTrial {
  trial: number
  phase: 'base' | 'baseline' | 'random' | 'refine'
  params: TuneParams
  train: number
  /** tokens injected per train case */
  tokens: number
}

export interface TuneHeatmap {
  /** the three weights on the triangle's corners */
  axes: [string, string, string]
  /** the fourth weight, held at the best config's value */
  fixed: { feature: string; weight: number }
  /** grid steps per edge */
  steps: number
  /** each grid point: the three axis weights (summing to 1 − fixed) and the train metric there */
  cells: { w: [number, number, number]; value: number }[]
  min: number
  max: number
}

/** One scope filter of the start config and how many judged-relevant memories it excludes on its own. */
export interface ScopeExclusion {
  filter: 'unit' | 'tiers' | 'kinds' | 'roles' | 'after' | 'before'
  /** as set, e.g. "unit=session", "kinds=[semantic]" */
  value: string
  /** judged-relevant (case, memory) pairs it excludes */
  excludes: number
}

/** How many judged-relevant memories the start config's unit and scope can reach (checked before a tune). */
export interface ScopeDiagnosis {
  /** judged-relevant (case, memory) pairs whose memory is in the store */
  relevant: number
  reachable: number
  /** relevant ids the store does not hold (not blamed on a filter) */
  missing: number
  /** reachable < half of relevant: the scope, not the scoring, decides the score */
  minority: boolean
  /** the filters that exclude judged memories, most first */
  excludedBy: ScopeExclusion[]
  /** the start config with those filters lifted (null when the scope is not a minority) */
  widened: RecallConfig | null
  /** the widening as a partial config to merge over the start (null when a list cannot name what it must admit) */
  widenPatch: PartialRecallConfig | null
  /** what widening changes, e.g. "unit=memory, kinds: any" */
  widenLabel: string | null
  /** one plain sentence */
  message: string
}

/** The scope check a tune ran first, and whether it searched the widened scope. */
export interface TuneScope extends ScopeDiagnosis {
  /** true: the search and the single-arm baselines ran on `widened` (the start baseline keeps the start scope) */
  applied: boolean
}

export interface TuneReport {
  metric: string
  k: number
  /** configs scored */
  trials: number
  budget: number
  cancelled: boolean
  seed: number
  space: TuneSpace
  split: TuneSplitInfo
  /** knobs held at the start config's value (pinned, or nothing to search) */
  pinned: string[]
  /** knobs searched, with the values tried (for the report's "search space") */
  searched: Record<string, string>
  base: { config: RecallConfig; train: number | null; test: number | null; trainTokens: number; testTokens: number }
  best: {
    config: RecallConfig
    params: TuneParams
    train: number | null
    test: number | null
    trainTokens: number
    testTokens: number
    /** every metric on both splits */
    trainMetrics: Record<string, number | null>
    testMetrics: Record<string, number | null>
    testCI: { lo: number; hi: number } | null
  }
  /** the 10 best by train score, each also scored on test (reported, never used to choose) */
  top: (TuneTrial & { test: number | null })[]
  /** best-so-far after each trial (downsampled to ≤ 400 points) */
  curve: { trial: number; best: number; value: number }[]
  heatmap: TuneHeatmap | null
  /** the start config, every preset's default, lexical-only BM25 and dense-only cosine, on the same held-out cases */
  baselines: TuneBaseline[]
  /** tuned and baselines by held-out score (best first) */
  ranking: { name: string; label: string; test: number | null; testCI: { lo: number; hi: number } | null }[]
  /** what to ship: the best on held-out cases (ties to the tuned config), said plainly */
  recommended: { name: string; label: string; config: RecallConfig; message: string }
  /** k-fold cross-validation of the whole tune (optional) */
  folds?: {
    by: string | null
    perFold: { groups: string[]; cases: number; tuned: number | null; bestBaseline: { name: string; value: number | null } }[]
    meanTuned: number | null
    meanBestBaseline: number | null
  } | null
  embedder: EmbedderInfo
  timings: { gatherMs: number; searchMs: number; totalMs: number; configsPerSec: number }
  /** the scope check run before the search (absent in reports saved before it existed) */
  scope?: TuneScope | null
}

/** A tune report as saved in the workspace. */
export interface SavedTuneReport extends TuneReport {
  id: string
  createdAt: number
  name: string
  /** 'ui' | 'cli' */
  source: string
}

/** A saved tune report without its body (the list beside runs). */
export interface TuneReportSummary {
  id: string
  createdAt: number
  name: string
  source: string
  metric: string
  k: number
  trials: number
  cancelled: boolean
  seed: number
  split: TuneSplitInfo
  baseTest: number | null
  tunedTrain: number | null
  tunedTest: number | null
  /** 'tuned' or a baseline's name */
  recommended: string
  recommendedLabel: string
  bestBaseline: { name: string; test: number | null } | null
}
