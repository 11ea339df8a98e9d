/**
 * Comparing eval runs (stored in the workspace, store/workspace/runs.ts).
 */
import type { CaseResult, RunComparison } from '../../shared/eval'
import { bootstrapMeanCI, LOWER_IS_BETTER, METRIC_IDS, metricKey, parseMetricKey, signTestP } from '../../shared/metrics'
import { jaccard, rbo } from '../../shared/overlap'
import { RecallscopeError } from '../../shared/result'
import type { Workspace } from '../store/workspace/workspace'
import { caseMetricsAt } from './replay'

type CaseMetricsById = Map<string, { c: CaseResult; metrics: Record<string, number | null> }>

/** Every metric at k of one run beside the baseline run, over the cases where both have a value. */
function metricsVsBaseline(run: CaseMetricsById, base: CaseMetricsById, order: readonly string[], k: number): RunComparison['vsBaseline'][number]['metrics'] {
  const metrics: RunComparison['vsBaseline'][number]['metrics'] = {}
  for (const mid of METRIC_IDS) {
    const key = metricKey(mid, k)
    let s = 0
    let sb = 0
    let cnt = 0
    for (const id of order) {
      const e = run.get(id)?.metrics[key]
      const eb = base.get(id)?.metrics[key]
      if (e === null || e === undefined || eb === null || eb === undefined) continue
      s += e
      sb += eb
      cnt++
    }
    metrics[key] = cnt === 0 ? { value: null, baseline: null, delta: null } : { value: s / cnt, baseline: sb / cnt, delta: (s - sb) / cnt }
  }
  return metrics
}

/**
 * Compare runs case by case against the first (the baseline): the chosen
 * metric per case, wins / losses / ties with a sign test, the mean delta with a
 * paired bootstrap interval, and churn of the injected lists (Jaccard, RBO).
 * Metrics are recomputed from each run's stored lists at `k`, so runs made at
 * different k still compare on one footing.
 * @param metric e.g. `ndcg@10`, `mrr`, `recall@k` (k from `k`). @default `ndcg@k`
 */
export function compareRuns(ws: Workspace, ids: string[], opts: { metric?: string; k?: number; rboP?: number } = {}): RunComparison {
  if (ids.length < 2) throw new RecallscopeError('BAD_INPUT', 'compare needs at least 2 runs')
  const runs = ids.map((id) => ws.getRun(id))
  const k0 = opts.k ?? runs[0].k
  const parsed = parseMetricKey(opts.metric ?? `ndcg@${k0}`, k0)
  if (!parsed) throw new RecallscopeError('BAD_INPUT', `Unknown metric '${opts.metric}'. Metrics: ${METRIC_IDS.map((m) => metricKey(m, k0)).join(', ')}`)
  const k = parsed.k ?? k0
  const metric = metricKey(parsed.id, k)
  const lowerBetter = LOWER_IS_BETTER.has(parsed.id)
  const p = opts.rboP ?? 0.9

  // Per run: case id → metrics at k (recomputed from the stored list, with that run's budget).
  const maps = runs.map((r) => {
    const m: CaseMetricsById = new Map()
    for (const c of r.perCase) m.set(c.id, { c, metrics: caseMetricsAt(c, k, r.budget) })
    return m
  })
  const base = maps[0]
  const order = runs[0].perCase.map((c) => c.id)
  const seen = new Set(order)
  for (let i = 1; i < runs.length; i++)
    for (const c of runs[i].perCase)
      if (!seen.has(c.id)) {
        seen.add(c.id)
        order.push(c.id)
      }

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
      // The judgment as the baseline run saw it (else the first run that has the case).
      relevant: (b ?? entries.find(Boolean)!).c.relevant.map((r) => r.id),
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
    const metrics = metricsVsBaseline(maps[i], base, order, k)
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
