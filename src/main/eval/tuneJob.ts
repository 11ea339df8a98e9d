/**
 * One tune, end to end, as the CLI and the app run it: split the cases honestly
 * (split.ts), gather every case once under the start config (deep enough for
 * every pool the tuner tries), gather the held-out cases again for each
 * baseline the first gather cannot serve (a preset with its own scope or unit),
 * then search (tune/) and rank the tuned config with the baselines.
 * First, the scope check (scopeReach.ts): when the start unit/scope reaches
 * only a minority of the judged-relevant memories, the search and the
 * single-arm baselines run on the widened scope (unless `keepScope`), and the
 * report says which filter excluded them.
 * Optional k-fold: the same tune run k times, each fold held out once.
 */
import type { EvalCaseRow, TuneReport, TuneSpace } from '../../shared/eval'
import { TUNE_POOLS } from '../../shared/eval'
import { parseMetricKey } from '../../shared/metrics'
import { missingRequirements, PRESETS } from '../../shared/presets'
import type { RecallConfig } from '../../shared/types'
import type { Embedder } from '../embed/types'
import type { MemorySource } from '../store/source'
import { canReuse, gatherCases, type GatherCache, type GatheredCase } from './replay'
import { diagnoseScope } from './scopeReach'
import { kFolds, splitCases, type CaseSplit, type SplitRule } from './split'
import { tune, type BaselineInput } from './tune'

export interface RunTuneOptions {
  embedder: Embedder | null
  now: number
  metric?: string
  budget?: number
  seed?: number
  space?: Partial<TuneSpace>
  tokenBudget?: number
  /** @default 'auto' (by conversation / session when the cases carry one) */
  splitRule?: SplitRule
  testFraction?: number
  /** k-fold cross-validation of the whole tune (≥ 2), besides the single split */
  folds?: number
  /** search the start scope even when it reaches only a minority of the judged memories (the single-arm baselines still widen). @default false */
  keepScope?: boolean
  cache?: GatherCache
  signal?: AbortSignal
  onProgress?: (done: number, total: number, message?: string) => void
}

/**
 * The baselines every tune scores: the start config, each preset's default,
 * lexical-only BM25 and dense-only cosine. The two single-arm baselines take
 * `reach` (the start config, widened when its scope hides most judged
 * memories) for scope and unit, rank by their arm alone (weight 1, no
 * floor, no minSimilarity, no budget) and inject max(k, start topK) memories,
 * so a metric at k sees a full list.
 */
function baselineConfigs(start: RecallConfig, reach: RecallConfig, k: number, cases: readonly Pick<EvalCaseRow, 'scope'>[]): BaselineInput[] {
  const topK = Math.max(k, start.topK)
  const plain = (mode: 'lexical' | 'dense'): RecallConfig => ({
    ...reach,
    mode,
    weights: { similarity: mode === 'dense' ? 1 : 0, lexical: mode === 'lexical' ? 1 : 0, recency: 0, salience: 0 },
    normalize: 'none',
    floor: null,
    minSimilarity: null,
    topK,
    candidatePool: Math.max(topK, Math.min(start.candidatePool, 100)),
    tokenBudget: null,
  })
  const out: BaselineInput[] = [{ name: 'start', label: 'Start config', kind: 'start', config: start }]
  for (const p of PRESETS) {
    const missing = p.requires?.length ? [...new Set(cases.flatMap((c) => missingRequirements(p.requires!, c.scope as RecallConfig['scope'])))] : []
    out.push({
      name: `preset:${p.name}`,
      label: `Preset ${p.label}`,
      kind: 'preset',
      config: structuredClone(p.config),
      note: missing.length ? `this preset expects ${missing.join(', ')} in scope; some cases carry none, so it ran without` : undefined,
    })
  }
  out.push({ name: 'lexical-bm25', label: 'Lexical only (BM25)', kind: 'lexical', config: plain('lexical') })
  out.push({ name: 'dense-cosine', label: 'Dense only (cosine)', kind: 'dense', config: plain('dense') })
  return out
}

/** Gather depth that serves every pool the tuner tries (and the start config's). */
function depthFor(config: RecallConfig): number {
  return Math.max(config.candidatePool, ...TUNE_POOLS)
}

/** One baseline's gather: from the cache when it still stands for `cases`, else gathered (and cached); an error becomes its n/a text. */
async function gatherBaseline(
  store: MemorySource,
  cases: readonly EvalCaseRow[],
  config: RecallConfig,
  cacheKey: string,
  opts: RunTuneOptions,
): Promise<Pick<BaselineInput, 'gathered' | 'error'>> {
  const cached = opts.cache?.getList(cacheKey, cases, opts.now, opts.embedder)
  if (cached) return { gathered: cached }
  try {
    const gathered = await gatherCases(store, cases, config, { embedder: opts.embedder, now: opts.now, signal: opts.signal })
    opts.cache?.setList(cacheKey, gathered)
    return { gathered }
  } catch (e) {
    if ((e as { code?: string }).code === 'CANCELLED') throw e
    return { error: `could not run: ${(e as Error).message}` }
  }
}

