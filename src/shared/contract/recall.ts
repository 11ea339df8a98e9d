/** The contract's recall channels: run, presets, compare, refresh, ages, scope count. */
import { z } from 'zod'
import type { RecallTrace } from '../types'
import { cueSchema, partialConfigSchema, scopeSchema } from '../config'
import type { Preset } from '../presets'
import { id, ms, out, presetName } from './common'

/** What every recall channel shares: the query, the time, how to embed. */
export const recallQueryShape = {
  /** The raw utterance (lexical arm; dense arm too unless a cue is used). */
  query: z.string().max(20_000).default(''),
  /** Seed 003 cue {goal, currentStep, openQuestions}: the dense arm embeds it. */
  cue: cueSchema.nullable().optional(),
  /** Epoch ms the recall happens at (time travel). @default Date.now() in main */
  now: ms.optional(),
  /** Embedder spec. @default the saved setting, else hashing when the DB holds hashing vectors, else ollama:<first stored model> */
  embedder: z.string().trim().min(1).max(300).optional(),
  /** An explicit query vector: replaces the embedder. */
  queryVector: z.array(z.number().refine(Number.isFinite, 'must be finite')).min(1).max(65_536).optional(),
}

export interface RecallCompare {
  now: number
  runs: { label: string; preset: string | null; trace: RecallTrace }[]
  /** every pair of runs (a < b) */
  overlap: { a: number; b: number; jaccard: number; rbo: number }[]
  /** each injected id's rank per run (null = not injected) and the delta vs run 0 */
  ranks: { id: string; ranks: (number | null)[]; deltas: (number | null)[] }[]
}

export interface RecallAges {
  now: number
  from: 'last_used' | 'created'
  /** bin width, ms */
  binMs: number
  bins: { startMs: number; endMs: number; count: number }[]
  total: number
  /** memories never used by `now` (their age is measured from created_at) */
  neverUsed: number
  maxAgeMs: number
}

export const recallChannels = {
  // --- recall --------------------------------------------------------------
  /**
   * Run one recall: the trace of every candidate (features, contributions, the gate that
   * dropped it), the results and the exact context block. Missing config fields come from
   * `preset` (default fieldguide). The renderer re-scores `trace.candidates` locally with
   * src/shared/scoring.ts when a slider moves.
   */
  'recall.run': {
    input: z.strictObject({
      ...recallQueryShape,
      /** `portal-episodic` | `portal-semantic` | `engram` | `fieldguide` | `neo`, or `preset:variant`. @default fieldguide */
      preset: presetName.optional(),
      /** A partial RecallConfig merged over the preset. */
      config: partialConfigSchema.optional(),
    }),
    output: out<RecallTrace>(),
  },
  /** The five seed presets (and their variants) as full configs. */
  'recall.presets': { input: z.strictObject({}), output: out<readonly Preset[]>() },
  /**
   * The same query through 2–5 presets/configs at the same `now` with the same query
   * vector: each trace, pairwise Jaccard + rank-biased overlap of the injected ids, and
   * every id's rank per run (delta vs the first run).
   */
  'recall.compare': {
    input: z.strictObject({
      ...recallQueryShape,
      runs: z
        .array(z.strictObject({ label: z.string().max(200).optional(), preset: presetName.optional(), config: partialConfigSchema.optional() }))
        .min(2, 'compare needs at least 2 runs')
        .max(5, 'compare takes at most 5 runs'),
      /** RBO persistence. @default 0.9 */
      rboP: z.number().gt(0).lt(1).default(0.9),
    }),
    output: out<RecallCompare>(),
  },
  /**
   * Write mode only: apply refreshOnRecall for real — `last_used_at = now` (and use_count + 1)
   * for the given memories. A read-only DB answers READ_ONLY and is not touched.
   */
  'recall.refresh': {
    input: z.strictObject({ ids: z.array(id).min(1).max(10_000), now: ms }),
    output: out<{ updated: number }>(),
  },
  /** Histogram of memory ages in a scope at `now` (from last use or creation), for the decay curve. */
  'recall.ages': {
    input: z.strictObject({
      scope: scopeSchema.partial().default({}),
      /** @default Date.now() in main */
      now: ms.optional(),
      /** @default 'last_used' (falls back to created_at when never used by `now`) */
      from: z.enum(['last_used', 'created']).default('last_used'),
      /** @default 40 */
      bins: z.number().int().min(1).max(500).default(40),
    }),
    output: out<RecallAges>(),
  },
  /**
   * How many memories a scope holds at `now`: the exact count the Recall screen shows when the engine's stops at
   * its scan threshold. One count of the scope, kept until the DB changes (and, where the store can tell no memory
   * is newer than `now`, for any later `now`).
   */
  'recall.scopeCount': {
    input: z.strictObject({
      scope: scopeSchema.partial().default({}),
      /** @default Date.now() in main */
      now: ms.optional(),
    }),
    output: out<{ total: number }>(),
  },
} as const
