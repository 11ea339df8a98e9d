/**
 * Handlers for evaluation: cases (CRUD, import/export), eval runs and tune as
 * background jobs, saved runs and their comparison, and the jobs channels.
 * Clocks are read here, at the boundary; the eval core takes `now` explicitly.
 * Evals and tunes run in the open store's job worker (jobs/offThread.ts), which
 * caches gathered candidates, so a re-run under other scoring knobs (or a tune
 * after an eval) skips the engine; results are saved here, on the main thread.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { EvalRunSummary } from '../../../shared/eval'
import { RecallscopeError } from '../../../shared/result'
import { buildConfig } from '../../recall/request'
import { exportJsonl, importJsonl, importLocomoQa, saveCase } from '../../eval/cases'
import { compareRuns } from '../../eval/runs'
import type { App } from '../app'
import { writeFileAtomic } from '../../safety/atomicWrite'
import type { Handlers } from '../register'
import { readRegularFile } from '../../store/safeFiles'

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
  | 'eval.scope'
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
  return readRegularFile(abs, 'cases file').toString('utf8')
}

export function evalHandlers(app: App): Pick<Handlers, EvalChannels> {
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
      const label = i.name?.trim() || i.preset || preset
      return app.jobs.start('eval', `Evaluate ${label}`, async (ctl) => {
        // Gathered and scored in the job worker; saved here (the worker's connection only reads).
        const run = await app.offThread(
          'eval',
          {
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
          },
          { signal: ctl.signal, progress: ctl.progress, fresh: i.fresh },
        )
        const saved = store.workspace.saveRun({ ...run, id: undefined, name: label, source: 'ui' })
        const { perCase: _, ...summary } = saved
        return summary satisfies EvalRunSummary
      })
    },
    'eval.tune': (i) => {
      const store = app.requireStore()
      buildConfig({ preset: i.preset, config: i.config }) // a bad preset or config: BAD_INPUT now, not a failed job
      return app.jobs.start('tune', `Tune ${i.metric}`, async (ctl) => {
        const report = await app.offThread(
          'tune',
          {
            preset: i.preset,
            config: i.config,
            embedder: i.embedder ?? app.settings().embedder ?? null,
            embedderOptions: embedderOptions(),
            now: i.now ?? Date.now(),
            metric: i.metric,
            trials: i.trials,
            seed: i.seed,
            space: i.space,
            budget: i.budget,
            splitRule: i.splitRule,
            testFraction: i.testFraction,
            folds: i.folds,
            keepScope: i.keepScope,
          },
          { signal: ctl.signal, progress: ctl.progress, fresh: i.fresh },
        )
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
    'eval.scope': (i) => {
      buildConfig({ preset: i.preset, config: i.config }) // a bad preset or config: BAD_INPUT here, not in the worker
      return app.offThread('scope', { preset: i.preset, config: i.config })
    },
    'jobs.list': () => app.jobs.list().map(({ result: _, ...p }) => p),
    'jobs.get': (i) => app.jobs.get(i.jobId),
    'jobs.cancel': (i) => ({ cancelled: app.jobs.cancel(i.jobId) }),
  }
}
