/**
 * Evaluate: which recall settings should the agent ship, and how sure are we?
 * The bar on top holds the config under test (preset + JSON overrides, k,
 * split) and runs it over the cases as a background job; the tabs hold the
 * cases, the saved runs, run comparison and auto-tune.
 */
import { useEffect, useMemo, useState } from 'react'
import type { JobProgress } from '../../../../shared/api'
import type { EvalRunSummary, TuneReport } from '../../../../shared/eval'
import type { RecallConfig } from '../../../../shared/types'
import { mergeConfig } from '../../../../shared/config'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { useApp } from '../../app/context'
import { CasesTab } from './CasesTab'
import { CompareTab } from './CompareTab'
import { RunsTab } from './RunsTab'
import { SavedTuneReports, TuneTab } from './TuneTab'
import { DEFAULT_SETTINGS, mergeOverrides, parseOverrides, type EvalSettings } from './settings'
import { decodeEval, decodeIdList, encodeEval } from './evalRoute'
import { decodeTune, encodeTune, type TuneForm } from './tuneRoute'
import { parsePatch, serializePatch } from '../../lib/router'
import { useJob } from '../../lib/jobs'
import { URL_WRITE_MS, useQuietTimer } from '../../lib/quietTimer'
import './eval.css'
import { PresetOptionList } from '../recall/PresetOptionList'

type Tab = 'cases' | 'runs' | 'compare' | 'tune'
const TABS: { id: Tab; label: string }[] = [
  { id: 'cases', label: 'Cases' },
  { id: 'runs', label: 'Runs' },
  { id: 'compare', label: 'Compare' },
  { id: 'tune', label: 'Tune' },
]

