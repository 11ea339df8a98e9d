/**
 * Eval runs in the workspace (`eval_runs`): a run keeps its full config, the
 * embedder, the metrics and every case's injected list with a snapshot of the
 * case's judgment, so it can be re-read, compared at any k, and charted over
 * time even after the cases are edited.
 */
import crypto from 'node:crypto'
import type Database from 'better-sqlite3'
import { evalWarnings, type CaseResult, type EvalRun, type EvalRunSummary, type RunCounts } from '../../../shared/eval'
import { RecallscopeError } from '../../../shared/result'
import type { EmbedderInfo, RecallConfig } from '../../../shared/types'
import { runWriteTransaction } from '../sqlite/connection'

interface RunRowDb {
  id: string
  created_at: number
  name: string | null
  config: string
  embedder: string | null
  k: number
  split: string
  metrics: string
  per_case?: string
  meta: string | null
}

interface RunMeta {
  preset: string | null
  budget: number
  counts: RunCounts
  source: string
  timings: EvalRunSummary['timings']
}

function parse<T>(s: string | null | undefined, fallback: T): T {
  if (!s) return fallback
  try {
    return (JSON.parse(s) as T) ?? fallback
  } catch {
    return fallback
  }
}

function toSummary(r: RunRowDb): EvalRunSummary {
  const meta = parse<Partial<RunMeta>>(r.meta, {})
  return {
    id: r.id,
    createdAt: r.created_at,
    name: r.name ?? '',
    preset: meta.preset ?? null,
    config: parse<RecallConfig>(r.config, {} as RecallConfig),
    embedder: parse<EmbedderInfo>(r.embedder, { name: 'unknown', model: null, available: false }),
    k: r.k,
    split: r.split === 'train' || r.split === 'test' ? r.split : 'all',
    budget: meta.budget ?? 0,
    metrics: parse<Record<string, number | null>>(r.metrics, {}),
    counts: meta.counts ?? { cases: 0, graded: 0, expectEmpty: 0, unjudged: 0, degraded: 0 },
    source: meta.source ?? 'unknown',
    timings: meta.timings ?? { gatherMs: 0, scoreMs: 0, totalMs: 0 },
    warnings: evalWarnings(parse<RecallConfig>(r.config, {} as RecallConfig), r.k),
  }
}

export type NewRun = Omit<EvalRun, 'id' | 'createdAt'> & { id?: string; createdAt: number }

/** Store a run; returns it with its id. */
export function saveRun(ws: Database.Database, run: NewRun): EvalRun {
  const id = run.id ?? `run-${run.createdAt.toString(36)}-${crypto.randomBytes(3).toString('hex')}`
  const meta: RunMeta = { preset: run.preset, budget: run.budget, counts: run.counts, source: run.source, timings: run.timings }
  ws.prepare(`INSERT INTO eval_runs (id, created_at, name, config, embedder, k, split, metrics, per_case, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
    id,
    run.createdAt,
    run.name,
    JSON.stringify(run.config),
    JSON.stringify(run.embedder),
    run.k,
    run.split,
    JSON.stringify(run.metrics),
    JSON.stringify(run.perCase),
    JSON.stringify(meta),
  )
  return { ...run, id }
}

/** Runs, newest first, without per-case results. */
export function listRuns(ws: Database.Database, opts: { limit?: number } = {}): EvalRunSummary[] {
  const limit = Math.min(10_000, Math.max(1, opts.limit ?? 500))
  return (
    ws
      .prepare(`SELECT id, created_at, name, config, embedder, k, split, metrics, meta FROM eval_runs ORDER BY created_at DESC, id DESC LIMIT ?`)
      .all(limit) as RunRowDb[]
  ).map(toSummary)
}

export function getRun(ws: Database.Database, id: string): EvalRun {
  const r = ws.prepare(`SELECT * FROM eval_runs WHERE id = ?`).get(id) as RunRowDb | undefined
  if (!r) throw new RecallscopeError('NOT_FOUND', `No eval run ${id}`)
  return { ...toSummary(r), perCase: parse<CaseResult[]>(r.per_case, []) }
}

export function deleteRuns(ws: Database.Database, ids: string[]): number {
  let n = 0
  runWriteTransaction(ws, () => {
    const del = ws.prepare(`DELETE FROM eval_runs WHERE id = ?`)
    for (const id of ids) n += del.run(id).changes
  })
  return n
}

export function renameRun(ws: Database.Database, id: string, name: string): EvalRunSummary {
  if (ws.prepare(`UPDATE eval_runs SET name = ? WHERE id = ?`).run(name, id).changes === 0) throw new RecallscopeError('NOT_FOUND', `No eval run ${id}`)
  return toSummary(ws.prepare(`SELECT id, created_at, name, config, embedder, k, split, metrics, meta FROM eval_runs WHERE id = ?`).get(id) as RunRowDb)
}
