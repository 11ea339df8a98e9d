/**
 * Messages between main (storeHost.ts) and a store host worker (hostWorker.ts).
 * Plain data only: they cross by structured clone.
 */
import type { JobProgress } from '../../shared/jobs'
import type { OpenOptions, Policy } from '../api/app'
import type { InspectOp } from '../api/inspect'

/** What a worker opens at start: a store (or the demo DB, generated first when asked), or nothing (the scratch host). */
export type OpenRequest = { path: string; opts: OpenOptions; demo?: { regenerate: boolean } }

/** The worker's own App: the same settings as main's, minus what only main has (dialogs, the keychain). */
export interface HostInit {
  dataDir: string
  mode: 'electron' | 'browser'
  version: string
  nativeBinding?: string
  /** this worker's number: its job ids are `job-h<seq>-…` */
  seq: number
}

export type ToHost =
  | { type: 'open'; id: number; open: OpenRequest; policy: Policy }
  | { type: 'call'; id: number; channel: string; input: unknown; policy: Policy }
  | { type: 'inspect'; id: number; op: InspectOp }
  | { type: 'ping'; id: number }
  | { type: 'cancelJob'; jobId: string }

export interface WireError {
  code: string
  message: string
  details?: unknown
  /** an INTERNAL error's stack, for main's log */
  stack?: string
}

export type FromHost =
  /** the worker took this request off its queue (one never started may go to a new worker) */
  | { type: 'started'; id: number }
  | { type: 'done'; id: number; result: unknown }
  | { type: 'failed'; id: number; error: WireError }
  | { type: 'pong'; id: number }
  /** a job of this worker's App changed (mirrored in main's JobManager) */
  | { type: 'job'; progress: JobProgress }
  /** an App.emitPush in the worker (relayed to main's App) */
  | { type: 'push'; stream: string; payload: unknown }
