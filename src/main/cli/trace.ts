/**
 * `recallscope trace list|replay|why|drivers`: the decision trace from the
 * command line (same core as the `trace.*` channels). Every sub-command takes
 * --json and prints one object.
 */
import { setByPath } from '../../shared/config'
import { RecallscopeError } from '../../shared/result'
import type { TraceDrivers, TraceReplay, WhyNot } from '../../shared/trace'
import type { RecallEvent } from '../../shared/types'
import { parseQueryVector } from '../embed/cache'
import { buildConfig, parseNow } from '../recall/request'
import { eventLogOf, type EventSourceInfo } from '../events/eventLog'
import { openStore } from '../store/registry'
import type { MemorySource } from '../store/source'
import { eventDrivers } from '../trace/drivers'
import { replayEvent } from '../trace/replay'
import { fmtKnob, whyNot } from '../trace/why'
import { type CliContext, type Command, optionalInt, readCue, readJsonFile, readMapping, requireString, str } from './args'

const USAGE = [
  'recallscope trace list    --db FILE [--agent ID] [--user ID] [--session ID] [--memory ID] [--search TEXT] [--after ISO|ms] [--before ISO|ms] [--limit N] [--offset N]',
  '       recallscope trace replay  --db FILE --event ID [--current [--now ISO|ms] [--config FILE] [--set key=value]… [--embedder SPEC]]',
  '       recallscope trace why     --db FILE --memory ID (--event ID | --query TEXT [--cue JSON|FILE] [--preset NAME] [--config FILE] [--set key=value]…',
  '                                 [--now ISO|ms] [--agent ID] [--user ID] [--session ID] [--tenant ID] [--embedder SPEC] [--query-vector FILE|JSON]) [--verify-all|--no-verify]',
  '       recallscope trace drivers --db FILE --event ID',
  '       (every sub-command: [--log FILE|FOLDER]… [--map MAPPING.json] [--workspace FILE] [--json])',
  '       Events come from the store (recall_events; Letta messages; LangGraph checkpoints; Agents SDK sessions) and each --log.',
].join('\n')

export const traceCommand: Command = {
  name: 'trace',
  summary: 'Decision trace: list logged recalls, replay one and diff it, why a memory was (not) recalled, which memory drove it',
  usage: USAGE,
  positionals: true,
  options: {
    db: { type: 'string' },
    log: { type: 'string', multiple: true },
    map: { type: 'string' },
    workspace: { type: 'string' },
    event: { type: 'string' },
    memory: { type: 'string' },
    agent: { type: 'string' },
    user: { type: 'string' },
    session: { type: 'string' },
    tenant: { type: 'string' },
    search: { type: 'string' },
    after: { type: 'string' },
    before: { type: 'string' },
    limit: { type: 'string' },
    offset: { type: 'string' },
    current: { type: 'boolean' },
    now: { type: 'string' },
    config: { type: 'string' },
    set: { type: 'string', multiple: true },
    embedder: { type: 'string' },
    query: { type: 'string', short: 'q' },
    cue: { type: 'string' },
    preset: { type: 'string' },
    'query-vector': { type: 'string' },
    'ollama-host': { type: 'string' },
    'openai-base-url': { type: 'string' },
    'no-verify': { type: 'boolean' },
    'verify-all': { type: 'boolean' },
  },
  async run(ctx) {
    const [sub, ...extra] = ctx.positionals
    if (!sub || !['list', 'replay', 'why', 'drivers'].includes(sub))
      throw new RecallscopeError('BAD_INPUT', `trace needs a sub-command: list, replay, why or drivers. Usage:\n${USAGE}`)
    if (extra.length) throw new RecallscopeError('BAD_INPUT', `Unexpected argument "${extra[0]}". Usage:\n${USAGE}`)
    const v = ctx.values
    const db = requireString(ctx, 'db', USAGE)
    const store = openStore({ path: db, workspacePath: str(v.workspace), mapping: readMapping(ctx) })
    const embedderOptions = { ollamaHost: str(v['ollama-host']), openaiBaseUrl: str(v['openai-base-url']) }
    try {
      addLogs(store, v.log)
      if (sub === 'list') return await list(ctx, store)
      if (sub === 'replay') {
        const eventId = requireString(ctx, 'event', USAGE)
        const current = v.current === true
        if (!current && (v.set || v.config || v.now))
          throw new RecallscopeError(
            'BAD_INPUT',
            '--set, --config and --now change a replay only with --current (a logged replay runs the logged config at the event’s own time)',
          )
        const r = await replayEvent(store, eventId, {
          mode: current ? 'current' : 'logged',
          config: current ? partialFrom(v) : undefined,
          now: current ? parseNow(str(v.now), Date.now()) : undefined,
          embedder: str(v.embedder) ?? null,
          embedderOptions,
        })
        ctx.io.out(ctx.json ? JSON.stringify(r) : formatReplay(r))
        return 0
      }
      if (sub === 'drivers') {
        const d = await eventDrivers(store, requireString(ctx, 'event', USAGE), { embedder: str(v.embedder) ?? null, embedderOptions })
        ctx.io.out(ctx.json ? JSON.stringify(d) : formatDrivers(d))
        return 0
      }
      // why
      const memoryId = requireString(ctx, 'memory', USAGE)
      const eventId = str(v.event)
      let w: WhyNot
      if (eventId) {
        if (v.query !== undefined || v.set || v.config || v.preset)
          throw new RecallscopeError('BAD_INPUT', 'with --event, the query and config are the logged ones: drop --query/--preset/--config/--set')
        w = await whyNot(store, {
          memoryId,
          eventId,
          embedder: str(v.embedder) ?? null,
          embedderOptions,
          verify: v['no-verify'] === true ? 'none' : v['verify-all'] === true ? 'all' : 'best',
        })
      } else {
        const query = str(v.query)
        const cue = v.cue === undefined ? null : readCue(String(v.cue))
        if (!query && !cue) throw new RecallscopeError('BAD_INPUT', `why needs --event ID, or --query TEXT for an ad-hoc recall. Usage:\n${USAGE}`)
        const { config } = buildConfig({
          preset: str(v.preset),
          config: typeof v.config === 'string' ? readJsonFile(v.config, '--config') : undefined,
          scope: { agentId: str(v.agent), userId: str(v.user), sessionId: str(v.session), tenantId: str(v.tenant) },
          set: Array.isArray(v.set) ? v.set.map(String) : [],
        })
        w = await whyNot(store, {
          memoryId,
          query: query ?? '',
          cue,
          preset: str(v.preset),
          config,
          now: parseNow(str(v.now), Date.now()),
          embedder: str(v.embedder) ?? null,
          embedderOptions,
          queryVector: typeof v['query-vector'] === 'string' ? parseQueryVector(v['query-vector']) : null,
          verify: v['no-verify'] === true ? 'none' : v['verify-all'] === true ? 'all' : 'best',
        })
      }
      // An unknown memory/session id is bad input (exit 2), not an answer about nothing (issue 10).
      if (w.status === 'not-found') throw new RecallscopeError('NOT_FOUND', `--memory: ${w.summary}`)
      ctx.io.out(ctx.json ? JSON.stringify(w) : formatWhy(w))
      return 0
    } finally {
      store.close()
    }
  },
}

