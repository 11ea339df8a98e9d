/**
 * What one weight step re-renders on the whole Recall screen (docs/internals/performance.md, "Recall sliders"):
 * the weight sliders, the list rows and the summary numbers; not the request panel, the saved configs, the
 * other config sections or the context preview when the injected block did not change. Counted renders, not
 * timings: a prop made unstable again (an inline callback, an object rebuilt per render) fails here.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react'
import { memo, type ComponentProps } from 'react'
import type { CandidateRaw, RecallConfig, RecallTrace, UnitInfo } from '../../../../shared/types'
import { PRESETS, getPreset } from '../../../../shared/presets'
import { rerank } from '../../../../shared/scoring'
import { renderResults } from '../../../../shared/render'
import { AppContext, type AppState } from '../../app/context'
import { unitInfo } from '../../test/unitInfo'

/** Renders per component (or per control label) since the last reset. */
const renders = vi.hoisted(() => new Map<string, number>())
const count = (k: string) => renders.set(k, (renders.get(k) ?? 0) + 1)

const DAY = 86_400_000
const NOW = Date.UTC(2026, 0, 10)
// 40 candidates whose order depends on the recency weight: similarity falls with i, age falls with i too.
const cands: CandidateRaw[] = Array.from({ length: 40 }, (_, i) => ({
  id: `m${i}`,
  similarity: 0.9 - i / 100,
  lexical: 0,
  bm25: null,
  ageLastUsedMs: (40 - i) * DAY,
  ageCreatedMs: (40 - i) * DAY,
  salience: 0.5,
  denseRank: i + 1,
  lexicalRank: null,
  recencyRank: 40 - i,
  textLength: 40,
}))
const units: Record<string, UnitInfo> = Object.fromEntries(cands.map((c) => [c.id, unitInfo(c.id, NOW - c.ageCreatedMs)]))

/** The trace the engine would return for `config`: scored by the shared scorer, as main does. */
function traceFor(config: RecallConfig): RecallTrace {
  const r = rerank(cands, config, 'dense')
  const ctx = renderResults(r.results, { candidates: cands, units, mode: 'dense' }, config)
  const arm = (ran: boolean) => ({ ran, fetched: ran ? cands.length : 0, exhausted: ran, reason: ran ? null : 'off in this test' })
  return {
    query: 'q',
    cue: null,
    now: NOW,
    preset: 'fieldguide',
    config,
    embedder: { name: 'hashing', model: null, available: true },
    degraded: false,
    degradedReason: null,
    results: r.results,
    dropped: r.dropped,
    context: ctx.text,
    contextTokens: ctx.tokens,
    candidates: cands,
    units,
    refreshed: [],
    counts: { inScope: 40, dense: 40, lexical: 0, pool: 40 },
    timings: { totalMs: 3, embedMs: 0, denseMs: 1, lexicalMs: 0, scoreMs: 1 },
    mode: 'dense',
    unit: 'memory',
    arms: { dense: arm(true), lexical: arm(false), recency: arm(false), order: arm(false) },
    injectedTokens: r.injectedTokens,
  }
}

vi.mock('../../lib/api', () => ({
  call: vi.fn(async (channel: string, input: { config?: RecallConfig }) => {
    switch (channel) {
      case 'recall.presets':
        return PRESETS
      case 'embed.status':
        return { state: 'ok', spec: 'hashing', model: 'hashing-256', storedVectors: 40 }
      case 'memories.facets':
        return { agents: [], users: [], kinds: ['semantic'], tiers: [], roles: [], timeRange: { min: NOW - 40 * DAY, max: NOW } }
      case 'recall.run':
        return traceFor(input.config!)
      case 'recall.ages':
        return { now: NOW, from: 'last_used', binMs: DAY, bins: [{ startMs: 0, endMs: 40 * DAY, count: 40 }], total: 40, neverUsed: 40 }
      case 'configs.list':
        return { configs: [], unreadable: [] }
      default:
        throw new Error(`not in this test: ${channel}`)
    }
  }),
  bridge: { onJobProgress: () => () => undefined },
}))

// Every control counts its renders under its label; the panels count theirs behind the same memo the real ones
// have (a counted render is one the real component's memo would not have skipped).
vi.mock('../../components/controls', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../components/controls')>()
  return {
    ...m,
    Slider: (p: ComponentProps<typeof m.Slider>) => (count(`slider ${p.label}`), m.Slider(p)),
    OptionalSlider: (p: ComponentProps<typeof m.OptionalSlider>) => (count(`slider ${p.label}`), m.OptionalSlider(p)),
    Select: (p: ComponentProps<typeof m.Select>) => (count(`select ${p.label}`), m.Select(p)),
    Toggle: (p: ComponentProps<typeof m.Toggle>) => (count(`toggle ${p.label}`), m.Toggle(p)),
    NumberInput: (p: ComponentProps<typeof m.NumberInput>) => (count(`number ${p.label}`), m.NumberInput(p)),
  }
})
vi.mock('./RequestPanel', async (importOriginal) => {
  const m = await importOriginal<typeof import('./RequestPanel')>()
  const Real = m.RequestPanel
  return { ...m, RequestPanel: memo((p: ComponentProps<typeof Real>) => (count('RequestPanel'), (<Real {...p} />))) }
})
vi.mock('./SavedConfigs', async (importOriginal) => {
  const m = await importOriginal<typeof import('./SavedConfigs')>()
  const Real = m.SavedConfigs
  return { ...m, SavedConfigs: memo((p: ComponentProps<typeof Real>) => (count('SavedConfigs'), (<Real {...p} />))) }
})

