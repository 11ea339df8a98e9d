import fs from 'node:fs'
import path from 'node:path'
import { TUNE_KNOBS, type TuneReport, type TuneSpace } from '../../shared/eval'
import { writeFileAtomic } from '../safety/atomicWrite'
import { assertNotOpenDb } from '../safety/fileIdentity'
import { RecallscopeError } from '../../shared/result'
import { evalEmbedder } from '../eval/evaluate'
import { runTune } from '../eval/tuneJob'
import type { SplitRule } from '../eval/split'
import { buildConfig, parseNow } from '../recall/request'
import { openStore } from '../store/registry'

import { type Command, optionalInt, readJsonFile, readMapping, requireString, str } from './args'

const USAGE = [
  'recallscope tune --db FILE|URL [--map MAPPING.json] [--metric recall@10] [--budget N] [--out FILE] [--force]',
  '         [--preset NAME] [--config FILE] [--set key=value]… [--seed N] [--fix KNOB,…]',
  '         [--split auto|group|case] [--test-fraction 0.3] [--folds K] [--no-save] [--keep-scope]',
  '         [--max-topk N] [--token-budget N] [--embedder SPEC] [--now ISO|ms] [--workspace FILE] [--json]',
  `  knobs: ${TUNE_KNOBS.join(', ')}`,
  '  the start scope is checked first: when its unit or filters (unit, tiers, kinds, roles, after/before) reach under half',
  '  of the judged-relevant memories, the search and the single-arm baselines run on the widened scope (--keep-scope: search as given)',
  '  --out writes the recommended config: the tuned one, or a baseline that scored at least as well on held-out cases',
].join('\n')

export const tuneCommand: Command = {
  name: 'tune',
  summary:
    'Search mode, fusion, pool, weights, half-life, floor, minSimilarity, topK and budget on train conversations; rank with baselines on held-out ones; write the recommended config',
  usage: USAGE,
  options: {
    db: { type: 'string' },
    map: { type: 'string' },
    metric: { type: 'string' },
    budget: { type: 'string' },
    out: { type: 'string' },
    force: { type: 'boolean' },
    preset: { type: 'string' },
    config: { type: 'string' },
    set: { type: 'string', multiple: true },
    seed: { type: 'string' },
    fix: { type: 'string' },
    split: { type: 'string' },
    'test-fraction': { type: 'string' },
    folds: { type: 'string' },
    'no-save': { type: 'boolean' },
    'keep-scope': { type: 'boolean' },
    'max-topk': { type: 'string' },
    'token-budget': { type: 'string' },
    embedder: { type: 'string' },
    'ollama-host': { type: 'string' },
    'openai-base-url': { type: 'string' },
    now: { type: 'string' },
    workspace: { type: 'string' },
  },
  async run(ctx) {
    const v = ctx.values
    const db = requireString(ctx, 'db', USAGE)
    const out = str(v.out)
    if (out && fs.existsSync(path.resolve(out)) && !v.force) throw new RecallscopeError('CONFLICT', `${path.resolve(out)} exists (--force replaces it)`)
    const space: Partial<TuneSpace> = {}
    for (const f of (str(v.fix) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      if (!(TUNE_KNOBS as readonly string[]).includes(f))
        throw new RecallscopeError('BAD_INPUT', `--fix takes a comma list of ${TUNE_KNOBS.join(', ')} (got "${f}")`)
      space[f as (typeof TUNE_KNOBS)[number]] = false
    }
    const splitRule = str(v.split) ?? 'auto'
    if (!['auto', 'group', 'case'].includes(splitRule)) throw new RecallscopeError('BAD_INPUT', `--split takes auto, group or case (got "${splitRule}")`)
    let testFraction: number | undefined
    if (v['test-fraction'] !== undefined) {
      testFraction = Number(str(v['test-fraction']))
      if (!(testFraction > 0 && testFraction < 1))
        throw new RecallscopeError('BAD_INPUT', `--test-fraction must be between 0 and 1 (got "${str(v['test-fraction'])}")`)
    }
    const maxTopK = optionalInt(ctx, 'max-topk', 1)
    if (maxTopK !== undefined) space.maxTopK = maxTopK
    const { config } = buildConfig({
      preset: str(v.preset),
      config: typeof v.config === 'string' ? readJsonFile(v.config, '--config') : undefined,
      set: Array.isArray(v.set) ? v.set.map(String) : [],
    })
    const store = openStore({ path: db, workspacePath: str(v.workspace), mapping: readMapping(ctx) })
    try {
      // Refuse an --out that is the open DB (or its workspace) now, not after minutes of tuning.
      if (out) assertNotOpenDb(out, '--out')
      const cases = store.workspace.loadCases()
      if (cases.length === 0)
        throw new RecallscopeError('NOT_FOUND', `No eval cases in ${store.workspace.path}: import some (recallscope import locomo …) or create them in the app`)
      const embedder = evalEmbedder(store, config, str(v.embedder), { ollamaHost: str(v['ollama-host']), openaiBaseUrl: str(v['openai-base-url']) })
      let lastPct = -1
      const progress = (what: string) => (d: number, t: number) => {
        if (ctx.json || t <= 0) return
        const pct = Math.floor((100 * d) / t)
        if (pct !== lastPct && pct % 25 === 0 && pct < 100) {
          lastPct = pct
          ctx.io.err(`  ${what} ${pct}%`)
        }
      }
      let phase = ''
      const report = await runTune(store, cases, config, {
        embedder,
        now: parseNow(str(v.now), Date.now()),
        metric: str(v.metric) ?? 'recall@10',
        budget: optionalInt(ctx, 'budget', 1) ?? 1000,
        seed: optionalInt(ctx, 'seed', 0) ?? 1,
        space,
        tokenBudget: optionalInt(ctx, 'token-budget', 1),
        splitRule: splitRule as SplitRule,
        testFraction,
        folds: optionalInt(ctx, 'folds', 2),
        keepScope: Boolean(v['keep-scope']),
        onProgress: (d, t, m) => {
          const p = m?.startsWith('gathering') ? 'gathering' : 'searching'
          if (p !== phase) {
            phase = p
            lastPct = -1
          }
          progress(p)(d, t)
        },
      })
      const saved = v['no-save'] ? null : store.workspace.saveTuneReport(report, { createdAt: Date.now(), name: `tune ${report.metric}`, source: 'cli' })
      if (out) writeFileAtomic(out, `${JSON.stringify(report.recommended.config, null, 2)}\n`, { what: '--out', overwrite: true })
      const printed = saved ?? report
      ctx.io.out(ctx.json ? JSON.stringify(printed) : formatTune(printed, out ? path.resolve(out) : null))
      return 0
    } finally {
      store.close()
    }
  },
}

/** The scope check, when it found the start scope hiding most judged memories. */
function scopeLines(scope: TuneReport['scope']): string[] {
  if (!scope?.minority) return []
  return [
    `scope: ${scope.message}`,
    scope.applied
      ? `       searched on the widened scope (${scope.widenLabel}); the start baseline keeps the start scope (--keep-scope searches it as given)`
      : '       --keep-scope: searched the start scope as given; the single-arm baselines ran on the widened scope',
  ]
}

const f4 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(4))