/** `--config FILE` then `--set a.b=v` edits, as a partial config (merged over the logged one by replay). */
function partialFrom(v: CliContext['values']): unknown {
  let p: Record<string, unknown> = typeof v.config === 'string' ? (readJsonFile(v.config, '--config') as Record<string, unknown>) : {}
  if (p === null || typeof p !== 'object' || Array.isArray(p))
    throw new RecallscopeError('BAD_INPUT', '--config must hold a JSON object (a partial RecallConfig)')
  for (const edit of Array.isArray(v.set) ? v.set.map(String) : []) {
    const eq = edit.indexOf('=')
    if (eq <= 0) throw new RecallscopeError('BAD_INPUT', `--set takes key=value (got "${edit}")`)
    try {
      p = setByPath(p, edit.slice(0, eq).trim(), edit.slice(eq + 1))
    } catch (e) {
      throw new RecallscopeError('BAD_INPUT', (e as Error).message)
    }
  }
  return p
}

/** `--log PATH` (repeatable): each file or folder added to the store's event log (formats: events/logFormats.ts). */
export function addLogs(store: MemorySource, logs: unknown): void {
  const paths = Array.isArray(logs) ? logs.map(String) : typeof logs === 'string' ? [logs] : []
  for (const p of paths) eventLogOf(store).addLogFile(p)
}

