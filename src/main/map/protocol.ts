/**
 * Messages between the map's worker thread (mapWorker.ts) and the main side
 * (runMapTask.ts). Typed arrays travel by structured clone: copied, except those over a SharedArrayBuffer
 * (buildMap puts the rows there), which the worker reads in place.
 */
import type { WasmMemory } from '../store/vectors/dotKernel'
import type { PcaResult } from './pca'
import type { UmapResult } from './umapLayout'

/** The rows to lay out: `n` rows of `dim` values, row-major. */
interface MatrixTask {
  data: Float32Array
  /** the shared WebAssembly memory `data` lies in (map/rows.ts), for the SIMD kernels to read it in place */
  memory?: WasmMemory | null
  n: number
  dim: number
  /** the query vector, placed on the map (null: none) */
  query: Float32Array | null
  seed: number
}

export interface PcaTask extends MatrixTask {
  task: 'pca'
  /** @default 300 (see PcaOptions) */
  maxIterations?: number
  /** fit the axes on a sample of this many rows (see PcaOptions) */
  fitRows?: number
}

export interface UmapTask extends MatrixTask {
  task: 'umap'
  /** start layout (the PCA frame), row i at [2i, 2i+1] */
  init: Float32Array
  nNeighbors: number
  nEpochs: number
}

export type MapTask = PcaTask | UmapTask

/** PCA plus the query's exact projection. */
export interface PcaOutput extends PcaResult {
  query: [number, number] | null
}

export interface MapTaskResult {
  pca: PcaOutput
  umap: UmapResult
}

export type WorkerMessage =
  /** the worker has loaded and waits for its task */
  | { type: 'ready' }
  | { type: 'progress'; done: number; total: number; message: string }
  | { type: 'done'; result: MapTaskResult[MapTask['task']] }
  | { type: 'error'; message: string }
