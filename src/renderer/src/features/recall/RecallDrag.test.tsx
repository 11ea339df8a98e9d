/**
 * A held slider's steps are shown without a render of the screen (dragFastPath.ts; docs/internals/performance.md,
 * "Round 5: a held slider without React"). What the screen shows after each such step must be what the screen shows when the same edits go
 * through React's state (the path every edit took before, and still takes without a held slider): two screens
 * over the same trace take the same random sequence of slider moves, one with the slider held (pointer down), one
 * without, and after every frame their lists, summary numbers and sliders are compared; at release the held
 * one's panels that waited (the context block) catch up.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { act, cleanup, fireEvent, render, waitFor, within } from '@testing-library/react'
import type { CandidateRaw } from '../../../../shared/types'
import { useMemo, useState } from 'react'
import { AppContext } from '../../app/context'
import { installFakeBridge, type FakeBridge } from '../../test/fakeBridge'
import { FIRST_QUERY_WAIT_MS, recallAnswers, recallApp } from '../../test/recallAnswers'
import { mulberry32 } from '../../../../shared/random'
import { RecallView } from './RecallView'

/**
 * The drag's rest (DRAG_REST_MS: a drag held still that long sets React's state) under the tests' control. It is
 * wall-clock time: on a busy machine (CI) 400 ms can pass while a test awaits a render, and the rest would settle a
 * drag the test expects still held. Each screen reads it when made; the rest's own test sets a short one.
 */
const timing = vi.hoisted(() => ({ restMs: 3_600_000 }))
vi.mock('./dragTiming', async (original) => ({
  ...(await original<typeof import('./dragTiming')>()),
  get DRAG_REST_MS() {
    return timing.restMs
  },
}))

const DAY = 86_400_000
const NOW = Date.UTC(2026, 0, 10)
// 200 candidates (a virtualised list) with random features (seeded), so every weight step reorders them.
const N = 200
const rnd0 = mulberry32(11)
const cands: CandidateRaw[] = Array.from({ length: N }, (_, i) => ({
  id: `m${i}`,
  similarity: rnd0(),
  lexical: 0,
  bm25: null,
  ageLastUsedMs: Math.floor(rnd0() * 40) * DAY,
  ageCreatedMs: Math.floor(rnd0() * 40) * DAY,
  salience: rnd0(),
  denseRank: i + 1,
  lexicalRank: null,
  recencyRank: N - i,
  textLength: 20 + Math.floor(rnd0() * 300),
}))
/** main's answers over a fake preload bridge (test/fakeBridge.ts) */
const answer = recallAnswers(cands, NOW)

let bridge: FakeBridge
beforeEach(() => {
  bridge = installFakeBridge(answer)
  // jsdom lays nothing out: the long list's scroll box gets the 600 px a screen would.
  vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockImplementation(function (this: HTMLElement) {
    return this.classList.contains('results-scroll') ? 600 : 0
  })
})

afterEach(() => {
  timing.restMs = 3_600_000
  cleanup()
  bridge.uninstall()
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
})

const app = () => recallApp(NOW)
/** A Recall screen of its own (its own app context and drag fast path). */
const renderScreen = () =>
  render(
    <AppContext.Provider value={app()}>
      <RecallView />
    </AppContext.Provider>,
  )

/** What a screen shows that a drag step changes: the list's rows and cut lines, the summary's numbers, every slider. */
function seen(root: HTMLElement): Record<string, unknown> {
  const rows = [...root.querySelectorAll<HTMLElement>('ol.results > li')].map((li) => li.outerHTML).sort()
  const counts = root.querySelector('[data-testid="recall-counts"]')!
  const sliders = [...root.querySelectorAll<HTMLInputElement>('input[type="range"]')].map(
    (i) =>
      `${i.id ? (root.querySelector(`label[for="${CSS.escape(i.id)}"]`)?.textContent ?? '') : ''}=${i.value} ${i.getAttribute('aria-valuetext')} ${i.nextElementSibling?.textContent}`,
  )
  const sum = [...root.querySelectorAll('section[aria-label="Weights"] > .small')].map((e) => e.textContent)
  return { rows, counts: counts.textContent, blockTitle: counts.querySelector('[data-testid="block-tokens"]')!.getAttribute('title'), sliders, sum }
}

