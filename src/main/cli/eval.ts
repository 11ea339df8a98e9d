import { formatPhases, type EvalJson, type EvalRun } from '../../shared/eval'
import { LOWER_IS_BETTER, METRIC_IDS, metricKey, parseMetricKey, summarize, caseMetrics } from '../../shared/metrics'
import { RecallscopeError } from '../../shared/result'
import { runEval } from '../eval/evaluate'
import { intervals } from '../eval/replay'
import { parseNow } from '../recall/request'
import { openStore } from '../store/registry'

import { type Command, optionalInt, readJsonFile, readMapping, requireString, str } from './args'

const USAGE = [
  'recallscope eval --db FILE|URL [--map MAPPING.json] [--preset NAME] [--config FILE] [--set key=value]… [--k N] [--split train|test|all]',
  '         [--fail-under metric=value]… [--tag TAG] [--token-budget N] [--embedder SPEC] [--now ISO|ms]',
  '         [--save] [--name TEXT] [--per-case] [--workspace FILE] [--json]',
].join('\n')

export const evalCommand: Command = {
  name: 'eval',
  summary: 'Replay the eval cases under a config: recall@k, precision@k, nDCG@k, MRR, hit@k, abstention, tokens (--fail-under gates CI)',
  usage: USAGE,
  options: {
    db: { type: 'string' },
    map: { type: 'string' },
    preset: { type: 'string' },
    config: { type: 'string' },
    set: { type: 'string', multiple: true },
    k: { type: 'string' },
    split: { type: 'string' },
    tag: { type: 'string' },
    'fail-under': { type: 'string', multiple: true },
    'token-budget': { type: 'string' },
    embedder: { type: 'string' },
    'ollama-host': { type: 'string' },
    'openai-base-url': { type: 'string' },
    now: { type: 'string' },
    save: { type: 'boolean' },
    name: { type: 'string' },
    'per-case': { type: 'boolean' },
    workspace: { type: 'string' },
  },
  async run(ctx) {
    const v = ctx.values
    const db = requireString(ctx, 'db', USAGE)
    const k = optionalInt(ctx, 'k', 1) ?? 10
    const split = parseSplit(v.split)
    const gates = parseGates(v['fail-under'], k)
    const store = openStore({ path: db, workspacePath: str(v.workspace), mapping: readMapping(ctx) })
    try {
      const run = await runEval(store, {
        preset: str(v.preset),
        config: typeof v.config === 'string' ? readJsonFile(v.config, '--config') : undefined,
        set: Array.isArray(v.set) ? v.set.map(String) : [],
        k,
        split,
        tag: str(v.tag),
        budget: optionalInt(ctx, 'token-budget', 1) ?? null,
        embedder: str(v.embedder),
        embedderOptions: { ollamaHost: str(v['ollama-host']), openaiBaseUrl: str(v['openai-base-url']) },
        now: parseNow(str(v.now), Date.now()),
        createdAt: Date.now(),
        save: v.save ? { name: str(v.name) ?? str(v.preset) ?? 'cli', source: 'cli' } : null,
      })
      const checked = gates.map((g) => {
        const value = gateValue(run, g.key)
        return { metric: g.key, value, threshold: g.threshold, passed: value !== null && value >= g.threshold }
      })
      const out: EvalJson = {
        config: run.config,
        k: run.k,
        cases: run.counts.cases,
        metrics: run.metrics,
        perCase: run.perCase.map((c) => ({ id: c.id, metrics: c.metrics, retrieved: c.retrieved })),
        split: run.split,
        budget: run.budget,
        counts: run.counts,
        embedder: run.embedder,
        preset: run.preset,
        intervals: intervals(run.perCase, run.k),
        timings: run.timings,
        warnings: run.warnings,
      }
      if (checked.length) out.gates = checked
      if (v.save) out.runId = run.id
      ctx.io.out(ctx.json ? JSON.stringify(out) : formatEval(out, run, Boolean(v['per-case'])))
      const failed = checked.filter((g) => !g.passed)
      if (failed.length && !ctx.json)
        ctx.io.err(
          failed.map((g) => `FAIL ${g.metric} = ${g.value === null ? 'n/a (no case where it applies)' : g.value.toFixed(4)} < ${g.threshold}`).join('\n'),
        )
      return failed.length ? 3 : 0
    } finally {
      store.close()
    }
  },
}

