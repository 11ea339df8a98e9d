/**
 * Component tests for the recall playground's pieces: the results list (order,
 * cut lines, gates, rank changes, keyboard), the config sliders (simplex), and
 * the decay chart's data. Expected numbers are computed by hand here.
 */
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest'
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import type { CandidateRaw, RecallConfig } from '../../../../shared/types'
import { getPreset } from '../../../../shared/presets'
import { rerank } from '../../../../shared/scoring'
import { unitInfo } from '../../test/unitInfo'
import { withFakeBridge } from '../../test/withFakeBridge'
import { ResultsList, toRows, cutLines, forgetFeatureColors } from './ResultsList'
import { ConfigPanel, type ConfigUpdate } from './ConfigPanel'
import { decayPoints } from './DecayChart'
import { EmptyNotice } from './EmptyNotice'
import { explainEmpty } from '../../../../shared/explainEmpty'

/** main's answers over a fake preload bridge (test/fakeBridge.ts) */
function answer(channel: string): unknown {
  if (channel === 'recall.ages')
    return {
      now: 0,
      from: 'last_used',
      binMs: 86_400_000,
      bins: [
        { startMs: 0, endMs: 86_400_000, count: 4 },
        { startMs: 86_400_000, endMs: 2 * 86_400_000, count: 2 },
      ],
      total: 6,
      neverUsed: 1,
    }
  throw new Error(`unexpected ${channel}`)
}

withFakeBridge(answer)
afterEach(() => {
  // the canvas and layout spies: the worker's next file shares this window
  vi.restoreAllMocks()
})

const DAY = 86_400_000
function cand(id: string, similarity: number, ageDays: number, salience: number, denseRank: number): CandidateRaw {
  return {
    id,
    similarity,
    lexical: 0,
    bm25: null,
    ageLastUsedMs: ageDays * DAY,
    ageCreatedMs: ageDays * DAY,
    salience,
    denseRank,
    lexicalRank: null,
    recencyRank: null,
    textLength: 40,
  }
}

// fieldguide: 0.6·sim + 0.25·recency (7-day half-life) + 0.15·salience, floor 0.35 before top 5.
const fg = getPreset('fieldguide').config
// Hand-computed composites (age 0 → recency 1; age 7 d → 0.5; age 14 d → 0.25):
//  a: 0.6·0.9 + 0.25·1 + 0.15·0.5 = 0.865
//  b: 0.6·0.8 + 0.25·0.5 + 0.15·0.2 = 0.635
//  c: 0.6·0.7 + 0.25·0.25 + 0.15·0 = 0.4825
//  d: 0.6·0.5 + 0.25·0.25 + 0.15·0 = 0.3625
//  e: 0.6·0.45 + 0.25·0.25 + 0.15·0 = 0.3325  (below the floor)
//  f: 0.6·0.3 + 0 + 0 ≈ 0.18 (age 365 d)         (below the floor)
const cands = [
  cand('a', 0.9, 0, 0.5, 1),
  cand('b', 0.8, 7, 0.2, 2),
  cand('c', 0.7, 14, 0, 3),
  cand('d', 0.5, 14, 0, 4),
  cand('e', 0.45, 14, 0, 5),
  cand('f', 0.3, 365, 0, 6),
]
const units = Object.fromEntries(cands.map((c) => [c.id, unitInfo(c.id)]))

function renderList(config: RecallConfig, changes = new Map()) {
  const r = rerank(cands, config, 'dense')
  const rows = toRows(r.results, r.dropped)
  const onSelect = vi.fn()
  const onOpen = vi.fn()
  render(<ResultsList rows={rows} units={units} config={config} changes={changes} selectedId={null} onSelect={onSelect} onOpen={onOpen} />)
  return { rows, onSelect, onOpen }
}

