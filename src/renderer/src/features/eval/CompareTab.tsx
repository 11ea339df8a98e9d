/**
 * Compare 2+ runs case by case against the first (the baseline): per run the
 * mean metric, the mean delta with its 95% paired bootstrap interval, wins /
 * losses / ties with a sign test, churn of the injected lists (Jaccard, RBO),
 * the deltas of every metric as a chart, and every case's values.
 */
import { useMemo, useState } from 'react'
import type { EvalRunSummary, RunComparison } from '../../../../shared/eval'
import { LOWER_IS_BETTER, METRIC_IDS, metricKey, parseMetricKey, type MetricId } from '../../../../shared/metrics'
import { snapshotDiff, type DiffEntry, type DiffMark } from '../../../../shared/snapshotDiff'
import type { Page } from '../../../../shared/types'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtNum } from '../../lib/format'
import { DataTable, type Columns } from '../../components/DataTable'
import { DeltaBars } from './Charts'
import { runLabel } from './RunsTab'

const sign = (x: number | null | undefined, d = 4) => (x === null || x === undefined ? '—' : `${x > 0 ? '+' : ''}${x.toFixed(d)}`)
const fmtP = (p: number) => (p < 0.0001 ? '< 0.0001' : p.toFixed(4))

/** One sentence a person can act on. */
export function verdict(metric: string, name: string, v: RunComparison['vsBaseline'][number]): string {
  if (v.delta === null || v.cases === 0) return `${name}: no case where ${metric} applies in both runs.`
  const lowerBetter = LOWER_IS_BETTER.has(parseMetricKey(metric)?.id ?? 'recall')
  const better = lowerBetter ? v.delta < 0 : v.delta > 0
  const ci = v.deltaCI
  const excludesZero = ci !== null && (ci.lo > 0 || ci.hi < 0)
  const word = v.delta === 0 ? 'ties with' : better ? 'beats' : 'trails'
  const sure = v.delta === 0 ? '' : excludesZero && v.p < 0.05 ? ' — unlikely to be chance' : ' — within noise: not a reliable difference'
  return `${name} ${word} the baseline on ${metric} by ${sign(v.delta)}${ci ? ` (95% CI ${sign(ci.lo)} … ${sign(ci.hi)})` : ''}: ${v.wins} wins, ${v.losses} losses, ${v.ties} ties, sign test p = ${fmtP(v.p)}${sure}.`
}

