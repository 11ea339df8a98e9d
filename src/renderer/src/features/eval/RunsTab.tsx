/**
 * Saved runs: the list (pick two or more to compare), the history of a metric
 * over runs, and one run's results — metrics with 95% bootstrap intervals, the
 * per-case distribution, and a per-case table with what each case injected.
 */
import { useMemo, useState } from 'react'
import { formatPhases, type CaseResult, type EvalRun, type EvalRunSummary } from '../../../../shared/eval'
import { bootstrapMeanCI, LOWER_IS_BETTER, METRIC_IDS, METRIC_INFO, metricKey, type MetricId } from '../../../../shared/metrics'
import type { Page } from '../../../../shared/types'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtDate, fmtNum } from '../../lib/format'
import { DataTable, type Columns } from '../../components/DataTable'
import { ExportButtons } from '../../components/ExportButtons'
import { listSource, type ExportColumn, type ExportSpec } from '../../lib/exportTable'
import { DistributionChart, MetricBars, MetricHistoryChart } from './Charts'
import { useOptionalApp } from '../../app/context'
import type { RecallConfig } from '../../../../shared/types'

export function runLabel(r: Pick<EvalRunSummary, 'name' | 'preset' | 'id'>): string {
  return r.name || r.preset || r.id
}

/** The metrics of a run as rows: value and 95% interval from its per-case values. */
function runIntervals(run: EvalRun): Record<string, { lo: number; hi: number } | null> {
  const out: Record<string, { lo: number; hi: number } | null> = {}
  for (const id of METRIC_IDS) {
    if (LOWER_IS_BETTER.has(id)) continue
    const key = metricKey(id, run.k)
    const xs = run.perCase.map((c) => c.metrics[key]).filter((v): v is number => typeof v === 'number')
    const ci = bootstrapMeanCI(xs)
    out[key] = ci ? { lo: ci.lo, hi: ci.hi } : null
  }
  return out
}

/** The runs export: one row per run, its config in brief, and every metric any run has as a column. */
function runsExport(runs: readonly EvalRunSummary[]): ExportSpec<EvalRunSummary> {
  const metricKeys = [...new Set(runs.flatMap((r) => Object.keys(r.metrics)))]
  const columns: ExportColumn<EvalRunSummary>[] = [
    { header: 'id', value: (r) => r.id },
    { header: 'name', value: (r) => runLabel(r) },
    { header: 'created_at', value: (r) => new Date(r.createdAt).toISOString() },
    { header: 'preset', value: (r) => r.preset },
    { header: 'mode', value: (r) => r.config.mode },
    { header: 'embedder', value: (r) => (r.embedder.model ? `${r.embedder.name}:${r.embedder.model}` : r.embedder.name) },
    { header: 'k', value: (r) => r.k },
    { header: 'split', value: (r) => r.split },
    { header: 'cases', value: (r) => r.counts.cases },
    ...metricKeys.map((k) => ({ header: k, value: (r: EvalRunSummary) => r.metrics[k] ?? null })),
  ]
  return { columns, toJson: (r) => r }
}