describe('ResultsList', () => {
  it('lists candidates by score with the floor cut line and greys what the floor dropped', () => {
    const { rows } = renderList(fg)
    expect(rows.map((r) => r.id)).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
    expect(rows[0].score).toBeCloseTo(0.865, 6)
    expect(rows[3].score).toBeCloseTo(0.3625, 6)
    const items = screen.getAllByRole('listitem')
    // The floor line sits right before e (the first below 0.35).
    expect(within(items[4]).getByRole('separator', { name: 'cut: floor 0.35' })).toBeInTheDocument()
    expect(screen.getAllByRole('separator')).toHaveLength(1)
    const e = document.querySelector('[data-id="e"]')!
    expect(e).toHaveClass('dropped')
    expect(e).toHaveAttribute('data-gate', 'floor')
    expect(e.textContent).toContain('✕ floor')
    expect(document.querySelector('[data-id="d"]')).toHaveAttribute('data-gate', 'kept')
  })

  it('draws the topK line where topK cuts, after the floor', () => {
    renderList({ ...fg, topK: 2 })
    expect(
      cutLines(toRows(rerank(cands, { ...fg, topK: 2 }, 'dense').results, rerank(cands, { ...fg, topK: 2 }, 'dense').dropped), { ...fg, topK: 2 }).map((l) => [
        l.gate,
        l.before,
      ]),
    ).toEqual([
      ['topK', 2],
      ['floor', 4],
    ])
    expect(document.querySelector('[data-id="c"]')).toHaveAttribute('data-gate', 'topK')
  })

  it('shows rank changes: up, down, new and out', () => {
    const changes = new Map([
      ['a', { before: 2, after: 1 }],
      ['b', { before: 1, after: 2 }],
      ['c', { before: null, after: 3 }],
      ['e', { before: 4, after: null }],
    ])
    renderList(fg, changes)
    expect(document.querySelector('[data-id="a"] .chg')!.textContent).toBe('▲1')
    expect(document.querySelector('[data-id="b"] .chg')!.textContent).toBe('▼1')
    expect(document.querySelector('[data-id="c"] .chg')!.textContent).toBe('NEW')
    expect(document.querySelector('[data-id="e"] .chg')!.textContent).toBe('OUT')
  })

  it('is keyboard friendly: arrows move the selection, Enter opens', () => {
    const { onSelect, onOpen } = renderList(fg)
    const list = screen.getByRole('list', { name: 'Recall results' })
    fireEvent.keyDown(list, { key: 'ArrowDown' })
    expect(onSelect).toHaveBeenLastCalledWith('a')
    cleanup()
    const r = rerank(cands, fg, 'dense')
    const onSelect2 = vi.fn()
    render(
      <ResultsList rows={toRows(r.results, r.dropped)} units={units} config={fg} changes={new Map()} selectedId="b" onSelect={onSelect2} onOpen={onOpen} />,
    )
    fireEvent.keyDown(screen.getByRole('list', { name: 'Recall results' }), { key: 'ArrowDown' })
    expect(onSelect2).toHaveBeenLastCalledWith('c')
    fireEvent.keyDown(screen.getByRole('list', { name: 'Recall results' }), { key: 'Enter' })
    expect(onOpen).toHaveBeenLastCalledWith('b')
  })

  it('scales the stacked bars to the best score and labels them with each contribution', () => {
    // A canvas that records what is drawn on it (jsdom has none), and the stylesheet's feature colours.
    const drawn: { fill: string; x: number; w: number }[] = []
    const ctx = {
      fillStyle: '',
      setTransform: () => undefined,
      clearRect: () => drawn.splice(0),
      fillRect(x: number, _y: number, w: number) {
        drawn.push({ fill: this.fillStyle, x, w })
      },
    }
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(function (this: HTMLCanvasElement) {
      return this.closest('[data-id="a"]') ? (ctx as unknown as CanvasRenderingContext2D) : null
    })
    const css = { '--f-sim': '#111', '--f-lex': '#222', '--f-rec': '#333', '--f-sal': '#444' } as Record<string, string>
    vi.spyOn(window, 'getComputedStyle').mockReturnValue({ getPropertyValue: (k: string) => css[k] ?? '' } as unknown as CSSStyleDeclaration)
    // another file in this worker may have drawn bars already, with the colours of its own computed style; and
    // this test's colours must not stay behind for the next
    forgetFeatureColors()
    onTestFinished(forgetFeatureColors)
    renderList(fg)
    const bar = within(document.querySelector('[data-id="a"]') as HTMLElement).getByRole('img')
    // a: 0.6·0.9 = 0.54, 0.25·1 = 0.25, 0.15·0.5 = 0.075 of 0.865
    expect(bar).toHaveAttribute('aria-label', 'similarity 0.540, lexical 0.000, recency 0.250, salience 0.075')
    // One canvas 150 px wide: the segments side by side from the left, each its feature's share of the best score.
    expect(bar.tagName).toBe('CANVAS')
    expect(drawn.map((d) => d.fill)).toEqual(['#111', '#222', '#333', '#444'])
    const shares = [0.54 / 0.865, 0, 0.25 / 0.865, 0.075 / 0.865]
    drawn.forEach(({ x, w }, i) => {
      expect(x).toBeCloseTo(150 * shares.slice(0, i).reduce((a, b) => a + b, 0), 6)
      expect(w).toBeCloseTo(150 * shares[i], 6)
    })
    // The best row's bar fills the bar; nothing is drawn past it.
    expect(drawn[3].x + drawn[3].w).toBeCloseTo(150, 6)
  })
})

