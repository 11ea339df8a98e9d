/**
 * The heavy tasks that run off the main thread (jobWorker.ts), and the one
 * function that runs them on any thread: the worker calls `runTask` on its own
 * read-only connection, and tests call it in-thread to check both give the same
 * answer. Inputs and outputs are plain data (they cross a thread by structured
 * clone); saving a result is left to the caller on the main thread, so a worker
 * never writes.
 */
import type { BackfillReport, ImportReport } from '../../shared/jobs'
import type { EvalRun, ScopeDiagnosis, TuneReport, TuneSpace } from '../../shared/eval'
import { RecallscopeError } from '../../shared/result'
import type { TraceDrivers, TraceEventDetail, TraceReplay, WhyNot } from '../../shared/trace'
import { backfillEmbeddings } from '../embed/backfill'
import { createEmbedder, type EmbedderOptions } from '../embed/index'
import { evalEmbedder, runEval, type EvalRequest } from '../eval/evaluate'
import type { GatherCache } from '../eval/replay'
import type { SplitRule } from '../eval/split'
import { diagnoseScope } from '../eval/scopeReach'
import { runTune } from '../eval/tuneJob'
import { buildConfig } from '../recall/request'
import { findImporter } from '../store/importers'
import type { ImportOptions } from '../store/importers/common'
import type { MemoryFilter, MemorySource } from '../store/source'
import { counterfactualPrompts, type CounterfactualPrompts } from '../trace/counterfactual'
import { eventDrivers } from '../trace/drivers'
import { eventContext, eventDecision, unitsOf, type PrepareOptions } from '../trace/event'
import { replayEvent, replayEventFull, type ReplayOptions } from '../trace/replay'
import { whyNot, type WhyRequest } from '../trace/why'
import { eventLogOf } from '../events/eventLog'
import type { RecallEvent } from '../../shared/types'

/** An eval run's request minus what cannot cross a thread (cache, signal, callbacks) and saving (main saves). */
export type EvalTaskInput = Omit<EvalRequest, 'cache' | 'signal' | 'onProgress' | 'save'>

/** A tune's request: the start config, the embedder spec and the search settings. */
export interface TuneTaskInput {
  preset?: string
  config?: unknown
  embedder: string | null
  embedderOptions: EmbedderOptions
  now: number
  metric?: string
  trials?: number
  seed?: number
  space?: Partial<TuneSpace>
  budget?: number
  splitRule?: SplitRule
  testFraction?: number
  folds?: number
  keepScope?: boolean
}

/** An embedding backfill into the workspace (the only task that writes: to recallscope's own file, never the agent DB). */
export interface BackfillTaskInput {
  spec: string
  embedderOptions: EmbedderOptions
  filter: MemoryFilter
  batchSize?: number
}

/** Task kind → its input. */
export interface TaskInputs {
  eval: EvalTaskInput
  tune: TuneTaskInput
  /** the scope check before a tune */
  scope: { preset?: string; config?: unknown }
  why: Omit<WhyRequest, 'queryVector'> & { queryVector?: number[] | null; event?: RecallEvent | null }
  replay: { eventId: string; opts: ReplayOptions; event?: RecallEvent | null }
  event: { eventId: string; opts: PrepareOptions; event?: RecallEvent | null }
  drivers: { eventId: string; opts: PrepareOptions; event?: RecallEvent | null }
  /** the prompts of a counterfactual (the chat calls themselves run on the main thread) */
  counterfactualPrompts: { eventId: string; opts: PrepareOptions; maxMemories: number; event?: RecallEvent | null }
  backfill: BackfillTaskInput
  /** load these vector indexes here and save their snapshots, for the main thread to restore (App.readyStore) */
  warmVectors: { models: { model: string; ownerType: 'memory' | 'session' }[] }
  /** an import writes a new DB from a file: no open store needed */
  import: Omit<ImportOptions, 'signal' | 'onProgress'> & { kind: string }
}
/** Task kind → its result. */
export interface TaskOutputs {
  eval: EvalRun
  tune: TuneReport
  scope: ScopeDiagnosis
  why: WhyNot
  replay: TraceReplay
  event: TraceEventDetail
  drivers: TraceDrivers
  counterfactualPrompts: CounterfactualPrompts
  backfill: BackfillReport
  warmVectors: { written: string[] }
  import: ImportReport
}
export type TaskKind = keyof TaskInputs
/** Tasks that run without an open store. */
export const STORELESS: readonly TaskKind[] = ['import']

export interface TaskControl {
  signal: AbortSignal
  progress: (done: number, total: number, message?: string) => void
  /** gathered candidates kept between tasks on the same store (a re-run under other knobs skips the engine) */
  cache?: GatherCache
}

