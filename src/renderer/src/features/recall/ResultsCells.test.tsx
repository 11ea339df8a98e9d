/**
 * A row's per-step values (position, index, rank, change badge, score, bar) are written into its element by
 * `writeRowCells`, not rendered by React: a list carried through a sequence of slider steps must show exactly
 * what a list rendered once, fresh, for the last step shows (docs/internals/performance.md, "Recall sliders").
 * Compared row by row over everything a row shows, the bar's drawn rectangles included, for a virtualised list
 * and a whole one, over random weight, floor, topK and selection steps.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { act, cleanup, render } from '@testing-library/react'
import { createRef } from 'react'
import type { CandidateRaw, RecallConfig } from '../../../../shared/types'
import { getPreset } from '../../../../shared/presets'
import { rerank } from '../../../../shared/scoring'
import { mulberry32 } from '../../../../shared/random'
import { unitInfo } from '../../test/unitInfo'
import { rankChanges, type RankChange } from './baseline'
import { ResultsList, toRows, type ResultsListHandle } from './ResultsList'

/** Every canvas's last drawing: the rectangles filled since its last clear, with their colours. */
const drawn = new WeakMap<HTMLCanvasElement, string[]>()

/** A 2-D context that records what is drawn on `canvas`. */
function recorder(canvas: HTMLCanvasElement): CanvasRenderingContext2D {
  let fill = ''
  return {
    setTransform: () => undefined,
    clearRect: () => drawn.set(canvas, []),
    set fillStyle(v: string) {
      fill = v
    },
    fillRect: (x: number, y: number, w: number, h: number) => drawn.get(canvas)!.push(`${fill} ${x.toFixed(9)} ${y} ${w.toFixed(9)} ${h}`),
  } as unknown as CanvasRenderingContext2D
}

beforeEach(() => {
  // jsdom has no 2-D context: a recording one, so the bars' drawing is compared too.
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation(function (this: HTMLCanvasElement) {
    return recorder(this)
  })
  // jsdom lays nothing out: the long list's scroll box gets the 600 px a screen would.
  vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockImplementation(function (this: HTMLElement) {
    return this.classList.contains('results-scroll') ? 600 : 0
  })
})
afterEach(() => {
  cleanup()
  vi.restoreAllMocks()
})

const DAY = 86_400_000
/** Steps per list: each is compared with a fresh render (0.2–0.6 s a step in jsdom at load 15, more beside other files). */
const STEPS = 10

/** `n` candidates with random features (seeded), so a weight step reorders them. */
function candidates(n: number, seed: number): CandidateRaw[] {
  const rnd = mulberry32(seed)
  return Array.from({ length: n }, (_, i) => ({
    id: `m${i}`,
    similarity: rnd(),
    lexical: 0,
    bm25: null,
    ageLastUsedMs: Math.floor(rnd() * 30) * DAY,
    ageCreatedMs: Math.floor(rnd() * 30) * DAY,
    salience: rnd(),
    denseRank: i + 1,
    lexicalRank: null,
    recencyRank: null,
    textLength: 20 + Math.floor(rnd() * 200),
  }))
}

/** What each row shows, by memory, in score order: read from the DOM, not from the code that wrote it. */
function shown(container: HTMLElement): string[] {
  const rows = [...container.querySelectorAll<HTMLElement>('ol.results > li.result-wrap')].map((li) => {
    const r = li.querySelector<HTMLElement>('.result')!
    const bar = r.querySelector('canvas')!
    const badge = r.querySelector<HTMLElement>('.chg')!
    return {
      index: Number(li.getAttribute('data-index')),
      text: [
        li.getAttribute('data-index'),
        li.getAttribute('aria-posinset'),
        li.getAttribute('aria-setsize'),
        li.style.transform,
        r.className,
        r.getAttribute('data-id'),
        r.getAttribute('data-gate'),
        r.getAttribute('tabindex'),
        r.getAttribute('aria-selected'),
        r.querySelector('.rank')!.textContent,
        badge.className,
        badge.textContent,
        badge.getAttribute('title'),
        r.querySelector('.result-body')!.outerHTML,
        bar.getAttribute('aria-label'),
        (drawn.get(bar) ?? []).join('; '),
        r.querySelector('.score')!.textContent,
        [...li.querySelectorAll('[role="separator"]')].map((s) => s.getAttribute('aria-label')).join(','),
      ].join(' | '),
    }
  })
  const cuts = [...container.querySelectorAll<HTMLElement>('ol.results > li.cut-wrap')].map((c) => `cut ${c.style.transform} ${c.textContent}`)
  return [...rows.sort((a, b) => a.index - b.index).map((r) => r.text), ...cuts.sort()]
}