export function EvalView() {
  const { dbVersion, nav, setParams } = useApp()
  const route = nav.params
  // Tab, run, compared runs and tune report are in the URL (#/eval?tab=compare&runs=a,b): reload and back keep them.
  const [tab, setTabState] = useState<Tab>(() => TABS.find((t) => t.id === route.tab)?.id ?? 'cases')
  const setTab = (t: Tab) => {
    setTabState(t)
    setParams({ tab: t === 'cases' ? undefined : t })
  }
  // The config under test (preset, overrides, k, split) too: a copied Tune link opens the same start config.
  const [settings, setSettings] = useState<EvalSettings>(() => decodeEval(route))
  // The Tune tab's search settings (objective, k, configs, seed, knobs) too, kept while another tab shows.
  const [tuneForm, setTuneForm] = useState<TuneForm>(() => decodeTune(route, settings.k))
  const [runName, setRunName] = useState('')
  const presets = useAsync(() => call('recall.presets', {}), [])
  const runs = useAsync(() => call('runs.list', {}), [dbVersion])
  const [selectedRun, setSelectedRunState] = useState<string | null>(route.run ?? null)
  const setSelectedRun = (id: string | null) => {
    setSelectedRunState(id)
    setParams({ run: id ?? undefined, runCase: undefined })
  }
  const [openTune, setOpenTuneState] = useState<string | null>(route.tune ?? null)
  const setOpenTune = (id: string | null) => {
    setOpenTuneState(id)
    setParams({ tune: id ?? undefined })
  }
  // The runs ticked in the Runs tab (checked=a,b), written in place: a tick is not a back step.
  const [checked, setCheckedState] = useState<string[]>(() => decodeIdList(route.checked))
  const setChecked = (ids: string[]) => {
    setCheckedState(ids)
    setParams({ checked: ids.length ? ids.join(',') : undefined }, 'replace')
  }
  const [compareIds, setCompareIdsState] = useState<string[]>(() => decodeIdList(route.runs))
  const setCompareIds = (ids: string[]) => {
    setCompareIdsState(ids)
    setParams({ runs: ids.length ? ids.join(',') : undefined }, 'replace')
  }

  const options = useMemo(() => {
    const out: { value: string; label: string; config: RecallConfig }[] = []
    for (const p of presets.data ?? []) {
      out.push({ value: p.name, label: `${p.label}`, config: p.config })
      for (const v of p.variants ?? []) out.push({ value: `${p.name}:${v.name}`, label: `  ↳ ${v.label}`, config: mergeConfig(p.config, v.patch) })
    }
    return out
  }, [presets.data])
  // A preset the URL names but this build does not have (a hand-edited or old link): the default, not an error
  // at run time. Adjusted during render once the presets arrive (React's pattern; no effect).
  if (options.length && !options.some((o) => o.value === settings.preset)) {
    const fallback = options.some((o) => o.value === DEFAULT_SETTINGS.preset) ? DEFAULT_SETTINGS.preset : options[0].value
    setSettings((s) => ({ ...s, preset: fallback }))
  }
  // Written in place once the edits pause: typing overrides is not a back step, and not one history write per key.
  const routeParams = serializePatch({ ...encodeEval(settings), ...encodeTune(tuneForm, settings.k) })
  const urlTimer = useQuietTimer(URL_WRITE_MS)
  useEffect(() => urlTimer.poke(() => setParams(parsePatch(routeParams), 'replace')), [routeParams, setParams, urlTimer])

  // A plain function: useJob reads the latest onDone when the job ends, so it needs no stable identity.
  const onRunDone = (s: EvalRunSummary) => {
    runs.reload()
    setSelectedRun(s.id)
    setTab('runs')
  }
  const evalJob = useJob<'eval'>(onRunDone, `eval.run:${dbVersion}`)
  // Kept by name: a tune running or finished survives going to another screen and back (per open DB).
  const tuneJob = useJob<'tune'>(undefined, `eval.tune:${dbVersion}`)
  const parsed = parseOverrides(settings.overrides)

  const runEval = (over?: { overrides: string; name: string }) => {
    const o = parseOverrides(over?.overrides ?? settings.overrides)
    if (!o.ok) return
    void evalJob.start((): Promise<JobProgress> =>
      call('eval.run', { preset: settings.preset, config: o.config, k: settings.k, split: settings.split, name: (over?.name ?? runName.trim()) || undefined }),
    )
  }
  const apply = (config: RecallConfig, report: TuneReport) => {
    const overrides = JSON.stringify(config, null, 2)
    setSettings((s) => ({ ...s, overrides, k: report.k }))
    runEval({ overrides, name: `tuned ${report.metric}` })
  }
  const p = evalJob.job
  const effective = options.find((o) => o.value === settings.preset)?.config

  return (
    <div className="eval page">
      <section className="runbar card" aria-label="Config under test">
        <div className="row">
          <label>
            <span className="field-label">Preset</span>
            <select className="input" aria-label="Eval preset" value={settings.preset} onChange={(e) => setSettings((s) => ({ ...s, preset: e.target.value }))}>
              <PresetOptionList options={options} />
            </select>
          </label>
          <label>
            <span className="field-label">k</span>
            <input
              className="input num"
              type="number"
              min={1}
              max={1000}
              aria-label="Eval k"
              value={settings.k}
              onChange={(e) => setSettings((s) => ({ ...s, k: Math.max(1, Number(e.target.value) || 1) }))}
            />
          </label>
          <label>
            <span className="field-label">Split</span>
            <select
              className="input"
              aria-label="Eval split"
              value={settings.split}
              onChange={(e) => setSettings((s) => ({ ...s, split: e.target.value as EvalSettings['split'] }))}
            >
              <option value="all">all</option>
              <option value="train">train</option>
              <option value="test">test</option>
            </select>
          </label>
          <label>
            <span className="field-label">Run name</span>
            <input className="input" placeholder={settings.preset} value={runName} onChange={(e) => setRunName(e.target.value)} aria-label="Run name" />
          </label>
          <span className="spacer" />
          {evalJob.running ? (
            <button className="btn" onClick={evalJob.cancel}>
              Cancel
            </button>
          ) : (
            <button className="btn primary" onClick={() => runEval()} disabled={!parsed.ok}>
              Run eval
            </button>
          )}
        </div>
        <details className="overrides" open={settings.overrides.trim() !== ''}>
          <summary>
            Config overrides (partial RecallConfig JSON over the preset){settings.overrides.trim() ? ' · set' : ''}
            {effective && !settings.overrides.trim() && (
              <span className="small muted">
                {' '}
                · {effective.mode}, topK {effective.topK}, floor {effective.floor ?? 'off'}
              </span>
            )}
          </summary>
          <textarea
            className="input wide mono"
            rows={settings.overrides.split('\n').length > 6 ? 10 : 4}
            spellCheck={false}
            aria-label="Config overrides"
            placeholder='{"floor": null, "topK": 10}'
            value={settings.overrides}
            onChange={(e) => setSettings((s) => ({ ...s, overrides: e.target.value }))}
          />
          {!parsed.ok && <div className="error small">{parsed.error}</div>}
          {settings.overrides.trim() !== '' && (
            <button className="btn small" onClick={() => setSettings((s) => ({ ...s, overrides: '' }))}>
              Clear
            </button>
          )}
        </details>
        {p && p.state === 'running' && (
          <div className="progress" role="progressbar" aria-label="Eval progress" aria-valuemin={0} aria-valuemax={p.total || 1} aria-valuenow={p.done}>
            <div className="bar" style={{ width: `${p.total ? (100 * p.done) / p.total : 0}%` }} />
            <span className="small">{p.message ?? 'starting…'}</span>
          </div>
        )}
        {evalJob.error && <div className="error">{evalJob.error}</div>}
        {evalJob.cancelled && (
          <div className="muted" role="status">
            Cancelled.
          </div>
        )}
      </section>
      <div className="eval-tabs" role="tablist" aria-label="Evaluate">
        {TABS.map((t) => (
          <button key={t.id} role="tab" aria-selected={tab === t.id} className="eval-tab" onClick={() => setTab(t.id)}>
            {t.label}
            {t.id === 'runs' && runs.data ? <span className="count">{runs.data.length}</span> : null}
            {t.id === 'tune' && tuneJob.running ? <span className="count">…</span> : null}
          </button>
        ))}
      </div>
      <div className="tabpanel" role="tabpanel">
        {tab === 'cases' && <CasesTab settings={settings} dbVersion={dbVersion} />}
        {tab === 'runs' && (
          <RunsTab
            runs={runs.data}
            reload={runs.reload}
            selectedId={selectedRun}
            onSelect={setSelectedRun}
            checked={checked}
            setChecked={setChecked}
            onCompare={() => {
              setCompareIds(checked)
              setTab('compare')
            }}
          />
        )}
        {tab === 'runs' && (
          <SavedTuneReports
            refreshKey={tuneJob.result}
            onOpen={(id) => {
              setOpenTune(id)
              setTab('tune')
            }}
          />
        )}
        {tab === 'compare' && <CompareTab runs={runs.data} ids={compareIds} setIds={setCompareIds} />}
        {tab === 'tune' && (
          <TuneTab
            settings={settings}
            form={tuneForm}
            setForm={setTuneForm}
            onApply={apply}
            onWiden={(patch) => setSettings((s) => ({ ...s, overrides: mergeOverrides(s.overrides, patch) }))}
            job={tuneJob}
            openId={openTune}
          />
        )}
      </div>
    </div>
  )
}
