import { describe, expect, it, vi } from 'vitest'
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import type { EvalRunSummary, RunComparison, TuneHeatmap, TuneReport } from '../../../../shared/eval'
import { getPreset } from '../../../../shared/presets'

import { Heatmap, heatColor } from './Heatmap'
import { CompareSummary, verdict } from './CompareTab'
import { CaseFromRecallButton } from './CaseFromRecall'
import { TuneResults } from './TuneTab'
import { mergeOverrides } from './settings'
import { MetricHistoryChart } from './Charts'
import { withFakeBridge } from '../../test/withFakeBridge'

/** main's answers over a fake preload bridge (test/fakeBridge.ts) */
function answer(channel: string, input: { case: object }): unknown {
  if (channel === 'cases.save') return { id: 'case-new', ...input.case }
  throw new Error(`unexpected ${channel}`)
}

const bridge = withFakeBridge(answer)

function heatmap(steps: number): TuneHeatmap {
  const cells: TuneHeatmap['cells'] = []
  const mass = 0.8
  for (let i = 0; i <= steps; i++)
    for (let j = 0; j <= steps - i; j++) {
      const l = steps - i - j
      // value = the first axis's weight: the top corner is best
      cells.push({ w: [(mass * i) / steps, (mass * j) / steps, (mass * l) / steps], value: i / steps })
    }
  return { axes: ['similarity', 'lexical', 'recency'], fixed: { feature: 'salience', weight: 0.2 }, steps, cells, min: 0, max: 1 }
}

describe('Heatmap', () => {
  it('draws steps² small triangles, the best marker and the three axes', () => {
    const { container } = render(<Heatmap map={heatmap(6)} best={{ similarity: 0.6, lexical: 0.1, recency: 0.1, salience: 0.2 }} metric="ndcg@10" />)
    // A triangle cut into 6 per edge holds 6² = 36 small triangles (21 up + 15 down).
    expect(container.querySelectorAll('polygon')).toHaveLength(36)
    expect(screen.getByTestId('heatmap-best')).toBeInTheDocument()
    for (const a of ['similarity', 'lexical', 'recency']) expect(screen.getByText(a)).toBeInTheDocument()
    expect(screen.getByText(/salience held at 0\.20/)).toBeInTheDocument()
    // The cell at the top corner has the highest value and the brightest colour.
    const polys = [...container.querySelectorAll('polygon')]
    const top = polys.reduce((a, b) => (Number(b.getAttribute('data-value')) > Number(a.getAttribute('data-value')) ? b : a))
    expect(top.getAttribute('fill')).toBe(heatColor(Number(top.getAttribute('data-value'))))
    expect(heatColor(1)).toBe('rgb(253, 231, 37)')
    expect(heatColor(0)).toBe('rgb(68, 1, 84)')
  })

  it('says so instead of drawing when the fixed weight takes all the mass', () => {
    render(<Heatmap map={{ ...heatmap(4), fixed: { feature: 'salience', weight: 1 } }} best={{ salience: 1 }} metric="mrr" />)
    expect(screen.getByText(/all weight on salience/)).toBeInTheDocument()
  })
})

function summary(id: string, name: string): EvalRunSummary {
  return {
    id,
    createdAt: 0,
    name,
    preset: 'fieldguide',
    config: getPreset('fieldguide').config,
    embedder: { name: 'hashing', model: 'hashing-256', available: true },
    warnings: [],
    k: 10,
    split: 'all',
    budget: 2000,
    metrics: { 'ndcg@10': 0.4 },
    counts: { cases: 100, graded: 100, expectEmpty: 0, unjudged: 0, degraded: 0 },
    source: 'ui',
    timings: { gatherMs: 0, scoreMs: 0, totalMs: 0 },
  }
}

