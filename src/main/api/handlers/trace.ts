/**
 * Handlers for the decision trace: one event, its replay diff (as logged, or
 * "today"), why a memory was (not) recalled, which memory drove it, and the
 * timeline. The clock is read here, at the boundary (`now` defaults); the trace
 * core takes it as an argument.
 */
import type { App } from '../app'
import type { Handlers } from '../register'
import { eventTimeline } from '../../trace/timeline'
import { RecallscopeError } from '../../../shared/result'
import { runCounterfactual } from '../../trace/counterfactual'
import { chatFromSettings } from './embed'
import { eventLogOf } from '../../events/eventLog'

type TraceChannels = 'trace.event' | 'trace.replay' | 'trace.why' | 'trace.drivers' | 'trace.counterfactual' | 'trace.timeline'

export function traceHandlers(app: App): Pick<Handlers, TraceChannels> {
  const embedding = () => {
    const s = app.settings()
    return { embedder: s.embedder ?? null, embedderOptions: { ollamaHost: s.ollamaHost, openaiBaseUrl: s.openaiBaseUrl } }
  }
  // The event as this thread's event log has it (read from a log file or live): passed to the worker with the task.
  const eventOf = (id: string | undefined) => (id ? eventLogOf(app.requireStore()).getEvent(id) : Promise.resolve(null))
  return {
    // The event's detail replays it as logged: in the job worker, like replays, why-nots and drivers.
    'trace.event': async (i) => app.offThread('event', { eventId: i.eventId, opts: embedding(), event: await eventOf(i.eventId) }),
    'trace.replay': async (i) => {
      // Replays, why-nots and drivers re-run the engine: in the job worker.
      const e = embedding()
      return app.offThread('replay', {
        event: await eventOf(i.eventId),
        eventId: i.eventId,
        opts: {
          mode: i.mode,
          config: i.config,
          now: i.mode === 'current' ? (i.now ?? Date.now()) : undefined,
          embedder: i.embedder ?? e.embedder,
          embedderOptions: e.embedderOptions,
        },
      })
    },
    'trace.why': async (i) => {
      const e = embedding()
      // In the job worker: a large candidate pool re-runs the engine several times.
      return app.offThread('why', {
        event: await eventOf(i.eventId),
        memoryId: i.memoryId,
        eventId: i.eventId,
        query: i.query,
        cue: i.cue ?? null,
        preset: i.preset,
        config: i.config,
        now: i.eventId ? undefined : (i.now ?? Date.now()),
        embedder: i.embedder ?? e.embedder,
        embedderOptions: e.embedderOptions,
        queryVector: i.queryVector ?? null,
      })
    },
    'trace.drivers': async (i) => app.offThread('drivers', { eventId: i.eventId, opts: embedding(), event: await eventOf(i.eventId) }),
    'trace.counterfactual': async (i) => {
      // Opt-in and explicit: only this channel ever calls the chat model, and only when one is configured.
      const chat = chatFromSettings(app.settings(), { timeoutMs: i.timeoutMs })
      if (!chat)
        throw new RecallscopeError(
          'BAD_INPUT',
          'No chat model is configured: set one (Drivers › Counterfactual, `settings.set {chatModel: "ollama:llama3.2"}`, or $RECALLSCOPE_CHAT_MODEL)',
        )
      // The prompts read the store (job worker); a missing event or query fails here, before any job starts.
      const prompts = await app.offThread('counterfactualPrompts', {
        eventId: i.eventId,
        opts: embedding(),
        maxMemories: i.maxMemories,
        event: await eventOf(i.eventId),
      })
      return app.jobs.start('counterfactual', `Counterfactual of ${i.eventId} with ${chat.spec}`, ({ progress, signal }) =>
        runCounterfactual(chat, prompts, { progress, signal }),
      )
    },
    'trace.timeline': (i) => eventTimeline(app.requireStore(), i),
  }
}