async function list(ctx: CliContext, store: MemorySource): Promise<number> {
  const v = ctx.values
  const log = eventLogOf(store)
  const page = await log.eventsPage({
    agentId: str(v.agent),
    userId: str(v.user),
    sessionId: str(v.session),
    memoryId: str(v.memory),
    search: str(v.search),
    after: v.after === undefined ? undefined : parseNow(str(v.after), 0, '--after'),
    before: v.before === undefined ? undefined : parseNow(str(v.before), 0, '--before'),
    limit: optionalInt(ctx, 'limit', 1) ?? 50,
    offset: optionalInt(ctx, 'offset', 0) ?? 0,
  })
  const sources = log.sources()
  if (ctx.json) {
    ctx.io.out(JSON.stringify({ ...page, sources }))
    return 0
  }
  const out = [
    `${page.total}${page.truncated ? '+' : ''} event${page.total === 1 ? '' : 's'} (showing ${page.rows.length} from ${page.offset}; newest first)`,
    ...sources.map((s) => `  source: ${describeSource(s)}`),
    '',
  ]
  out.push(`${'id'.padEnd(12)} ${'at (UTC)'.padEnd(16)} ${'agent'.padEnd(16)} ${'preset'.padEnd(16)} ${'inj'.padStart(3)}  query`)
  for (const e of page.rows)
    out.push(
      `${e.id.padEnd(12)} ${when(e.at).padEnd(16)} ${(e.agentId ?? '—').padEnd(16)} ${(e.preset ?? '—').padEnd(16)} ${String(e.results.length).padStart(3)}  ${oneLine(queryOf(e), 70)}`,
    )
  if (page.rows.length === 0) out.push('  (none)')
  ctx.io.out(out.join('\n'))
  return 0
}

/** One line per event source: what it read, skipped, and how its results matched. */
export function describeSource(s: EventSourceInfo): string {
  const parts = [`${s.label}${s.file ? ` ${s.file}` : ''}: ${s.events} event${s.events === 1 ? '' : 's'}`]
  if (s.kind !== 'recall_events') {
    const m = s.matched
    parts.push(`results matched by id ${m.id}, text ${m.text}, normalised text ${m.normalized}; unmatched ${m.unmatched}`)
    if (s.stats.skipped)
      parts.push(
        `${s.stats.skipped} skipped (${s.stats.problems
          .slice(0, 3)
          .map((p) => `${p.where}: ${p.why}`)
          .join('; ')})`,
      )
  }
  if (s.error) parts.push(`ERROR: ${s.error}`)
  return parts.join(' · ')
}

const f3 = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(3))
const when = (ms: number) => (Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString().slice(0, 16).replace('T', ' ') : 'unreadable time')
function oneLine(s: string, n: number): string {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > n ? `${t.slice(0, n - 1)}…` : t
}
const queryOf = (e: RecallEvent) => e.query ?? (e.cue?.currentStep ? `[cue] ${e.cue.currentStep}` : '')

function formatReplay(r: TraceReplay): string {
  const out: string[] = []
  const e = r.event
  out.push(`replay ${e.id} (${r.mode}) · ${when(e.at)} · ${e.agentId ?? '—'} · preset ${e.preset ?? '—'} · ${JSON.stringify(oneLine(queryOf(e), 70))}`)
  out.push(
    `${r.identical ? 'IDENTICAL to the log' : 'DIFFERS from the log'}: ${
      Object.entries(r.counts)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${n} ${k}`)
        .join(' · ') || 'nothing logged, nothing recalled'
    } · now ${when(r.now)} · vector ${r.vector.source} · ${r.tookMs.toFixed(1)} ms`,
  )
  for (const n of r.notes) out.push(`  note: ${n.text}`)
  out.push('')
  out.push(`${'status'.padEnd(10)} ${'id'.padEnd(14)} ${'logged'.padStart(13)} ${'replayed'.padStart(13)}  text`)
  for (const row of r.rows) {
    const l = row.logged ? `#${row.logged.rank} ${f3(row.logged.score)}` : '—'
    const p = row.replayed ? `#${row.replayed.rank} ${f3(row.replayed.score)}` : '—'
    out.push(`${row.status.padEnd(10)} ${row.id.padEnd(14)} ${l.padStart(13)} ${p.padStart(13)}  ${oneLine(row.unit?.content ?? '(gone)', 50)}`)
    for (const c of row.causes) out.push(`${''.padEnd(26)}↳ ${c.code}: ${c.text}`)
  }
  if (r.rows.length === 0) out.push('  (nothing logged, nothing replayed)')
  return out.join('\n')
}

