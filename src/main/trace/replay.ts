/**
 * Replay a logged recall event and diff it against what was logged.
 *
 * `logged`: the logged config at the event's own `at` (time travel: memories
 * created later are out of scope, a last use after `at` counts as none), with
 * the logged query vector when the event has one (optional `query_vector`
 * column, src/shared/trace.ts), else re-embedded by the embedder that makes the
 * logged model's vectors. On an unchanged DB this reproduces the log exactly
 * (same ids, order and scores); every difference is explained from what is
 * detectable (see explain.ts).
 *
 * `current`: "today" — the caller's `now`, the current embedder, the logged
 * config with edits merged over it. Differences are explained in two layers:
 * log → the event-time replay (the data changed), then event-time replay →
 * today (time passed, config, embedder, new memories, later uses).
 *
 * Length: replay, diff and the per-row explanation (seven causes) read one shared
 * context; splitting them would only move that context into a parameter object.
 */
import { diffConfigs } from '../../shared/savedConfigs'
import { armTexts } from '../../shared/cue'
import { mergeConfig, partialConfigSchema, type PartialRecallConfig } from '../../shared/config'
import { validateConfig } from '../../shared/presets'
import { badInput, RecallscopeError } from '../../shared/result'
import type { Cause, ConfigChange, ReplayRow, ReplayStatus, TraceReplay } from '../../shared/trace'
import { FEATURE_NAMES, type Memory, type RecallConfig, type RecallEvent, type RecallTrace } from '../../shared/types'
import { createEmbedder } from '../embed/index'
import { prepareVector, runRecallSync, type PreparedVector } from '../recall/engine'
import { defaultEmbedderSpec } from '../recall/request'
import type { MemorySource } from '../store/source'
import { loggedReplay, measureCandidate, requireEvent, unitsOf, type EventRun, type PrepareOptions } from './event'
import { attributeScoreDelta, cause, day, dayPair, fmt, gateOf, lookup, SCORE_EPS, scoreAsIfInPool, scoredOf, type Lookup } from './explain'
import { checkMemoryScope } from './scope'

export interface ReplayOptions extends PrepareOptions {
  /** @default 'logged' */
  mode?: 'logged' | 'current'
  /** current mode: a partial config merged over the logged one */
  config?: unknown
  /** current mode: "today" (epoch ms). Required there: the core reads no clock. */
  now?: number
}

/** A replay plus the event-time trace it was explained against (the same trace in logged mode). */
export interface ReplayOutcome {
  replay: TraceReplay
  run: EventRun
  loggedTrace: RecallTrace
}

/** Replay one event (see the module comment). */
export async function replayEvent(store: MemorySource, eventId: string, opts: ReplayOptions = {}): Promise<TraceReplay> {
  return (await replayEventFull(store, eventId, opts)).replay
}

export async function replayEventFull(store: MemorySource, eventId: string, opts: ReplayOptions = {}): Promise<ReplayOutcome> {
  const t0 = performance.now()
  const mode = opts.mode ?? 'logged'
  const event = await requireEvent(store, eventId)
  const { run, trace: loggedTrace } = await loggedReplay(store, event, opts)
  if (mode === 'logged') {
    const replay = buildReplay(store, {
      mode,
      event,
      run,
      loggedTrace,
      trace: loggedTrace,
      config: run.config,
      now: event.at,
      prepared: run.prepared,
      vectorSource: run.vectorSource,
      t0,
    })
    return { replay, run, loggedTrace }
  }
  if (opts.now === undefined || !Number.isFinite(opts.now)) throw new RecallscopeError('BAD_INPUT', 'a current-mode replay needs `now` (epoch ms)')
  let patch: PartialRecallConfig | undefined
  if (opts.config !== undefined && opts.config !== null) {
    const p = partialConfigSchema.safeParse(opts.config)
    if (!p.success) throw badInput('Invalid config', p.error, '(config)')
    patch = p.data
  }
  const config = validateConfig(mergeConfig(run.config, patch))
  const owner = config.unit === 'session' ? 'session' : 'memory'
  const spec = opts.embedder ?? defaultEmbedderSpec(store, owner)
  const embedder = createEmbedder(spec, opts.embedderOptions ?? {})
  // Today's embedder decides whose stored vectors the dense arm searches.
  if (embedder.enabled && embedder.model && embedder.model !== config.model) config.model = embedder.model
  const sameText = armTexts(event.query ?? '', event.cue, config.cueUse).dense === armTexts(event.query ?? '', event.cue, run.config.cueUse).dense
  let prepared: PreparedVector
  let vectorSource: TraceReplay['vector']['source']
  if (run.vectorSource === 'logged' && sameText && (config.model ?? null) === (run.config.model ?? null)) {
    prepared = run.prepared // the logged vector is what this model gave for this text
    vectorSource = 'logged'
  } else {
    prepared = await prepareVector(store, armTexts(event.query ?? '', event.cue, config.cueUse).dense, { embedder })
    vectorSource = prepared.vector ? 'embedder' : 'none'
  }
  const trace = runRecallSync(store, run.query, config, opts.now, { preset: event.preset, prepared })
  const replay = buildReplay(store, { mode, event, run, loggedTrace, trace, config, now: opts.now, prepared, vectorSource, t0 })
  return { replay, run, loggedTrace }
}