/** The frames a screen asks for, run by the test (runFrames). */
function stubFrames(): () => void {
  const frames: FrameRequestCallback[] = []
  vi.stubGlobal('requestAnimationFrame', (f: FrameRequestCallback) => frames.push(f))
  vi.stubGlobal('cancelAnimationFrame', () => undefined)
  return () => act(() => frames.splice(0).forEach((f) => f(performance.now())))
}

/** Two screens over the same trace (one to hold a slider on, one driven through React), each showing its first query's answer. */
async function twoScreens() {
  const runFrames = stubFrames()
  const held = renderScreen()
  const free = renderScreen()
  const screens = [held.container, free.container]
  for (const c of screens) await within(c).findByText(/query \d+ ms/, undefined, { timeout: FIRST_QUERY_WAIT_MS })
  return { held, free, screens, runFrames }
}

/** A screen's slider, by its label. */
const slider = (c: HTMLElement, name: string) => within(c).getByRole<HTMLInputElement>('slider', { name })

describe('a held slider on the Recall screen', { timeout: 120_000 }, () => {
  it('is warmed up by steps to a nudged config and back that leave the screen as it was and its rank tracker untold', async () => {
    const runFrames = stubFrames()
    const idle: IdleRequestCallback[] = []
    vi.stubGlobal('requestIdleCallback', (f: IdleRequestCallback) => idle.push(f))
    vi.stubGlobal('cancelIdleCallback', () => undefined)
    const held = renderScreen()
    await within(held.container).findByText(/query \d+ ms/, undefined, { timeout: FIRST_QUERY_WAIT_MS })
    // The warm-up is asked for in an effect after the commit that shows the trace: the text can be seen before
    // React has run that commit's effects (they wait for a task of their own).
    await waitFor(() => expect(idle.length).toBeGreaterThan(0))
    const before = seen(held.container)
    // The warm-up (and the idle re-ranks) of this screen alone: the other screen is rendered after it.
    const watch = new MutationObserver(() => undefined)
    watch.observe(held.container, { subtree: true, childList: true, characterData: true, attributes: true })
    act(() => {
      while (idle.length) idle.shift()!({ didTimeout: false, timeRemaining: () => 50 })
    })
    // It wrote other values (the nudged step's) into the rows, the summary and the sliders, and wrote back what was shown.
    const wrote = watch.takeRecords()
    watch.disconnect()
    const where = (sel: string) => wrote.some((m) => (m.target instanceof Element ? m.target : m.target.parentElement)?.closest(sel))
    expect(where('ol.results'), 'rows written').toBe(true)
    expect(where('[data-testid="recall-counts"]'), 'summary written').toBe(true)
    expect(where('section[aria-label="Weights"]'), 'sliders written').toBe(true)
    expect(seen(held.container)).toEqual(before)
    // Its steps were not the screen's: the first real step's rank changes are the ones a screen never warmed shows.
    const free = renderScreen()
    await within(free.container).findByText(/query \d+ ms/, undefined, { timeout: FIRST_QUERY_WAIT_MS })
    // A render of each screen with its ranking unchanged (a row selected) shows the changes its tracker holds.
    for (const c of [held.container, free.container]) fireEvent.click(c.querySelector('ol.results .result[data-id="m3"]')!)
    expect(seen(held.container)).toEqual(seen(free.container))
    fireEvent.pointerDown(slider(held.container, 'Salience'))
    for (const c of [held.container, free.container]) fireEvent.change(slider(c, 'Salience'), { target: { value: '0.05' } })
    runFrames()
    expect(held.container.querySelector('.recall')!.hasAttribute('data-drag')).toBe(true)
    expect(seen(held.container)).toEqual(seen(free.container))
    expect(held.container.querySelectorAll('ol.results .chg:not(:empty)').length, 'the step moved ranks').toBeGreaterThan(0)
    act(() => {
      document.dispatchEvent(new Event('pointerup'))
    })
  })

  it('shows after every step what the same edits through React show, and renders that state when let go', async () => {
    const { held, free, screens, runFrames } = await twoScreens()
    const rnd = mulberry32(5)
    expect(seen(held.container)).toEqual(seen(free.container))
    const heldRoot = held.container.querySelector<HTMLElement>('.recall')!
    const contextBefore = within(held.container).getByTestId('context-text').textContent
    let differed = 0
    for (let step = 0; step < 8; step++) {
      // Mostly a weight (on the simplex: the other three move too), now and then topK.
      const [name, value] =
        step % 4 === 3 ? ['topK', String(1 + Math.floor(rnd() * 15))] : [step % 2 ? 'Recency' : 'Salience', (Math.round(rnd() * 100) / 100).toFixed(2)]
      const before = seen(held.container)
      // The held screen: a pointer down on the slider (the drag begins), then the move.
      fireEvent.pointerDown(slider(held.container, name))
      fireEvent.change(slider(held.container, name), { target: { value } })
      fireEvent.change(slider(free.container, name), { target: { value } })
      runFrames()
      const after = seen(held.container)
      if (JSON.stringify(after) !== JSON.stringify(before)) differed++
      // Shown without a render: the context block waits under its veil, the list and numbers follow.
      expect(heldRoot.hasAttribute('data-drag'), `step ${step}`).toBe(true)
      expect(within(held.container).getByTestId('rerank-status').textContent).toMatch(/re-ranked locally in [\d.]+ ms/)
      expect(after, `step ${step}`).toEqual(seen(free.container))
    }
    expect(differed).toBeGreaterThan(5)
    expect(within(held.container).getByTestId('context-text').textContent).toBe(contextBefore)
    // Let go: the screen renders the state shown, and the waiting panels catch up with the other screen's.
    act(() => {
      document.dispatchEvent(new Event('pointerup'))
    })
    runFrames()
    expect(heldRoot.hasAttribute('data-drag')).toBe(false)
    expect(seen(held.container)).toEqual(seen(free.container))
    // Each context block shows its latest text once edits have rested for its own delay (ContextPreview's
    // BLOCK_REST_MS, on either screen): compare the two once neither is still waiting, whatever the steps' pace was.
    await waitFor(() => {
      for (const c of screens) expect(within(c).getByRole('region', { name: 'Context preview' }).getAttribute('aria-busy')).toBe('false')
    })
    expect(within(held.container).getByTestId('context-text').textContent).toBe(within(free.container).getByTestId('context-text').textContent)
    // One query each: every step re-ranked the first query's candidates.
    expect(bridge.calls.filter((c) => c.channel === 'recall.run')).toHaveLength(2)
  })

  it('keeps its step when the screen renders for another reason while held, and is held when the pointer takes the focus from the query', async () => {
    const runFrames = stubFrames()
    // The held screen's app state changes the way the app's does (its URL written, in place): a render of the
    // screen set off by something other than the drag (in the app, the URL written 250 ms after an earlier edit).
    let setNav: (f: (p: Record<string, string | undefined>) => Record<string, string | undefined>) => void = () => undefined
    function Host() {
      const base = app()
      const [params, setParams] = useState(base.nav.params)
      setNav = setParams
      const state = useMemo(() => ({ ...base, nav: { ...base.nav, params } }), [params]) // eslint-disable-line react-hooks/exhaustive-deps -- base is fixed
      return (
        <AppContext.Provider value={state}>
          <RecallView />
        </AppContext.Provider>
      )
    }
    const held = render(<Host />)
    const free = renderScreen()
    for (const c of [held.container, free.container]) await within(c).findByText(/query \d+ ms/, undefined, { timeout: FIRST_QUERY_WAIT_MS })
    const heldRoot = held.container.querySelector<HTMLElement>('.recall')!
    // The pointer goes down on a slider while the query field has the focus: the focus leaves the field.
    within(held.container).getByLabelText('Query (the raw utterance)').focus()
    fireEvent.pointerDown(slider(held.container, 'Recency'))
    slider(held.container, 'Recency').focus()
    const before = seen(held.container)
    for (const value of ['0.05', '0.6']) {
      for (const c of [held.container, free.container]) fireEvent.change(slider(c, 'Recency'), { target: { value } })
      runFrames()
      expect(heldRoot.hasAttribute('data-drag'), 'the step is shown without a render').toBe(true)
      expect(seen(held.container)).not.toEqual(before)
      expect(seen(held.container)).toEqual(seen(free.container))
    }
    // The screen renders while the step is shown: before the next paint (a microtask) it shows the step's state again,
    // not the one before the drag, with the last step's rank changes (not the whole drag's), still without React's.
    await act(async () => setNav((p) => ({ ...p, x: '1' })))
    expect(seen(held.container)).toEqual(seen(free.container))
    expect(heldRoot.hasAttribute('data-drag')).toBe(true)
    // The drag goes on from there.
    for (const c of [held.container, free.container]) fireEvent.change(slider(c, 'Salience'), { target: { value: '0.6' } })
    runFrames()
    expect(heldRoot.hasAttribute('data-drag')).toBe(true)
    expect(seen(held.container)).toEqual(seen(free.container))
    act(() => {
      document.dispatchEvent(new Event('pointerup'))
    })
    expect(seen(held.container)).toEqual(seen(free.container))
  })

  it("sets React's state when the held drag rests, and goes on without a render from there", async () => {
    timing.restMs = 40
    const { held, free, screens, runFrames } = await twoScreens()
    const heldRoot = held.container.querySelector<HTMLElement>('.recall')!
    const right = heldRoot.querySelector('.recall-right')!
    const contextBefore = within(held.container).getByTestId('context-text').textContent
    fireEvent.pointerDown(slider(held.container, 'Recency'))
    for (const c of screens) fireEvent.change(slider(c, 'Recency'), { target: { value: '0.05' } })
    runFrames()
    expect(heldRoot.hasAttribute('data-drag')).toBe(true)
    expect(right.getAttribute('aria-busy')).toBe('true')
    // Held still: the rest renders the state shown, and the panels that waited catch up, with the slider still held.
    await waitFor(() => expect(heldRoot.hasAttribute('data-drag')).toBe(false))
    expect(right.hasAttribute('aria-busy')).toBe(false)
    expect(seen(held.container)).toEqual(seen(free.container))
    await waitFor(() => {
      for (const c of screens) expect(within(c).getByRole('region', { name: 'Context preview' }).getAttribute('aria-busy')).toBe('false')
    })
    const contextAfter = within(held.container).getByTestId('context-text').textContent
    expect(contextAfter).toBe(within(free.container).getByTestId('context-text').textContent)
    expect(contextAfter).not.toBe(contextBefore)
    // The hand moves again: the next step is shown without a render, from the state the rest set.
    for (const c of screens) fireEvent.change(slider(c, 'Salience'), { target: { value: '0.7' } })
    runFrames()
    expect(heldRoot.hasAttribute('data-drag')).toBe(true)
    expect(seen(held.container)).toEqual(seen(free.container))
    act(() => {
      document.dispatchEvent(new Event('pointerup'))
    })
    expect(heldRoot.hasAttribute('data-drag')).toBe(false)
    expect(seen(held.container)).toEqual(seen(free.container))
  })
})
