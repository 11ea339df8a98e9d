/**
 * What one weight step re-renders on the whole Recall screen (docs/internals/performance.md, "Recall sliders"):
 * the weight sliders, the list rows and the summary numbers; not the request panel, the saved configs, the
 * other config sections or the context preview when the injected block did not change. Counted renders, not
 * timings: a prop made unstable again (an inline callback, an object rebuilt per render) fails here.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react'
import type { CandidateRaw } from '../../../../shared/types'
import { getPreset } from '../../../../shared/presets'
import { rerank } from '../../../../shared/scoring'
import { AppContext } from '../../app/context'
import { installFakeBridge, type FakeBridge } from '../../test/fakeBridge'
import { FIRST_QUERY_WAIT_MS, recallAnswers, recallApp } from '../../test/recallAnswers'
import { countRenders, type Fiber } from '../../test/reactCommits'
import { NumberInput, OptionalSlider, Select, Slider, Toggle } from '../../components/controls'
import { RequestPanel } from './RequestPanel'
import { SavedConfigs } from './SavedConfigs'
import { RecallView } from './RecallView'

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
/** main's answers over a fake preload bridge (test/fakeBridge.ts) */
const answer = recallAnswers(cands, NOW)

/** What each control counts as: its kind and label (`slider Recency`). */
const CONTROLS = new Map<unknown, string>([
  [Slider, 'slider'],
  [OptionalSlider, 'slider'],
  [Select, 'select'],
  [Toggle, 'toggle'],
  [NumberInput, 'number'],
])
/** The panels, by the component inside their memo: a counted render is one their memo did not skip. */
const PANELS = new Map<unknown, string>([
  [(RequestPanel as unknown as { type: unknown }).type, 'RequestPanel'],
  [(SavedConfigs as unknown as { type: unknown }).type, 'SavedConfigs'],
])
/** Every control counts its renders under its label, the panels under their names; nothing else is counted. */
function renderKey(f: Fiber): string | null {
  const control = CONTROLS.get(f.type)
  if (control) return `${control} ${String(f.memoizedProps?.label)}`
  return PANELS.get(f.type) ?? null
}

/** Renders per component (or per control label) since the test's last `clear`. */
let renders: Map<string, number>
let stopCounting: () => void
let bridge: FakeBridge
beforeEach(() => {
  bridge = installFakeBridge(answer)
  const counting = countRenders(renderKey)
  renders = counting.counts
  stopCounting = counting.stop
})

afterEach(() => {
  stopCounting()
  cleanup()
  bridge.uninstall()
  vi.unstubAllGlobals()
})

const app = () => recallApp(NOW)

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
    expect(bridge.calls.filter((c) => c.channel === 'recall.run')).toHaveLength(1)
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
