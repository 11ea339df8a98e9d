/**
 * The event log of an open store: the one place trace.*, `events.page` and the
 * CLI read recall events from (docs/internals/design.md "Event sources"). It composes
 *  - the store's own `recall_events` (paged in SQL by the store, unchanged),
 *  - the in-store readers of the agent's own records (Letta messages, LangGraph
 *    checkpoints, Agents SDK sessions), added when the log is first asked for,
 *  - readers added later: log files (`addLogFile`, formats in logFormats.ts),
 *    live OTLP, anything with `addReader`.
 * Added readers are read once (on the next query), matched to the store's
 * memories (match.ts) and kept in memory; every source's counts (read /
 * skipped / problems / how results matched) are in `sources()`.
 *
 * One log per store object (`eventLogOf`), so the API, the trace core and the
 * job worker (which holds its own store) each find theirs; log files remembered
 * in the workspace are re-added in every thread.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { EventFilter } from '../../shared/contract'
import { RecallscopeError } from '../../shared/result'
import type { EventSourceInfo, Page, RecallEvent } from '../../shared/types'
import type { EventExtras, EventPageQuery, EventRef, EventTimelineStats, MemorySource } from '../store/source'
import { LOG_FORMATS, type LogFormat } from './logFormats'
import { emptyMatchCounts, matchRecalls } from './match'
import { inStoreReaders } from './inStore'
import { LIVE_SOURCE_KEY, liveRecallReader } from './otlp/live'
import { emptyStats, skip, type EventReader, type LoggedRecall, type ReadStats } from './types'
import { openRegularFile } from '../store/safeFiles'

export type { EventSourceInfo } from '../../shared/types'

interface Source {
  info: EventSourceInfo
  reader: EventReader
  events: RecallEvent[]
}

/** Workspace meta key of the remembered log files (a JSON array of absolute paths). */
const REMEMBERED_LOGS = 'event_logs'
/** Bytes read to sniff a log file's format. */
const SNIFF_BYTES = 64 * 1024
/** Files a folder may contribute (a mistaken home folder must not read for minutes). */
const FOLDER_MAX_FILES = 10_000

const NO_EXTRAS: EventExtras = { queryVector: null, queryVectorProblem: null, context: null }

/** Providers of readers every new log gets (e.g. the live OTLP events kept in the workspace). */
const providers: ((log: EventLog) => void)[] = []

/**
 * Give every event log (in every thread, created from now on) these readers: for sources
 * kept in the workspace (live OTLP), so the job worker's log has them too.
 * @public — the hook the log-file / live readers register with (branch evlogs)
 */
export function registerEventSourceProvider(provide: (log: EventLog) => void): void {
  providers.push(provide)
}

const logs = new WeakMap<MemorySource, EventLog>()

/** A recall's result items that were neither an id nor a text, counted as skipped (one each, as the readers count theirs). */
function countSkippedResults(stats: ReadStats, r: LoggedRecall): void {
  for (let n = 0; n < (r.skippedResults ?? 0); n++) skip(stats, r.key, 'a result item has neither an id nor a text')
}

/** The event log of a store (created on first use, with the store's in-store readers). */
export function eventLogOf(store: MemorySource): EventLog {
  let log = logs.get(store)
  if (!log) {
    log = new EventLog(store)
    logs.set(store, log)
  }
  return log
}

export class EventLog {
  readonly store: MemorySource
  private readonly sourcesList: Source[] = []
  private readonly byId = new Map<string, RecallEvent>()
  private seq = 0
  private loading: Promise<void> | null = null

  constructor(store: MemorySource) {
    this.store = store
    for (const reader of inStoreReaders(store)) this.addReader(reader)
    for (const file of this.rememberedLogs()) {
      try {
        this.addLogFile(file)
      } catch (e) {
        // A remembered file that is gone or changed format: listed with its error, never fatal.
        this.addFailed(file, e)
      }
    }
    // Recalls received live over OTLP in an earlier run (kept in the workspace).
    if (store.workspace.countLiveRecalls() > 0) this.addReader(liveRecallReader(store.workspace), { persistKey: LIVE_SOURCE_KEY })
    for (const provide of providers) provide(this)
  }

  /**
   * Add a reader; it is read on the next query. A reader added with the
   * `persistKey` of one already present replaces it (its events are re-read).
   */
  addReader(reader: EventReader, opts: { persistKey?: string; file?: string | null } = {}): EventSourceInfo {
    const key = opts.persistKey ?? (opts.file ? `log:${opts.file}` : `${reader.kind}:${++this.seq}`)
    this.removeSource(key)
    const info: EventSourceInfo = {
      key,
      kind: reader.kind,
      label: reader.label,
      file: opts.file ?? null,
      events: 0,
      stats: emptyStats(),
      matched: emptyMatchCounts(),
      error: null,
      pending: true,
    }
    this.sourcesList.push({ info, reader, events: [] })
    return info
  }

