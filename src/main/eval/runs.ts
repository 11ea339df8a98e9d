/**
 * Eval runs in the workspace DB (`eval_runs`): a run keeps its full config,
 * the embedder, the metrics and every case's injected list with a snapshot of
 * the case's judgment, so it can be re-read, compared at any k, and charted
 * over time even after the cases are edited.
 */
import crypto from 'node:crypto'
import type Database from 'better-sqlite3'
import type { CaseResult, EvalRun, EvalRunSummary, RunComparison, RunCounts } from '../../shared/eval'
import { bootstrapMeanCI, LOWER_IS_BETTER, METRIC_IDS, metricKey, parseMetricKey, signTestP } from '../../shared/metrics'
import { jaccard, rbo } from '../../shared/overlap'
import { RecallscopeError } from '../../shared/result'
import type { EmbedderInfo, RecallConfig } from '../../shared/types'
import { caseMetricsAt } from './replay'

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
  }
}

export type NewRun = Omit<EvalRun, 'id' | 'createdAt'> & { id?: string; createdAt: number }

/** Store a run; returns it with its id. */
export function saveRun(ws: Database.Database, run: NewRun): EvalRun {
  const id = run.id ?? `run-${run.createdAt.toString(36)}-${crypto.randomBytes(3).toString('hex')}`
  const meta: RunMeta = { preset: run.preset, budget: run.budget, counts: run.counts, source: run.source, timings: run.timings }
  ws.prepare(
    `INSERT INTO eval_runs (id, created_at, name, config, embedder, k, split, metrics, per_case, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(id, run.createdAt, run.name, JSON.stringify(run.config), JSON.stringify(run.embedder), run.k, run.split, JSON.stringify(run.metrics), JSON.stringify(run.perCase), JSON.stringify(meta))
  return { ...run, id }
}

/** Runs, newest first, without per-case results. */
export function listRuns(ws: Database.Database, opts: { limit?: number } = {}): EvalRunSummary[] {
  const limit = Math.min(10_000, Math.max(1, opts.limit ?? 500))
  return (ws.prepare(`SELECT id, created_at, name, config, embedder, k, split, metrics, meta FROM eval_runs ORDER BY created_at DESC, id DESC LIMIT ?`).all(limit) as RunRowDb[]).map(toSummary)
}

export function getRun(ws: Database.Database, id: string): EvalRun {
  const r = ws.prepare(`SELECT * FROM eval_runs WHERE id = ?`).get(id) as RunRowDb | undefined
  if (!r) throw new RecallscopeError('NOT_FOUND', `No eval run ${id}`)
  return { ...toSummary(r), perCase: parse<CaseResult[]>(r.per_case, []) }
}

export function deleteRuns(ws: Database.Database, ids: string[]): number {
  let n = 0
  ws.transaction(() => {
    const del = ws.prepare(`DELETE FROM eval_runs WHERE id = ?`)
    for (const id of ids) n += del.run(id).changes
  })()
  return n
}

export function renameRun(ws: Database.Database, id: string, name: string): EvalRunSummary {
  if (ws.prepare(`UPDATE eval_runs SET name = ? WHERE id = ?`).run(name, id).changes === 0) throw new RecallscopeError('NOT_FOUND', `No eval run ${id}`)
  return toSummary(ws.prepare(`SELECT id, created_at, name, config, embedder, k, split, metrics, meta FROM eval_runs WHERE id = ?`).get(id) as RunRowDb)
}

/**
 * Compare runs case by case against the first (the baseline): the chosen
 * metric per case, wins / losses / ties with a sign test, the mean delta with a
 * paired bootstrap interval, and churn of the injected lists (Jaccard, RBO).
 * Metrics are recomputed from each run's stored lists at `k`, so runs made at
 * different k still compare on one footing.
 * @param metric e.g. `ndcg@10`, `mrr`, `recall@k` (k from `k`). @default `ndcg@k`
 */
export function compareRuns(ws: Database.Database, ids: string[], opts: { metric?: string; k?: number; rboP?: number } = {}): RunComparison {
  if (ids.length < 2) throw new RecallscopeError('BAD_INPUT', 'compare needs at least 2 runs')
  const runs = ids.map((id) => getRun(ws, id))
  const k0 = opts.k ?? runs[0].k
  const parsed = parseMetricKey(opts.metric ?? `ndcg@${k0}`, k0)
  if (!parsed) throw new RecallscopeError('BAD_INPUT', `Unknown metric '${opts.metric}'. Metrics: ${METRIC_IDS.map((m) => metricKey(m, k0)).join(', ')}`)
  const k = parsed.k ?? k0
  const metric = metricKey(parsed.id, k)
  const lowerBetter = LOWER_IS_BETTER.has(parsed.id)
  const p = opts.rboP ?? 0.9

  // Per run: case id → metrics at k (recomputed from the stored list, with that run's budget).
  const maps = runs.map((r) => {
    const m = new Map<string, { c: CaseResult; metrics: Record<string, number | null> }>()
    for (const c of r.perCase) m.set(c.id, { c, metrics: caseMetricsAt(c, k, r.budget) })
    return m
  })
  const base = maps[0]
  const order = runs[0].perCase.map((c) => c.id)
  const seen = new Set(order)
  for (let i = 1; i < runs.length; i++) for (const c of runs[i].perCase) if (!seen.has(c.id)) (seen.add(c.id), order.push(c.id))

  const perCase: RunComparison['perCase'] = order.map((id) => {
    const entries = maps.map((m) => m.get(id))
    const b = entries[0]
    const values = entries.map((e) => (e ? (e.metrics[metric] ?? null) : null))
    return {
      id,
      name: entries.find(Boolean)!.c.name,
      values,
      deltas: values.map((v) => (v === null || values[0] === null ? null : v - values[0])),
      jaccard: entries.map((e) => (e && b ? jaccard(b.c.retrieved, e.c.retrieved) : null)),
      rbo: entries.map((e) => (e && b ? rbo(b.c.retrieved, e.c.retrieved, p) : null)),
      retrieved: entries.map((e) => e?.c.retrieved ?? []),
    }
  })

  const vsBaseline: RunComparison['vsBaseline'] = []
  for (let i = 1; i < runs.length; i++) {
    let wins = 0
    let losses = 0
    let ties = 0
    const deltas: number[] = []
    let sum = 0
    let baseSum = 0
    let jac = 0
    let rb = 0
    let shared = 0
    for (const row of perCase) {
      const a = row.values[0]
      const v = row.values[i]
      if (row.jaccard[i] !== null) {
        shared++
        jac += row.jaccard[i]!
        rb += row.rbo[i]!
      }
      if (a === null || v === null) continue
      const d = v - a
      deltas.push(d)
      sum += v
      baseSum += a
      // A difference below float noise is a tie, not a win.
      if (Math.abs(d) < 1e-12) ties++
      else if (d > 0 !== lowerBetter) wins++
      else losses++
    }
    const n = deltas.length
    const ci = bootstrapMeanCI(deltas, { seed: 1 })
    const metrics: RunComparison['vsBaseline'][number]['metrics'] = {}
    for (const mid of METRIC_IDS) {
      const key = metricKey(mid, k)
      let s = 0
      let sb = 0
      let cnt = 0
      for (const id of order) {
        const e = maps[i].get(id)?.metrics[key]
        const eb = base.get(id)?.metrics[key]
        if (e === null || e === undefined || eb === null || eb === undefined) continue
        s += e
        sb += eb
        cnt++
      }
      metrics[key] = cnt === 0 ? { value: null, baseline: null, delta: null } : { value: s / cnt, baseline: sb / cnt, delta: (s - sb) / cnt }
    }
    vsBaseline.push({
      run: i,
      cases: n,
      mean: n ? sum / n : null,
      baselineMean: n ? baseSum / n : null,
      delta: n ? (sum - baseSum) / n : null,
      deltaCI: ci ? { lo: ci.lo, hi: ci.hi } : null,
      wins,
      losses,
      ties,
      p: signTestP(wins, losses),
      jaccard: shared ? jac / shared : null,
      rbo: shared ? rb / shared : null,
      metrics,
    })
  }
  return { metric, k, runs: runs.map(({ perCase: _, ...s }) => s), vsBaseline, perCase }
}
