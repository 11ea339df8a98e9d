/**
 * The renderer-facing API type: one function per contract channel, each
 * returning a Result. The preload `satisfies` it; lib/api.ts implements it
 * over HTTP in browser mode. Types only.
 */
import type { Channel, Input, Output } from './contract'
import type { Result } from './result'

export interface JobProgress {
  jobId: string
  kind: string
  label: string
  state: 'running' | 'done' | 'failed' | 'cancelled'
  done: number
  total: number
  message?: string
  /** present when state is 'done' */
  result?: unknown
  error?: { code: string; message: string }
  startedAt: number
  updatedAt: number
}

export type ChannelApi = { [C in Channel]: (input: Input<C>) => Promise<Result<Output<C>>> }

export interface RecallscopeApi extends ChannelApi {
  /** Subscribe to job progress events; returns an unsubscribe function. */
  onJobProgress(listener: (p: JobProgress) => void): () => void
}
