/**
 * Tune: search mode, fusion, pool, weights (on the simplex), half-life, age
 * source, floor, minSimilarity, topK and budget on train conversations as a
 * background job (progress, cancel), then rank the tuned config with the
 * baselines on the held-out ones (bootstrap intervals, a plain verdict), show
 * the convergence curve, the weight-simplex heatmap, the best configs, and the
 * recommended config as JSON to copy, download, or apply. Every tune is saved
 * in the workspace; saved reports reopen here and export as JSON.
 */
import { useEffect, useState } from 'react'
import type { JobProgress } from '../../../../shared/api'
import type { PartialRecallConfig } from '../../../../shared/config'
import type { SavedTuneReport, ScopeDiagnosis, TuneReport } from '../../../../shared/eval'
import { metricKey, type MetricId } from '../../../../shared/metrics'
import type { RecallConfig } from '../../../../shared/types'
import { call } from '../../lib/api'
import { fmtNum } from '../../lib/format'
import { ConvergenceChart } from './Charts'
import { downloadText } from './CasesTab'
import { Heatmap } from './Heatmap'
import { parseOverrides, type EvalSettings } from './settings'
import { KNOBS, TUNE_BOUNDS, TUNE_METRICS, type TuneForm } from './tuneRoute'
import type { JobState } from '../../lib/jobs'
import { useOptionalApp } from '../../app/context'
import { useAsync } from '../../lib/useAsync'

/** The form's whole-number inputs: field, label, accessible name. */
const NUMBER_FIELDS = [
  ['k', 'k', 'Tune k'],
  ['trials', 'Configs to try', 'Configs to try'],
  ['seed', 'Seed', 'Tune seed'],
] as const