/**
 * For each baseline the main gather cannot serve: gather `cases` under its own
 * config (cached per baseline name for k-fold reuse). Errors become n/a rows.
 * Two baselines with the same config (the start config is often a preset's
 * default) share one gather: the same store, cases and config gather the same.
 * With a cache, a later tune of the same store reuses a baseline gathered for
 * the same held-out cases (the presets' defaults are the same in every tune).
 */
async function gatherBaselines(
  store: MemorySource,
  main: readonly GatheredCase[],
  cases: readonly EvalCaseRow[],
  list: BaselineInput[],
  opts: RunTuneOptions,
): Promise<BaselineInput[]> {
  const out: BaselineInput[] = []
  const byConfig = new Map<string, Pick<BaselineInput, 'gathered' | 'error'>>()
  for (const b of list) {
    if (main.every((g) => canReuse(g, b.config))) {
      out.push(b)
      continue
    }
    const key = JSON.stringify(b.config)
    let done = byConfig.get(key)
    if (!done) {
      done = await gatherBaseline(store, cases, b.config, `baseline:${key}`, opts)
      byConfig.set(key, done)
    }
    out.push({ ...b, ...done })
  }
  return out
}

/** Split, gather, tune, score the baselines (and optionally k-fold): the report `tune --json` prints and the app saves. */
export async function runTune(store: MemorySource, cases: readonly EvalCaseRow[], config: RecallConfig, opts: RunTuneOptions): Promise<TuneReport> {
  const t0 = performance.now()
  const k = parseMetricKey(opts.metric ?? 'recall@10', 10)?.k ?? 10
  const split = splitCases(cases, { rule: opts.splitRule, testFraction: opts.testFraction, seed: opts.seed })
  const diagnosis = diagnoseScope(store, cases, config)
  const applied = diagnosis.minority && !opts.keepScope
  const searched = applied ? diagnosis.widened! : config
  if (diagnosis.minority) opts.onProgress?.(0, 1, diagnosis.message)
  const gathered = await gatherCases(store, cases, searched, {
    embedder: opts.embedder,
    now: opts.now,
    depth: depthFor(searched),
    cache: opts.cache,
    signal: opts.signal,
    onProgress: (d, t) => opts.onProgress?.(d, t, `gathering candidates: ${d} / ${t} cases`),
  })
  const list = baselineConfigs(config, diagnosis.widened ?? config, k, cases)
  // Baselines needing their own gather only need the cases they are compared on.
  const heldOut = opts.folds ? cases : cases.filter((c) => split.side.get(c.id) === 'test')
  opts.onProgress?.(0, 1, 'gathering the baselines')
  const baselines = await gatherBaselines(store, gathered, heldOut, list, opts)
  const gatherMs = performance.now() - t0
  const common = { metric: opts.metric, budget: opts.budget, seed: opts.seed, space: opts.space, tokenBudget: opts.tokenBudget, signal: opts.signal }
  const report = await tune(gathered, searched, { ...common, split, baselines, gatherMs, onProgress: opts.onProgress })
  report.scope = { ...diagnosis, applied }
  if (opts.folds && !report.cancelled) report.folds = await crossValidate(gathered, searched, cases, baselines, opts.folds, common)
  return report
}

/** Tune k times, each fold of whole groups held out once; per fold the tuned config vs the best baseline there. */
async function crossValidate(
  gathered: readonly GatheredCase[],
  config: RecallConfig,
  cases: readonly EvalCaseRow[],
  baselines: BaselineInput[],
  folds: number,
  common: Parameters<typeof tune>[2],
): Promise<NonNullable<TuneReport['folds']>> {
  const f = kFolds(cases, folds, common?.seed ?? 1)
  const perFold: NonNullable<TuneReport['folds']>['perFold'] = []
  for (const fold of f.folds) {
    const side = new Map<string, 'train' | 'test'>(cases.map((c) => [c.id, fold.ids.has(c.id) ? 'test' : 'train']))
    const split: CaseSplit = {
      side,
      info: { rule: f.by ? 'group' : 'case', by: f.by, train: cases.length - fold.ids.size, test: fold.ids.size, trainGroups: [], testGroups: fold.groups },
    }
    const r = await tune(gathered, config, { ...common, split, baselines, heatmapSteps: 0 })
    const top = r.baselines.filter((b) => b.test !== null).sort((a, b) => b.test! - a.test!)[0]
    perFold.push({ groups: fold.groups, cases: fold.ids.size, tuned: r.best.test, bestBaseline: { name: top?.name ?? '—', value: top?.test ?? null } })
  }
  const mean = (xs: (number | null)[]) => {
    const v = xs.filter((x): x is number => x !== null)
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null
  }
  return { by: f.by, perFold, meanTuned: mean(perFold.map((p) => p.tuned)), meanBestBaseline: mean(perFold.map((p) => p.bestBaseline.value)) }
}
