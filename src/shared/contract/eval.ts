/** The contract's eval channels: cases, eval runs, tune reports, run comparison. */
import { z } from 'zod'
import { partialConfigSchema } from '../config'
import type { JobProgress } from '../jobs'
import {
  evalCaseInputSchema,
  type CasesImportReport,
  type CasesPage,
  type EvalCaseRow,
  type EvalRun,
  type EvalRunSummary,
  type RunComparison,
  type SavedTuneReport,
  type TuneReportSummary,
  type ScopeDiagnosis,
} from '../eval'
import { id, limit, ms, offset, out, presetName, seedSchema, strList } from './common'

/** What eval.run and eval.tune share: the config under test and how to embed. */
const evalConfigShape = {
  /** `preset` or `preset:variant` the config starts from. @default fieldguide */
  preset: presetName.optional(),
  /** A partial RecallConfig merged over the preset (case scopes are applied per case). */
  config: partialConfigSchema.optional(),
  /** budget-aware recall's token budget B. @default config.tokenBudget ?? 2000 */
  budget: z.number().int().min(1).max(10_000_000).optional(),
  /** Embedder spec. @default the saved setting, else the DB's default */
  embedder: z.string().trim().min(1).max(300).optional(),
  /** `now` for cases without one. @default Date.now() in main */
  now: ms.optional(),
  /** Drop cached candidates and gather again (the agent DB changed). @default false */
  fresh: z.boolean().default(false),
}

