/** The contract's trace channels: one event, replay, why-not, drivers, counterfactual, trace logs, timeline. */
import { z } from 'zod'
import type { EventSourceInfo } from '../types'
import { cueSchema, partialConfigSchema } from '../config'
import type { LiveReceipt, JobProgress } from '../jobs'
import type { TraceDrivers, TraceEventDetail, TraceReplay, TraceTimeline, WhyNot } from '../trace'
import { id, ms, out, presetName } from './common'
import { eventFilterShape } from './browse'

/** The Trace screen's sources panel: remembered log paths, every event source, and where live OTLP is taken. */
export interface TraceLogs {
  /** log paths kept in the workspace (re-read on every open) */
  remembered: string[]
  /** every event source (the same list as `events.sources`) */
  sources: EventSourceInfo[]
  /** POST OTLP/HTTP JSON here with `Authorization: Bearer <token>`; null when nothing listens */
  live: { url: string; token: string } | null
}

export const traceChannels = {
  // --- trace ---------------------------------------------------------------
  /**
   * One logged recall event: its query/cue, the full config it ran with (completed from its
   * preset when the log holds a partial one), the injected memories with their logged scores,
   * and the context block (logged, or re-rendered from the logged results).
   */
  'trace.event': { input: z.strictObject({ eventId: id }), output: out<TraceEventDetail>() },
  /**
   * Replay an event and diff against what was logged. `logged`: the logged config at the
   * event's own `at` (time travel; the logged query vector when the event has one).
   * `current`: "today" — `now` (default the clock in main), the current embedder, and the
   * logged config with `config` merged over it. Each differing row is explained.
   */
  'trace.replay': {
    input: z.strictObject({
      eventId: id,
      /** @default 'logged' */
      mode: z.enum(['logged', 'current']).default('logged'),
      /** current mode: a partial config merged over the logged one */
      config: partialConfigSchema.optional(),
      /** current mode: when "today" is. @default Date.now() in main */
      now: ms.optional(),
      /** current mode: embedder spec. @default the saved setting, else the DB's default */
      embedder: z.string().trim().min(1).max(300).optional(),
    }),
    output: out<TraceReplay>(),
  },
  /**
   * Why was this memory (not) recalled — for a logged event (`eventId`) or an ad-hoc query
   * (`query`/`cue` + `preset`/`config` + `now`): scope, arm ranks (even beyond the pool),
   * features, the gate that dropped it, and the smallest single knob change that injects it,
   * each verified by re-running the recall.
   */
  'trace.why': {
    input: z
      .strictObject({
        memoryId: id,
        eventId: id.optional(),
        query: z.string().max(20_000).optional(),
        cue: cueSchema.nullable().optional(),
        preset: presetName.optional(),
        config: partialConfigSchema.optional(),
        /** ad hoc: @default Date.now() in main */
        now: ms.optional(),
        embedder: z.string().trim().min(1).max(300).optional(),
        queryVector: z.array(z.number().refine(Number.isFinite, 'must be finite')).min(1).max(65_536).optional(),
      })
      .refine((v) => v.eventId !== undefined || (v.query ?? '').trim() !== '' || !!v.cue, {
        message: 'give eventId, or a query (or cue) for an ad-hoc why-not',
        path: ['eventId'],
      }),
    output: out<WhyNot>(),
  },
  /** Which injected memory drove an event: share of the composite and leave-one-out influence. */
  'trace.drivers': { input: z.strictObject({ eventId: id }), output: out<TraceDrivers>() },
  /**
   * Opt-in counterfactual: regenerate the event's decision through the configured chat model
   * (settings `chatModel`, Ollama /api/chat or OpenAI-compatible /chat/completions) with the full
   * context block, then with the block minus each returned memory (leave-one-out), and compare the
   * answers. Sends the query and the memories' text to that server; 1 + N calls. A background job
   * (progress per call, cancellable); its result is a CounterfactualReport. BAD_INPUT when no chat
   * model is configured; a server that is down or slow fails the job with CHAT_UNAVAILABLE.
   */
  'trace.counterfactual': {
    input: z.strictObject({
      eventId: id,
      /** memories left out at most (the first N in returned order). @default 10 */
      maxMemories: z.number().int().min(1).max(50).default(10),
      /** deadline per chat call, ms. @default 60000 */
      timeoutMs: z.number().int().min(100).max(600_000).default(60_000),
    }),
    output: out<JobProgress>(),
  },
  /** The event sources of the open store, the remembered trace logs, and the live OTLP endpoint. */
  'trace.logs': { input: z.strictObject({}), output: out<TraceLogs>() },
  /**
   * Add a trace log (a Claude Code transcript, an OTLP JSON file, or a folder of them) to the open
   * store's events and remember it in the workspace. Desktop app: the path must come from
   * `store.pick` with purpose `logIn` (or the command line); browser mode: a typed path.
   * BAD_INPUT for a path that is no trace log (naming the formats looked for).
   */
  'trace.addLog': { input: z.strictObject({ path: z.string().trim().min(1, 'path is required').max(4096) }), output: out<TraceLogs>() },
  /**
   * One OTLP/HTTP JSON traces payload (what `POST /v1/traces` received, already authenticated), stored
   * as live recall events of the open store. The HTTP route and the desktop app's loopback listener
   * call it so the store's own thread does the work; a renderer has no use for it.
   */
  'trace.ingestOtlp': { input: z.strictObject({ payload: z.unknown() }), output: out<LiveReceipt>() },
  /** Forget a remembered trace log and drop its events. */
  'trace.removeLog': { input: z.strictObject({ path: z.string().trim().min(1, 'path is required').max(4096) }), output: out<TraceLogs>() },
  /** Events over time (histogram by preset) for the timeline, with the filters' values. */
  'trace.timeline': {
    input: z.strictObject({
      ...eventFilterShape,
      /** @default 60 */
      bins: z.number().int().min(1).max(500).default(60),
    }),
    output: out<TraceTimeline>(),
  },
} as const