function formatWhy(w: WhyNot): string {
  const out: string[] = [
    `why ${w.memoryId}${w.unitId !== w.memoryId ? ` (session ${w.unitId})` : ''} · ${w.eventId ? `event ${w.eventId}` : 'ad-hoc query'} · now ${when(w.now)} · mode ${w.mode}`,
    '',
    w.summary,
    '',
  ]
  if (!w.scope.inScope && w.scope.failures.length) {
    out.push('scope:')
    for (const f of w.scope.failures) out.push(`  ${f.field}: ${f.value} (wants ${f.expected}) → ${f.fix}`)
  } else out.push(`scope: in${w.scope.viaBlend ? ' (through the userId blend)' : ''}`)
  if (w.candidate)
    out.push(
      `arms: similarity ${f3(w.candidate.similarity)} · dense rank ${w.candidate.denseRank ?? '—'} · bm25 ${f3(w.candidate.bm25)} · lexical rank ${w.candidate.lexicalRank ?? '—'} · pool ${w.config.candidatePool}${w.candidate.inPool ? ' (in)' : ` (needs ≥ ${w.candidate.poolNeeded ?? '—'})`}`,
    )
  if (w.scored) {
    const s = w.scored
    out.push(
      `score ${f3(s.score)} (#${s.scoreRank}) = sim ${f3(s.contributions.similarity)} + lex ${f3(s.contributions.lexical)} + rec ${f3(s.contributions.recency)} + sal ${f3(s.contributions.salience)}; features sim ${f3(s.features.similarity)} lex ${f3(s.features.lexical)} rec ${f3(s.features.recency)} sal ${f3(s.features.salience)} · ${s.tokens} tokens`,
    )
  }
  if (w.gate) out.push(`gate: ${w.gate.name} — ${w.gate.detail}`)
  if (w.knobs.length) {
    out.push('', 'single changes (each alone; weights free — the others stay):')
    for (const k of w.knobs) {
      const cur = k.current === null ? 'off' : fmtKnob(k.current)
      if (k.change) {
        const v = k.change.verified ? (k.change.verified.engine ? 'verified' : 'NOT confirmed by the engine') : 're-rank only'
        out.push(
          `  ${k === bestOf(w) ? '★' : ' '} ${k.knob.padEnd(22)} ${cur.padStart(8)} → ${fmtKnob(k.change.to).padEnd(8)} Δ ${f3(k.change.normalized)} (normalised) · rank ${k.change.rank} · pushes out ${k.change.pushedOut.join(', ') || 'nothing'} · ${v}`,
        )
      } else out.push(`    ${k.knob.padEnd(22)} ${cur.padStart(8)}   ${k.reason ?? 'no change found'}`)
    }
  }
  for (const n of w.notes) out.push(`note: ${n}`)
  out.push(
    '',
    `injected: ${w.injected.map((r) => r.id).join(', ') || '(nothing)'} · ${w.timings.totalMs.toFixed(1)} ms (search ${w.timings.searchMs.toFixed(1)} ms, ${w.timings.evaluations} re-ranks; verify ${w.timings.verifyMs.toFixed(1)} ms)`,
  )
  return out.join('\n')
}

function bestOf(w: WhyNot) {
  return w.best ? w.knobs.find((k) => k.change === w.best || (k.knob === w.best!.knob && k.change?.to === w.best!.to)) : undefined
}

function formatDrivers(d: TraceDrivers): string {
  const out: string[] = [`drivers of ${d.eventId}${d.identical ? '' : ' (replay differs from the log)'} · Σ score ${f3(d.total)}`]
  for (const n of d.notes) out.push(`  note: ${n}`)
  if (d.mattersMost) out.push('', `mattered most: ${d.mattersMost.id} — ${d.mattersMost.why}`)
  out.push(
    '',
    `${'#'.padStart(2)}  ${'id'.padEnd(14)} ${'score'.padStart(7)} ${'share'.padStart(6)} ${'LOO rbo'.padStart(8)} ${'loss'.padStart(7)}  replaced by`,
  )
  for (const r of d.rows)
    out.push(
      `${String(r.rank).padStart(2)}  ${r.id.padEnd(14)} ${f3(r.score).padStart(7)} ${(r.share * 100).toFixed(0).padStart(5)}% ${f3(r.loo.rbo).padStart(8)} ${f3(r.loo.scoreLoss).padStart(7)}  ${r.loo.replacement ? `${r.loo.replacement.id} (${f3(r.loo.replacement.score)})` : '—'}`,
    )
  if (d.rows.length === 0) out.push('  (nothing injected)')
  const e = d.evidence
  if (e) {
    out.push('', `evidence in the decision (${e.decision.via}): ${JSON.stringify(e.text.length > 200 ? `${e.text.slice(0, 199)}…` : e.text)}`)
    out.push(`  the returned memories hold ${(e.union * 100).toFixed(0)}% of its content words (idf-weighted)`)
    if (!e.embedder.available) out.push(`  no embedding overlap: ${e.embedder.reason}`)
    out.push(`${'#'.padStart(2)}  ${'id'.padEnd(14)} ${'words'.padStart(6)} ${'cosine'.padStart(7)}  shared words`)
    for (const r of e.rows)
      out.push(
        `${String(r.rank).padStart(2)}  ${r.id.padEnd(14)} ${(r.token * 100).toFixed(0).padStart(5)}% ${(r.embedding === null ? '—' : r.embedding.toFixed(3)).padStart(7)}  ${r.shared.map((x) => x.term).join(', ') || '—'}`,
      )
  } else if (e === null) out.push('', 'evidence: the event records no decision')
  return out.join('\n')
}