function parseSplit(v: unknown): 'train' | 'test' | 'all' {
  if (v === undefined) return 'all'
  if (v === 'train' || v === 'test' || v === 'all') return v
  throw new RecallscopeError('BAD_INPUT', `--split must be train, test or all (got ${JSON.stringify(v)})`)
}

/** `--fail-under ndcg@10=0.4` (also `recall@k=…` with --k): higher-is-better metrics only. */
function parseGates(raw: unknown, k: number): { key: string; threshold: number }[] {
  const list =
    raw === undefined
      ? []
      : Array.isArray(raw)
        ? raw.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)))
        : [typeof raw === 'string' ? raw : JSON.stringify(raw)]
  return list.map((g) => {
    const eq = g.lastIndexOf('=')
    if (eq <= 0) throw new RecallscopeError('BAD_INPUT', `--fail-under takes metric=value, e.g. ndcg@10=0.4 (got "${g}")`)
    const p = parseMetricKey(g.slice(0, eq), k)
    if (!p)
      throw new RecallscopeError('BAD_INPUT', `--fail-under: unknown metric "${g.slice(0, eq)}". Metrics: ${METRIC_IDS.map((m) => metricKey(m, k)).join(', ')}`)
    if (LOWER_IS_BETTER.has(p.id)) throw new RecallscopeError('BAD_INPUT', `--fail-under: ${p.id} is lower-is-better; gate a higher-is-better metric`)
    const threshold = Number(g.slice(eq + 1))
    if (g.slice(eq + 1).trim() === '' || !Number.isFinite(threshold))
      throw new RecallscopeError('BAD_INPUT', `--fail-under: "${g.slice(eq + 1)}" is not a number`)
    return { key: metricKey(p.id, p.k ?? k), threshold }
  })
}

/** A gate's metric: from the run at its k, else recomputed from the per-case lists at the gate's k. */
function gateValue(run: EvalRun, key: string): number | null {
  if (key in run.metrics) return run.metrics[key]
  const p = parseMetricKey(key)!
  const k = p.k ?? run.k
  const s = summarize(
    run.perCase.map((c) => caseMetrics({ relevant: c.relevant, expectEmpty: c.expectEmpty }, c.retrieved, c.tokens, k, run.budget)),
    k,
  )
  return s.metrics[key] ?? null
}

const f4 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(4))

function formatEval(o: EvalJson, run: EvalRun, perCase: boolean): string {
  const lines: string[] = []
  lines.push(
    `eval · preset ${o.preset ?? '—'} · mode ${o.config.mode} · k ${o.k} · split ${o.split} · ${o.counts.cases} cases (${o.counts.graded} graded, ${o.counts.expectEmpty} expect-empty, ${o.counts.unjudged} unjudged)`,
  )
  lines.push(
    `embedder ${o.embedder.name}${o.embedder.model ? ` (${o.embedder.model})` : ''}${o.counts.degraded ? ` · DEGRADED on ${o.counts.degraded} cases (dense arm off)` : ''} · gather ${Math.round(o.timings.gatherMs)} ms · score ${Math.round(o.timings.scoreMs)} ms`,
  )
  if (o.timings.phases) lines.push(`phases: ${formatPhases(o.timings.phases)}`)
  for (const warn of o.warnings) lines.push(`WARNING ${warn.code}: ${warn.message}`)
  lines.push('')
  const w = Math.max(...Object.keys(o.metrics).map((m) => m.length))
  for (const [m, val] of Object.entries(o.metrics)) {
    const ci = o.intervals[m]
    lines.push(
      `  ${m.padEnd(w)}  ${f4(val).padStart(9)}${ci ? `   95% CI ${f4(ci.lo)} – ${f4(ci.hi)}` : ''}${m === 'budgetRecall' ? `   (B = ${o.budget} tokens)` : ''}`,
    )
  }
  for (const g of o.gates ?? []) lines.push(`  gate ${g.metric} ≥ ${g.threshold}: ${g.passed ? 'pass' : 'FAIL'}`)
  if (run.id) lines.push('', `saved as run ${run.id}`)
  if (perCase) {
    const key = metricKey('ndcg', o.k)
    lines.push('', `per case (${key}, injected ids):`)
    for (const c of run.perCase)
      lines.push(
        `  ${c.id.padEnd(18)} ${f4(c.metrics[key]).padStart(7)}  ${c.expectEmpty ? '[expect empty] ' : ''}${c.retrieved.slice(0, 8).join(' ')}${c.retrieved.length > 8 ? ' …' : ''}`,
      )
  }
  return lines.join('\n')
}
