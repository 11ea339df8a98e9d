import { type CliContext, type Command, readCue, readJsonFile, readMapping, requireString, str } from './args'
import { ALL_PRESETS, getPreset } from '../../shared/presets'
import { RecallscopeError } from '../../shared/result'
import type { RecallTrace } from '../../shared/types'
import { parseQueryVector } from '../embed/cache'
import { embedderUsage } from '../embed/index'
import { openStore } from '../store/registry'

import { parseNow, recallFromRequest } from '../recall/request'

const USAGE = [
  'recallscope recall --db FILE|URL [--map MAPPING.json] --query TEXT [--cue JSON|FILE] [--preset NAME] [--config FILE] [--set key=value]…',
  '         [--now ISO|ms] [--agent ID] [--user ID] [--session ID] [--tenant ID]',
  '         [--embedder hashing|none|ollama:MODEL|openai:MODEL] [--query-vector FILE|JSON] [--workspace FILE] [--write] [--json]',
  '       recallscope recall --preset [NAME]      list the presets (or show one as JSON)',
].join('\n')

export const recallCommand: Command = {
  name: 'recall',
  summary: 'Run one recall and show every candidate: features, contributions, the gate that dropped it, and the context block',
  usage: USAGE,
  // `--preset` is a flag whose value is the following word, so a bare `recall --preset` can list presets.
  positionals: true,
  options: {
    db: { type: 'string' },
    map: { type: 'string' },
    query: { type: 'string', short: 'q' },
    cue: { type: 'string' },
    preset: { type: 'boolean' },
    config: { type: 'string' },
    set: { type: 'string', multiple: true },
    now: { type: 'string' },
    agent: { type: 'string' },
    user: { type: 'string' },
    session: { type: 'string' },
    tenant: { type: 'string' },
    embedder: { type: 'string' },
    'query-vector': { type: 'string' },
    'ollama-host': { type: 'string' },
    'openai-base-url': { type: 'string' },
    workspace: { type: 'string' },
    write: { type: 'boolean' },
  },
  async run(ctx) {
    const v = ctx.values
    if (ctx.positionals.length > 1 || (ctx.positionals.length === 1 && v.preset !== true))
      throw new RecallscopeError('BAD_INPUT', `Unexpected argument "${ctx.positionals[ctx.positionals.length - 1]}". Usage:\n${USAGE}`)
    const presetName = v.preset === true ? ctx.positionals[0] : undefined
    const query = typeof v.query === 'string' ? v.query : undefined
    if (query === undefined && v.cue === undefined) {
      if (v.preset === true) return listPresets(ctx, presetName)
      throw new RecallscopeError('BAD_INPUT', `--query is required. Usage:\n${USAGE}`)
    }
    const db = requireString(ctx, 'db', USAGE)
    const cue = v.cue === undefined ? null : readCue(String(v.cue))
    const configFile = typeof v.config === 'string' ? readJsonFile(v.config, '--config') : undefined
    const now = parseNow(typeof v.now === 'string' ? v.now : undefined, Date.now())
    // --write: the one case where recall touches the agent DB (refreshOnRecall for real).
    const store = openStore({
      path: db,
      workspacePath: typeof v.workspace === 'string' ? v.workspace : undefined,
      write: v.write === true,
      mapping: readMapping(ctx),
    })
    try {
      const trace = await recallFromRequest(store, {
        preset: presetName,
        config: configFile,
        scope: { agentId: str(v.agent), userId: str(v.user), sessionId: str(v.session), tenantId: str(v.tenant) },
        set: Array.isArray(v.set) ? v.set.map(String) : [],
        query: query ?? '',
        cue,
        now,
        embedder: str(v.embedder),
        embedderOptions: { ollamaHost: str(v['ollama-host']), openaiBaseUrl: str(v['openai-base-url']) },
        queryVector: typeof v['query-vector'] === 'string' ? parseQueryVector(v['query-vector']) : null,
      })
      if (v.write === true && trace.refreshed.length) {
        const { updated } = store.applyRefresh(trace.refreshed, trace.now)
        if (!ctx.json) ctx.io.err(`--write: last_used_at = ${new Date(trace.now).toISOString()} written for ${updated} memories`)
      }
      ctx.io.out(ctx.json ? JSON.stringify(trace) : formatTrace(trace))
      return 0
    } finally {
      store.close()
    }
  },
}

