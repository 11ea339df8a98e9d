/**
 * One eval run from what a caller says (preset, partial config, `--set`, k,
 * split, embedder): load the cases, gather (engine, cached), score, and
 * optionally save the run. Shared by `recallscope eval` and the `eval.run`
 * handler so both build configs and pick embedders the same way.
 */
import { evalWarnings, type EvalPhaseTimings, type EvalRun } from '../../shared/eval'
import { RecallscopeError } from '../../shared/result'
import type { RecallConfig } from '../../shared/types'
import { createEmbedder, type EmbedderOptions } from '../embed/index'
import type { Embedder } from '../embed/types'
import { buildConfig, defaultEmbedderSpec, type ConfigRequest } from '../recall/request'
import type { MemorySource } from '../store/source'
import type { CaseFilter } from '../store/workspace/workspace'
import { evalBudget, gatherCases, scoreGathered, zeroGatherMs, type GatherCache, type GatherMs, type Scored } from './replay'

export interface EvalRequest extends ConfigRequest {
  /** metric cutoff. @default 10 */
  k?: number
  /** @default 'all' */
  split?: 'train' | 'test' | 'all'
  /** only these cases */
  caseIds?: string[]
  /** only cases with this tag */
  tag?: string
  /** budget-aware recall's B. @default config.tokenBudget ?? 2000 */
  budget?: number | null
  /** embedder spec. @default the DB's: hashing when it holds hashing vectors, else ollama:<model> */
  embedder?: string | null
  embedderOptions?: EmbedderOptions
  /** `now` for cases without one (epoch ms, read at the boundary) */
  now: number
  /** wall clock stamped on a saved run */
  createdAt: number
  /** store the run in the workspace under this name */
  save?: { name: string; source: string } | null
  cache?: GatherCache
  signal?: AbortSignal
  onProgress?: (done: number, total: number, message?: string) => void
}

/** The embedder an eval uses (explicit spec, else the DB's default). */
export function evalEmbedder(store: MemorySource, config: RecallConfig, spec: string | null | undefined, opts: EmbedderOptions = {}): Embedder {
  return createEmbedder(spec ?? defaultEmbedderSpec(store, config.unit === 'session' ? 'session' : 'memory'), opts)
}

/** The run's phases: the gather's, and the score's split; `otherMs` is what the gather's phases leave of gatherMs. */
function phaseTimings(ms: GatherMs, gatherMs: number, scored: Scored): EvalPhaseTimings {
  const { queryVectorsMs, scopeMs, denseMs, lexicalMs, featuresMs, gathered } = ms
  const otherMs = Math.max(0, gatherMs - queryVectorsMs - scopeMs - denseMs - lexicalMs - featuresMs)
  return { queryVectorsMs, scopeMs, denseMs, lexicalMs, featuresMs, fusionMs: scored.fusionMs, metricsMs: scored.metricsMs, otherMs, gathered }
}

/** Run an eval. The run is saved (and gets an id) when `save` is given. */
export async function runEval(store: MemorySource, req: EvalRequest): Promise<EvalRun> {
  const t0 = performance.now()
  const { config, preset } = buildConfig(req)
  const k = req.k ?? 10
  if (!Number.isInteger(k) || k < 1) throw new RecallscopeError('BAD_INPUT', `k must be an integer ≥ 1 (got ${k})`)
  const split = req.split ?? 'all'
  const filter: CaseFilter = { split, tag: req.tag, ids: req.caseIds }
  const cases = store.workspace.loadCases(filter)
  if (cases.length === 0)
    throw new RecallscopeError(
      'NOT_FOUND',
      `No eval cases${split !== 'all' ? ` in split ${split}` : ''}${req.tag ? ` tagged ${req.tag}` : ''} in ${store.workspace.path}: create some in the Evaluate view, or import them (LoCoMo QA, JSONL)`,
    )
  const embedder = evalEmbedder(store, config, req.embedder, req.embedderOptions)
  const tg = performance.now()
  const ms = zeroGatherMs()
  const gathered = await gatherCases(store, cases, config, {
    embedder,
    now: req.now,
    signal: req.signal,
    cache: req.cache,
    ms,
    onProgress: (d, t, message) => req.onProgress?.(d, t, message ?? `gathering candidates: ${d} / ${t} cases`),
  })
  const gatherMs = performance.now() - tg
  const budget = evalBudget(config, req.budget)
  const scored = scoreGathered(gathered, config, { k, budget })
  const run: EvalRun = {
    id: '',
    createdAt: req.createdAt,
    name: req.save?.name ?? '',
    preset: req.preset ?? preset,
    config,
    embedder: gathered.find((g) => !g.degraded)?.embedder ?? gathered[0].embedder,
    k,
    split,
    budget,
    metrics: scored.metrics,
    counts: scored.counts,
    source: req.save?.source ?? 'cli',
    timings: { gatherMs, scoreMs: scored.scoreMs, totalMs: performance.now() - t0, phases: phaseTimings(ms, gatherMs, scored) },
    warnings: evalWarnings(config, k),
    perCase: scored.perCase,
  }
  if (req.save) return store.workspace.saveRun({ ...run, id: undefined })
  return run
}