export function CompareSummary({ cmp }: { cmp: RunComparison }) {
  return (
    <>
      <table className="plain" aria-label="Comparison summary">
        <thead>
          <tr>
            <th>run</th>
            <th>cases</th>
            <th>{cmp.metric}</th>
            <th>Δ vs base</th>
            <th>95% CI of Δ</th>
            <th>wins</th>
            <th>losses</th>
            <th>ties</th>
            <th>p (sign)</th>
            <th>Jaccard</th>
            <th>RBO</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>
              {runLabel(cmp.runs[0])} <span className="badge accent">base</span>
            </td>
            <td className="num">{cmp.runs[0].counts.cases}</td>
            <td className="num">{fmtNum(cmp.vsBaseline[0]?.baselineMean ?? null)}</td>
            <td colSpan={8} />
          </tr>
          {cmp.vsBaseline.map((v) => (
            <tr key={v.run} data-run={cmp.runs[v.run].id}>
              <td>{runLabel(cmp.runs[v.run])}</td>
              <td className="num">{v.cases}</td>
              <td className="num">{fmtNum(v.mean)}</td>
              <td
                className={`num ${v.delta && v.delta !== 0 ? (v.delta > 0 !== LOWER_IS_BETTER.has(parseMetricKey(cmp.metric)?.id ?? 'recall') ? 'pos' : 'neg') : ''}`}
              >
                {sign(v.delta)}
              </td>
              <td className="num small">{v.deltaCI ? `${sign(v.deltaCI.lo)} … ${sign(v.deltaCI.hi)}` : '—'}</td>
              <td className="num">{v.wins}</td>
              <td className="num">{v.losses}</td>
              <td className="num">{v.ties}</td>
              <td className="num">{fmtP(v.p)}</td>
              <td className="num">{fmtNum(v.jaccard)}</td>
              <td className="num">{fmtNum(v.rbo)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <ul className="verdicts">
        {cmp.vsBaseline.map((v) => (
          <li key={v.run}>{verdict(cmp.metric, runLabel(cmp.runs[v.run]), v)}</li>
        ))}
      </ul>
    </>
  )
}

type Row = RunComparison['perCase'][number] & { maxAbs: number }

/** One case's injected lists side by side, baseline vs each other run: moved / new / dropped, relevant flagged. */
function CaseDiff({ row, runs }: { row: RunComparison['perCase'][number]; runs: RunComparison['runs'] }) {
  const markText = (m: DiffMark, shift: number | null) => (m === 'moved' ? (shift! > 0 ? `↓${shift}` : `↑${-shift!}`) : m === 'same' ? '' : m)
  return (
    <section className="case-diff" aria-label="Per-case diff">
      <h4>
        {row.id} <span className="small muted">{row.name}</span>
      </h4>
      {runs.slice(1).map((r, j) => {
        const d = snapshotDiff(row.retrieved[0], row.retrieved[j + 1], row.relevant)
        const side = (title: string, es: DiffEntry[]) => (
          <div className="diff-side">
            <div className="small muted">{title}</div>
            <ol>
              {es.map((e) => (
                <li key={e.id} className={`diff-${e.mark}${e.relevant ? ' diff-rel' : ''}`} data-mark={e.mark}>
                  <span className="mono">{e.id}</span> {e.relevant && <span className="badge ok">relevant</span>}{' '}
                  {e.mark !== 'same' && (
                    <span className={`badge ${e.mark === 'dropped' ? 'danger' : e.mark === 'new' ? 'accent' : ''}`}>{markText(e.mark, e.shift)}</span>
                  )}
                </li>
              ))}
              {es.length === 0 && <li className="muted">(nothing injected)</li>}
            </ol>
          </div>
        )
        return (
          <div key={r.id} className="diff-pair" data-testid="case-diff">
            <div className="small">
              vs {runLabel(r)}: {d.counts.moved} moved · {d.counts.new} new · {d.counts.dropped} dropped · relevant injected {d.relevantHits.left} →{' '}
              {d.relevantHits.right}
            </div>
            <div className="grid2">
              {side(`base: ${runLabel(runs[0])}`, d.left)}
              {side(runLabel(r), d.right)}
            </div>
          </div>
        )
      })}
    </section>
  )
}

export function CompareTab({ runs, ids, setIds }: { runs: EvalRunSummary[] | undefined; ids: string[]; setIds: (ids: string[]) => void }) {
  const k = runs?.find((r) => r.id === ids[0])?.k ?? 10
  const [metricId, setMetricId] = useState<MetricId>('ndcg')
  const metric = metricKey(metricId, k)
  const [filter, setFilter] = useState<'changed' | 'worse' | 'all'>('changed')
  const [open, setOpen] = useState<Row | null>(null)
  const [chartRun, setChartRun] = useState(1)
  const cmp = useAsync(() => (ids.length >= 2 ? call('runs.compare', { ids, metric }) : Promise.resolve(null)), [ids.join(','), metric])
  const c = cmp.data
  const rows: Row[] = useMemo(() => {
    if (!c) return []
    const all = c.perCase.map((r) => ({ ...r, maxAbs: Math.max(0, ...r.deltas.map((d) => (d === null ? 0 : Math.abs(d)))) }))
    // "Got worse": the metric moved the wrong way in any run against the baseline.
    const worse = (r: Row) => r.deltas.some((d) => d !== null && Math.abs(d) > 1e-12 && d > 0 === LOWER_IS_BETTER.has(metricId))
    const kept =
      filter === 'all' ? all : filter === 'worse' ? all.filter(worse) : all.filter((r) => r.maxAbs > 1e-12 || r.jaccard.some((j) => j !== null && j < 1))
    return kept.sort((a, b) => b.maxAbs - a.maxAbs)
  }, [c, filter, metricId])
  const toggle = (id: string) => setIds(ids.includes(id) ? ids.filter((x) => x !== id) : [...ids, id])

  const picker = (
    <div className="compare-picker" role="group" aria-label="Runs to compare">
      {(runs ?? []).map((r) => (
        <label key={r.id} className="toggle">
          <input type="checkbox" checked={ids.includes(r.id)} onChange={() => toggle(r.id)} />
          {runLabel(r)}
          {ids[0] === r.id && <span className="badge accent">base</span>}
        </label>
      ))}
    </div>
  )
  if (ids.length < 2)
    return (
      <div className="compare">
        <div className="notice">Pick two or more runs (the first picked is the baseline).</div>
        {picker}
      </div>
    )
  const columns: Columns<Row> = [
    { id: 'id', accessorKey: 'id', header: 'case', size: 120, enableSorting: false, cell: (x) => <span className="mono">{x.getValue() as string}</span> },
    { id: 'name', accessorKey: 'name', header: 'question', size: 280, enableSorting: false },
    ...(c?.runs ?? []).map((r, i) => ({
      id: `v${i}`,
      header: i === 0 ? `base ${metric}` : `${runLabel(r)}`,
      size: 110,
      enableSorting: false,
      accessorFn: (x: Row) => x.values[i],
      cell: (x: { row: { original: Row } }) => {
        const v = x.row.original.values[i]
        const d = x.row.original.deltas[i]
        return (
          <span className="num">
            {fmtNum(v)}
            {i > 0 && d !== null && d !== 0 && <span className={d > 0 !== LOWER_IS_BETTER.has(metricId) ? 'pos' : 'neg'}> {sign(d, 3)}</span>}
          </span>
        )
      },
    })),
    ...(c?.runs ?? []).slice(1).map((r, j) => ({
      id: `j${j + 1}`,
      header: `Jaccard ${j + 1}`,
      size: 80,
      enableSorting: false,
      accessorFn: (x: Row) => x.jaccard[j + 1],
      cell: (x: { row: { original: Row } }) => <span className="num small">{fmtNum(x.row.original.jaccard[j + 1], 2)}</span>,
    })),
  ] as Columns<Row>
  const fetchPage = async (offset: number, limit: number): Promise<Page<Row>> => ({
    rows: rows.slice(offset, offset + limit),
    offset,
    limit,
    total: rows.length,
    truncated: false,
    tookMs: 0,
  })
  const chosen = c?.vsBaseline[Math.min(chartRun, c.vsBaseline.length) - 1]
  const deltaRows = chosen
    ? Object.entries(chosen.metrics)
        .filter(([key, m]) => m.delta !== null && key !== 'tokens' && key !== 'falseInjection')
        .map(([key, m]) => {
          const id = key.split('@')[0] as MetricId
          return { metric: key, delta: m.delta as number, good: LOWER_IS_BETTER.has(id) ? (m.delta as number) < 0 : (m.delta as number) > 0 }
        })
    : []
  return (
    <div className="compare">
      <div className="row">
        {picker}
        <span className="spacer" />
        <select className="input" aria-label="Compare metric" value={metricId} onChange={(e) => setMetricId(e.target.value as MetricId)}>
          {METRIC_IDS.map((m) => (
            <option key={m} value={m}>
              {metricKey(m, k)}
            </option>
          ))}
        </select>
      </div>
      {cmp.error && <div className="error">{cmp.error.message}</div>}
      {c && (
        <>
          <section className="card">
            <CompareSummary cmp={c} />
          </section>
          <section className="card">
            <div className="row">
              <h3 className="grow">Metric deltas vs the baseline</h3>
              {c.vsBaseline.length > 1 && (
                <select className="input" aria-label="Delta chart run" value={chartRun} onChange={(e) => setChartRun(Number(e.target.value))}>
                  {c.vsBaseline.map((v) => (
                    <option key={v.run} value={v.run}>
                      {runLabel(c.runs[v.run])}
                    </option>
                  ))}
                </select>
              )}
            </div>
            <DeltaBars rows={deltaRows} />
            {chosen && (
              <div className="small muted">
                tokens per case {fmtNum(chosen.metrics.tokens?.baseline ?? null, 0)} → {fmtNum(chosen.metrics.tokens?.value ?? null, 0)} (
                {sign(chosen.metrics.tokens?.delta ?? null, 0)})
                {chosen.metrics.falseInjection?.delta !== null && chosen.metrics.falseInjection?.delta !== undefined && (
                  <>
                    {' '}
                    · memories injected per expect-empty case {fmtNum(chosen.metrics.falseInjection.baseline, 2)} →{' '}
                    {fmtNum(chosen.metrics.falseInjection.value, 2)}
                  </>
                )}
              </div>
            )}
          </section>
          <section className="card compare-cases">
            <div className="row">
              <h3 className="grow">Per case ({rows.length})</h3>
              <select className="input" aria-label="Which cases" value={filter} onChange={(e) => setFilter(e.target.value as typeof filter)}>
                <option value="changed">cases that changed</option>
                <option value="worse">cases that got worse</option>
                <option value="all">all cases</option>
              </select>
            </div>
            <div className="compare-table">
              <DataTable
                label="Per-case comparison"
                columns={columns}
                fetchPage={fetchPage}
                queryKey={`${ids.join(',')}:${metric}:${filter}:${rows.length}`}
                rowId={(x) => x.id}
                selectedId={open?.id ?? null}
                onSelect={setOpen}
              />
            </div>
            {open && <CaseDiff row={open} runs={c.runs} />}
          </section>
        </>
      )}
    </div>
  )
}
