/**
 * The event-source conformance suite: one spec every event source runs (the in-store readers of
 * Letta, LangGraph and OpenAI Agents records, the Claude Code and OTLP log readers, live OTLP).
 * A factory writes the same canonical recalls, over the memories of spec.ts, in that source's own
 * format; the spec reads them back through the store's event log and checks, with every expected
 * value computed here:
 *  - events are ordered (ascending and descending by time, the canonical order) at their times;
 *  - every logged result is matched exact id → exact text → normalised text as it was logged,
 *    in rank order, or listed as unmatched — never dropped;
 *  - malformed records and result items are skipped and counted in the source's stats;
 *  - pages cover every event once;
 *  - the store's (and the log's) bytes are unchanged.
 * A new event source is done when it passes (docs/internals/adding-a-source.md).
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventLogOf } from '../../src/main/events/eventLog'
import type { MemorySource } from '../../src/main/store/source'
import type { EventSourceInfo, MatchedBy, RecallEvent } from '../../src/shared/types'
import { tmpDir } from '../helpers/tmp'
import { CONF_T0, conformanceContent, hashFiles, type Carried, type ConfContent, type ConfMemory } from './spec'

/** How a canonical result is logged: by the memory's id, its exact text, its text mangled (case, spaces, quotes), or a memory the store does not have. */
export type ResultForm = 'id' | 'text' | 'normalized' | 'unknown'

/** One logged result of a canonical recall. */
export interface ConfResult {
  form: ResultForm
  /** the memory (null for 'unknown') */
  memory: ConfMemory | null
  /** the text to log: the memory's, mangled for 'normalized', a text no memory has for 'unknown'; null for 'id' */
  text: string | null
  /** the id to log for 'unknown' (one no memory has); for 'id' the factory logs its own id of `memory` */
  unknownId: string | null
  score: number
}

/** One canonical recall: what the agent searched, when, and what came back in order. */
export interface ConfRecall {
  /** short, unique: usable in a tool-call id */
  key: string
  query: string
  /** epoch ms, whole seconds */
  at: number
  results: ConfResult[]
  /** what the agent said next */
  answer: string
}

/** Spaces doubled, case changed, quotes added: what normalised matching must see through. */
function mangle(text: string): string {
  return `  "${text.toUpperCase().replace(/ /g, '   ')}"  `
}

/**
 * The canonical recalls over conformanceContent(): four recalls an hour apart, each result in
 * one of the forms, one unknown id and one unknown text (both must be listed as unmatched).
 */
export function conformanceRecalls(content: ConfContent = conformanceContent()): ConfRecall[] {
  const m = content.memories
  const at = (h: number) => CONF_T0 + 30 * 86_400_000 + h * 3_600_000
  const r = (form: ResultForm, i: number | null, score: number, unknown?: { id?: string; text?: string }): ConfResult => ({
    form,
    memory: i === null ? null : m[i],
    text: form === 'id' ? null : form === 'text' ? m[i!].content : form === 'normalized' ? mangle(m[i!].content) : (unknown?.text ?? null),
    unknownId: unknown?.id ?? null,
    score,
  })
  return [
    {
      key: 'r0',
      query: 'origami hobby',
      at: at(0),
      answer: 'You fold origami.',
      results: [r('id', 4, 0.91), r('id', 9, 0.72), r('unknown', null, 0.3, { id: 'conf-gone' })],
    },
    { key: 'r1', query: 'trip to the glacier', at: at(1), answer: 'The glacier trip.', results: [r('text', 1, 0.88), r('normalized', 5, 0.61)] },
    { key: 'r2', query: 'music', at: at(2), answer: 'The saxophone.', results: [r('id', 0, 0.8), r('unknown', null, 0.2, { text: 'a memory nobody stored' })] },
    { key: 'r3', query: 'cathedral', at: at(3), answer: 'The cathedral.', results: [r('text', 11, 0.77)] },
  ]
}

/** What an event-source factory built. */
export interface BuiltEventSource {
  /** open the store read-only, with its workspace at `workspacePath` */
  open(workspacePath: string): MemorySource
  /** after opening: add the log files / post the live payloads (none for an in-store reader) */
  attach?(store: MemorySource): void | Promise<void>
  /** files and folders whose bytes must not change: the store, the logs */
  files: string[]
  /** the event source kind the events come from (their `origin.kind`) */
  kind: EventSourceInfo['kind']
  /** the store's id of a memory, as the format logs it */
  idOf(m: ConfMemory): string
  carries: {
    /** results can be logged by id (else the factory logs 'id' results by their text, and they match by text) */
    ids: Carried
    /** the logged scores survive (else results have no score) */
    scores: Carried
  }
  /** malformed records / result items the factory wrote (besides the recalls): each must be skipped and counted */
  malformed: number
  /** what was counted before the source was read (live OTLP: a post's receipt counts the spans it rejected) */
  rejectedAtIngest?: () => number
}

export type EventSourceFactory = (dir: string, content: ConfContent, recalls: ConfRecall[]) => BuiltEventSource | Promise<BuiltEventSource>

/** The item a format's memory tool would print for a result: `{id?, content?, score}` (the keys tool outputs use). */
export function resultItem(r: ConfResult, idOf: (m: ConfMemory) => string, opts: { ids?: boolean } = {}): Record<string, string | number> {
  const out: Record<string, string | number> = {}
  if (r.form === 'id' && opts.ids !== false) out.id = idOf(r.memory!)
  else if (r.form === 'id') out.content = r.memory!.content
  if (r.unknownId) out.id = r.unknownId
  if (r.text !== null) out.content = r.text
  out.score = r.score
  return out
}