/** Dotted paths whose values differ between two configs. */
export function diffConfig(a: RecallConfig, b: RecallConfig): ConfigChange[] {
  return diffConfigs(a, b).map((c) => ({ path: c.path, logged: c.a, replay: c.b }))
}

const show = (v: unknown) => (v === null || v === undefined ? 'none' : typeof v === 'number' ? String(Number(v.toFixed(6))) : JSON.stringify(v))

/** A replay row before it is explained: the shared fields of ReplayRow. */
type DiffRow = Pick<ReplayRow, 'id' | 'status' | 'logged' | 'replayed' | 'scoreDelta' | 'shifted'>

/** Logged list vs replayed list: statuses by relative position among shared ids (see ReplayStatus). */
export function diffResults(logged: readonly { id: string; score: number }[], replayed: readonly { id: string; score: number }[]): DiffRow[] {
  const seenL = new Set<string>()
  const L = logged.filter((x) => (seenL.has(x.id) ? false : (seenL.add(x.id), true)))
  const rPos = new Map(replayed.map((r, i) => [r.id, i]))
  const lSet = new Set(L.map((x) => x.id))
  const commonL = new Map(L.filter((x) => rPos.has(x.id)).map((x, i) => [x.id, i]))
  const commonR = new Map(replayed.filter((x) => lSet.has(x.id)).map((x, i) => [x.id, i]))
  const rows: DiffRow[] = []
  L.forEach((l, i) => {
    const j = rPos.get(l.id)
    if (j === undefined) {
      rows.push({ id: l.id, status: 'missing', logged: { rank: i + 1, score: l.score }, replayed: null, scoreDelta: null, shifted: false })
      return
    }
    const r = replayed[j]
    const delta = r.score - l.score
    const status: ReplayStatus = commonL.get(l.id) !== commonR.get(l.id) ? 'reordered' : Math.abs(delta) > SCORE_EPS ? 'rescored' : 'same'
    rows.push({
      id: l.id,
      status,
      logged: { rank: i + 1, score: l.score },
      replayed: { rank: j + 1, score: r.score },
      scoreDelta: delta,
      shifted: status !== 'reordered' && i !== j,
    })
  })
  replayed.forEach((r, j) => {
    if (!lSet.has(r.id)) rows.push({ id: r.id, status: 'extra', logged: null, replayed: { rank: j + 1, score: r.score }, scoreDelta: null, shifted: false })
  })
  return rows
}

interface BuildInput {
  mode: 'logged' | 'current'
  event: RecallEvent
  run: EventRun
  loggedTrace: RecallTrace
  trace: RecallTrace
  config: RecallConfig
  now: number
  prepared: PreparedVector
  vectorSource: TraceReplay['vector']['source']
  t0: number
}