function listPresets(ctx: CliContext, name: string | undefined): number {
  if (name) {
    const p = getPreset(name)
    ctx.io.out(
      JSON.stringify(
        ctx.json
          ? {
              name: p.name,
              seed: p.preset.seed,
              ...(p.preset.framework ? { framework: p.preset.framework } : {}),
              label: p.preset.label,
              description: p.preset.description,
              requires: p.requires,
              config: p.config,
            }
          : p.config,
        null,
        2,
      ),
    )
    return 0
  }
  if (ctx.json) {
    ctx.io.out(JSON.stringify(ALL_PRESETS))
    return 0
  }
  const lines = ["Presets (each reproduces one seed system or a framework's own recall; start from one and edit with --set / --config):", '']
  for (const p of ALL_PRESETS) {
    lines.push(
      `  ${p.name.padEnd(16)} ${p.seed === null ? 'framework' : `seed ${String(p.seed).padStart(3, '0')}`}  ${p.label}${p.requires?.length ? `  (needs --${p.requires.map((r) => r.replace('Id', '')).join(' --')})` : ''}`,
    )
    lines.push(`  ${''.padEnd(16)}           ${p.description}`)
    for (const v of p.variants ?? []) lines.push(`  ${`${p.name}:${v.name}`.padEnd(26)} ${v.description}`)
    lines.push('')
  }
  lines.push(`Default: fieldguide. Show one as JSON: recallscope recall --preset NAME. Embedders: ${embedderUsage()}`)
  ctx.io.out(lines.join('\n'))
  return 0
}

const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : String(x))

function oneLine(s: string, n: number): string {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > n ? `${t.slice(0, n - 1)}…` : t
}

/** A config patch as `--set` arguments (`floor=0.2 --set topK=5`). */
function setArgs(patch: Record<string, unknown>): string {
  return Object.entries(patch)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(' --set ')
}

/** Human output: header, results with their breakdown, dropped by gate, the context block. */
function formatTrace(t: RecallTrace): string {
  const out: string[] = []
  const when = Number.isFinite(t.now) ? new Date(t.now).toISOString() : String(t.now)
  out.push(
    `recall ${JSON.stringify(oneLine(t.query, 80))}${t.cue ? ' (with cue)' : ''} · preset ${t.preset ?? '—'} · mode ${t.mode ?? t.config.mode} · unit ${t.config.unit} · now ${when}`,
  )
  out.push(
    `embedder ${t.embedder.name}${t.embedder.model ? ` (${t.embedder.model})` : ''}${t.embedder.available ? '' : ' UNAVAILABLE'} · in scope ${t.counts.inScope}${t.counts.inScopeCapped ? '+' : ''} · pool ${t.counts.pool} · ${t.results.length} injected · ${t.contextTokens} tokens · ${t.timings.totalMs.toFixed(1)} ms`,
  )
  if (t.degraded) out.push(`DEGRADED: ${t.degradedReason}`)
  out.push('')
  const cands = new Map(t.candidates.map((c) => [c.id, c]))
  out.push(
    ` #  ${'id'.padEnd(14)} ${'score'.padStart(7)} ${'sim'.padStart(7)} ${'lex'.padStart(6)} ${'rec'.padStart(6)} ${'sal'.padStart(6)} ${'tok'.padStart(5)}  text`,
  )
  for (const r of t.results) {
    const c = cands.get(r.id)
    out.push(
      `${String(r.rank).padStart(2)}  ${r.id.padEnd(14)} ${f3(r.score).padStart(7)} ${(c?.similarity === null || c?.similarity === undefined ? '—' : f3(c.similarity)).padStart(7)} ${f3(r.features.lexical).padStart(6)} ${f3(r.features.recency).padStart(6)} ${f3(r.features.salience).padStart(6)} ${String(r.tokens).padStart(5)}  ${oneLine(t.units[r.id]?.content ?? '', 60)}`,
    )
  }
  if (t.results.length === 0) out.push('    (nothing injected)')
  if (t.empty)
    out.push(
      '',
      `why empty: ${t.empty.message}`,
      ...(t.empty.suggestion
        ? [`  try: ${t.empty.suggestion.label} (--set ${setArgs(t.empty.suggestion.patch)}) → ${t.empty.suggestion.wouldInject} injected`]
        : []),
    )
  if (t.dropped.length) {
    const byGate = new Map<string, number>()
    for (const d of t.dropped) byGate.set(d.gate, (byGate.get(d.gate) ?? 0) + 1)
    out.push('')
    out.push(
      `dropped ${t.dropped.length}: ${[...byGate].map(([g, n]) => `${g} ${n}`).join(' · ')} (best ${Math.min(8, t.dropped.length)} shown; --json for all)`,
    )
    for (const d of t.dropped.slice(0, 8))
      out.push(`    ${d.id.padEnd(14)} ${f3(d.score).padStart(7)}  ${d.gate.padEnd(13)} ${oneLine(t.units[d.id]?.content ?? '', 60)}`)
  }
  if (t.refreshed.length) out.push('', `refreshOnRecall: last_used_at = now for ${t.refreshed.length} (simulated; the agent DB is not written)`)
  out.push('', `--- context (${t.config.template}, ${t.contextTokens} tokens) ---`, t.context === '' ? '(empty)' : t.context.replace(/\n$/, ''))
  return out.join('\n')
}
