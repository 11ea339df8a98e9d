/**
 * Background jobs (import, backfill, eval, tune): what their progress events
 * carry and what a finished job's `result` is, per kind. No imports but types,
 * so the sandboxed preload can bundle the channel name.
 */
import type { EvalRunSummary, TuneReport } from './eval'
import type { MapRefinement } from './map'
import type { CounterfactualReport } from './trace'

/**
 * The result of an `embed.backfill` job (`JobProgress.result` when done). Vectors go
 * to the workspace DB, never to the agent DB; a valid agent vector wins over them.
 */
export interface BackfillReport {
  /** the model the vectors are stored under (the embedder's) */
  model: string
  /** the embedder spec, recorded with every vector */
  embedder: string
  /** vector length (null: nothing embedded and none stored) */
  dim: number | null
  /** memories in the scope */
  inScope: number
  /** had a usable vector already (agent or earlier backfill) */
  alreadyEmbedded: number
  /** vectors written now */
  embedded: number
  /** memories with empty content (nothing to embed) */
  skippedEmpty: number
  /** vectors the embedder returned empty or with NaN/Infinity (not written) */
  rejected: number
  /** embedding calls made */
  batches: number
  tookMs: number
}

/** One thing an importer could not take across as-is. */
export interface ImportIssue {
  /** skipped = left out of the output; repaired = written after a documented fix */
  action: 'skipped' | 'repaired'
  /** Short, stable text; issues are grouped by it. */
  reason: string
  /** 1-based line of a JSONL input */
  line?: number
  /** source table (Engram) */
  table?: string
  /** memory / session / conversation id */
  id?: string
  /** LoCoMo QA item: `${sample_id}#${index}` */
  qa?: string
  /** the evidence id as written in the input */
  evidence?: string
  /** LoCoMo session key, e.g. `session_20` */
  session?: string
  /** the offending value or the fix applied */
  detail?: string
}

/** What an importer reports (`recallscope import --json`, and `JobProgress.result` of an `import.start` job). */
export interface ImportReport {
  importer: string
  input: string
  /** the canonical DB written */
  output: string
  /** the output's workspace DB when the importer wrote one (LoCoMo eval cases) */
  workspace: string | null
  /** detected input layout (Engram: engram-v0.2 / engram-v0.5 / engram-v1) */
  layout: string | null
  written: { memories: number; sessions: number; embeddings: number; evalCases: number }
  /** vectors written per model (after wrong-dimension pruning) */
  models: { model: string; ownerType: 'memory' | 'session'; dim: number; count: number }[]
  /** total skipped items (all of them, not only the listed ones) */
  skipped: number
  /** total repaired items */
  repaired: number
  /** every reason with its total count, most frequent first */
  reasons: { action: ImportIssue['action']; reason: string; count: number }[]
  /** the first `maxIssues` issues in input order */
  issues: ImportIssue[]
  /** true when `issues` is capped */
  issuesTruncated: boolean
  /** facts worth knowing that are not problems (e.g. rows without an embedding) */
  notes: string[]
  tookMs: number
}

/** Job kind → the `result` of a job of that kind once `state` is 'done'. */
export interface JobResults {
  import: ImportReport
  'embed.backfill': BackfillReport
  eval: EvalRunSummary
  tune: TuneReport
  /** a `map.refine` job: the UMAP layout */
  map: MapRefinement
  /** a `trace.counterfactual` job: the decision regenerated without each memory */
  counterfactual: CounterfactualReport
}
export type JobKind = keyof JobResults

export interface JobProgress<K extends JobKind = JobKind> {
  jobId: string
  kind: K
  label: string
  state: 'running' | 'done' | 'failed' | 'cancelled'
  done: number
  total: number
  message?: string
  /** present when state is 'done' (pushed events may omit a large one: `jobs.get` has it) */
  result?: JobResults[K]
  error?: { code: string; message: string }
  startedAt: number
  updatedAt: number
}

/** The push channel for job progress: the IPC event main sends and the preload listens on (browser mode: GET /api/progress). */
export const JOB_PROGRESS_CHANNEL = 'jobs.progress'
