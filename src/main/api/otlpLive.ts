/**
 * The live OTLP receiver behind `POST /v1/traces` (browser-mode server and the desktop
 * app's loopback listener): posts go to the open store's workspace (events/otlp/live.ts),
 * and every post updates one standing entry on the job-progress stream, which the
 * Decision-trace view watches to reload its timeline.
 */
import type { LiveOtlpReport, LiveReceipt } from '../../shared/jobs'
import { RecallscopeError, type Result } from '../../shared/result'
import { eventLogOf } from '../events/eventLog'
import { LIVE_SOURCE_KEY, ingestOtlpPayload, liveRecallReader } from '../events/otlp/live'
import type { OtlpIngest } from '../server/otlpRoute'
import type { App } from './app'

/** The receiver for one App: stores each post, then tells the renderer. */
export function createOtlpIngest(app: App, afterIngest?: (receipt: LiveReceipt) => void): OtlpIngest {
  const total: LiveOtlpReport = { posts: 0, spans: 0, recalls: 0, decided: 0, rejected: 0, lastAt: 0 }
  return (payload) => {
    const store = app.requireStore()
    const now = Date.now()
    const r = ingestOtlpPayload(store.workspace, payload, now)
    // The log re-reads the workspace's live recalls on its next query (a decision may have changed an old one).
    if (r.recalls + r.decided > 0) eventLogOf(store).addReader(liveRecallReader(store.workspace), { persistKey: LIVE_SOURCE_KEY })
    afterIngest?.(r)
    total.posts++
    total.spans += r.spans
    total.recalls += r.recalls
    total.decided += r.decided
    total.rejected += r.rejected
    total.lastAt = now
    app.jobs.notice(
      'otlp',
      'Live OTLP',
      total.recalls,
      `${total.recalls} recall event${total.recalls === 1 ? '' : 's'} received over OTLP (${total.posts} post${total.posts === 1 ? '' : 's'}${total.rejected ? `, ${total.rejected} span(s) skipped` : ''})`,
      { ...total },
    )
    return r
  }
}

/**
 * The receiver of a process whose stores live in store-host workers (serve, the desktop app): each
 * post is handed to the open store's thread as `trace.ingestOtlp`; its typed error is the post's.
 */
export function hostedOtlpIngest(dispatch: (channel: 'trace.ingestOtlp', input: { payload: unknown }) => Promise<Result<unknown>>): OtlpIngest {
  return async (payload) => {
    const r = await dispatch('trace.ingestOtlp', { payload })
    if (!r.ok) throw new RecallscopeError(r.error.code, r.error.message, r.error.details)
    return r.data as LiveReceipt
  }
}
