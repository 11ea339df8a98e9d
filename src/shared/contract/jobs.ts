/** The contract's job channels: start an import, list, get and cancel background jobs. */
import { z } from 'zod'
import type { ImportReport, JobProgress } from '../jobs'
import { id, out } from './common'

export type { BackfillReport, ImportIssue, ImportReport } from '../jobs'

export type ImportReportInfo = ImportReport

export const jobsChannels = {
  // --- import --------------------------------------------------------------
  /**
   * Start a background import of an Engram DB, a JSONL file or LoCoMo JSON into a new
   * canonical DB (`out`); LoCoMo QA items become eval cases in `out`.recallscope. Progress:
   * `onJobProgress`; result: ImportReportInfo. Cancelling leaves no output file behind.
   */
  'import.start': {
    input: z.strictObject({
      kind: z.enum(['engram', 'jsonl', 'locomo']),
      /** input file */
      in: z.string().trim().min(1, 'in is required').max(4096),
      /** canonical DB to write */
      out: z.string().trim().min(1, 'out is required').max(4096),
      /** overwrite `out` (and drop its old workspace). @default false */
      force: z.boolean().default(false),
      /** model name for stored vectors that do not name one (engram, jsonl). @default 'nomic-embed-text' */
      model: z.string().trim().min(1).max(300).optional(),
      /** also write offline hashing-256 vectors. @default the importer's (locomo: hashing, else none) */
      embed: z.enum(['hashing', 'none']).optional(),
    }),
    output: out<JobProgress>(),
  },

  // --- jobs ----------------------------------------------------------------
  /** Background jobs of this process (newest first), without their results. */
  'jobs.list': { input: z.strictObject({}), output: out<JobProgress[]>() },
  /** One job's state, with its result once done (for a renderer that missed the progress event). */
  'jobs.get': { input: z.strictObject({ jobId: id }), output: out<JobProgress>() },
  /** Cancel a running job; `cancelled` is false when it had already finished. */
  'jobs.cancel': { input: z.strictObject({ jobId: id }), output: out<{ cancelled: boolean }>() },
} as const