describe('CompareSummary', () => {
  const v = (over: Partial<RunComparison['vsBaseline'][number]>): RunComparison['vsBaseline'][number] => ({
    run: 1,
    cases: 100,
    mean: 0.45,
    baselineMean: 0.4,
    delta: 0.05,
    deltaCI: { lo: 0.02, hi: 0.08 },
    wins: 30,
    losses: 10,
    ties: 60,
    p: 0.002,
    jaccard: 0.7,
    rbo: 0.8,
    metrics: {},
    ...over,
  })

  it('shows wins / losses / ties and says a difference is unlikely to be chance only when the interval excludes 0', () => {
    const cmp: RunComparison = { metric: 'ndcg@10', k: 10, runs: [summary('a', 'base run'), summary('b', 'candidate')], vsBaseline: [v({})], perCase: [] }
    render(<CompareSummary cmp={cmp} />)
    const row = screen.getByRole('table', { name: 'Comparison summary' }).querySelector('tr[data-run="b"]') as HTMLElement
    const cells = within(row)
      .getAllByRole('cell')
      .map((c) => c.textContent)
    expect(cells.slice(0, 8)).toEqual(['candidate', '100', '0.450', '+0.0500', '+0.0200 … +0.0800', '30', '10', '60'])
    expect(screen.getByText(/candidate beats the baseline on ndcg@10 by \+0\.0500/)).toHaveTextContent(/unlikely to be chance/)
    expect(verdict('ndcg@10', 'x', v({ deltaCI: { lo: -0.01, hi: 0.1 }, p: 0.2 }))).toMatch(/within noise/)
    expect(verdict('ndcg@10', 'x', v({ delta: -0.03, deltaCI: { lo: -0.05, hi: -0.01 } }))).toMatch(/^x trails the baseline/)
    // lower-is-better: fewer tokens is the better direction
    expect(verdict('tokens', 'x', v({ delta: -20, deltaCI: { lo: -30, hi: -10 } }))).toMatch(/^x beats/)
  })
})

describe('CaseFromRecallButton', () => {
  it('grades the recalled memories and saves a case through cases.save', async () => {
    const onSaved = vi.fn()
    render(
      <CaseFromRecallButton
        query="where is the staging config?"
        scope={{ agentId: 'agent-coder', userId: '' }}
        now={1_700_000_000_000}
        results={[
          { id: 'm1', content: 'staging config lives in deploy/staging.yaml' },
          { id: 'm2', content: 'lunch order' },
          { id: 'm3', content: 'staging uses the eu-west cluster' },
        ]}
        onSaved={onSaved}
      />,
    )
    fireEvent.click(screen.getByRole('button', { name: 'Save as eval case' }))
    const dialog = screen.getByRole('dialog', { name: 'New eval case' })
    fireEvent.click(within(within(dialog).getByRole('group', { name: 'Grade for m1' })).getByRole('button', { name: '3' }))
    fireEvent.click(within(within(dialog).getByRole('group', { name: 'Grade for m3' })).getByRole('button', { name: '1' }))
    fireEvent.change(within(dialog).getByPlaceholderText('billing, regression'), { target: { value: 'staging, infra' } })
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save case' }))
    await waitFor(() => expect(onSaved).toHaveBeenCalled())
    // The dialog is the Cases tab's editor, which also reads the facets: the save is what is checked here.
    expect(bridge.calls.filter((c) => c.channel === 'cases.save')).toEqual([
      {
        channel: 'cases.save',
        input: {
          case: {
            name: 'where is the staging config?',
            query: 'where is the staging config?',
            cue: null,
            scope: { agentId: 'agent-coder' },
            now: 1_700_000_000_000,
            relevant: [
              { id: 'm1', grade: 3 },
              { id: 'm3', grade: 1 },
            ],
            expectEmpty: false,
            tags: ['staging', 'infra'],
          },
        },
      },
    ])
  })

  it('an expect-empty case saves no relevant ids and disables grading', async () => {
    render(<CaseFromRecallButton query="what's the weather on mars" scope={{}} now={null} results={[{ id: 'm1', content: 'x' }]} />)
    fireEvent.click(screen.getByRole('button', { name: 'Save as eval case' }))
    const dialog = screen.getByRole('dialog')
    fireEvent.click(within(within(dialog).getByRole('group', { name: 'Grade for m1' })).getByRole('button', { name: '2' }))
    fireEvent.click(within(dialog).getByLabelText(/Nothing should be recalled/))
    expect(within(within(dialog).getByRole('group', { name: 'Grade for m1' })).getByRole('button', { name: '2' })).toBeDisabled()
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save case' }))
    const saves = () => bridge.calls.filter((c) => c.channel === 'cases.save')
    await waitFor(() => expect(saves()).toHaveLength(1))
    expect((saves()[0].input as { case: { relevant: unknown[]; expectEmpty: boolean } }).case).toMatchObject({ relevant: [], expectEmpty: true })
  })
})

