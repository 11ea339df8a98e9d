/**
 * The heavy tasks that run off the main thread (jobWorker.ts), and the one
 * function that runs them on any thread: the worker calls `runTask` on its own
 * read-only connection, and tests call it in-thread to check both give the same
 * answer. Inputs and outputs are plain data (they cross a thread by structured
 * clone); saving a result is left to the caller on the main thread, so a worker
 * never writes.
 */
import type { EvalRun, TuneReport, TuneSpace } from '../../shared/eval'
import { RecallscopeError } from '../../shared/result'
import type { WhyNot } from '../../shared/trace'
import type { EmbedderOptions } from '../embed/index'
import { evalEmbedder, runEval, type EvalRequest } from '../eval/evaluate'
import type { GatherCache } from '../eval/replay'
import type { SplitRule } from '../eval/split'
import { runTune } from '../eval/tuneJob'
import { buildConfig } from '../recall/request'
import type { MemorySource } from '../store/source'
import { whyNot, type WhyRequest } from '../trace/why'

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
}

/** Task kind → its input. */
export interface TaskInputs {
  eval: EvalTaskInput
  tune: TuneTaskInput
  why: Omit<WhyRequest, 'queryVector'> & { queryVector?: number[] | null }
}
/** Task kind → its result. */
export interface TaskOutputs {
  eval: EvalRun
  tune: TuneReport
  why: WhyNot
}
export type TaskKind = keyof TaskInputs

export interface TaskControl {
  signal: AbortSignal
  progress: (done: number, total: number, message?: string) => void
  /** gathered candidates kept between tasks on the same store (a re-run under other knobs skips the engine) */
  cache?: GatherCache
}

/** Run one task on `store` (whichever thread holds it). */
export async function runTask<K extends TaskKind>(store: MemorySource, kind: K, input: TaskInputs[K], ctl: TaskControl): Promise<TaskOutputs[K]> {
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
        cache: ctl.cache,
        signal: ctl.signal,
        onProgress: ctl.progress,
      })) as TaskOutputs[K]
    }
    case 'why':
      return (await whyNot(store, input as TaskInputs['why'])) as TaskOutputs[K]
    default:
      throw new RecallscopeError('BAD_INPUT', `Unknown task ${String(kind)}`)
  }
}