import { RecallView } from './RecallView'

afterEach(() => {
  cleanup()
  vi.unstubAllGlobals()
})

/** How long to wait for the screen's first query to show: its first render loads the screen's modules (16–20 s at load 25). */
const FIRST_QUERY_WAIT_MS = 45_000

function app(): AppState {
  return {
    db: null,
    setDb: () => undefined,
    nav: { route: 'recall', params: { query: 'q', preset: 'fieldguide', now: String(NOW) } },
    navigate: () => undefined,
    setParams: () => undefined,
    dbVersion: 0,
  }
}

describe('a weight step on the Recall screen', { timeout: 60_000 }, () => {
  it('re-renders the weights and the rows, and leaves the other panels and sections alone', async () => {
    // Frames on demand: the step is applied in the frame after the input (useFrameCoalesced).
    const frames: FrameRequestCallback[] = []
    vi.stubGlobal('requestAnimationFrame', (f: FrameRequestCallback) => frames.push(f))
    vi.stubGlobal('cancelAnimationFrame', () => undefined)
    const state = app()
    render(
      <AppContext.Provider value={state}>
        <RecallView />
      </AppContext.Provider>,
    )
    // The query runs 300 ms after the screen opens; then the list shows the trace's ranking (a wait, not a measure).
    await screen.findByText(/query \d+ ms/, undefined, { timeout: FIRST_QUERY_WAIT_MS })
    const slider = screen.getByRole<HTMLInputElement>('slider', { name: 'Recency' })
    const order = () => [...document.querySelectorAll('.result')].map((e) => e.getAttribute('data-id'))
    const before = order()
    expect(before.length).toBeGreaterThan(10)

    renders.clear()
    fireEvent.change(slider, { target: { value: '0.9' } })
    // Nothing re-renders until the frame.
    expect([...renders.keys()]).toEqual([])
    act(() => frames.splice(0).forEach((f) => f(performance.now())))

    // The step was applied: re-ranked locally, in the order the shared scorer gives for the moved weights.
    expect(screen.getByTestId('rerank-status').textContent).toMatch(/re-ranked locally/)
    const fg = getPreset('fieldguide').config
    // No new query: the step re-ranked the first query's candidates.
    const { call } = await import('../../lib/api')
    expect(vi.mocked(call).mock.calls.filter(([ch]) => ch === 'recall.run')).toHaveLength(1)
    expect(Number(slider.value)).toBeCloseTo(0.9, 9)
    const weights = Object.fromEntries(
      (['Similarity', 'Lexical', 'Recency', 'Salience'] as const).map((l) => [l, Number(screen.getByRole<HTMLInputElement>('slider', { name: l }).value)]),
    )
    const expected = rerank(
      cands,
      { ...fg, weights: { similarity: weights.Similarity, lexical: weights.Lexical, recency: weights.Recency, salience: weights.Salience } },
      'dense',
    )
    const expectedOrder = [...expected.results.map((r) => ({ id: r.id, s: r.score })), ...expected.dropped.map((d) => ({ id: d.id, s: d.score }))]
      .sort((a, b) => b.s - a.s)
      .map((x) => x.id)
    expect(order()).toEqual(expectedOrder)
    expect(order()).not.toEqual(before)

    // What a weight step must re-render: the weights section (its four sliders, on the simplex all four move, and
    // its simplex toggle), once each.
    const weightsSection = ['slider Similarity', 'slider Lexical', 'slider Recency', 'slider Salience', 'toggle on the simplex']
    for (const k of weightsSection) expect(renders.get(k), k).toBe(1)
    // What it must not: the request panel, the saved configs, and every control of the other config sections.
    expect([...renders.keys()].filter((k) => !weightsSection.includes(k))).toEqual([])
  })

  it('applies two edits made within one frame, both of them', async () => {
    const frames: FrameRequestCallback[] = []
    vi.stubGlobal('requestAnimationFrame', (f: FrameRequestCallback) => frames.push(f))
    vi.stubGlobal('cancelAnimationFrame', () => undefined)
    render(
      <AppContext.Provider value={app()}>
        <RecallView />
      </AppContext.Provider>,
    )
    await screen.findByText(/query \d+ ms/, undefined, { timeout: FIRST_QUERY_WAIT_MS })
    fireEvent.change(screen.getByRole('slider', { name: 'Recency' }), { target: { value: '0.9' } })
    fireEvent.change(screen.getByRole('slider', { name: 'topK' }), { target: { value: '3' } })
    expect(frames).toHaveLength(1)
    act(() => frames.splice(0).forEach((f) => f(performance.now())))
    expect(Number(screen.getByRole<HTMLInputElement>('slider', { name: 'Recency' }).value)).toBeCloseTo(0.9, 9)
    expect(screen.getByRole<HTMLInputElement>('slider', { name: 'topK' }).value).toBe('3')
    expect(document.querySelectorAll('.result[data-gate="kept"]').length).toBeLessThanOrEqual(3)
  })
})