  /** Remove a source and its events (no-op when absent). */
  removeSource(key: string): boolean {
    const i = this.sourcesList.findIndex((s) => s.info.key === key)
    if (i < 0) return false
    for (const e of this.sourcesList[i].events) this.byId.delete(e.id)
    this.sourcesList.splice(i, 1)
    return true
  }

  /**
   * Add a log file, or every file of a known format in a folder (recursively).
   * Throws BAD_INPUT for a path that does not exist or matches no format
   * (naming the formats looked for). `remember` keeps the path in the
   * workspace, so the log is re-added when the store is opened again.
   */
  addLogFile(p: string, opts: { remember?: boolean } = {}): EventSourceInfo[] {
    if (typeof p !== 'string' || p.trim() === '') throw new RecallscopeError('BAD_INPUT', '--log needs a file or folder path')
    const abs = path.resolve(p)
    let st: fs.Stats
    try {
      st = fs.statSync(abs)
    } catch {
      throw new RecallscopeError('BAD_INPUT', `--log ${p}: no such file or folder`)
    }
    const added: EventSourceInfo[] = []
    if (st.isDirectory()) {
      for (const file of listFiles(abs)) {
        const format = sniffFormat(file)
        if (format) added.push(this.addReader(format.reader(file), { file }))
      }
      if (added.length === 0) throw new RecallscopeError('BAD_INPUT', `--log ${p}: no file in this folder is a known trace log (looked for: ${lookedFor()})`)
    } else {
      const format = sniffFormat(abs)
      if (!format) throw new RecallscopeError('BAD_INPUT', `--log ${p}: not a known trace log (looked for: ${lookedFor()})`)
      added.push(this.addReader(format.reader(abs), { file: abs }))
    }
    if (opts.remember) this.remember(abs)
    return added
  }

  /** Forget a remembered log path and drop its sources. */
  forgetLogFile(p: string): void {
    const abs = path.resolve(p)
    const kept = this.rememberedLogs().filter((x) => x !== abs)
    this.store.workspace.setMeta(REMEMBERED_LOGS, JSON.stringify(kept))
    for (const s of [...this.sourcesList]) if (s.info.file && (s.info.file === abs || s.info.file.startsWith(abs + path.sep))) this.removeSource(s.info.key)
  }

  /** Log paths remembered in the workspace. */
  rememberedLogs(): string[] {
    try {
      const v: unknown = JSON.parse(this.store.workspace.getMeta(REMEMBERED_LOGS) ?? '[]')
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []
    } catch {
      return []
    }
  }

  private remember(abs: string): void {
    const list = this.rememberedLogs()
    if (!list.includes(abs)) this.store.workspace.setMeta(REMEMBERED_LOGS, JSON.stringify([...list, abs]))
  }

  private addFailed(file: string, e: unknown): void {
    const info = this.addReader({ kind: 'otlp', label: 'trace log (unreadable)', read: () => [] }, { file })
    info.kind = 'unknown'
    info.error = e instanceof Error ? e.message : String(e)
    info.pending = false
  }

  /**
   * Add recalls that arrived after the source was read (live OTLP): matched now,
   * visible to the next query. Returns the events added.
   */
  append(key: string, recalls: LoggedRecall[]): RecallEvent[] {
    const s = this.sourcesList.find((x) => x.info.key === key)
    if (!s) throw new RecallscopeError('NOT_FOUND', `No event source ${key}`)
    for (const r of recalls) countSkippedResults(s.info.stats, r)
    const events = matchRecalls(this.store, recalls, s.info.matched)
    s.info.stats.read += recalls.length
    this.keep(s, events)
    return events
  }

  /** Keep an event read elsewhere (the main thread passes it to the job worker with the task). */
  seed(event: RecallEvent): void {
    if (!this.byId.has(event.id) && !this.storeHas(event.id)) this.byId.set(event.id, event)
  }

  private storeHas(id: string): boolean {
    return this.store.capabilities().recallEvents && this.store.getEvent(id) !== null
  }

  private keep(s: Source, events: RecallEvent[]): void {
    for (const e of events) {
      // Keys are unique within a source; across sources the first one read keeps the id.
      if (this.byId.has(e.id)) {
        s.info.stats.skipped++
        if (s.info.stats.problems.length < 20) s.info.stats.problems.push({ where: e.id, why: 'an event with this id was already read from another source' })
        continue
      }
      this.byId.set(e.id, e)
      s.events.push(e)
    }
    s.info.events = s.events.length
  }