function buildReplay(store: MemorySource, b: BuildInput): TraceReplay {
  const { event, run, loggedTrace, trace, config, mode } = b
  const unit = config.unit
  const diff = diffResults(event.results, trace.results)
  const ids = diff.map((d) => d.id)
  const units = unitsOfBoth(store, ids, unit, trace, loggedTrace)
  const mems = unit === 'memory' ? store.getMemories(ids) : new Map<string, Memory>()
  const A = lookup(loggedTrace)
  const B = lookup(trace)
  const loggedModel = run.config.model ?? loggedTrace.embedder.model ?? null
  const todayModel = trace.embedder.model ?? config.model ?? null
  const reembedded =
    run.vectorSource === 'embedder' && loggedTrace.embedder.name !== 'hashing'
      ? `${loggedTrace.embedder.name}${loggedTrace.embedder.model ? `:${loggedTrace.embedder.model}` : ''}`
      : null
  const configChanges = mode === 'current' ? diffConfig(run.config, config) : []
  const embedderChanged =
    mode === 'current' && loggedModel !== todayModel
      ? `logged ${loggedModel ?? 'none'}, now ${todayModel ?? 'none'}${trace.embedder.name !== 'vector' ? ` (${trace.embedder.name})` : ''}`
      : null
  const notes = replayNotes(b, loggedModel, reembedded, configChanges, embedderChanged)

  const ownCause = new Set<string>()
  const rows: ReplayRow[] = diff.map((d) => {
    const causes =
      d.status === 'same'
        ? []
        : explainRow(store, d, { A, B, mode, event, run, config, now: b.now, mem: mems.get(d.id) ?? null, unit, reembedded, configChanges, embedderChanged })
    if (causes.some((c) => c.code !== 'gate' && c.code !== 'displaced')) ownCause.add(d.id)
    const g = d.replayed ? null : gateOf(B, d.id).gate
    return { ...d, replayGate: g, causes, unit: units.get(d.id) ?? null }
  })
  const block = run.extras.context
  if (block !== null && unit === 'memory') markEditedContent(rows, block, mems, ownCause, notes)
  explainDisplaced(rows, ownCause, mode)
  const counts: Record<ReplayStatus, number> = { same: 0, rescored: 0, reordered: 0, missing: 0, extra: 0 }
  for (const r of rows) counts[r.status]++
  const identical = rows.every((r) => r.status === 'same' && !r.shifted)
  return {
    eventId: event.id,
    mode,
    event,
    now: b.now,
    config,
    loggedConfig: run.config,
    configSource: run.resolved.source,
    configChanges,
    vector: { source: b.vectorSource, embedder: trace.embedder, loggedModel },
    identical,
    counts,
    rows,
    notes,
    trace,
    tookMs: performance.now() - b.t0,
  }
}

/** The rows' display records from the replayed trace, and from the logged one for ids only it holds. */
function unitsOfBoth(store: MemorySource, ids: string[], unit: 'memory' | 'session', trace: RecallTrace, loggedTrace: RecallTrace) {
  const units = unitsOf(store, ids, unit, trace)
  for (const [id, u] of unitsOf(
    store,
    ids.filter((id) => !units.get(id)),
    unit,
    loggedTrace,
  ))
    units.set(id, u)
  return units
}

/** The replay's own notes: how the config and query vector were resolved, and (current mode) what differs today. */
function replayNotes(
  b: BuildInput,
  loggedModel: string | null,
  reembedded: string | null,
  configChanges: ConfigChange[],
  embedderChanged: string | null,
): Cause[] {
  const { run, trace, mode, event } = b
  const notes: Cause[] = []
  for (const n of run.resolved.notes) notes.push(cause('config-differs', n))
  if (run.extras.queryVectorProblem) notes.push(cause('embedder-differs', run.extras.queryVectorProblem))
  if (b.vectorSource === 'logged')
    notes.push(
      cause('embedder-differs', `the event's logged query vector was used (${b.prepared.vector?.length ?? 0} dimensions, model ${loggedModel ?? 'unknown'})`),
    )
  else if (reembedded && mode === 'logged')
    notes.push(
      cause(
        'embedder-differs',
        `no logged query vector: the query was re-embedded with ${reembedded}; if that model changed since the event, every similarity shifts`,
      ),
    )
  if (trace.degraded) notes.push(cause('embedder-differs', `the dense arm did not run: ${trace.degradedReason}`))
  if (mode === 'current') {
    const days = (b.now - event.at) / 86_400_000
    notes.push(
      cause(
        'time-passed',
        `replayed at ${day(b.now)}, ${fmt(days, 1)} days after the event (${day(event.at)}): recency is measured from then, later memories and uses count`,
      ),
    )
    for (const c of configChanges) notes.push(cause('config-differs', `config differs: ${c.path} ${show(c.logged)} → ${show(c.replay)}`))
    if (embedderChanged) notes.push(cause('embedder-differs', `embedder differs: ${embedderChanged}`))
  }
  return notes
}

/**
 * With the logged context block (optional `context` column), edited text is directly visible:
 * an injected memory whose current text is nowhere in the block was edited since.
 */
