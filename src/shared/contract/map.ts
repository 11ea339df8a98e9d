/** The contract's embedding-map channels: build (PCA) and refine (UMAP job). */
import { z } from 'zod'
import { partialConfigSchema } from '../config'
import type { JobProgress } from '../jobs'
import type { MapData } from '../map'
import { id, out, presetName, seedSchema } from './common'
import { recallQueryShape } from './recall'

export const mapChannels = {
  // --- map -----------------------------------------------------------------
  /**
   * The embedding map of a recall's scope (or an eval case's): the memories with a vector under the
   * recall's model, marked injected / dropped (gate) / relevant / missed, with the query, laid out by
   * PCA (top two components, computed on a worker thread; the query projected exactly). Above `cap`
   * points a seeded sample that keeps every marked memory (`sampled`). Refine with `map.refine`.
   */
  'map.build': {
    input: z.strictObject({
      ...recallQueryShape,
      /** @default fieldguide */
      preset: presetName.optional(),
      /** A partial RecallConfig merged over the preset. */
      config: partialConfigSchema.optional(),
      /** An eval case: its query, scope, `now` and relevant memories replace the request's. */
      caseId: id.optional(),
      /** Points shown at most (sampled above). @default 20000 */
      cap: z.number().int().min(10).max(200_000).default(20_000),
      /** Sampling and layout seed. @default 1 */
      seed: seedSchema,
    }),
    output: out<MapData>(),
  },
  /**
   * Refine a built map with UMAP (approximate neighbour graph + UMAP's layout, started from the PCA
   * frame) as a background job (progress through every phase: neighbours, then layout epochs;
   * cancellable); the job's result is the layout and the query's placement.
   */
  'map.refine': {
    input: z.strictObject({
      mapId: id,
      /** @default 15 */
      nNeighbors: z.number().int().min(2).max(200).default(15),
      /** @default 200 */
      nEpochs: z.number().int().min(1).max(2000).default(200),
    }),
    output: out<JobProgress>(),
  },
} as const
