/**
 * Controls for every RecallConfig field. Scoring knobs re-rank instantly from
 * cached features; the panel says when a change needs a new query.
 *
 * Each section is memoised on the fields it shows, and every edit goes out as an updater of the
 * config (a stable function): moving a weight re-renders the weights section only, not the ~25
 * other controls (docs/internals/performance.md, "Recall sliders").
 */
import { describeIssues } from '../../../../shared/result'
import { memo, useCallback, useLayoutEffect, useMemo, useRef, useState, type ComponentType } from 'react'
import type { FeatureName, RecallConfig } from '../../../../shared/types'
import { mergeConfig, partialConfigSchema } from '../../../../shared/config'
import { NumberInput, OptionalSlider, Select, Slider, Toggle, writeSliderValue } from '../../components/controls'
import { FEATURE_COLORS } from './ResultsList'
import { FEATURES, fmtHours, halfLifeToPos, moveWeight, onSimplex, posToHalfLife, toSimplex, weightsForMode } from './weights'
import { DecayChart } from './DecayChart'
import { writeText } from '../../lib/writeText'

/** An edit of the config: the next config from the current one (so edits made within one frame compose). */
export type ConfigUpdate = (c: RecallConfig) => RecallConfig

export interface ConfigPanelProps {
  config: RecallConfig
  /** a stable function: the sections are memoised and keep the one they were first given */
  onChange: (update: ConfigUpdate) => void
  /** the moment the age histogram under the decay curve is taken at (its scope is the config's) */
  now: number
  /**
   * Writers of what the panel shows for a config besides the moved slider itself (the other weights on the simplex,
   * their sum), registered by the sections while mounted: the Recall screen's drag fast path calls them with the
   * config it shows without a render (docs/internals/performance.md, "Round 5: a held slider without React").
   */
  followers?: ConfigFollowers
}

/** Writers of a panel's values for a config, outside a render (a stable set: sections add and remove theirs). */
export type ConfigFollowers = Set<(c: RecallConfig) => void>

const LABEL: Record<FeatureName, string> = { similarity: 'Similarity', lexical: 'Lexical', recency: 'Recency', salience: 'Salience' }

interface SectionProps {
  config: RecallConfig
  update: (u: ConfigUpdate) => void
}

/** `section` re-rendered only when one of `fields` (or `update`) changed. */
function memoOn(fields: readonly (keyof RecallConfig)[], section: ComponentType<SectionProps>) {
  return memo(section, (a, b) => a.update === b.update && fields.every((k) => a.config[k] === b.config[k]))
}

/** Sets one field of the config. */
function setter(update: (u: ConfigUpdate) => void) {
  return <K extends keyof RecallConfig>(k: K, v: RecallConfig[K]) => update((c) => ({ ...c, [k]: v }))
}

export function ConfigPanel({ config, onChange, now, followers }: ConfigPanelProps) {
  // The JSON section copies the config as it is when clicked, not as it was when last rendered.
  const current = useRef(config)
  useLayoutEffect(() => {
    current.current = config
  })
  const getConfig = useCallback(() => current.current, [])
  return (
    <div className="config">
      <WeightsSection config={config} update={onChange} followers={followers} />
      <RecencySection config={config} update={onChange} now={now} />
      <GatesSection config={config} update={onChange} />
      <CandidatesSection config={config} update={onChange} />
      <OutputSection config={config} update={onChange} />
      <JsonSection getConfig={getConfig} update={onChange} />
    </div>
  )
}

/** The weights' sum as the section shows it. */
function sigmaText(w: RecallConfig['weights']): string {
  return FEATURES.reduce((s, k) => s + w[k], 0).toFixed(2)
}
const fmtWeight = (v: number) => v.toFixed(2)

