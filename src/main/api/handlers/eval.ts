/**
 * Handlers for evaluation: cases (CRUD, import/export), eval runs and tune as
 * background jobs, saved runs and their comparison, and the jobs channels.
 * Clocks are read here, at the boundary; the eval core takes `now` explicitly.
 * Gathered candidates are cached per open store, so a re-run under other
 * scoring knobs (or a tune after an eval) skips the engine.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { EvalRunSummary } from '../../../shared/eval'
import { RecallscopeError } from '../../../shared/result'
import { buildConfig } from '../../recall/request'
import type { MemorySource } from '../../store/source'
import { exportJsonl, importJsonl, importLocomoQa, saveCase } from '../../eval/cases'
import { evalEmbedder, runEval } from '../../eval/evaluate'
import { GatherCache } from '../../eval/replay'
import { compareRuns } from '../../eval/runs'
import { runTune } from '../../eval/tuneJob'
import type { App } from '../app'
import { writeFileAtomic } from '../../safety/atomicWrite'
import type { Handlers } from '../register'

type EvalChannels =
  | 'cases.list'
  | 'cases.get'
  | 'cases.save'
  | 'cases.delete'
  | 'cases.import'
  | 'cases.export'
  | 'eval.run'
  | 'eval.tune'
  | 'runs.list'
  | 'runs.get'
  | 'runs.compare'
  | 'runs.rename'
  | 'runs.delete'
  | 'tune.list'
  | 'tune.get'
  | 'tune.delete'
  | 'jobs.list'
  | 'jobs.get'
  | 'jobs.cancel'

/** Input files main reads for cases.import (the renderer usually sends the text instead). */
const MAX_IMPORT_BYTES = 64 * 1024 * 1024

function readText(p: string): string {
  const abs = path.resolve(p)
  let st: fs.Stats
  try {
    st = fs.statSync(abs)
  } catch {
    throw new RecallscopeError('NOT_FOUND', `No such file: ${abs}`)
  }
  if (!st.isFile()) throw new RecallscopeError('BAD_INPUT', `${abs} is not a file`)
  if (st.size > MAX_IMPORT_BYTES) throw new RecallscopeError('BAD_INPUT', `${abs} is over ${MAX_IMPORT_BYTES / 2 ** 20} MiB`)
  return fs.readFileSync(abs, 'utf8')
}

export function evalHandlers(app: App): Pick<Handlers, EvalChannels> {
  const caches = new WeakMap<MemorySource, GatherCache>()
  const cacheOf = (s: MemorySource, fresh: boolean) => {
    let c = caches.get(s)
    if (!c) caches.set(s, (c = new GatherCache(s)))
    if (fresh) c.clear()
    return c
  }
  const embedderOptions = () => {
    const s = app.settings()
    return { ollamaHost: s.ollamaHost, openaiBaseUrl: s.openaiBaseUrl }
  }
  const ws = () => app.requireStore().workspace

  return {
    'cases.list': (i) =>
      ws().listCases({ split: i.split, tag: i.tag, search: i.search, kind: i.kind, sort: i.sort, dir: i.dir, offset: i.offset, limit: i.limit }),
    'cases.get': (i) => ws().getCase(i.id),
    'cases.save': (i) => saveCase(ws(), i.case, Date.now()),
    'cases.delete': (i) => ({ deleted: ws().deleteCases(i.ids) }),
    'cases.import': (i) => {
      const store = app.requireStore()
      const text = i.text ?? readText(app.grants.check(i.path!, 'cases.import', 'read')) // only files the user picked (safety/pathGrants)
      return i.format === 'jsonl' ? importJsonl(store.workspace, text, Date.now()) : importLocomoQa(store, text, Date.now())
    },
    'cases.export': (i) => {
      const r = exportJsonl(ws(), { split: i.split, tag: i.tag, ids: i.ids })
      let written: string | null = null
      if (i.path) {
        written = writeFileAtomic(app.grants.check(i.path, 'cases.export', 'write'), r.text, { what: 'cases.export', overwrite: i.overwrite }) // never an open DB; temp + rename
      }
      return { text: r.text, count: r.count, path: written }
    },
    'eval.run': (i) => {
      const store = app.requireStore()
      // Validate now, so a bad preset or config is an immediate BAD_INPUT, not a failed job.
      const { preset } = buildConfig({ preset: i.preset, config: i.config })
      const cache = cacheOf(store, i.fresh)
      const label = i.name?.trim() || i.preset || preset
      return app.jobs.start('eval', `Evaluate ${label}`, async (ctl) => {
        const run = await runEval(store, {
          preset: i.preset,
          config: i.config,
          k: i.k,
          split: i.split,
          tag: i.tag,
          caseIds: i.caseIds,
          budget: i.budget,
          embedder: i.embedder ?? app.settings().embedder ?? null,
          embedderOptions: embedderOptions(),
          now: i.now ?? Date.now(),
          createdAt: Date.now(),
          save: { name: label, source: 'ui' },
          cache,
          signal: ctl.signal,
          onProgress: ctl.progress,
        })
        const { perCase: _, ...summary } = run
        return summary satisfies EvalRunSummary
      })
    },
    'eval.tune': (i) => {
      const store = app.requireStore()
      const { config } = buildConfig({ preset: i.preset, config: i.config })
      const cache = cacheOf(store, i.fresh)
      return app.jobs.start('tune', `Tune ${i.metric}`, async (ctl) => {
        const cases = store.workspace.loadCases()
        if (cases.length === 0) throw new RecallscopeError('NOT_FOUND', 'No eval cases to tune on: create or import some first')
        const embedder = evalEmbedder(store, config, i.embedder ?? app.settings().embedder ?? null, embedderOptions())
        const report = await runTune(store, cases, config, {
          embedder,
          now: i.now ?? Date.now(),
          metric: i.metric,
          budget: i.trials,
          seed: i.seed,
          space: i.space,
          tokenBudget: i.budget,
          splitRule: i.splitRule,
          testFraction: i.testFraction,
          folds: i.folds,
          cache,
          signal: ctl.signal,
          onProgress: ctl.progress,
        })
        // Saved whole (listed beside runs, reopenable, exportable): the job's result is the saved report.
        return store.workspace.saveTuneReport(report, {
          createdAt: Date.now(),
          name: `Tune ${report.metric}${report.cancelled ? ' (cancelled)' : ''}`,
          source: 'ui',
        })
      })
    },
    'runs.list': (i) => ws().listRuns({ limit: i.limit }),
    'runs.get': (i) => ws().getRun(i.id),
    'runs.compare': (i) => compareRuns(ws(), i.ids, { metric: i.metric, rboP: i.rboP }),
    'runs.rename': (i) => ws().renameRun(i.id, i.name),
    'runs.delete': (i) => ({ deleted: ws().deleteRuns(i.ids) }),
    'tune.list': (i) => ws().listTuneReports({ limit: i.limit }),
    'tune.get': (i) => ws().getTuneReport(i.id),
    'tune.delete': (i) => ({ deleted: ws().deleteTuneReports(i.ids) }),
    'jobs.list': () => app.jobs.list().map(({ result: _, ...p }) => p),
    'jobs.get': (i) => app.jobs.get(i.jobId),
    'jobs.cancel': (i) => ({ cancelled: app.jobs.cancel(i.jobId) }),
  }
}