  /** Read every source not read yet (concurrent callers share one read). */
  load(): Promise<void> {
    if (!this.sourcesList.some((s) => s.info.pending)) return this.loading ?? Promise.resolve()
    const prev = this.loading ?? Promise.resolve()
    const run = prev.then(async () => {
      for (const s of this.sourcesList) {
        if (!s.info.pending) continue
        s.info.pending = false
        await this.readSource(s)
      }
    })
    this.loading = run
    return run
  }

  private async readSource(s: Source): Promise<void> {
    const recalls: LoggedRecall[] = []
    try {
      for await (const r of s.reader.read(s.info.stats)) {
        recalls.push(r)
        s.info.stats.read++
        countSkippedResults(s.info.stats, r)
        // Match in batches: bounded memory for the logged texts, two scans per batch.
        if (recalls.length >= 2000) this.keep(s, matchRecalls(this.store, recalls.splice(0), s.info.matched))
      }
    } catch (e) {
      s.info.error = e instanceof Error ? e.message : String(e)
    }
    if (recalls.length) this.keep(s, matchRecalls(this.store, recalls, s.info.matched))
  }

  /** Every source: the store's `recall_events` first (when it has one), then the readers. */
  sources(): EventSourceInfo[] {
    const out: EventSourceInfo[] = []
    const own = this.store.ownEventsOrigin?.() ?? null
    if (this.store.capabilities().recallEvents)
      out.push({
        key: 'recall_events',
        kind: own?.origin.kind ?? 'recall_events',
        label: own?.label ?? 'recall_events table',
        file: null,
        events: this.store.eventTimeline({}).total,
        stats: emptyStats(),
        matched: emptyMatchCounts(),
        error: null,
        pending: false,
      })
    for (const s of this.sourcesList) out.push({ ...s.info, stats: { ...s.info.stats, problems: [...s.info.stats.problems] } })
    return out
  }