describe('TuneResults', () => {
  const cfg = getPreset('fieldguide').config
  const lexCfg = { ...cfg, mode: 'lexical' as const, weights: { similarity: 0, lexical: 1, recency: 0, salience: 0 }, floor: null, topK: 10 }
  const lexical = (test: number, delta: number, lo: number, hi: number): TuneReport['baselines'][number] => ({
    name: 'lexical-bm25',
    label: 'Lexical only (BM25)',
    kind: 'lexical',
    config: lexCfg,
    train: 0.5,
    test,
    testCI: { lo: test - 0.04, hi: test + 0.04 },
    testTokens: 300,
    delta,
    deltaCI: { lo, hi },
    verdict: lo > 0 ? 'tuned-better' : hi < 0 ? 'baseline-better' : 'within-noise',
    note: null,
  })
  const report = (train: number, test: number, baselines: TuneReport['baselines'] = [], recommended?: TuneReport['recommended']): TuneReport => ({
    metric: 'recall@10',
    k: 10,
    trials: 500,
    budget: 500,
    cancelled: false,
    seed: 1,
    space: { weights: true, halfLife: true, floor: true, topK: true, fusion: true, maxTopK: 20 },
    split: { rule: 'group', by: 'conversation (scope.agentId)', train: 60, test: 40, trainGroups: ['conv-1', 'conv-2'], testGroups: ['conv-3'] },
    pinned: ['fusion'],
    searched: { mode: 'dense / lexical / hybrid' },
    baselines,
    ranking: [],
    recommended: recommended ?? { name: 'tuned', label: 'Tuned config', config: { ...cfg, topK: 9 }, message: 'The tuned config beats every baseline.' },
    base: { config: cfg, train: 0.3, test: 0.31, trainTokens: 200, testTokens: 210 },
    best: {
      config: { ...cfg, topK: 9 },
      params: {
        weights: { similarity: 0.5, lexical: 0.3, recency: 0.2, salience: 0 },
        halfLifeHours: 48,
        floor: null,
        topK: 9,
        fusion: { method: 'rrf', rrfK: 60 },
      },
      train,
      test,
      trainTokens: 150,
      testTokens: 160,
      trainMetrics: {},
      testMetrics: {},
      testCI: { lo: test - 0.05, hi: test + 0.05 },
    },
    top: [],
    curve: [
      { trial: 0, best: 0.3, value: 0.3 },
      { trial: 1, best: train, value: train },
    ],
    heatmap: null,
    embedder: { name: 'hashing', model: 'hashing-256', available: true },
    timings: { gatherMs: 10, searchMs: 100, totalMs: 120, configsPerSec: 5000 },
  })

  it('puts train and held-out test side by side, flags an overfit, and applies the best config', () => {
    const onApply = vi.fn()
    render(<TuneResults report={report(0.52, 0.4)} onApply={onApply} />)
    const t = screen.getByRole('table', { name: 'Train and test scores' })
    expect(within(t).getAllByRole('row')[1].textContent).toMatch(/tuned config0\.5200\.400/)
    expect(screen.getByText(/Train beats test by 0\.120/)).toBeInTheDocument()
    expect(screen.getByText(/improves recall@10 by/)).toHaveTextContent('+0.0900')
    expect(screen.getByTestId('tune-split').textContent).toMatch(
      /Split by conversation \(scope\.agentId\): train conv-1, conv-2 · held out conv-3\. Held fixed: fusion\./,
    )
    expect(screen.getByLabelText('Recommended config JSON').textContent).toBe(JSON.stringify({ ...cfg, topK: 9 }, null, 2))
    fireEvent.click(screen.getByRole('button', { name: 'Apply this config' }))
    expect(onApply).toHaveBeenCalledWith({ ...cfg, topK: 9 }, expect.objectContaining({ metric: 'recall@10' }))
  })

  it('says which filter hid the judged memories and that the search ran on the widened scope', () => {
    const message =
      'The start scope reaches 0 of 12 judged-relevant memories: kinds=[semantic] excludes 12. Widen to kinds=[semantic, episodic] so the search and the baselines can reach them.'
    const scope = {
      relevant: 12,
      reachable: 0,
      missing: 0,
      minority: true,
      excludedBy: [{ filter: 'kinds' as const, value: 'kinds=[semantic]', excludes: 12 }],
      widened: cfg,
      widenPatch: { scope: { kinds: ['semantic', 'episodic'] } },
      widenLabel: 'kinds=[semantic, episodic]',
      message,
      applied: true,
    }
    render(<TuneResults report={{ ...report(0.52, 0.4), scope }} onApply={() => undefined} />)
    expect(screen.getByTestId('tune-scope-report').textContent).toBe(
      `${message} Searched on the widened scope (kinds=[semantic, episodic]); the start baseline keeps your scope.`,
    )
  })

  it('mergeOverrides merges the widening into the overrides text: objects key by key, lists replaced', () => {
    const text = JSON.stringify({ topK: 9, scope: { agentId: 'a', kinds: ['semantic'] } })
    expect(JSON.parse(mergeOverrides(text, { unit: 'memory', scope: { kinds: ['semantic', 'episodic'] } }))).toEqual({
      topK: 9,
      unit: 'memory',
      scope: { agentId: 'a', kinds: ['semantic', 'episodic'] },
    })
    expect(JSON.parse(mergeOverrides('', { unit: 'memory' }))).toEqual({ unit: 'memory' })
    expect(JSON.parse(mergeOverrides('{not json', { unit: 'memory' }))).toEqual({ unit: 'memory' })
  })

  it('a baseline that beat the tuned config held out is said plainly, ranked, and offered as the config to apply', () => {
    const onApply = vi.fn()
    const b = lexical(0.47, -0.07, -0.11, -0.03)
    const msg = 'Baseline "Lexical only (BM25)" beats the tuned config on the 40 held-out cases.'
    render(<TuneResults report={report(0.52, 0.4, [b], { name: b.name, label: b.label, config: lexCfg, message: msg })} onApply={onApply} />)
    expect(screen.getByTestId('tune-verdict').textContent).toBe(msg)
    const row = within(screen.getByRole('table', { name: 'Train and test scores' }))
      .getByText('Lexical only (BM25)')
      .closest('tr')!
    expect(row.textContent).toMatch(/0\.500.*0\.470.*-0\.0700 \(-0\.110 – -0\.030\)baseline better/)
    expect(screen.getByLabelText('Recommended config JSON').textContent).toBe(JSON.stringify(lexCfg, null, 2))
    fireEvent.click(screen.getByRole('button', { name: 'Apply this config' }))
    expect(onApply).toHaveBeenCalledWith(lexCfg, expect.anything())
  })

  it('no overfit note when test holds up', () => {
    render(<TuneResults report={report(0.42, 0.41)} onApply={() => undefined} />)
    expect(screen.queryByText(/Train beats test/)).toBeNull()
  })
})

describe('MetricHistoryChart', () => {
  it('charts the runs that have the metric, and says when none has', () => {
    const runs = [summary('a', 'one'), { ...summary('b', 'two'), createdAt: 5, metrics: { 'ndcg@10': 0.5 } }]
    render(<MetricHistoryChart runs={runs} metric="ndcg@10" />)
    expect(screen.getByRole('img', { name: 'ndcg@10 over runs' })).toBeInTheDocument()
    render(<MetricHistoryChart runs={runs} metric="mrr" />)
    expect(screen.getByText('No run has mrr yet.')).toBeInTheDocument()
  })
})
