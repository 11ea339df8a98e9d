/**
 * Tune reports in the workspace (`tune_reports`): the whole report (config,
 * space, seed, split, baselines, curve, heatmap) as JSON, plus the few columns
 * the runs list shows beside eval runs. Reopened as saved; exported as the
 * same JSON `tune --json` prints.
 */
import crypto from 'node:crypto'
import type Database from 'better-sqlite3'
import type { SavedTuneReport, TuneReport, TuneReportSummary } from '../../../shared/eval'
import { RecallscopeError } from '../../../shared/result'
import { runWriteTransaction } from '../sqlite/connection'

interface TuneRowDb {
  id: string
  created_at: number
  name: string | null
  source: string
  metric: string
  summary: string
  report?: string
}

function parse<T>(s: string | null | undefined, fallback: T): T {
  if (!s) return fallback
  try {
    return (JSON.parse(s) as T) ?? fallback
  } catch {
    return fallback
  }
}

function summaryOf(r: TuneReport): Omit<TuneReportSummary, 'id' | 'createdAt' | 'name' | 'source'> {
  return {
    metric: r.metric,
    k: r.k,
    trials: r.trials,
    cancelled: r.cancelled,
    seed: r.seed,
    split: r.split,
    baseTest: r.base.test,
    tunedTrain: r.best.train,
    tunedTest: r.best.test,
    recommended: r.recommended.name,
    recommendedLabel: r.recommended.label,
    bestBaseline: r.baselines
      .filter((b) => b.test !== null)
      .reduce<{ name: string; test: number | null } | null>((a, b) => (a === null || b.test! > (a.test ?? -1) ? { name: b.name, test: b.test } : a), null),
  }
}

function toSummary(r: TuneRowDb): TuneReportSummary {
  return { id: r.id, createdAt: r.created_at, name: r.name ?? '', source: r.source, ...parse(r.summary, {} as ReturnType<typeof summaryOf>) }
}

/** Store a tune report; returns it with its id. */
export function saveTuneReport(
  ws: Database.Database,
  report: TuneReport,
  meta: { createdAt: number; name: string; source: string; id?: string },
): SavedTuneReport {
  const id = meta.id ?? `tune-${meta.createdAt.toString(36)}-${crypto.randomBytes(3).toString('hex')}`
  ws.prepare(`INSERT INTO tune_reports (id, created_at, name, source, metric, summary, report) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(
    id,
    meta.createdAt,
    meta.name,
    meta.source,
    report.metric,
    JSON.stringify(summaryOf(report)),
    JSON.stringify(report),
  )
  return { ...report, id, createdAt: meta.createdAt, name: meta.name, source: meta.source }
}

/** Tune reports, newest first, without their bodies. */
export function listTuneReports(ws: Database.Database, opts: { limit?: number } = {}): TuneReportSummary[] {
  const limit = Math.min(10_000, Math.max(1, opts.limit ?? 500))
  return (
    ws.prepare(`SELECT id, created_at, name, source, metric, summary FROM tune_reports ORDER BY created_at DESC, id DESC LIMIT ?`).all(limit) as TuneRowDb[]
  ).map(toSummary)
}

/** One saved report, whole. NOT_FOUND when absent. */
export function getTuneReport(ws: Database.Database, id: string): SavedTuneReport {
  const r = ws.prepare(`SELECT * FROM tune_reports WHERE id = ?`).get(id) as TuneRowDb | undefined
  if (!r) throw new RecallscopeError('NOT_FOUND', `No tune report ${id}`)
  const report = parse<TuneReport | null>(r.report, null)
  if (!report) throw new RecallscopeError('INTERNAL', `Tune report ${id} is unreadable`)
  return { ...report, id: r.id, createdAt: r.created_at, name: r.name ?? '', source: r.source }
}

export function deleteTuneReports(ws: Database.Database, ids: string[]): number {
  let n = 0
  runWriteTransaction(ws, () => {
    const del = ws.prepare(`DELETE FROM tune_reports WHERE id = ?`)
    for (const id of ids) n += del.run(id).changes
  })
  return n
}
