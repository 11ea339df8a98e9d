import fs from 'node:fs'
import path from 'node:path'
import type { TuneReport, TuneSpace } from '../../shared/eval'
import { RecallscopeError } from '../../shared/result'
import { evalEmbedder } from '../eval/evaluate'
import { gatherCases } from '../eval/replay'
import { tune } from '../eval/tune'
import { buildConfig, parseNow } from '../recall/request'
import { openStore } from '../store/registry'
import type { MemorySource } from '../store/source'
import { str, readJsonFile } from './args'
import { optionalInt, requireString, type Command } from './index'

const USAGE = [
  'recallscope tune --db FILE [--metric recall@10] [--budget N] [--out FILE] [--force]',
  '         [--preset NAME] [--config FILE] [--set key=value]… [--seed N] [--fix weights,halfLife,floor,topK,fusion]',
  '         [--max-topk N] [--token-budget N] [--embedder SPEC] [--now ISO|ms] [--workspace FILE] [--json]',
].join('\n')

const KNOBS = ['weights', 'halfLife', 'floor', 'topK', 'fusion'] as const

export const tuneCommand: Command = {
  name: 'tune',
  summary: 'Search weights, half-life, floor, topK and fusion on the train split; report train vs held-out test; write the best config',
  usage: USAGE,
  options: {
    db: { type: 'string' },
    metric: { type: 'string' },
    budget: { type: 'string' },
    out: { type: 'string' },
    force: { type: 'boolean' },
    preset: { type: 'string' },
    config: { type: 'string' },
    set: { type: 'string', multiple: true },
    seed: { type: 'string' },
    fix: { type: 'string' },
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
    for (const f of (str(v.fix) ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!(KNOBS as readonly string[]).includes(f)) throw new RecallscopeError('BAD_INPUT', `--fix takes a comma list of ${KNOBS.join(', ')} (got "${f}")`)
      space[f as (typeof KNOBS)[number]] = false
    }
    const maxTopK = optionalInt(ctx, 'max-topk', 1)
    if (maxTopK !== undefined) space.maxTopK = maxTopK
    const { config } = buildConfig({
      preset: str(v.preset),
      config: typeof v.config === 'string' ? readJsonFile(v.config, '--config') : undefined,
      set: Array.isArray(v.set) ? v.set.map(String) : [],
    })
    const store = openStore({ path: db, workspacePath: str(v.workspace) })
    try {
      const t0 = performance.now()
      const cases = store.workspace.loadCases()
      if (cases.length === 0) throw new RecallscopeError('NOT_FOUND', `No eval cases in ${store.workspace.path}: import some (recallscope import locomo …) or create them in the app`)
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
      const gathered = await gatherCases(store, cases, config, { embedder, now: parseNow(str(v.now), Date.now()), onProgress: progress('gathering') })
      lastPct = -1
      const report = await tune(gathered, config, {
        metric: str(v.metric) ?? 'recall@10',
        budget: optionalInt(ctx, 'budget', 1) ?? 1000,
        seed: optionalInt(ctx, 'seed', 0) ?? 1,
        space,
        tokenBudget: optionalInt(ctx, 'token-budget', 1),
        gatherMs: performance.now() - t0,
        onProgress: progress('searching'),
      })
      if (out) fs.writeFileSync(path.resolve(out), `${JSON.stringify(report.best.config, null, 2)}\n`)
      ctx.io.out(ctx.json ? JSON.stringify(report) : formatTune(report, out ? path.resolve(out) : null))
      return 0
    } finally {
      store.close()
    }
  },
}


const f4 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(4))

export function formatTune(r: TuneReport, out: string | null): string {
  const p = r.best.params
  const w = p.weights
  const lines = [
    `tune ${r.metric} · ${r.trials} configs${r.cancelled ? ' (cancelled)' : ''} · train ${r.split.train} cases, held-out test ${r.split.test} · ${Math.round(r.timings.configsPerSec)} configs/s`,
    '',
    `                 ${'train'.padStart(8)} ${'test'.padStart(8)}   tokens/case (train)`,
    `  base config    ${f4(r.base.train).padStart(8)} ${f4(r.base.test).padStart(8)}   ${r.base.trainTokens.toFixed(0)}`,
    `  best config    ${f4(r.best.train).padStart(8)} ${f4(r.best.test).padStart(8)}   ${r.best.trainTokens.toFixed(0)}${r.best.testCI ? `   test 95% CI ${f4(r.best.testCI.lo)} – ${f4(r.best.testCI.hi)}` : ''}`,
    '',
    `  weights   similarity ${w.similarity.toFixed(3)} · lexical ${w.lexical.toFixed(3)} · recency ${w.recency.toFixed(3)} · salience ${w.salience.toFixed(3)}`,
    `  half-life ${p.halfLifeHours.toFixed(1)} h · floor ${p.floor === null ? 'off' : p.floor.toFixed(3)} · topK ${p.topK} · fusion ${p.fusion.method}${p.fusion.method === 'rrf' ? ` (k ${p.fusion.rrfK.toFixed(1)})` : ''}`,
  ]
  if (r.best.train !== null && r.best.test !== null && r.best.train - r.best.test > 0.05)
    lines.push('', `  note: train beats test by ${(r.best.train - r.best.test).toFixed(3)}: some of the gain is overfit to the train cases`)
  lines.push('', out ? `best config written to ${out}` : 'best config (paste into your agent; --out FILE writes it):', ...(out ? [] : [JSON.stringify(r.best.config, null, 2)]))
  return lines.join('\n')
}