describe('rows carried through slider steps', { timeout: 90_000 }, () => {
  for (const [what, n] of [
    ['a virtualised list (400 candidates)', 400],
    ['a whole list (40 candidates)', 40],
  ] as const)
    it(`show what a fresh render of the last step shows: ${what}`, () => {
      const rnd = mulberry32(n)
      const cands = candidates(n, n + 1)
      const units = Object.fromEntries(cands.map((c) => [c.id, unitInfo(c.id)]))
      const fg = getPreset('fieldguide').config
      let config: RecallConfig = { ...fg, candidatePool: 1000, topK: 8, floor: null }
      const props = { units, onSelect: () => undefined, onOpen: () => undefined }
      let r = rerank(cands, config, 'dense')
      let ranks = new Map(r.results.map((x) => [x.id, x.rank]))
      const carried = render(<ResultsList rows={toRows(r.results, r.dropped)} config={config} changes={new Map()} selectedId={null} {...props} />)
      let changed = 0
      for (let step = 0; step < STEPS; step++) {
        // A weight step mostly; now and then the floor or topK moves, or a row is selected.
        const w = { similarity: rnd(), lexical: 0, recency: rnd(), salience: rnd() }
        config = { ...config, weights: w }
        if (step % 5 === 2) config = { ...config, floor: rnd() < 0.5 ? null : rnd() * 0.8 }
        if (step % 7 === 3) config = { ...config, topK: 1 + Math.floor(rnd() * 20) }
        const selectedId = step % 6 === 4 ? `m${Math.floor(rnd() * n)}` : null
        r = rerank(cands, config, 'dense')
        const rows = toRows(r.results, r.dropped)
        const now = new Map(r.results.map((x) => [x.id, x.rank]))
        const changes: Map<string, RankChange> = rankChanges(ranks, now)
        ranks = now
        const before = shown(carried.container)
        carried.rerender(<ResultsList rows={rows} config={config} changes={changes} selectedId={selectedId} {...props} />)
        const after = shown(carried.container)
        if (after.join('\n') !== before.join('\n')) changed++
        const fresh = render(<ResultsList rows={rows} config={config} changes={changes} selectedId={selectedId} {...props} />)
        expect(after, `step ${step}`).toEqual(shown(fresh.container))
        fresh.unmount()
      }
      // The steps did change what the list shows (else this test compares nothing).
      expect(changed).toBeGreaterThan(STEPS - 4)
    })
})

describe('rows shown without a render (the drag fast path)', { timeout: 90_000 }, () => {
  for (const [what, n] of [
    ['a virtualised list (400 candidates)', 400],
    ['a whole list (40 candidates)', 40],
  ] as const)
    it(`show what a fresh render of the same state shows: ${what}`, () => {
      const rnd = mulberry32(n + 7)
      const cands = candidates(n, n + 3)
      const units = Object.fromEntries(cands.map((c) => [c.id, unitInfo(c.id)]))
      const fg = getPreset('fieldguide').config
      let config: RecallConfig = { ...fg, candidatePool: 1000, topK: 8, floor: null }
      const props = { units, onSelect: () => undefined, onOpen: () => undefined }
      const r0 = rerank(cands, config, 'dense')
      let ranks = new Map(r0.results.map((x) => [x.id, x.rank]))
      const selected = `m${Math.floor(rnd() * n)}`
      const start = { rows: toRows(r0.results, r0.dropped), config, changes: new Map<string, RankChange>(), selectedId: selected }
      const handle = createRef<ResultsListHandle>()
      const carried = render(<ResultsList {...start} {...props} handle={handle} />)
      const list = carried.container.querySelector('ol.results')!
      let changed = 0
      let withoutRender = 0
      let state = start
      for (let step = 0; step < STEPS; step++) {
        // What a drag moves: a weight mostly; now and then the floor, topK or the token budget.
        config = { ...config, weights: { similarity: rnd(), lexical: 0, recency: rnd(), salience: rnd() } }
        if (step % 5 === 2) config = { ...config, floor: rnd() < 0.5 ? null : rnd() * 0.8 }
        if (step % 7 === 3) config = { ...config, topK: 1 + Math.floor(rnd() * 20) }
        if (step % 4 === 1) config = { ...config, tokenBudget: rnd() < 0.3 ? null : 100 + Math.floor(rnd() * 800) }
        const r = rerank(cands, config, 'dense')
        const now = new Map(r.results.map((x) => [x.id, x.rank]))
        state = { rows: toRows(r.results, r.dropped), config, changes: rankChanges(ranks, now), selectedId: selected }
        ranks = now
        const before = shown(carried.container)
        const observer = new MutationObserver(() => undefined)
        observer.observe(list, { childList: true })
        act(() => handle.current!.show(state))
        const madeOrRemoved = observer.takeRecords().length > 0
        observer.disconnect()
        const after = shown(carried.container)
        if (after.join('\n') !== before.join('\n')) {
          changed++
          if (!madeOrRemoved) withoutRender++
        }
        const fresh = render(<ResultsList {...state} {...props} />)
        expect(after, `step ${step}`).toEqual(shown(fresh.container))
        fresh.unmount()
      }
      expect(changed).toBeGreaterThan(STEPS - 4)
      // A long list takes most steps without a render (no row element made or removed); a whole list reorders its elements.
      if (n > 60) expect(withoutRender).toBeGreaterThan(STEPS / 2)
      // A render with the props unchanged (a scroll, the re-sort at rest) shows the state shown last, not the props'.
      carried.rerender(<ResultsList {...start} {...props} handle={handle} />)
      const last = render(<ResultsList {...state} {...props} />)
      expect(shown(carried.container)).toEqual(shown(last.container))
      // The drag let go: the props are the state shown, and the list shows them.
      carried.rerender(<ResultsList {...state} {...props} handle={handle} />)
      expect(shown(carried.container)).toEqual(shown(last.container))
      // New props (a new query's ranking): shown, whatever the fast path showed before.
      carried.rerender(<ResultsList {...start} {...props} handle={handle} />)
      last.unmount()
      const first = render(<ResultsList {...start} {...props} />)
      expect(shown(carried.container)).toEqual(shown(first.container))
    })
})