const WeightsSection = memo(
  function WeightsSection({ config, update, followers }: SectionProps & { followers?: ConfigFollowers }) {
    const [simplex, setSimplex] = useState(() => onSimplex(config.weights))
    // The four sliders and the sum are written (writeSliderValue, and the sum's text below) after every render, and by
    // the drag fast path without one: moving one weight on the simplex moves the other three.
    const inputs = useRef(new Map<FeatureName, HTMLInputElement>())
    const sigma = useRef<HTMLSpanElement>(null)
    const bind = useMemo(
      () =>
        Object.fromEntries(
          FEATURES.map((k) => [
            k,
            (el: HTMLInputElement | null) => {
              if (el) inputs.current.set(k, el)
              else inputs.current.delete(k)
            },
          ]),
        ) as Record<FeatureName, (el: HTMLInputElement | null) => void>,
      [],
    )
    const show = useCallback((c: RecallConfig) => {
      for (const [k, el] of inputs.current) writeSliderValue(el, c.weights[k], fmtWeight)
      const t = sigmaText(c.weights)
      writeText(sigma.current, t)
    }, [])
    useLayoutEffect(() => show(config))
    useLayoutEffect(() => {
      if (!followers) return
      followers.add(show)
      return () => void followers.delete(show)
    }, [followers, show])
    return (
      <section aria-label="Weights" className="weights">
        <div className="sec-head">
          <h4>Weights</h4>
          <Toggle
            label="on the simplex"
            hint="Weights sum to 1: moving one shares the rest among the others in proportion"
            checked={simplex}
            onChange={(v) => {
              setSimplex(v)
              if (v) update((c) => ({ ...c, weights: toSimplex(c.weights) }))
            }}
          />
        </div>
        {FEATURES.map((k) => (
          <Slider
            key={k}
            label={LABEL[k]}
            swatch={FEATURE_COLORS[k]}
            value={config.weights[k]}
            min={0}
            max={1}
            step={0.01}
            format={fmtWeight}
            inputRef={bind[k]}
            onChange={(v) => update((c) => ({ ...c, weights: moveWeight(c.weights, k, v, simplex) }))}
          />
        ))}
        <div className="small muted">
          Σ = <span ref={sigma} />
          {config.fusion.method === 'rrf' && config.mode === 'hybrid' ? ' · hybrid RRF: similarity/lexical weight the arms’ rank terms' : ''}
        </div>
      </section>
    )
  },
  (a, b) => a.update === b.update && a.followers === b.followers && (['weights', 'fusion', 'mode'] as const).every((k) => a.config[k] === b.config[k]),
)

const RecencySection = memo(
  function RecencySection({ config, update, now }: SectionProps & { now: number }) {
    return (
      <section aria-label="Recency">
        <h4>Recency</h4>
        <Slider
          label="Half-life"
          value={halfLifeToPos(config.recency.halfLifeHours)}
          min={0}
          max={1000}
          step={1}
          // The config's own half-life at its position (positions are rounded), else the one a move to `pos` sets.
          format={(pos) => fmtHours(pos === halfLifeToPos(config.recency.halfLifeHours) ? config.recency.halfLifeHours : Math.max(1, posToHalfLife(pos)))}
          hint="recency = 0.5 ^ (age / half-life)"
          onChange={(pos) => update((c) => ({ ...c, recency: { ...c.recency, halfLifeHours: Math.max(1, posToHalfLife(pos)) } }))}
        />
        <Select
          label="Age from"
          value={config.recency.from}
          options={[
            { value: 'last_used', label: 'last use (created if never)' },
            { value: 'created', label: 'creation' },
          ]}
          onChange={(v) => update((c) => ({ ...c, recency: { ...c.recency, from: v } }))}
        />
        <DecayChart scope={config.scope} now={now} from={config.recency.from} halfLifeHours={config.recency.halfLifeHours} />
      </section>
    )
  },
  (a, b) => a.update === b.update && a.now === b.now && a.config.recency === b.config.recency && a.config.scope === b.config.scope,
)

const GatesSection = memoOn(
  ['floor', 'minSimilarity', 'topK', 'tokenBudget', 'gateOrder', 'tokenEstimator', 'overflow', 'atLeastOne'],
  function GatesSection({ config, update }: SectionProps) {
    const set = setter(update)
    return (
      <section aria-label="Gates">
        <h4>Gates</h4>
        <OptionalSlider
          label="Floor"
          hint="Drop candidates whose composite score is below this"
          value={config.floor}
          offValue={0.35}
          min={0}
          max={1}
          step={0.01}
          format={(v) => v.toFixed(2)}
          onChange={(v) => set('floor', v)}
        />
        <OptionalSlider
          label="Min similarity"
          hint="Drop candidates whose cosine similarity is below this (before scoring gates)"
          value={config.minSimilarity}
          offValue={0.5}
          min={-1}
          max={1}
          step={0.01}
          format={(v) => v.toFixed(2)}
          onChange={(v) => set('minSimilarity', v)}
        />
        <Slider label="topK" value={config.topK} min={0} max={50} step={1} onChange={(v) => set('topK', v)} />
        <OptionalSlider
          label="Token budget"
          value={config.tokenBudget}
          offValue={2000}
          min={0}
          max={8000}
          step={50}
          format={(v) => `${v}`}
          onChange={(v) => set('tokenBudget', v === null ? null : Math.round(v))}
        />
        <div className="grid-controls">
          <Select
            label="Gate order"
            value={config.gateOrder}
            options={[
              { value: 'floor-then-topk', label: 'floor → topK' },
              { value: 'topk-then-floor', label: 'topK → floor' },
            ]}
            onChange={(v) => set('gateOrder', v)}
          />
          <Select
            label="Estimator"
            value={config.tokenEstimator}
            options={[
              { value: 'ceil4', label: 'ceil(len/4)' },
              { value: 'neo', label: '(bytes+3)/4' },
            ]}
            onChange={(v) => set('tokenEstimator', v)}
          />
          <Select label="Overflow" value={config.overflow} options={['stop', 'skip'] as const} onChange={(v) => set('overflow', v)} />
          <Toggle label="at least one" checked={config.atLeastOne} onChange={(v) => set('atLeastOne', v)} />
        </div>
      </section>
    )
  },
)

