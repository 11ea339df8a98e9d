/**
 * Messages between the main thread (offThread.ts) and a job worker
 * (jobWorker.ts). Plain data only: they cross by structured clone.
 */
import type { TaskInputs, TaskKind, TaskOutputs } from './tasks'

/** How the worker opens its own connection to the store the app has open. */
export interface OpenSpec {
  /** the file (or folder, or postgres:// URL with its password: it never leaves the process) */
  path: string
  workspacePath?: string
  nativeBinding?: string
  fallbackDir?: string
}

export type ToWorker = { type: 'run'; id: number; kind: TaskKind; input: TaskInputs[TaskKind]; fresh: boolean } | { type: 'cancel'; id: number }

export interface WireError {
  code: string
  message: string
  details?: unknown
}

export type FromWorker =
  | { type: 'progress'; id: number; done: number; total: number; message?: string }
  | { type: 'done'; id: number; result: TaskOutputs[TaskKind] }
  | { type: 'failed'; id: number; error: WireError }