export function RunsTab({
  runs,
  reload,
  selectedId,
  onSelect,
  checked,
  setChecked,
  onCompare,
}: {
  runs: EvalRunSummary[] | undefined
  reload: () => void
  selectedId: string | null
  onSelect: (id: string | null) => void
  checked: string[]
  setChecked: (ids: string[]) => void
  onCompare: () => void
}) {
  const [historyMetric, setHistoryMetric] = useState<MetricId>('ndcg')
  const latestK = runs?.[0]?.k ?? 10
  const histKey = metricKey(historyMetric, latestK)
  const toggle = (id: string) => setChecked(checked.includes(id) ? checked.filter((x) => x !== id) : [...checked, id])
  const remove = async () => {
    await call('runs.delete', { ids: checked })
    setChecked([])
    if (selectedId && checked.includes(selectedId)) onSelect(null)
    reload()
  }
  if (!runs) return <div className="muted">Loading runs…</div>
  if (runs.length === 0) return <div className="notice">No runs yet: press “Run eval” above to evaluate the current config on the cases.</div>
  return (
    <div className="runs">
      <section className="card runs-list">
        <div className="row">
          <h3 className="grow">Runs</h3>
          <button className="btn" disabled={checked.length < 2} onClick={onCompare} title="Compare the checked runs (the first checked is the baseline)">
            Compare {checked.length >= 2 ? checked.length : ''} runs
          </button>
          <button className="btn" disabled={checked.length === 0} onClick={remove}>
            Delete
          </button>
          <ExportButtons base="eval-runs" spec={runsExport(runs)} source={listSource(runs)} label="runs" />
        </div>
        <table className="plain" aria-label="Eval runs">
          <thead>
            <tr>
              <th />
              <th>run</th>
              <th>when</th>
              <th>k</th>
              <th>cases</th>
              <th>{metricKey('recall', latestK)}</th>
              <th>{metricKey('ndcg', latestK)}</th>
              <th>mrr</th>
              <th>abst.</th>
              <th>tokens</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id} aria-selected={r.id === selectedId} onClick={() => onSelect(r.id)} data-id={r.id}>
                <td onClick={(e) => e.stopPropagation()}>
                  <input type="checkbox" aria-label={`Select run ${runLabel(r)}`} checked={checked.includes(r.id)} onChange={() => toggle(r.id)} />
                  {checked.indexOf(r.id) === 0 && checked.length > 1 && <span className="badge accent small">base</span>}
                </td>
                <td>
                  {runLabel(r)} <span className="small muted">{r.config.mode}</span>
                </td>
                <td className="small muted">{fmtDate(r.createdAt)}</td>
                <td className="num">
                  {r.k}
                  {r.warnings?.some((w) => w.code === 'K_ABOVE_TOPK') && (
                    <span className="badge warn small" title={r.warnings.find((w) => w.code === 'K_ABOVE_TOPK')!.message}>
                      topK {r.config.topK}
                    </span>
                  )}
                </td>
                <td className="num">{r.counts.cases}</td>
                <td className="num">{fmtNum(r.metrics[metricKey('recall', r.k)])}</td>
                <td className="num">{fmtNum(r.metrics[metricKey('ndcg', r.k)])}</td>
                <td className="num">{fmtNum(r.metrics.mrr)}</td>
                <td className="num">{fmtNum(r.metrics.abstention)}</td>
                <td className="num">{fmtNum(r.metrics.tokens, 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section className="card">
        <div className="row">
          <h3 className="grow">History</h3>
          <select className="input" aria-label="History metric" value={historyMetric} onChange={(e) => setHistoryMetric(e.target.value as MetricId)}>
            {METRIC_IDS.map((m) => (
              <option key={m} value={m}>
                {metricKey(m, latestK)}
              </option>
            ))}
          </select>
        </div>
        <MetricHistoryChart runs={runs} metric={histKey} selectedId={selectedId} onSelect={onSelect} />
      </section>
      {selectedId && <RunDetail id={selectedId} />}
    </div>
  )
}

type CaseRow = CaseResult & { value: number | null; firstHit: number | null; tok: number }

function RunDetail({ id }: { id: string }) {
  const run = useAsync(() => call('runs.get', { id }), [id])
  const [metric, setMetric] = useState<MetricId>('ndcg')
  // The case open in the run is in the URL (#/eval?tab=runs&run=…&runCase=…).
  const app = useOptionalApp()
  const [openId, setOpenId] = useState<string | null>(app?.nav.params.runCase ?? null)
  const r = run.data
  const key = r ? metricKey(metric, r.k) : ''
  const rows: CaseRow[] = useMemo(
    () =>
      r
        ? r.perCase.map((c) => {
            const rel = new Set(c.relevant.map((x) => x.id))
            const i = c.retrieved.findIndex((x) => rel.has(x))
            return { ...c, value: c.metrics[key] ?? null, firstHit: i < 0 ? null : i + 1, tok: c.tokens.reduce((s, t) => s + t, 0) }
          })
        : [],
    [r, key],
  )
  const open = rows.find((x) => x.id === openId) ?? null
  const setOpen = (c: CaseRow) => {
    setOpenId(c.id)
    app?.setParams({ runCase: c.id })
  }
  const intervals = useMemo(() => (r ? runIntervals(r) : {}), [r])
  if (run.error) return <div className="error">{run.error.message}</div>
  if (!r) return <div className="muted">Loading run…</div>
  const columns: Columns<CaseRow> = [
    { id: 'id', accessorKey: 'id', header: 'case', size: 120, cell: (c) => <span className="mono">{c.getValue() as string}</span> },
    { id: 'name', accessorKey: 'name', header: 'question', size: 280 },
    { id: 'value', accessorKey: 'value', header: key, size: 90, cell: (c) => <span className="num">{fmtNum(c.getValue() as number | null)}</span> },
    {
      id: 'firstHit',
      accessorKey: 'firstHit',
      header: 'first hit',
      size: 80,
      cell: (c) => <span className="num">{(c.getValue() as number | null) ?? '—'}</span>,
    },
    {
      id: 'retrieved',
      header: 'injected',
      size: 80,
      accessorFn: (x) => x.retrieved.length,
      cell: (c) => <span className="num">{c.getValue() as number}</span>,
    },
    { id: 'tok', accessorKey: 'tok', header: 'tokens', size: 80, cell: (c) => <span className="num">{c.getValue() as number}</span> },
    {
      id: 'judged',
      header: 'judged',
      size: 120,
      accessorFn: (x) => (x.expectEmpty ? -1 : x.relevant.length),
      cell: (c) =>
        c.row.original.expectEmpty ? (
          <span className="badge warn">expect empty</span>
        ) : c.row.original.relevant.length === 0 ? (
          <span className="badge">unjudged</span>
        ) : (
          <span className="small muted">{c.row.original.relevant.length} relevant</span>
        ),
    },
  ]
  const fetchPage = async (offset: number, limit: number, sort: { id: string; desc: boolean } | null): Promise<Page<CaseRow>> => {
    let list = rows
    if (sort) {
      const get = (x: CaseRow): number | string => {
        const v =
          sort.id === 'retrieved'
            ? x.retrieved.length
            : sort.id === 'judged'
              ? x.expectEmpty
                ? -1
                : x.relevant.length
              : (x as unknown as Record<string, unknown>)[sort.id]
        return v === null || v === undefined ? -Infinity : (v as number | string)
      }
      list = [...rows].sort((a, b) => {
        const x = get(a)
        const y = get(b)
        const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y), 'en', { numeric: true })
        return sort.desc ? -c : c
      })
    }
    return { rows: list.slice(offset, offset + limit), offset, limit, total: list.length, truncated: false, tookMs: 0 }
  }
  const values = rows.map((x) => x.value).filter((v): v is number => v !== null)
  return (
    <>
      <section className="card run-detail" aria-label="Run results">
        <div className="row">
          <h3 className="grow">
            {runLabel(r)}{' '}
            <span className="small muted">
              · {fmtDate(r.createdAt)} · {r.preset ?? 'custom'} · {r.config.mode} · embedder {r.embedder.name}
              {r.embedder.model ? ` (${r.embedder.model})` : ''} · k {r.k} · split {r.split} · B {r.budget} tokens
            </span>
          </h3>
        </div>
        {r.warnings?.map((w) => (
          <div key={w.code} className="notice small warn" role="status" data-testid="run-warning" data-code={w.code}>
            {w.message}
          </div>
        ))}
        <div className="metric-cards" data-testid="run-metrics">
          {Object.entries(r.metrics).map(([k, v]) => {
            const ci = intervals[k]
            const id = k.split('@')[0] as MetricId
            return (
              <div key={k} className="metric-card" title={METRIC_INFO[id]?.about}>
                <div className="small muted">{k}</div>
                <div className="metric-value">{fmtNum(v, id === 'tokens' || id === 'falseInjection' ? 1 : 3)}</div>
                {ci && (
                  <div className="small muted">
                    {fmtNum(ci.lo)}–{fmtNum(ci.hi)}
                  </div>
                )}
              </div>
            )
          })}
        </div>
        <div className="small muted">
          {r.counts.cases} cases: {r.counts.graded} graded, {r.counts.expectEmpty} expect-empty, {r.counts.unjudged} unjudged
          {r.counts.degraded ? ` · dense arm off for ${r.counts.degraded} (embedder unavailable)` : ''} · gather {Math.round(r.timings.gatherMs)} ms · score{' '}
          {Math.round(r.timings.scoreMs)} ms
        </div>
        {r.timings.phases && <div className="small muted">where the time went: {formatPhases(r.timings.phases)}</div>}
        <div className="grid2">
          <MetricBars metrics={r.metrics} intervals={intervals} />
          <div>
            <div className="row">
              <span className="small muted grow">per-case distribution</span>
              <select className="input" aria-label="Per-case metric" value={metric} onChange={(e) => setMetric(e.target.value as MetricId)}>
                {METRIC_IDS.filter((m) => !LOWER_IS_BETTER.has(m)).map((m) => (
                  <option key={m} value={m}>
                    {metricKey(m, r.k)}
                  </option>
                ))}
              </select>
            </div>
            <DistributionChart values={values} metric={key} />
          </div>
        </div>
      </section>
      <section className="card run-cases">
        <div className="run-cases-grid">
          <div className="run-cases-table">
            <DataTable
              label="Per-case results"
              columns={columns}
              fetchPage={fetchPage}
              queryKey={`${id}:${key}`}
              rowId={(x) => x.id}
              selectedId={open?.id ?? null}
              onSelect={setOpen}
              initialSorting={[]}
            />
          </div>
          <div className="run-case-detail" aria-label="Case result">
            {open ? <CaseResultView c={open} run={r} /> : <div className="small muted">Select a case to see what it injected.</div>}
          </div>
        </div>
      </section>
    </>
  )
}