/** Run one task on `store` (whichever thread holds it; null for a storeless task). */
export async function runTask<K extends TaskKind>(store: MemorySource | null, kind: K, input: TaskInputs[K], ctl: TaskControl): Promise<TaskOutputs[K]> {
  if (kind === 'import') {
    const { kind: format, ...opts } = input as TaskInputs['import']
    return (await findImporter(format).run({ ...opts, signal: ctl.signal, onProgress: ctl.progress })) as TaskOutputs[K]
  }
  if (!store) throw new RecallscopeError('NO_DB', 'No database is open: open one first')
  // The event as the main thread's event log read it (a log file, live OTLP): this thread's log keeps it.
  const given = (input as { event?: RecallEvent | null }).event
  if (given) eventLogOf(store).seed(given)
  switch (kind) {
    case 'eval': {
      const req = input as TaskInputs['eval']
      return (await runEval(store, { ...req, save: null, cache: ctl.cache, signal: ctl.signal, onProgress: ctl.progress })) as TaskOutputs[K]
    }
    case 'tune': {
      const req = input as TaskInputs['tune']
      const { config } = buildConfig({ preset: req.preset, config: req.config })
      const cases = store.workspace.loadCases()
      if (cases.length === 0) throw new RecallscopeError('NOT_FOUND', 'No eval cases to tune on: create or import some first')
      const embedder = evalEmbedder(store, config, req.embedder, req.embedderOptions)
      return (await runTune(store, cases, config, {
        embedder,
        now: req.now,
        metric: req.metric,
        budget: req.trials,
        seed: req.seed,
        space: req.space,
        tokenBudget: req.budget,
        splitRule: req.splitRule,
        testFraction: req.testFraction,
        folds: req.folds,
        keepScope: req.keepScope,
        cache: ctl.cache,
        signal: ctl.signal,
        onProgress: ctl.progress,
      })) as TaskOutputs[K]
    }
    case 'scope': {
      const req = input as TaskInputs['scope']
      const { config } = buildConfig({ preset: req.preset, config: req.config })
      return diagnoseScope(store, store.workspace.loadCases(), config) as TaskOutputs[K]
    }
    case 'why': {
      const { event: _event, ...req } = input as TaskInputs['why']
      return (await whyNot(store, req)) as TaskOutputs[K]
    }
    case 'replay': {
      const { eventId, opts } = input as TaskInputs['replay']
      return (await replayEvent(store, eventId, opts)) as TaskOutputs[K]
    }
    case 'event':
      return (await eventDetail(store, (input as TaskInputs['event']).eventId, (input as TaskInputs['event']).opts)) as TaskOutputs[K]
    case 'drivers': {
      const { eventId, opts } = input as TaskInputs['drivers']
      return (await eventDrivers(store, eventId, opts)) as TaskOutputs[K]
    }
    case 'counterfactualPrompts': {
      const { eventId, opts, maxMemories } = input as TaskInputs['counterfactualPrompts']
      return (await counterfactualPrompts(store, eventId, { ...opts, maxMemories })) as TaskOutputs[K]
    }
    case 'backfill': {
      const b = input as TaskInputs['backfill']
      const embedder = createEmbedder(b.spec, b.embedderOptions)
      return (await backfillEmbeddings(store, embedder, {
        filter: b.filter,
        batchSize: b.batchSize,
        spec: b.spec,
        signal: ctl.signal,
        onProgress: ctl.progress,
      })) as TaskOutputs[K]
    }
    case 'warmVectors': {
      for (const m of (input as TaskInputs['warmVectors']).models) {
        if (ctl.signal.aborted) break
        store.vectors(m.model, m.ownerType)
      }
      const written = store.capabilities().snapshots?.saveVectorSnapshots() ?? []
      store.reloadVectors() // this thread's copy is not needed: the main thread restores the snapshot
      return { written } as TaskOutputs[K]
    }
    default:
      throw new RecallscopeError('BAD_INPUT', `Unknown task ${String(kind)}`)
  }
}

/** One logged event with its replay as logged: config, injected units, context (the trace view's detail). */
async function eventDetail(store: MemorySource, eventId: string, opts: PrepareOptions): Promise<TraceEventDetail> {
  const { replay, run } = await replayEventFull(store, eventId, { ...opts, mode: 'logged' })
  const units = unitsOf(
    store,
    run.event.results.map((r) => r.id),
    run.config.unit,
    replay.trace,
  )
  return {
    event: { ...run.event, decision: eventDecision(run.event, run.extras) },
    config: run.config,
    configSource: run.resolved.source,
    configNotes: run.resolved.notes,
    injected: run.event.results.map((r, n) => ({ id: r.id, rank: n + 1, score: r.score, unit: units.get(r.id) ?? null })),
    context: eventContext(run.event, run.config, run.extras, replay.trace, units),
    loggedVector: run.extras.queryVector ? { dim: run.extras.queryVector.length } : null,
  }
}
