/**
 * Every worker thread script main starts, by the name `workerScript` looks up, with its entry module under
 * src/main. One list for both builds of them: electron.vite.config.ts builds each beside the main bundle
 * (out/main/<name>.js), and the test run builds them once from source (test/helpers/testWorkers.ts).
 */
export const WORKER_ENTRIES = {
  /** The Postgres pool's worker thread (store/postgres/bridge.ts). */
  pgWorker: 'store/postgres/pgWorker.ts',
  /** The embedding map's PCA / UMAP worker thread (map/runMapTask.ts, map/mapHelpers.ts). */
  mapWorker: 'map/mapWorker.ts',
  /** The job worker: evals, tunes and why-nots off the main thread (jobs/offThread.ts). */
  jobWorker: 'jobs/jobWorker.ts',
  /** The store host: each open store, and every channel that touches it (host/storeHost.ts). */
  hostWorker: 'host/hostWorker.ts',
} as const

/** A worker script's name (its built file is `<name>.js`). */
export type WorkerName = keyof typeof WORKER_ENTRIES
