/**
 * Handlers for the embedding map: build (the recall, the points and the PCA
 * frame, computed on a worker thread) and refine (UMAP as a cancellable job).
 * The last few maps' vectors stay here, keyed by map id, so refining never
 * sends vectors through the renderer.
 *
 * Jobs are not piled up (docs/guide/jobs.md): the same request on the same
 * open store gets the same map back (its id, so the same refinement), the same
 * refinement asked again is the job already running or done, and a refinement
 * of another map cancels the one still running (the screen shows one map).
 */
import { randomUUID } from 'node:crypto'
import { RecallscopeError } from '../../../shared/result'
import type { MapData, MapRefinement } from '../../../shared/map'
import type { MemorySource } from '../../store/source'
import { buildMap, type MapMatrix } from '../../map/buildMap'
import { runMapTask } from '../../map/runMapTask'
import { cpuPool } from '../../jobs/cpuPool'
import { UMAP_MIN_ROWS } from '../../map/umapLayout'
import type { App } from '../app'
import type { Handlers } from '../register'

/** The message of a refinement waiting for a pool slot (the jobs list shows it; a test counts the others as running). */
export const QUEUED_MESSAGE = 'waiting for a free map worker'

/** Maps kept for refinement (a 20,000 × 768 map holds ~60 MB of vectors). */
const KEEP_MAPS = 3

/** A built map kept for refinement, with the request that built it (to hand the same map to the same request). */
interface Kept {
  matrix: MapMatrix
  data: MapData
  /** the request, as JSON; '' when it depends on the clock (no `now` given) and so is never reused */
  key: string
  store: MemorySource
}

/** What the map job computes, in words (the jobs list names it so): "UMAP layout of 5,656 memories for “deploy…” (fieldguide)". */
function describeRefine(d: MapData): string {
  const what = d.caseName ? `eval case ${d.caseName}` : d.query ? `“${d.query.length > 40 ? `${d.query.slice(0, 39)}…` : d.query}”` : 'the cue'
  return `Map: UMAP layout of ${d.shown.toLocaleString('en-US')} memories for ${what} (${d.preset})`
}

export function mapHandlers(app: App): Pick<Handlers, 'map.build' | 'map.refine'> {
  const maps = new Map<string, Kept>()
  /** refinement jobs by map id + options; `running` is the one the screen waits for */
  const refinements = new Map<string, string>()
  let running: { key: string; jobId: string } | null = null
  return {
    'map.build': async (i) => {
      const store = await app.readyStore()
      const s = app.settings()
      // Without an explicit `now` the map follows the clock (recency decides what is injected): never reused.
      const key = i.now === undefined ? '' : JSON.stringify({ ...i, embedder: i.embedder ?? s.embedder ?? null })
      const same = key ? [...maps.entries()].find(([, k]) => k.key === key && k.store === store) : undefined
      if (same) {
        // most recently used last, so the eviction below drops the oldest
        maps.delete(same[0])
        maps.set(same[0], same[1])
        return same[1].data
      }
      // The whole build holds a pool slot, not just its PCA worker: the vectors it gathers are the memory to bound.
      const { data, matrix } = await cpuPool.run(() =>
        buildMap(store, {
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
        }),
      )
      const mapId = `map-${randomUUID()}`
      const full = { ...data, mapId }
      maps.set(mapId, { matrix, data: full, key, store })
      for (const k of maps.keys()) if (maps.size > KEEP_MAPS) maps.delete(k)
      return full
    },
    'map.refine': (i) => {
      const kept = maps.get(i.mapId)
      if (!kept) throw new RecallscopeError('NOT_FOUND', `No map ${i.mapId} (maps are kept for the last ${KEEP_MAPS} builds): build it again`)
      const m = kept.matrix
      if (m.n < UMAP_MIN_ROWS) throw new RecallscopeError('BAD_INPUT', `UMAP needs at least ${UMAP_MIN_ROWS} points; this map has ${m.n} (PCA only)`)
      const key = JSON.stringify([i.mapId, i.nNeighbors, i.nEpochs])
      // The same refinement again (the screen revisited, a second tab): the job that computes or computed it.
      const known = refinements.get(key)
      if (known) {
        const p = app.jobs.get(known)
        if (p.state === 'running' || p.state === 'done') return p
      }
      // Another map's refinement still running: superseded (the screen shows the new map), so it stops.
      if (running && running.key !== key) {
        const prev = app.jobs.get(running.jobId)
        if (prev.state === 'running') app.jobs.cancel(running.jobId)
      }
      const p = app.jobs.start('map', describeRefine(kept.data), async (ctl): Promise<MapRefinement> => {
        const t0 = performance.now()
        // One bounded pool for every map worker (jobs/cpuPool.ts): a refinement past its slots waits, shown as such.
        const r = await cpuPool.run(
          () => {
            ctl.progress(0, i.nEpochs, 'nearest neighbours')
            return runMapTask(
              { task: 'umap', data: m.data, n: m.n, dim: m.dim, query: m.query, seed: m.seed, init: m.pca, nNeighbors: i.nNeighbors, nEpochs: i.nEpochs },
              { signal: ctl.signal, onProgress: (done, total, message) => ctl.progress(done, total, message) },
            )
          },
          { signal: ctl.signal, onQueued: (n) => ctl.progress(0, i.nEpochs, `${QUEUED_MESSAGE} (${n} in line)`) },
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
      refinements.set(key, p.jobId)
      // only the kept maps' refinements are worth finding again
      for (const k of refinements.keys()) if (refinements.size > KEEP_MAPS * 2) refinements.delete(k)
      running = { key, jobId: p.jobId }
      return p
    },
  }
}
