/**
 * The renderer-facing API type: one function per contract channel, each
 * returning a Result. The preload `satisfies` it; lib/api.ts implements it
 * over HTTP in browser mode. Types only.
 */
import type { Channel, Input, Output } from './contract'
import type { JobProgress } from './jobs'
import type { Result } from './result'

export type { JobProgress } from './jobs'

export type ChannelApi = { [C in Channel]: (input: Input<C>) => Promise<Result<Output<C>>> }

export interface RecallscopeApi extends ChannelApi {
  /** Subscribe to job progress events; returns an unsubscribe function. */
  onJobProgress(listener: (p: JobProgress) => void): () => void
}