function markEditedContent(rows: ReplayRow[], block: string, mems: Map<string, Memory>, ownCause: Set<string>, notes: Cause[]): void {
  const inBlock = (text: string) => {
    const t = text.trim()
    return t !== '' && (block.includes(t) || block.includes(JSON.stringify(t).slice(1, -1)))
  }
  const logged = rows.filter((r) => r.logged && mems.has(r.id))
  // Only trust the check when the template printed the texts verbatim (most logged texts are found).
  if (logged.filter((r) => inBlock(mems.get(r.id)!.content)).length * 2 < logged.length) return
  let edited = 0
  for (const r of logged) {
    if (inBlock(mems.get(r.id)!.content)) continue
    edited++
    r.causes.unshift(
      cause(
        'content-changed',
        `its current text is not in the logged context block: content edited since the event (now: "${oneLine(mems.get(r.id)!.content, 80)}")`,
      ),
    )
    ownCause.add(r.id)
  }
  if (edited) notes.push(cause('content-changed', `${edited} injected memor${edited === 1 ? 'y’s' : 'ies’'} text differs from the logged context block`))
}

/** Rows that moved or left only because others changed: name those others. */
function explainDisplaced(rows: ReplayRow[], ownCause: Set<string>, mode: 'logged' | 'current'): void {
  const movers = rows.filter((r) => ownCause.has(r.id)).map((r) => r.id)
  for (const r of rows) {
    if (ownCause.has(r.id)) continue
    const own = r.logged && r.replayed ? Math.abs(r.replayed.score - r.logged.score) <= SCORE_EPS : false
    if (r.status === 'same' && r.shifted)
      r.causes.push(
        cause('displaced', `rank ${r.logged!.rank} → ${r.replayed!.rank} only because ${movers.length ? movers.join(', ') : 'other ids'} left or came in`),
      )
    else if (r.status === 'reordered' && own)
      r.causes.unshift(
        cause(
          'displaced',
          `its own score is unchanged (${fmt(r.logged!.score)}); it moved because ${movers.length ? movers.join(', ') : 'other memories'} changed`,
        ),
      )
    else if (r.status === 'missing' && r.causes.every((c) => c.code === 'gate') && movers.length)
      r.causes.unshift(cause('displaced', `pushed out by ${movers.join(', ')}`))
    else if (r.status === 'extra' && r.causes.every((c) => c.code === 'gate' || c.code === 'displaced') && mode === 'logged')
      r.causes.unshift(
        cause(
          'displaced',
          movers.length
            ? `not injected in the log; it takes the slot freed by ${movers.join(', ')}`
            : 'not injected in the log and nothing else explains it: its own inputs changed since the event (the log keeps scores of injected memories only, so which one cannot be told)',
        ),
      )
  }
}

interface RowContext {
  A: Lookup
  B: Lookup
  mode: 'logged' | 'current'
  event: RecallEvent
  run: EventRun
  config: RecallConfig
  now: number
  mem: Memory | null
  unit: 'memory' | 'session'
  reembedded: string | null
  configChanges: ConfigChange[]
  embedderChanged: string | null
}