/** The config the panel's last edit makes of `fg` (the panel sends updaters of the config). */
function lastEdit(onChange: ReturnType<typeof vi.fn>): RecallConfig {
  return (onChange.mock.lastCall![0] as ConfigUpdate)(fg)
}

describe('ConfigPanel sliders', () => {
  it('moves the recency weight on the simplex, sharing the rest in proportion', () => {
    const onChange = vi.fn()
    render(<ConfigPanel config={fg} onChange={onChange} now={0} />)
    fireEvent.change(screen.getByRole('slider', { name: 'Recency' }), { target: { value: '0.5' } })
    const next = lastEdit(onChange)
    // 0.6 and 0.15 share 0.5 in proportion 4:1
    expect(next.weights.recency).toBe(0.5)
    expect(next.weights.similarity).toBeCloseTo(0.4, 9)
    expect(next.weights.salience).toBeCloseTo(0.1, 9)
    expect(next.weights.lexical).toBe(0)
  })

  it('switches the floor off and shows it as off; the budget on with its default', () => {
    const onChange = vi.fn()
    render(<ConfigPanel config={fg} onChange={onChange} now={0} />)
    fireEvent.click(screen.getByRole('checkbox', { name: 'Floor on' }))
    expect(lastEdit(onChange).floor).toBeNull()
    fireEvent.click(screen.getByRole('checkbox', { name: 'Token budget on' }))
    expect(lastEdit(onChange).tokenBudget).toBe(2000)
  })

  it('free weights move one at a time', () => {
    const onChange = vi.fn()
    render(<ConfigPanel config={fg} onChange={onChange} now={0} />)
    fireEvent.click(screen.getByRole('checkbox', { name: 'on the simplex' }))
    fireEvent.change(screen.getByRole('slider', { name: 'Lexical' }), { target: { value: '0.7' } })
    expect(lastEdit(onChange).weights).toEqual({ ...fg.weights, lexical: 0.7 })
  })

  it('shows the age histogram total under the decay curve', async () => {
    render(<ConfigPanel config={fg} onChange={() => undefined} now={0} />)
    expect(await screen.findByText(/6 memories in scope; half-life 7\.0 d/)).toBeInTheDocument()
  })

  it('draws the histogram and the curve as plain SVG: one bar per bin, the curve at 0.5^(age / half-life)', async () => {
    render(<ConfigPanel config={fg} onChange={() => undefined} now={0} />)
    await screen.findByText(/6 memories in scope/)
    const svg = document.querySelector('svg.decay-chart')!
    const bars = svg.querySelectorAll('.decay-bars rect')
    expect(bars).toHaveLength(2)
    // Heights ∝ counts 4 and 2.
    expect(Number(bars[1].getAttribute('height')) / Number(bars[0].getAttribute('height'))).toBeCloseTo(0.5, 6)
    const pts = svg
      .querySelector('polyline')!
      .getAttribute('points')!
      .split(' ')
      .map((p) => p.split(',').map(Number))
    expect(pts).toHaveLength(2)
    // Bin middles 0.5 d and 1.5 d at a 7-day half-life; the plot spans y 4…104 (recency 1 at the top).
    const y = (days: number) => 4 + (1 - 0.5 ** (days / 7)) * 100
    expect(pts[0][1]).toBeCloseTo(y(0.5), 1)
    expect(pts[1][1]).toBeCloseTo(y(1.5), 1)
    // No chart library: nothing animates, nothing measures a path.
    expect(document.querySelector('.recharts-wrapper')).toBeNull()
  })
})