/** Run the event-source spec against one source. */
export function describeEventSourceConformance(name: string, factory: EventSourceFactory, opts: { timeoutMs?: number } = {}): void {
  describe(`event source conformance: ${name}`, () => {
    const content = conformanceContent()
    const recalls = conformanceRecalls(content)
    let t: ReturnType<typeof tmpDir>
    let built: BuiltEventSource
    let store: MemorySource
    let before: string
    let events: RecallEvent[]
    let source: EventSourceInfo

    beforeAll(async () => {
      t = tmpDir()
      built = await factory(t.dir, content, recalls)
      before = hashFiles(built.files)
      store = built.open(path.join(t.dir, 'conformance.recallscope'))
      await built.attach?.(store)
      const log = eventLogOf(store)
      events = (await log.eventsPage({ dir: 'asc', limit: 1000 })).rows.filter((e) => e.origin?.kind === built.kind)
      const sources = log.sources().filter((s) => s.kind === built.kind)
      expect(sources.length).toBe(1)
      source = sources[0]
    }, opts.timeoutMs ?? 120_000)

    afterAll(() => {
      store?.close()
      t?.cleanup()
    })

    it('reads every recall once, nothing else', () => {
      expect(events.map((e) => e.query)).toEqual(recalls.map((r) => r.query))
      expect(source.events).toBe(recalls.length)
      expect(source.error).toBeNull()
    })

    it('events are ordered by time, at the times logged', async () => {
      // whole seconds, so every format's clock holds them exactly
      expect(events.map((e) => e.at)).toEqual(recalls.map((r) => r.at))
      const desc = (await eventLogOf(store).eventsPage({ limit: 1000 })).rows.filter((e) => e.origin?.kind === built.kind)
      expect(desc.map((e) => e.id)).toEqual(events.map((e) => e.id).reverse())
    })

    it('every result is matched exact id → text → normalised, in rank order, or listed as unmatched', () => {
      const idOf = new Map(content.memories.map((m) => [m.content, m.id]))
      expect(idOf.size).toBe(content.memories.length)
      recalls.forEach((r, i) => {
        const e = events[i]
        const known = r.results.filter((x) => x.form !== 'unknown')
        // the store's ids of the expected memories, found by content (each format has its own ids)
        const want = known.map((x) => {
          const by: MatchedBy = x.form === 'id' && built.carries.ids !== true ? 'text' : (x.form as MatchedBy)
          return { content: x.memory!.content, matchedBy: by }
        })
        const got = e.results.map((x) => ({ content: store.getMemory(x.id)?.content.trim(), matchedBy: x.matchedBy }))
        expect(got).toEqual(want)
        // the ids logged are the store's own
        known.filter((x) => x.form === 'id' && built.carries.ids === true).forEach((x) => expect(e.results.map((y) => y.id)).toContain(built.idOf(x.memory!)))
        const unknown = r.results.filter((x) => x.form === 'unknown')
        expect((e.unmatched ?? []).length).toBe(unknown.length)
        expect(e.results.length + (e.unmatched ?? []).length).toBe(r.results.length)
      })
    })

    it('the decision: what the agent did next (its message, or the tool call carrying it)', () => {
      recalls.forEach((r, i) => {
        const d = events[i].decision
        expect([r.key, d?.text ?? d?.toolCall?.arguments ?? null]).toEqual([r.key, expect.stringContaining(r.answer)])
      })
    })

    it('the logged scores come through (when the format logs them)', () => {
      recalls.forEach((r, i) => {
        const got = events[i].results.map((x) => x.score)
        const want = r.results.filter((x) => x.form !== 'unknown').map((x) => x.score)
        if (built.carries.scores === true) got.forEach((s, j) => expect(s).toBeCloseTo(want[j], 6))
        else got.forEach((s) => expect(s).toBeNaN())
      })
    })

    it('the match counts add up to the results logged', () => {
      const logged = recalls.flatMap((r) => r.results)
      const m = source.matched
      expect(m.id + m.text + m.normalized + m.unmatched).toBe(logged.length)
      expect(m.unmatched).toBe(logged.filter((x) => x.form === 'unknown').length)
      expect(m.normalized).toBe(logged.filter((x) => x.form === 'normalized').length)
    })

    it('malformed records are skipped and counted, never fatal', () => {
      expect(source.stats.skipped + (built.rejectedAtIngest?.() ?? 0)).toBe(built.malformed)
      expect(source.stats.problems.length).toBe(Math.min(20, source.stats.skipped))
      expect(source.stats.read).toBe(recalls.length)
    })

    it('pages cover every event exactly once', async () => {
      const log = eventLogOf(store)
      const seen: string[] = []
      const total = (await log.eventsPage({ limit: 1 })).total
      for (let offset = 0; offset < total; offset += 2) seen.push(...(await log.eventsPage({ dir: 'asc', offset, limit: 2 })).rows.map((e) => e.id))
      expect(seen.length).toBe(total)
      expect(new Set(seen).size).toBe(total)
      expect(seen.filter((id) => events.some((e) => e.id === id))).toEqual(events.map((e) => e.id))
    })

    it('one event by id; the events of a memory', async () => {
      const log = eventLogOf(store)
      for (const e of events) expect((await log.getEvent(e.id))?.query).toBe(e.query)
      // memory 4 is returned (by id) in the first recall only
      const m4 = events[0].results[0].id
      const refs = (await log.eventsForMemory(m4)).filter((r) => events.some((e) => e.id === r.eventId))
      expect(refs.map((r) => [r.eventId, r.rank])).toEqual([[events[0].id, 1]])
    })

    it('read-only: the store and log bytes are unchanged', () => {
      store.close()
      expect(hashFiles(built.files)).toBe(before)
    })
  })
}
