/**
 * The embedding map's shapes (issue 12): what `map.build` returns (the points,
 * their marks and the PCA frame) and what a `map.refine` job ends with (the
 * UMAP layout). Types only.
 */
import type { Cue, EmbedderInfo, Features, GateName } from './types'

/** One memory on the map. */
export interface MapPoint {
  id: string
  /** the start of its content (hover); the memory itself opens on click */
  text: string
  kind: string | null
  /** what the recall did with it: injected, dropped by a gate, or not a candidate */
  mark: 'injected' | 'dropped' | 'none'
  /** injected: its rank */
  rank?: number
  /** dropped: the gate that removed it */
  gate?: GateName
  /** candidates: composite score, features and weighted contributions (the score parts) */
  score?: number
  features?: Features
  contributions?: Features
  /** eval case only: graded relevant (relevant and not injected = missed) */
  relevant?: boolean
  /** cosine with the query vector (null: no query vector) */
  similarity: number | null
}

/** A 2-D layout: point i at [2i, 2i+1]. */
export interface MapFrame {
  coords: number[]
  /** the query's position; null when it has no vector of the map's model */
  query: [number, number] | null
}

export interface MapData {
  /** handle for `map.refine` (main keeps the vectors; the renderer never gets them) */
  mapId: string
  /** the vectors laid out: the recall's model */
  model: string
  dim: number
  query: string
  cue: Cue | null
  now: number
  preset: string
  caseId: string | null
  caseName: string | null
  embedder: EmbedderInfo
  /** memories in the recall's scope (at `now`) */
  inScope: number
  /** the scope listing stopped at its cap (then inScope is a lower bound) */
  inScopeCapped: boolean
  /** of those, with a vector under `model` */
  withVector: number
  /** points on the map */
  shown: number
  /** withVector > cap: a seeded random sample that keeps every marked memory */
  sampled: boolean
  cap: number
  seed: number
  points: MapPoint[]
  /** the first frame: exact PCA (top two components), the query projected exactly */
  pca: MapFrame & {
    /** share of the total variance on each axis */
    explained: [number, number]
    iterations: number
    /** false: stopped at the iteration cap (a flat top spectrum: other axes in it show about as much) */
    converged: boolean
  }
  /** why the query is not on the map, when it is not */
  queryNote: string | null
  counts: {
    injected: number
    injectedOnMap: number
    dropped: number
    droppedOnMap: number
    relevant: number
    relevantOnMap: number
    /** relevant and not injected */
    missed: number
  }
  timings: { gatherMs: number; pcaMs: number }
}

/** The result of a `map.refine` job: the UMAP layout of a built map. */
export interface MapRefinement extends MapFrame {
  mapId: string
  /** `nearest`: the mean position of its 5 nearest points (Euclidean in the vector space) */
  queryPlacement: 'nearest' | null
  epochs: number
  nNeighbors: number
  tookMs: number
}