describe('a long candidate list (virtualised)', () => {
  // 400 candidates, similarity falling with i.
  const many = Array.from({ length: 400 }, (_, i) => cand(`m${i}`, 0.99 - i / 1000, i % 30, 0.1, i + 1))
  const manyUnits = Object.fromEntries(many.map((c) => [c.id, unitInfo(c.id)]))

  it('puts only a window of rows in the DOM, sized for all of them, and keeps the keyboard working past it', () => {
    const config = { ...fg, candidatePool: 1000, topK: 5, floor: 0.5 }
    const r = rerank(many, config, 'dense')
    const rows = toRows(r.results, r.dropped)
    const onSelect = vi.fn()
    // jsdom lays nothing out: give the list's scroll box the 600 px a screen would.
    vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockImplementation(function (this: HTMLElement) {
      return this.classList.contains('results-scroll') ? 600 : 0
    })
    render(
      <ResultsList rows={rows} units={manyUnits} config={config} changes={new Map()} selectedId={rows[0].id} onSelect={onSelect} onOpen={() => undefined} />,
    )
    const list = screen.getByRole('list', { name: 'Recall results' })
    const items = list.querySelectorAll(':scope > li')
    expect(rows.length).toBe(400)
    expect(items.length).toBeGreaterThan(0)
    // 600 px show ~10 rows; the virtualiser adds 3 either side.
    expect(items.length).toBeLessThan(20)
    expect(items[0]).toHaveAttribute('aria-setsize', '400')
    // The list is as tall as every row (62 px) plus every cut line (23 px) drawn above its row.
    const cuts = cutLines(rows, config).length
    expect(cuts).toBeGreaterThan(0)
    expect(parseFloat(list.style.height)).toBe(400 * 62 + cuts * 23)
    fireEvent.keyDown(list, { key: 'ArrowDown' })
    expect(onSelect).toHaveBeenLastCalledWith(rows[1].id)
    vi.restoreAllMocks()
  })
})

describe('decay chart data', () => {
  it('puts recency 0.5 at the half-life and the counts on the bins', () => {
    const pts = decayPoints(
      [
        { startMs: 0, endMs: 2 * DAY, count: 3 },
        { startMs: 6 * DAY, endMs: 8 * DAY, count: 5 },
        { startMs: 13 * DAY, endMs: 15 * DAY, count: 1 },
      ],
      168,
    )
    expect(pts.map((p) => p.day)).toEqual([1, 7, 14])
    expect(pts.map((p) => p.count)).toEqual([3, 5, 1])
    expect(pts[1].recency).toBeCloseTo(0.5, 12)
    expect(pts[2].recency).toBeCloseTo(0.25, 12)
    expect(pts[0].recency).toBeCloseTo(Math.pow(0.5, 1 / 7), 12)
  })
})

describe('EmptyNotice', () => {
  it('floor 0.9 drops all six: says the best is a at 0.865 (0.035 short) and applies floor 0.86, which injects exactly a', () => {
    const config = { ...fg, floor: 0.9 }
    const r = rerank(cands, config, 'dense')
    const e = explainEmpty({ results: r.results, dropped: r.dropped, candidates: cands, config, mode: 'dense', inScope: 6 })!
    const onApply = vi.fn()
    render(<EmptyNotice empty={e} onApply={onApply} />)
    const box = screen.getByRole('status', { name: 'Why nothing was injected' })
    expect(box.textContent).toContain('All 6 candidates were dropped (6 below the floor)')
    expect(box.textContent).toContain('the best score is 0.865, 0.035 below floor 0.900')
    fireEvent.click(within(box).getByRole('button', { name: 'Apply: floor → 0.86 (injects 1)' }))
    expect(onApply).toHaveBeenCalledWith({ floor: 0.86 })
    expect(rerank(cands, { ...config, floor: 0.86 }, 'dense').results.map((x) => x.id)).toEqual(['a'])
  })
})
