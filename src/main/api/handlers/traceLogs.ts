/**
 * Trace logs of the open store: list the event sources, add a log (remembered in the
 * workspace, re-read on every open), forget one. The list reads what is not read yet,
 * so it shows real counts.
 */
import type { TraceLogs } from '../../../shared/contract'
import { eventLogOf } from '../../events/eventLog'
import { createOtlpIngest } from '../otlpLive'
import type { App } from '../app'
import type { Handlers } from '../register'

type Channels = 'trace.logs' | 'trace.addLog' | 'trace.removeLog' | 'trace.ingestOtlp'

export function traceLogHandlers(app: App): Pick<Handlers, Channels> {
  // Read what is pending first, so the counts (events, skipped) are the real ones; reading streams, off no lock.
  const list = async (): Promise<TraceLogs> => {
    const log = eventLogOf(app.requireStore())
    await log.load()
    return { remembered: log.rememberedLogs(), sources: log.sources(), live: app.liveEndpoint }
  }
  // One receiver per App: it keeps this run's totals for the "Live OTLP" entry of the jobs list.
  const ingest = createOtlpIngest(app)
  return {
    'trace.logs': () => list(),
    'trace.ingestOtlp': (i) => ingest(i.payload),
    'trace.addLog': (i) => {
      // Desktop: only a path the user picked (store.pick purpose logIn) or gave on the command line.
      const p = app.confine(i.path, 'trace.addLog', 'read')
      eventLogOf(app.requireStore()).addLogFile(p, { remember: true })
      return list()
    },
    'trace.removeLog': (i) => {
      eventLogOf(app.requireStore()).forgetLogFile(i.path)
      return list()
    },
  }
}
