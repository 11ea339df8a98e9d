/**
 * Handlers for the embedding map: build (the recall, the points and the PCA
 * frame, computed on a worker thread) and refine (UMAP as a cancellable job).
 * The last few maps' vectors stay here, keyed by map id, so refining never
 * sends vectors through the renderer.
 */
import { randomUUID } from 'node:crypto'
import { RecallscopeError } from '../../../shared/result'
import type { MapRefinement } from '../../../shared/map'
import { buildMap, type MapMatrix } from '../../map/buildMap'
import { runMapTask } from '../../map/runMapTask'
import { UMAP_MIN_ROWS } from '../../map/umapLayout'
import type { App } from '../app'
import type { Handlers } from '../register'

/** Maps kept for refinement (a 20,000 × 768 map holds ~60 MB of vectors). */
const KEEP_MAPS = 3

export function mapHandlers(app: App): Pick<Handlers, 'map.build' | 'map.refine'> {
  const maps = new Map<string, MapMatrix>()
  return {
    'map.build': async (i) => {
      const store = await app.readyStore()
      const s = app.settings()
      const { data, matrix } = await buildMap(store, {
        query: i.query,
        cue: i.cue ?? null,
        preset: i.preset,
        config: i.config,
        now: i.now ?? Date.now(),
        embedder: i.embedder ?? s.embedder ?? null,
        embedderOptions: { ollamaHost: s.ollamaHost, openaiBaseUrl: s.openaiBaseUrl },
        queryVector: i.queryVector ?? null,
        caseId: i.caseId,
        cap: i.cap,
        seed: i.seed,
      })
      const mapId = `map-${randomUUID()}`
      maps.set(mapId, matrix)
      for (const k of maps.keys()) if (maps.size > KEEP_MAPS) maps.delete(k)
      return { ...data, mapId }
    },
    'map.refine': (i) => {
      const m = maps.get(i.mapId)
      if (!m) throw new RecallscopeError('NOT_FOUND', `No map ${i.mapId} (maps are kept for the last ${KEEP_MAPS} builds): build it again`)
      if (m.n < UMAP_MIN_ROWS) throw new RecallscopeError('BAD_INPUT', `UMAP needs at least ${UMAP_MIN_ROWS} points; this map has ${m.n} (PCA only)`)
      return app.jobs.start('map', `Map: UMAP of ${m.n.toLocaleString('en-US')} points`, async (ctl): Promise<MapRefinement> => {
        const t0 = performance.now()
        ctl.progress(0, i.nEpochs, 'nearest neighbours')
        const r = await runMapTask(
          { task: 'umap', data: m.data, n: m.n, dim: m.dim, query: m.query, seed: m.seed, init: m.pca, nNeighbors: i.nNeighbors, nEpochs: i.nEpochs },
          { signal: ctl.signal, onProgress: (done, total, message) => ctl.progress(done, total, message) },
        )
        return {
          mapId: i.mapId,
          coords: Array.from(r.coords),
          query: r.query,
          queryPlacement: r.queryPlacement,
          epochs: r.epochs,
          nNeighbors: r.nNeighbors,
          tookMs: performance.now() - t0,
        }
      })
    },
  }
}