/** The config a case ran with in a run: the case's scope fields over the run's scope (as replay.ts caseConfig). */
function caseRunConfig(config: RecallConfig, scope: { agentId?: string; userId?: string; sessionId?: string; tenantId?: string }): RecallConfig {
  const s = { ...config.scope }
  for (const k of ['agentId', 'userId', 'sessionId', 'tenantId'] as const) if (scope[k]) s[k] = scope[k]
  return { ...config, scope: s }
}

function CaseResultView({ c, run }: { c: CaseRow; run: EvalRun }) {
  const grade = new Map(c.relevant.map((r) => [r.id, r.grade]))
  const missed = c.relevant.filter((r) => !c.retrieved.includes(r.id))
  const ids = [...c.retrieved, ...missed.map((m) => m.id)]
  const mems = useAsync(
    () => (ids.length ? call('memories.page', { ids, limit: Math.min(1000, ids.length) }) : Promise.resolve(null)),
    [c.id, ids.join('\u0000')],
  )
  const text = (id: string) => mems.data?.rows.find((m) => m.id === id)?.content
  const navigate = useOptionalApp()?.navigate
  // The case as it is now (query, scope, moment): the run keeps only its judgment.
  const ec = useAsync(() => call('cases.get', { id: c.id }), [c.id])
  const cfg = ec.data ? caseRunConfig(run.config, ec.data.scope) : null
  // A case run without its own `now` ran at the caller's clock, i.e. when the run was made.
  const now = ec.data?.now ?? run.createdAt
  // Nothing injected where something should be: ask the engine which gate dropped everything.
  const emptyWhy = useAsync(() => call('recall.run', { query: ec.data!.query, cue: ec.data!.cue, now, config: cfg! }), [c.id, ec.data ? 'y' : 'n'], {
    enabled: !!ec.data && c.retrieved.length === 0 && !c.expectEmpty && c.relevant.length > 0,
  })
  const whyParams = (memoryId: string) => ({
    query: ec.data!.query,
    now: String(now),
    config: JSON.stringify(cfg),
    memoryId,
    from: `From eval case ${c.id}, under the config of run ${run.name || run.id}`,
  })
  return (
    <div>
      <div className="mono small">{c.id}</div>
      <div>{c.name}</div>
      {c.expectEmpty && <div className="badge warn">expect empty: {c.retrieved.length === 0 ? 'abstained ✓' : `${c.retrieved.length} injected ✗`}</div>}
      {emptyWhy.data?.empty && (
        <div className="notice small warn" role="status" aria-label="Why nothing was injected">
          <strong>Nothing injected.</strong> {emptyWhy.data.empty.message}
          {emptyWhy.data.empty.suggestion && <> Try: {emptyWhy.data.empty.suggestion.label}.</>}
        </div>
      )}
      <ol className="injected">
        {c.retrieved.map((id, i) => (
          <li key={id} className={grade.has(id) ? 'hit' : undefined}>
            <span className="mono">{id}</span> <span className="small muted">{c.tokens[i]} tok</span>
            {grade.has(id) && <span className="badge ok">grade {grade.get(id)}</span>}
            {text(id) && <div className="small inj-text">{text(id)}</div>}
          </li>
        ))}
      </ol>
      {missed.length > 0 && (
        <div className="small">
          missed:
          <ul className="missed">
            {missed.map((m) => (
              <li key={m.id}>
                <span className="badge danger mono">{m.id}</span> <span className="small muted">grade {m.grade}</span>{' '}
                {navigate && ec.data && (
                  <button
                    className="btn small"
                    aria-label={`why not ${m.id}?`}
                    onClick={() => navigate('trace', whyParams(m.id))}
                    title="Explain under this run's config: scope, arm ranks, score, the gate, the smallest change"
                  >
                    why not?
                  </button>
                )}
                {text(m.id) && <div className="small inj-text">{text(m.id)}</div>}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  )
}