export function TuneTab({
  settings,
  form,
  setForm,
  onApply,
  onWiden,
  job,
  openId,
}: {
  settings: EvalSettings
  /** the search settings (held by the Evaluate view, which keeps them in the URL) */
  form: TuneForm
  setForm: (update: (f: TuneForm) => TuneForm) => void
  onApply: (config: RecallConfig, report: TuneReport) => void
  /** merge the scope check's widening into the config under test */
  onWiden: (patch: PartialRecallConfig) => void
  job: JobState<'tune'>
  /** a saved report to show */
  openId?: string | null
}) {
  const { metric: metricId, k, trials, seed, space } = form
  const set = <K extends keyof TuneForm>(key: K, value: TuneForm[K]) => setForm((f) => ({ ...f, [key]: value }))
  /** A number input's value within its bounds (an empty or invalid entry gives the lower bound). */
  const bounded = (v: string, [lo, hi]: readonly [number, number]) => Math.min(hi, Math.max(lo, Math.trunc(Number(v)) || lo))
  const [opened, setOpened] = useState<SavedTuneReport | null>(null)
  // A fresh tune replaces whatever saved report was open (adjusted during render, not in an effect).
  const [seenResult, setSeenResult] = useState(job.result)
  if (seenResult !== job.result) {
    setSeenResult(job.result)
    setOpened(null)
  }
  // Opened from the Runs tab's list of tune reports.
  useEffect(() => {
    if (openId) void call('tune.get', { id: openId }).then(setOpened)
  }, [openId])
  const [formError, setFormError] = useState<string | null>(null)
  const metric = metricKey(metricId, k)
  // The scope check runs before any search: a start scope that hides the judged memories is said up front.
  const scope = useAsync(() => {
    const o = parseOverrides(settings.overrides)
    return o.ok ? call('eval.scope', { preset: settings.preset, config: o.config }) : Promise.resolve(null)
  }, [settings.preset, settings.overrides])
  const start = () => {
    const o = parseOverrides(settings.overrides)
    if (!o.ok) return setFormError(`Config: ${o.error}`)
    setFormError(null)
    void job.start((): Promise<JobProgress> => call('eval.tune', { preset: settings.preset, config: o.config, metric, trials, seed, space }))
  }
  const p = job.job
  return (
    <div className="tune">
      <section className="card tune-form" aria-label="Tune settings">
        <div className="row">
          <label>
            <span className="field-label">Objective</span>
            <select className="input" aria-label="Tune metric" value={metricId} onChange={(e) => set('metric', e.target.value as MetricId)}>
              {TUNE_METRICS.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
          {NUMBER_FIELDS.map(([key, label, aria]) => (
            <label key={key}>
              <span className="field-label">{label}</span>
              <input
                className="input num"
                type="number"
                min={TUNE_BOUNDS[key][0]}
                max={TUNE_BOUNDS[key][1]}
                value={form[key]}
                aria-label={aria}
                onChange={(e) => set(key, bounded(e.target.value, TUNE_BOUNDS[key]))}
              />
            </label>
          ))}
          <div className="knobs" role="group" aria-label="Knobs to search">
            {KNOBS.map(([key, label]) => (
              <label key={key} className="toggle">
                <input type="checkbox" checked={space[key]} onChange={(e) => set('space', { ...space, [key]: e.target.checked })} />
                {label}
              </label>
            ))}
          </div>
          <span className="spacer" />
          {job.running ? (
            <button className="btn" onClick={job.cancel}>
              Cancel
            </button>
          ) : (
            <button className="btn primary" onClick={start}>
              Start tuning
            </button>
          )}
        </div>
        <div className="small muted">
          Searches on <b>train</b> cases starting from {settings.preset}
          {settings.overrides.trim() ? ' + your config' : ''}; whole conversations (or sessions) are held out when the cases name them, and the held-out cases
          are only scored — with every baseline — never searched. Unticked knobs stay at the start config's value.
        </div>
        {scope.data?.minority && <ScopeNotice scope={scope.data} onWiden={onWiden} />}
        {p && p.state === 'running' && (
          <div className="progress" role="progressbar" aria-label="Tune progress" aria-valuemin={0} aria-valuemax={p.total || 1} aria-valuenow={p.done}>
            <div className="bar" style={{ width: `${p.total ? (100 * p.done) / p.total : 0}%` }} />
            <span className="small">{p.message ?? 'starting…'}</span>
          </div>
        )}
        {(formError || job.error) && <div className="error">{formError ?? job.error}</div>}
        {job.cancelled && (
          <div className="muted" role="status">
            Cancelled.
          </div>
        )}
      </section>
      <SavedTuneReports refreshKey={job.result} onOpen={(id) => void call('tune.get', { id }).then(setOpened)} />
      {(opened ?? job.result) && <TuneResults report={(opened ?? job.result)!} onApply={onApply} />}
    </div>
  )
}

/** The start scope reaches a minority of the judged memories: say which filter, and offer the widening. */
function ScopeNotice({ scope, onWiden }: { scope: ScopeDiagnosis; onWiden: (patch: PartialRecallConfig) => void }) {
  return (
    <div className="notice warn" role="status" data-testid="tune-scope">
      <div>{scope.message}</div>
      <div className="row">
        {scope.widenPatch && (
          <button className="btn small primary" onClick={() => onWiden(scope.widenPatch!)}>
            Widen to {scope.widenLabel}
          </button>
        )}
        <span className="small">Left as is, the tune searches the widened scope anyway and keeps your scope as the “start” baseline.</span>
      </div>
    </div>
  )
}

/** Saved tune reports (newest first): open one, or export it as the JSON `tune --json` prints. Shown in the Tune tab and beside the runs. */
export function SavedTuneReports({ onOpen, refreshKey }: { onOpen: (id: string) => void; refreshKey?: unknown }) {
  const saved = useAsync(() => call('tune.list', {}), [refreshKey])
  return (
    <>
      {saved.data && saved.data.length > 0 && (
        <section className="card" aria-label="Saved tune reports">
          <h3>Saved tune reports</h3>
          <table className="plain">
            <thead>
              <tr>
                <th>when</th>
                <th>metric</th>
                <th>split</th>
                <th>tuned (held-out)</th>
                <th>best baseline</th>
                <th>recommended</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {saved.data.map((t) => (
                <tr key={t.id}>
                  <td className="small">{new Date(t.createdAt).toISOString().slice(0, 16).replace('T', ' ')}</td>
                  <td>{t.metric}</td>
                  <td className="small">{t.split.rule === 'group' ? `by ${t.split.by?.split(' ')[0]}` : 'by case field'}</td>
                  <td className="num">{fmtNum(t.tunedTest)}</td>
                  <td className="small">{t.bestBaseline ? `${t.bestBaseline.name} ${fmtNum(t.bestBaseline.test)}` : '—'}</td>
                  <td className="small">{t.recommendedLabel}</td>
                  <td>
                    <button className="btn small" onClick={() => onOpen(t.id)}>
                      Open
                    </button>{' '}
                    <button
                      className="btn small"
                      onClick={() =>
                        void call('tune.get', { id: t.id }).then((r) => downloadText(`${t.id}.json`, `${JSON.stringify(r, null, 2)}\n`, 'application/json'))
                      }
                    >
                      Export JSON
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </>
  )
}

export function TuneResults({ report: r, onApply }: { report: TuneReport; onApply: (config: RecallConfig, report: TuneReport) => void }) {
  const [copied, setCopied] = useState(false)
  const navigate = useOptionalApp()?.navigate
  const json = JSON.stringify(r.recommended?.config ?? r.best.config, null, 2)
  const w = r.best.params.weights
  const gap = r.best.train !== null && r.best.test !== null ? r.best.train - r.best.test : null
  return (
    <div className="tune-results">
      {r.recommended && (
        <div className={`notice ${r.recommended.name === 'tuned' ? '' : 'warn'}`} role="status" data-testid="tune-verdict">
          {r.recommended.message}
        </div>
      )}
      {r.scope?.minority && (
        <div className="notice small" role="status" data-testid="tune-scope-report">
          {r.scope.message}{' '}
          {r.scope.applied ? `Searched on the widened scope (${r.scope.widenLabel}); the start baseline keeps your scope.` : 'Searched your scope as given.'}
        </div>
      )}
      <section className="card" aria-label="Train vs test">
        <h3>
          {r.metric}: train vs held-out{' '}
          <span className="small muted">
            · {r.trials} configs{r.cancelled ? ' (cancelled)' : ''} · {Math.round(r.timings.configsPerSec)} configs/s
          </span>
        </h3>
        <div className="small muted" data-testid="tune-split">
          {r.split.rule === 'group'
            ? `Split by ${r.split.by}: train ${r.split.trainGroups.join(', ')} · held out ${r.split.testGroups.join(', ')}.`
            : "Split by each case's own train/test field (the cases name no conversation or session)."}{' '}
          {r.pinned && (r.pinned.length ? `Held fixed: ${r.pinned.join(', ')}.` : 'Nothing held fixed.')}
        </div>
        <table className="plain tt" aria-label="Train and test scores">
          <thead>
            <tr>
              <th />
              <th>train ({r.split.train})</th>
              <th>held-out ({r.split.test})</th>
              <th>Δ tuned − this (95% CI)</th>
              <th>verdict</th>
            </tr>
          </thead>
          <tbody>
            <tr className="best">
              <td>tuned config</td>
              <td className="num">{fmtNum(r.best.train)}</td>
              <td className="num" data-testid="tune-test">
                {fmtNum(r.best.test)}
                {r.best.testCI && (
                  <span className="small muted">
                    {' '}
                    ({fmtNum(r.best.testCI.lo)}–{fmtNum(r.best.testCI.hi)})
                  </span>
                )}
              </td>
              <td />
              <td />
            </tr>
            {(r.baselines ?? []).map((b) => (
              <tr key={b.name} className={r.recommended?.name === b.name ? 'best' : undefined} title={b.note ?? undefined}>
                <td>{b.label}</td>
                <td className="num">{fmtNum(b.train)}</td>
                <td className="num">
                  {fmtNum(b.test)}
                  {b.testCI && (
                    <span className="small muted">
                      {' '}
                      ({fmtNum(b.testCI.lo)}–{fmtNum(b.testCI.hi)})
                    </span>
                  )}
                </td>
                <td className="num small">
                  {b.delta === null
                    ? ''
                    : `${b.delta >= 0 ? '+' : ''}${b.delta.toFixed(4)} (${fmtNum(b.deltaCI?.lo ?? null)} – ${fmtNum(b.deltaCI?.hi ?? null)})`}
                </td>
                <td className="small">{b.verdict === 'n/a' ? (b.note ?? 'n/a') : b.verdict.replace('-', ' ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {gap !== null && gap > 0.05 && (
          <div className="notice small">Train beats test by {gap.toFixed(3)}: part of the gain is fitted to the train cases; trust the test column.</div>
        )}
        {r.best.test !== null && r.base.test !== null && (
          <div className="small">
            On held-out cases the tuned config {r.best.test > r.base.test ? 'improves' : r.best.test < r.base.test ? 'worsens' : 'does not change'} {r.metric}{' '}
            by{' '}
            <b>
              {r.best.test - r.base.test >= 0 ? '+' : ''}
              {(r.best.test - r.base.test).toFixed(4)}
            </b>
            .
          </div>
        )}
        <div className="params small">
          mode {r.best.config.mode} · pool {r.best.config.candidatePool} · weights: similarity {w.similarity.toFixed(3)} · lexical {w.lexical.toFixed(3)} ·
          recency {w.recency.toFixed(3)} · salience {w.salience.toFixed(3)} · half-life {r.best.params.halfLifeHours.toFixed(1)} h · floor{' '}
          {r.best.params.floor === null ? 'off' : r.best.params.floor.toFixed(3)} · topK {r.best.params.topK} · fusion {r.best.params.fusion.method}
          {r.best.params.fusion.method === 'rrf' ? ` k=${r.best.params.fusion.rrfK.toFixed(1)}` : ''} · age from {r.best.config.recency.from} · minSimilarity{' '}
          {r.best.config.minSimilarity === null ? 'off' : r.best.config.minSimilarity.toFixed(3)} · budget {r.best.config.tokenBudget ?? 'off'}
        </div>
      </section>
      <div className="grid2">
        <section className="card">
          <h3>Search</h3>
          <ConvergenceChart curve={r.curve} metric={r.metric} base={r.base.train} />
        </section>
        <section className="card">
          <h3>Weight simplex</h3>
          {r.heatmap ? (
            <Heatmap map={r.heatmap} best={r.best.params.weights} metric={r.metric} />
          ) : (
            <div className="notice">No heatmap (weights were not searched, or the search was cancelled).</div>
          )}
        </section>
      </div>
      <section className="card">
        <h3>Best configs (by train)</h3>
        <table className="plain" aria-label="Best configs">
          <thead>
            <tr>
              <th>#</th>
              <th>train</th>
              <th>test</th>
              <th>sim</th>
              <th>lex</th>
              <th>rec</th>
              <th>sal</th>
              <th>half-life</th>
              <th>floor</th>
              <th>topK</th>
              <th>fusion</th>
              <th>tokens</th>
            </tr>
          </thead>
          <tbody>
            {r.top.map((t, i) => (
              <tr key={t.trial}>
                <td>{i + 1}</td>
                <td className="num">{fmtNum(t.train)}</td>
                <td className="num">{fmtNum(t.test)}</td>
                <td className="num">{t.params.weights.similarity.toFixed(2)}</td>
                <td className="num">{t.params.weights.lexical.toFixed(2)}</td>
                <td className="num">{t.params.weights.recency.toFixed(2)}</td>
                <td className="num">{t.params.weights.salience.toFixed(2)}</td>
                <td className="num">{t.params.halfLifeHours.toFixed(0)} h</td>
                <td className="num">{t.params.floor === null ? 'off' : t.params.floor.toFixed(2)}</td>
                <td className="num">{t.params.topK}</td>
                <td>{t.params.fusion.method}</td>
                <td className="num">{t.tokens.toFixed(0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section className="card">
        <div className="row">
          <h3 className="grow">Recommended config — {r.recommended?.label ?? 'Tuned config'} (RecallConfig JSON: paste it into your agent)</h3>
          <button
            className="btn"
            onClick={() => {
              void navigator.clipboard?.writeText(json).then(
                () => setCopied(true),
                () => setCopied(false),
              )
            }}
          >
            {copied ? 'Copied' : 'Copy JSON'}
          </button>
          <button className="btn" onClick={() => downloadText(`recall-config-${r.metric.replace('@', '-at-')}.json`, `${json}\n`, 'application/json')}>
            Download
          </button>
          {navigate && (
            <button className="btn" onClick={() => navigate('recall', { config: json })} title="Explore the recommended config in the recall playground">
              Open in Recall
            </button>
          )}
          <button className="btn primary" onClick={() => onApply(r.recommended?.config ?? r.best.config, r)}>
            Apply this config
          </button>
        </div>
        <pre className="json tall" aria-label="Recommended config JSON">
          {json}
        </pre>
      </section>
    </div>
  )
}