/** Why one differing row differs: the data since the event (A), then today vs the event (B, current mode), then where it stands now. */
function explainRow(store: MemorySource, d: DiffRow, x: RowContext): Cause[] {
  const out: Cause[] = []
  const at = x.event.at
  const m = x.mem
  if (x.unit === 'memory' && !m) return [cause('deleted', 'deleted since the event: no longer in the DB')]
  if (x.unit === 'session' && !x.A.cand.has(d.id) && !x.B.cand.has(d.id) && !store.getSession(d.id))
    return [cause('deleted', 'session deleted since the event')]

  // Layer A: the log vs the event-time replay (same config, same `now`): what changed in the data.
  let ac = x.A.cand.get(d.id)
  if (d.logged) {
    if (m && m.createdAt > at)
      out.push(
        cause(
          'created-after',
          `created_at is now ${day(m.createdAt)}, after the event (${day(at)}): it did not exist then, so created_at was rewritten since (or the log is inconsistent)`,
        ),
      )
    else if (m && !ac) {
      const sc = checkMemoryScope(store, m, x.run.config, at)
      if (!sc.inScope)
        for (const f of sc.failures)
          out.push(cause('out-of-scope', `out of the logged scope now: ${f.field} is ${f.value}, the scope wants ${f.expected} — changed since the event`))
      // In scope but deeper than the arms fetched: measure it directly to read its logged score.
      else ac = measureCandidate(store, x.A.trace, x.run.prepared, d.id) ?? undefined
    }
  }
  // Outside the pool at the event's time: score it as if the pool reached it.
  const a = scoredOf(x.A, d.id) ?? (ac ? scoreAsIfInPool(ac, x.run.config, x.A.trace.mode) : null)
  if (d.logged) {
    if (a) out.push(...attributeScoreDelta(d.logged.score, a, ac, { config: x.run.config, mode: x.A.trace.mode, at, memory: m, reembedded: x.reembedded }))
    else if (out.length === 0 && x.A.cand.has(d.id))
      out.push(
        cause(
          'unexplained',
          `at the event's time it is now ${gateOf(x.A, d.id).text}: its inputs changed since (the log keeps only its score ${fmt(d.logged.score)})`,
        ),
      )
  }

  // Layer B (current mode): the event-time replay vs today.
  if (x.mode === 'current') {
    const bs = scoredOf(x.B, d.id)
    if (m && m.createdAt > at && m.createdAt <= x.now && !d.logged) {
      const [c, e] = dayPair(m.createdAt, at)
      out.push(cause('created-after', `created after the event (${c} vs event ${e})`))
    }
    if (a && bs) {
      const rf = x.config.recency.from === 'last_used'
      if (rf && m && m.lastUsedAt !== null && m.lastUsedAt > at && m.lastUsedAt <= x.now && Math.abs(a.features.recency - bs.features.recency) > SCORE_EPS)
        out.push(
          cause(
            'last-used-changed',
            `last_used_at changed since: now ${day(m.lastUsedAt)}, after the event (recency ${fmt(a.features.recency)} → ${fmt(bs.features.recency)})`,
          ),
        )
      else if (Math.abs(a.features.recency - bs.features.recency) > SCORE_EPS && x.config.weights.recency > 0)
        out.push(
          cause(
            'time-passed',
            `recency decayed: ${fmt((x.now - at) / 86_400_000, 1)} days later (recency ${fmt(a.features.recency)} → ${fmt(bs.features.recency)})`,
          ),
        )
      if (Math.abs(a.features.similarity - bs.features.similarity) > SCORE_EPS)
        out.push(
          x.embedderChanged
            ? cause('embedder-differs', `similarity ${fmt(a.features.similarity)} → ${fmt(bs.features.similarity)}: embedder differs (${x.embedderChanged})`)
            : cause('config-differs', `similarity ${fmt(a.features.similarity)} → ${fmt(bs.features.similarity)}: the query text or model changed`),
        )
      const wl = x.run.config.weights
      const wn = x.config.weights
      for (const k of FEATURE_NAMES)
        if (wl[k] !== wn[k]) {
          const ca = wl[k] * a.features[k]
          const cb = wn[k] * bs.features[k]
          out.push(cause('config-differs', `config differs: weights.${k} ${show(wl[k])} → ${show(wn[k])} (${k} contributes ${fmt(ca)} → ${fmt(cb)})`))
        }
    }
    if (!bs && m && !x.B.cand.has(d.id)) {
      const sc = checkMemoryScope(store, m, x.config, x.now)
      if (!sc.inScope)
        for (const f of sc.failures) out.push(cause('out-of-scope', `out of today's scope: ${f.field} is ${f.value}, the scope wants ${f.expected}`))
    }
  }

  // Where it stands in the replay, if not injected.
  if (!d.replayed) {
    const g = gateOf(x.B, d.id)
    if (g.gate === 'absent' && out.some((c) => c.code === 'out-of-scope' || c.code === 'created-after' || c.code === 'deleted')) return out
    out.push(cause('gate', g.gate === 'absent' ? absentWhy(store, x.B.trace, d.id) : g.text))
  }
  return out
}

/** Why an in-scope id was not gathered: no vector for the model, no lexical match, or deeper than the arms fetched. */
function absentWhy(store: MemorySource, t: RecallTrace, id: string): string {
  const bits: string[] = []
  const dense = t.arms?.dense
  if (dense?.ran && t.embedder.model) {
    const idx = store.vectors(t.embedder.model, t.unit === 'session' ? 'session' : 'memory')
    if (!idx.rowOf.has(id)) bits.push(`no stored ${t.embedder.model} vector`)
    else bits.push(`ranked below the ${dense.fetched} rows the dense arm fetched`)
  } else if (dense && !dense.ran) bits.push(`dense arm off (${dense.reason ?? 'no query vector'})`)
  if (t.arms?.lexical.ran) bits.push('no lexical match in the fetched depth')
  return `not gathered: ${bits.join('; ') || 'no arm reached it'}`
}

function oneLine(s: string, n: number): string {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > n ? `${t.slice(0, n - 1)}…` : t
}