function formatTune(r: TuneReport & { id?: string }, out: string | null): string {
  const p = r.best.params
  const w = p.weights
  const sp = r.split
  const lines = [
    `tune ${r.metric} · ${r.trials} configs${r.cancelled ? ' (cancelled)' : ''} · ${Math.round(r.timings.configsPerSec)} configs/s${r.id ? ` · saved as ${r.id}` : ''}`,
    sp.rule === 'group'
      ? `split by ${sp.by}: train ${sp.train} cases (${sp.trainGroups.join(', ')}) · held-out ${sp.test} cases (${sp.testGroups.join(', ')})`
      : `split by each case's train/test field (the cases name no conversation or session): train ${sp.train} · held-out ${sp.test}`,
    `searched: ${
      Object.entries(r.searched ?? {})
        .map(([k, v]) => `${k} (${v})`)
        .join('; ') || 'nothing'
    }`,
    `held fixed: ${r.pinned?.length ? r.pinned.join(', ') : 'nothing'}`,
    ...scopeLines(r.scope),
    '',
    `${''.padEnd(37)}${'train'.padStart(8)} ${'held-out'.padStart(9)}   95% CI          Δ tuned−this (95% CI)`,
    `  ${'tuned config'.padEnd(34)} ${f4(r.best.train).padStart(8)} ${f4(r.best.test).padStart(9)}   ${r.best.testCI ? `${f4(r.best.testCI.lo)}–${f4(r.best.testCI.hi)}` : '—'}`,
  ]
  for (const b of r.baselines ?? [])
    lines.push(
      `  ${b.label.slice(0, 34).padEnd(34)} ${f4(b.train).padStart(8)} ${f4(b.test).padStart(9)}   ${b.testCI ? `${f4(b.testCI.lo)}–${f4(b.testCI.hi)}` : '—'.padEnd(13)}   ${b.delta === null ? (b.note ?? 'n/a') : `${b.delta >= 0 ? '+' : ''}${b.delta.toFixed(4)} (${f4(b.deltaCI?.lo)} – ${f4(b.deltaCI?.hi)}) ${b.verdict}`}`,
    )
  lines.push(
    '',
    `  tuned: mode ${p.mode ?? r.best.config.mode} · pool ${p.candidatePool ?? r.best.config.candidatePool} · weights similarity ${w.similarity.toFixed(3)} · lexical ${w.lexical.toFixed(3)} · recency ${w.recency.toFixed(3)} · salience ${w.salience.toFixed(3)}`,
    `         half-life ${p.halfLifeHours.toFixed(1)} h from ${p.ageFrom ?? r.best.config.recency.from} · floor ${p.floor === null ? 'off' : p.floor.toFixed(3)} · minSimilarity ${r.best.config.minSimilarity === null ? 'off' : r.best.config.minSimilarity.toFixed(3)} · topK ${p.topK} · budget ${r.best.config.tokenBudget ?? 'off'} · fusion ${p.fusion.method}${p.fusion.method === 'rrf' ? ` (k ${p.fusion.rrfK.toFixed(1)})` : ''}`,
  )
  if (r.best.train !== null && r.best.test !== null && r.best.train - r.best.test > 0.05)
    lines.push('', `  note: train beats held-out by ${(r.best.train - r.best.test).toFixed(3)}: some of the gain is overfit to the train cases`)
  if (r.folds) {
    lines.push(
      '',
      `  ${r.folds.perFold.length}-fold by ${r.folds.by ?? 'case'}: tuned ${f4(r.folds.meanTuned)} vs best baseline per fold ${f4(r.folds.meanBestBaseline)}`,
    )
    for (const f of r.folds.perFold)
      lines.push(`    ${f.groups.join(', ')} (${f.cases}): tuned ${f4(f.tuned)} · ${f.bestBaseline.name} ${f4(f.bestBaseline.value)}`)
  }
  lines.push('', `  ${r.recommended.message}`)
  lines.push(
    '',
    out ? `recommended config (${r.recommended.label}) written to ${out}` : `recommended config (${r.recommended.label}; --out FILE writes it):`,
    ...(out ? [] : [JSON.stringify(r.recommended.config, null, 2)]),
  )
  return lines.join('\n')
}