const CandidatesSection = memoOn(['mode', 'unit', 'candidatePool', 'fusion', 'normalize'], function CandidatesSection({ config, update }: SectionProps) {
  const set = setter(update)
  return (
    <section aria-label="Candidates">
      <h4>Candidates</h4>
      <div className="grid-controls">
        <Select
          label="Mode"
          value={config.mode}
          options={['hybrid', 'dense', 'lexical', 'recency', 'session'] as const}
          onChange={(v) => update((c) => ({ ...c, mode: v, weights: weightsForMode(c.weights, v) }))}
        />
        <Select
          label="Unit"
          value={config.unit}
          options={[
            { value: 'memory', label: 'memories' },
            { value: 'session', label: 'sessions (summary vectors)' },
          ]}
          onChange={(v) => set('unit', v)}
        />
        <NumberInput
          label="Pool"
          value={config.candidatePool}
          min={1}
          max={100000}
          onChange={(v) => set('candidatePool', v)}
          hint="Wide net: candidates per arm"
        />
        <Select
          label="Fusion"
          value={config.fusion.method}
          options={[
            { value: 'rrf', label: 'RRF' },
            { value: 'weighted', label: 'weighted sum' },
          ]}
          onChange={(v) => update((c) => ({ ...c, fusion: { ...c.fusion, method: v } }))}
        />
        <NumberInput
          label="RRF k"
          value={config.fusion.rrfK}
          min={0}
          max={1000}
          onChange={(v) => update((c) => ({ ...c, fusion: { ...c.fusion, rrfK: v } }))}
        />
        <Select
          label="Normalise"
          value={config.normalize}
          options={[
            { value: 'none', label: 'none' },
            { value: 'minmax', label: 'min-max per query' },
          ]}
          onChange={(v) => set('normalize', v)}
        />
      </div>
    </section>
  )
})

const OutputSection = memoOn(
  ['template', 'refreshOnRecall', 'useSessionSummaries', 'keywordFallback'],
  function OutputSection({ config, update }: SectionProps) {
    const set = setter(update)
    return (
      <section aria-label="Output">
        <h4>Output</h4>
        <div className="grid-controls">
          <Select
            label="Template"
            value={config.template}
            options={['plain', 'portal-episodic', 'portal-semantic', 'engram', 'fieldguide', 'neo'] as const}
            onChange={(v) => set('template', v)}
          />
          <Toggle
            label="refresh on recall"
            hint="Simulate last_used_at = now for injected memories (seed 003); never written without write mode"
            checked={config.refreshOnRecall}
            onChange={(v) => set('refreshOnRecall', v)}
          />
          <Toggle label="session summaries" checked={config.useSessionSummaries} onChange={(v) => set('useSessionSummaries', v)} />
          <Toggle
            label="keyword fallback"
            hint="Engram: with no embedder, match words longer than 2 chars, newest first"
            checked={config.keywordFallback}
            onChange={(v) => set('keywordFallback', v)}
          />
        </div>
      </section>
    )
  },
)

const JsonSection = memo(function JsonSection({ getConfig, update }: { getConfig: () => RecallConfig; update: (u: ConfigUpdate) => void }) {
  const [showJson, setShowJson] = useState(false)
  return (
    <section aria-label="Config JSON">
      <div className="sec-head">
        <h4>Config JSON</h4>
        <button className="btn small" onClick={() => void navigator.clipboard?.writeText(JSON.stringify(getConfig(), null, 2))}>
          Copy
        </button>
        <button className="btn small" onClick={() => setShowJson((v) => !v)} aria-expanded={showJson}>
          {showJson ? 'Hide' : 'Show / edit'}
        </button>
      </div>
      {showJson && <JsonEditor getConfig={getConfig} update={update} />}
    </section>
  )
})

function JsonEditor({ getConfig, update }: { getConfig: () => RecallConfig; update: (u: ConfigUpdate) => void }) {
  const [text, setText] = useState(() => JSON.stringify(getConfig(), null, 2))
  const [error, setError] = useState<string | null>(null)
  return (
    <div>
      <textarea className="input mono" aria-label="Config JSON" rows={14} style={{ width: '100%' }} value={text} onChange={(e) => setText(e.target.value)} />
      <div className="row">
        <button
          className="btn small"
          onClick={() => {
            let raw: unknown
            try {
              raw = JSON.parse(text)
            } catch (e) {
              return setError(`Not JSON: ${(e as Error).message}`)
            }
            // The same schema main validates with: a partial config is merged over the current one.
            const parsed = partialConfigSchema.safeParse(raw)
            if (!parsed.success) return setError(describeIssues(parsed.error, '(config)'))
            setError(null)
            update((c) => mergeConfig(c, parsed.data))
          }}
        >
          Apply JSON
        </button>
        {error && <span className="error small">{error}</span>}
      </div>
    </div>
  )
}