  /** The events read from the sources (not the store's own table), filtered, sorted by time. */
  private extras(f: EventFilter, dir: 'asc' | 'desc'): RecallEvent[] {
    const out = [...this.byId.values()].filter((e) => matchesFilter(e, f))
    const sign = dir === 'asc' ? 1 : -1
    return out.sort((a, b) => sign * (a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
  }

  /** A page of events under the `events.page` filter, newest first unless `dir: 'asc'`. */
  async eventsPage(q: EventPageQuery = {}): Promise<Page<RecallEvent>> {
    await this.load()
    if (this.byId.size === 0) return this.store.eventsPage(q)
    const t0 = performance.now()
    const limit = Math.min(1000, Math.max(1, Math.floor(q.limit ?? 50)))
    const offset = Math.max(0, Math.floor(q.offset ?? 0))
    const dir = q.dir === 'asc' ? 'asc' : 'desc'
    const extra = this.extras(q, dir)
    const { dir: _dir, offset: _o, limit: _l, ...filter } = q
    // The store's rows up to offset + limit, merged by time with the read events (a deep page reads more rows).
    const own: RecallEvent[] = []
    let total = 0
    let truncated = false
    if (this.store.capabilities().recallEvents) {
      for (let at = 0; own.length < offset + limit; at += 1000) {
        const p = this.store.eventsPage({ ...filter, dir, offset: at, limit: 1000 })
        total = p.total
        truncated = p.truncated
        own.push(...p.rows)
        if (p.rows.length < 1000) break
      }
    }
    const sign = dir === 'asc' ? 1 : -1
    const merged = [...own, ...extra].sort((a, b) => sign * (a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    return { rows: merged.slice(offset, offset + limit), offset, limit, total: total + extra.length, truncated, tookMs: performance.now() - t0 }
  }

  async getEvent(id: string): Promise<RecallEvent | null> {
    const hit = this.byId.get(id)
    if (hit) return hit
    await this.load()
    return this.byId.get(id) ?? this.store.getEvent(id)
  }

  /** The event, or NOT_FOUND naming what this store logs. */
  async requireEvent(id: string): Promise<RecallEvent> {
    const e = await this.getEvent(id)
    if (e) return e
    const sources = this.sources()
    if (sources.length === 0)
      throw new RecallscopeError(
        'NOT_FOUND',
        `No recall events for this store (layout ${this.store.layout}): it has no recall_events table and no agent records recallscope reads; add a trace log with --log`,
      )
    throw new RecallscopeError('NOT_FOUND', `No recall event ${id} (read from: ${sources.map((s) => `${s.label} ${s.events}`).join(', ')})`)
  }

  /** Extra logged columns (only the store's own table has any). */
  eventExtras(id: string): EventExtras {
    return this.byId.has(id) ? NO_EXTRAS : this.store.eventExtras(id)
  }

  /** Events whose results include a memory, newest first (bounded). */
  async eventsForMemory(memoryId: string, limit = 200): Promise<EventRef[]> {
    await this.load()
    const own = this.store.eventsForMemory(memoryId, limit)
    if (this.byId.size === 0) return own
    const extra = this.extras({ memoryId }, 'desc')
      .slice(0, limit)
      .map((e) => {
        const i = e.results.findIndex((r) => r.id === memoryId)
        return { eventId: e.id, at: e.at, rank: i + 1, score: e.results[i].score, query: e.query }
      })
    // an unreadable time (NaN) sorts last, consistently
    const key = (e: { at: number }) => (Number.isFinite(e.at) ? e.at : -Infinity)
    return [...own, ...extra].sort((a, b) => key(b) - key(a)).slice(0, limit)
  }

  /** Timeline aggregates under a filter: the store's, plus the read events'. */
  async eventTimeline(f: EventFilter): Promise<EventTimelineStats> {
    await this.load()
    const own = this.store.eventTimeline(f)
    if (this.byId.size === 0) return own
    const all = this.extras(f, 'asc')
    const good = all.filter((e) => Number.isFinite(e.at) && Math.abs(e.at) <= 8.64e15)
    const union = (a: string[], b: (string | null)[]) => [...new Set([...a, ...b.filter((x): x is string => x !== null)])].sort()
    let range = own.range
    if (good.length) {
      const min = good[0].at
      const max = good[good.length - 1].at
      range = range ? { min: Math.min(range.min, min), max: Math.max(range.max, max) } : { min, max }
    }
    return {
      total: own.total + good.length,
      range,
      agents: union(
        own.agents,
        good.map((e) => e.agentId),
      ),
      users: union(
        own.users,
        good.map((e) => e.userId),
      ),
      presets: union(
        own.presets,
        good.map((e) => e.preset),
      ),
      badTimestamps: own.badTimestamps + (all.length - good.length),
      counts: (binMs, start) => {
        const m = new Map<string, { bin: number; preset: string; count: number }>()
        for (const c of own.counts(binMs, start)) m.set(`${c.bin}\u0000${c.preset}`, { ...c })
        for (const e of good) {
          const bin = Math.floor((e.at - start) / binMs)
          const preset = e.preset ?? '(none)'
          const k = `${bin}\u0000${preset}`
          const hit = m.get(k)
          if (hit) hit.count++
          else m.set(k, { bin, preset, count: 1 })
        }
        return [...m.values()].sort((a, b) => a.bin - b.bin)
      },
    }
  }
}

/** The `events.page` filter in memory (same meaning as the store's SQL: where.ts eventWhere). */
function matchesFilter(e: RecallEvent, f: EventFilter): boolean {
  if (f.agentId !== undefined && e.agentId !== f.agentId) return false
  if (f.userId !== undefined && e.userId !== f.userId) return false
  if (f.sessionId !== undefined && e.sessionId !== f.sessionId) return false
  if (f.after !== undefined && !(e.at >= f.after)) return false
  if (f.before !== undefined && !(e.at <= f.before)) return false
  if (f.memoryId !== undefined && !e.results.some((r) => r.id === f.memoryId)) return false
  if (f.search) {
    // SQLite's LIKE folds ASCII case; so does this.
    const needle = f.search.toLowerCase()
    const hay = `${e.query ?? ''}\u0000${e.cue ? JSON.stringify(e.cue) : ''}`.toLowerCase()
    if (!hay.includes(needle)) return false
  }
  return true
}

function lookedFor(): string {
  return LOG_FORMATS.length ? LOG_FORMATS.map((f) => f.label).join('; ') : 'no log formats are registered'
}

/** The first registered format that claims a file (by its path and first 64 KiB); null when none or unreadable. */
function sniffFormat(file: string): LogFormat | null {
  let head: string
  try {
    // a FIFO or device is no log: refused here, never waited on (store/safeFiles.ts)
    const fd = openRegularFile(file, 'event log')
    try {
      const buf = Buffer.alloc(SNIFF_BYTES)
      const n = fs.readSync(fd, buf, 0, SNIFF_BYTES, 0)
      head = buf.subarray(0, n).toString('utf8')
    } finally {
      fs.closeSync(fd)
    }
  } catch (e) {
    // a FIFO, device or folder given as the log: say so (BAD_INPUT naming it), rather than "not a known trace log"
    if (e instanceof RecallscopeError && e.code === 'BAD_INPUT') throw e
    return null
  }
  for (const f of LOG_FORMATS) {
    try {
      if (f.sniff(file, head)) return f
    } catch {
      /* a sniffer must not throw; one that does claims nothing */
    }
  }
  return null
}

/** Regular files under a folder, depth first, sorted, capped (links are not followed). */
function listFiles(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(d, { withFileTypes: true })
    } catch {
      return
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const e of entries) {
      if (out.length >= FOLDER_MAX_FILES) return
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile()) out.push(p)
    }
  }
  walk(dir)
  return out
}