export const evalChannels = {
  // --- eval ----------------------------------------------------------------
  /** A page of eval cases (workspace `eval_cases`) with facets over all of them: splits, tags, expect-empty, unjudged. */
  'cases.list': {
    input: z.strictObject({
      /** @default 'all' */
      split: z.enum(['train', 'test', 'all']).default('all'),
      tag: z.string().max(200).optional(),
      /** substring of id, name or query */
      search: z.string().max(1000).optional(),
      kind: z.enum(['graded', 'expectEmpty', 'unjudged']).optional(),
      /** @default 'id' (natural order) */
      sort: z.enum(['id', 'name', 'split', 'relevant', 'now']).default('id'),
      dir: z.enum(['asc', 'desc']).default('asc'),
      offset,
      limit,
    }),
    output: out<CasesPage>(),
  },
  /** One eval case with its note (LoCoMo: the answer). */
  'cases.get': { input: z.strictObject({ id }), output: out<EvalCaseRow>() },
  /**
   * Create (no `id`) or update a case: query (or cue), scope, `now`, relevant ids graded 1–3 or
   * `expectEmpty` (nothing should be recalled), tags, split (default: by a hash of the id).
   */
  'cases.save': { input: z.strictObject({ case: evalCaseInputSchema }), output: out<EvalCaseRow>() },
  /** Delete cases by id (their notes too). */
  'cases.delete': { input: z.strictObject({ ids: strList.min(1, 'ids is required') }), output: out<{ deleted: number }>() },
  /**
   * Import cases: `jsonl` (one case per line, the fields cases.save takes; snake_case and bare relevant
   * ids accepted) or `locomo` (LoCoMo QA for the conversations this DB holds: evidence → relevant ids).
   * Give the file's `text` (the renderer reads it) or a `path` main can read. Upserts by id; bad lines
   * are skipped and reported.
   */
  'cases.import': {
    input: z
      .strictObject({
        format: z.enum(['jsonl', 'locomo']),
        text: z.string().max(15_000_000).optional(),
        path: z.string().trim().min(1).max(4096).optional(),
      })
      .refine((v) => (v.text === undefined) !== (v.path === undefined), { message: 'give the file text or a path (one of them)', path: ['text'] }),
    output: out<CasesImportReport>(),
  },
  /** Export cases as JSONL (the import format): returned as text, and written to `path` when given. */
  'cases.export': {
    input: z.strictObject({
      split: z.enum(['train', 'test', 'all']).default('all'),
      tag: z.string().max(200).optional(),
      ids: strList.optional(),
      path: z.string().trim().min(1).max(4096).optional(),
      /** replace an existing file at `path`. @default false */
      overwrite: z.boolean().default(false),
    }),
    output: out<{ text: string; count: number; path: string | null }>(),
  },
  /**
   * Evaluate a config on the cases (a background job: progress while candidates are gathered,
   * cancellable). Candidates are gathered once per case and cached for this open DB, so a re-run
   * under other scoring knobs only re-scores. The job's result is the saved run's summary.
   */
  'eval.run': {
    input: z.strictObject({
      ...evalConfigShape,
      /** metric cutoff. @default 10 */
      k: z.number().int().min(1).max(1000).default(10),
      /** @default 'all' */
      split: z.enum(['train', 'test', 'all']).default('all'),
      tag: z.string().max(200).optional(),
      caseIds: strList.optional(),
      /** name shown in the runs list. @default the preset name */
      name: z.string().max(200).optional(),
    }),
    output: out<JobProgress>(),
  },
  /**
   * Tune mode, fusion, pool, weights (simplex), half-life, age source, floor, minSimilarity, topK and
   * budget on train conversations; rank with the baselines on held-out ones; report train and
   * held-out test side by side, a weight-simplex heatmap and the best config. A background job
   * (progress, cancel: the best so far is reported); the job's result is the TuneReport.
   */
  'eval.tune': {
    input: z.strictObject({
      ...evalConfigShape,
      /** objective (higher is better). @default 'recall@10' */
      metric: z.string().trim().min(1).max(40).default('recall@10'),
      /** configs to score. @default 1000 */
      trials: z.number().int().min(1).max(100_000).default(1000),
      /** @default 1 */
      seed: seedSchema,
      /** what may move (each @default true); maxTopK @default max(20, k) */
      space: z
        .strictObject({
          weights: z.boolean().optional(),
          halfLife: z.boolean().optional(),
          floor: z.boolean().optional(),
          topK: z.boolean().optional(),
          fusion: z.boolean().optional(),
          maxTopK: z.number().int().min(1).max(1000).optional(),
          mode: z.boolean().optional(),
          pool: z.boolean().optional(),
          ageSource: z.boolean().optional(),
          minSimilarity: z.boolean().optional(),
          tokenBudget: z.boolean().optional(),
        })
        .optional(),
      /** 'auto' (default): whole conversations / sessions held out when the cases name one */
      splitRule: z.enum(['auto', 'group', 'case']).optional(),
      /** share of cases held out (whole groups). @default 0.3 */
      testFraction: z.number().gt(0).lt(1).optional(),
      /** k-fold cross-validation of the tune besides the single split */
      folds: z.number().int().min(2).max(20).optional(),
      /** search the start scope as given even when it reaches under half of the judged memories. @default false */
      keepScope: z.boolean().optional(),
    }),
    output: out<JobProgress>(),
  },
  /**
   * Before a tune: how many judged-relevant memories the start config's unit and scope filters
   * reach; when under half, which filter excludes them and the widening (a partial config).
   * Reads only the judged rows, in the store's job worker.
   */
  'eval.scope': {
    input: z.strictObject({
      preset: evalConfigShape.preset,
      config: evalConfigShape.config,
    }),
    output: out<ScopeDiagnosis>(),
  },
  /** Saved tune reports, newest first (summaries; listed beside runs). */
  'tune.list': { input: z.strictObject({ limit: z.number().int().min(1).max(10_000).default(500) }), output: out<TuneReportSummary[]>() },
  /** One saved tune report, whole (the JSON `tune --json` prints). */
  'tune.get': { input: z.strictObject({ id }), output: out<SavedTuneReport>() },
  /** Delete tune reports by id. */
  'tune.delete': { input: z.strictObject({ ids: strList.min(1, 'ids is required') }), output: out<{ deleted: number }>() },
  /** Saved runs, newest first (config, embedder, metrics; no per-case results). */
  'runs.list': { input: z.strictObject({ limit: z.number().int().min(1).max(10_000).default(500) }), output: out<EvalRunSummary[]>() },
  /** One run with every case's injected list, judgment snapshot and metrics. */
  'runs.get': { input: z.strictObject({ id }), output: out<EvalRun>() },
  /**
   * Compare 2–8 runs case by case against the first: the metric per case, wins / losses / ties with a
   * sign test, mean delta with a paired bootstrap interval, churn (Jaccard, RBO) of the injected lists.
   */
  'runs.compare': {
    input: z.strictObject({
      ids: z.array(id).min(2, 'compare needs at least 2 runs').max(8, 'compare takes at most 8 runs'),
      /** e.g. `ndcg@10`, `mrr`. @default ndcg@k of the first run */
      metric: z.string().trim().min(1).max(40).optional(),
      /** RBO persistence. @default 0.9 */
      rboP: z.number().gt(0).lt(1).default(0.9),
    }),
    output: out<RunComparison>(),
  },
  /** Rename a run. */
  'runs.rename': { input: z.strictObject({ id, name: z.string().max(200) }), output: out<EvalRunSummary>() },
  /** Delete runs by id. */
  'runs.delete': { input: z.strictObject({ ids: strList.min(1, 'ids is required') }), output: out<{ deleted: number }>() },
} as const
