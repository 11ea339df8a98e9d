/**
 * One map task, computed where it is called: the worker runs exactly this, and
 * tests call it in their own thread to check the worker gives the same answer.
 */
import { MapHelpers } from './mapHelpers'
import { computePca, projectPca } from './pca'
import type { MapTask, MapTaskResult, PcaOutput } from './protocol'
import { layoutUmap } from './umapLayout'

/** Run a task; `progress` is told how far UMAP is, every phase (return false from it to stop early). */
export function computeMapTask<T extends MapTask>(
  t: T,
  progress: (done: number, total: number, message: string) => boolean | void = () => undefined,
): MapTaskResult[T['task']] {
  if (t.task === 'pca') {
    const pca = computePca(t.data, t.n, t.dim, { seed: t.seed, maxIterations: t.maxIterations, fitRows: t.fitRows, memory: t.memory })
    const out: PcaOutput = { ...pca, query: t.query ? projectPca(pca, t.query) : null }
    return out as MapTaskResult[T['task']]
  }
  // Helper threads start now and boot while the neighbour search runs; the layout uses those that are up.
  const helpers = MapHelpers.start()
  try {
    return layoutUmap(t.data, t.n, t.dim, t.init, t.query, {
      nNeighbors: t.nNeighbors,
      nEpochs: t.nEpochs,
      seed: t.seed,
      onProgress: progress,
      helpers,
    }) as MapTaskResult[T['task']]
  } finally {
    helpers.close()
  }
}
