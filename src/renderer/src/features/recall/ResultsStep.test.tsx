/**
 * What a weight step does to the DOM of a long (virtualised) candidate list (docs/internals/performance.md,
 * "Recall sliders"): a memory that stays in view keeps its element, moved only, its text untouched; only a
 * memory that comes into view gets text, in the element of one that left; no row element is made or removed;
 * once the list rests the elements are back in rank order. Counted DOM mutations, not timings: keying rows by
 * index or by id again (text rewritten, or rows removed and made) fails here.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { act, cleanup, render } from '@testing-library/react'
import type { CandidateRaw, RecallConfig } from '../../../../shared/types'
import { getPreset } from '../../../../shared/presets'
import { rerank } from '../../../../shared/scoring'
import { unitInfo } from '../../test/unitInfo'
import { ResultsList, toRows } from './ResultsList'

afterEach(() => {
  cleanup()
  vi.restoreAllMocks()
})

const DAY = 86_400_000
// 400 candidates: similarity falls with i, ages cycle over 0…29 days, so the recency weight reorders them.
const cands: CandidateRaw[] = Array.from({ length: 400 }, (_, i) => ({
  id: `m${i}`,
  similarity: 0.99 - i / 1000,
  lexical: 0,
  bm25: null,
  ageLastUsedMs: ((i * 7) % 30) * DAY,
  ageCreatedMs: ((i * 7) % 30) * DAY,
  salience: 0.5,
  denseRank: i + 1,
  lexicalRank: null,
  recencyRank: null,
  textLength: 40,
}))
const units = Object.fromEntries(cands.map((c) => [c.id, unitInfo(c.id)]))
const fg = getPreset('fieldguide').config

const rowsFor = (config: RecallConfig) => {
  const r = rerank(cands, config, 'dense')
  return toRows(r.results, r.dropped)
}
const domIds = () => [...document.querySelectorAll('.results > li.result-wrap .result')].map((e) => e.getAttribute('data-id')!)

describe('a weight step on a long candidate list', () => {
  it('moves the rows that stay in view, gives text only to the ones that came into view, and re-sorts them at rest', async () => {
    // jsdom lays nothing out: give the list's scroll box the 600 px a screen would (~10 rows, 3 more each side).
    vi.spyOn(HTMLElement.prototype, 'clientHeight', 'get').mockImplementation(function (this: HTMLElement) {
      return this.classList.contains('results-scroll') ? 600 : 0
    })
    const a = { ...fg, candidatePool: 1000, topK: 5, floor: null, weights: { similarity: 0.6, lexical: 0, recency: 0.25, salience: 0.15 } }
    const b = { ...a, weights: { ...a.weights, similarity: 0.55, recency: 0.3 } }
    const rowsA = rowsFor(a)
    const rowsB = rowsFor(b)
    const props = { units, changes: new Map(), selectedId: null, onSelect: () => undefined, onOpen: () => undefined }
    const { rerender } = render(<ResultsList rows={rowsA} config={a} {...props} />)
    const before = domIds()
    expect(before.length).toBeGreaterThan(5)
    // Rank order in the DOM to start with.
    expect(before).toEqual(rowsA.slice(0, before.length).map((r) => r.id))
    const elementOf = new Map(
      [...document.querySelectorAll<HTMLElement>('.results > li.result-wrap')].map((li) => [li.querySelector('.result')!.getAttribute('data-id')!, li]),
    )
    const textNodeOf = new Map(
      [...document.querySelectorAll('.results > li.result-wrap .result')].map((e) => [e.getAttribute('data-id')!, e.querySelector('.result-text')!.firstChild]),
    )

    const list = document.querySelector('ol.results')!
    const seen: MutationRecord[] = []
    const observer = new MutationObserver((m) => seen.push(...m))
    observer.observe(list, { subtree: true, childList: true, characterData: true, attributes: true })
    rerender(<ResultsList rows={rowsB} config={b} {...props} />)
    seen.push(...observer.takeRecords())
    observer.disconnect()

    // The same window of the new ranking is shown, as many rows as before.
    const after = domIds()
    const shownB = rowsB.slice(0, after.length).map((r) => r.id)
    expect(new Set(after)).toEqual(new Set(shownB))
    expect(after.length).toBe(before.length)
    const cutB = rowsB.findIndex((r) => r.gate === 'topK')
    const stayed = shownB.filter((id) => before.includes(id))
    const entered = shownB.filter((id) => !before.includes(id))
    // The step reorders the window and brings some memories in (else this test would show nothing).
    expect(stayed.length).toBeGreaterThan(0)
    expect(entered.length).toBeGreaterThan(0)
    expect(shownB.filter((id, i) => before[i] !== id).length).toBeGreaterThan(entered.length)
    // No row element made or removed.
    expect(seen.filter((m) => m.type === 'childList' && m.target === list)).toEqual([])
    // A memory that stayed keeps its element and its text node, untouched; its position is its transform.
    for (const id of stayed) {
      const li = [...document.querySelectorAll<HTMLElement>('.results > li.result-wrap')].find(
        (x) => x.querySelector('.result')!.getAttribute('data-id') === id,
      )!
      expect(li).toBe(elementOf.get(id))
      expect(li.querySelector('.result-text')!.firstChild).toBe(textNodeOf.get(id))
      // 62 px a row; the topK cut line (23 px) is drawn above the first row it cuts, so that row and the ones past it move down.
      const i = rowsB.findIndex((r) => r.id === id)
      expect(li.style.transform).toBe(`translateY(${i * 62 + (i >= cutB ? 23 : 0)}px)`)
    }
    // The cut line is an element of its own at the top of the first row it cuts, moved by its transform: no row's
    // size changes when the line passes to another memory (a row's height is fixed in CSS, never set per row).
    const cutLi = document.querySelector<HTMLElement>('.results > li.cut-wrap')!
    expect(cutLi.querySelector('[role="separator"]')!.getAttribute('aria-label')).toBe('cut: topK 5')
    expect(cutLi.style.transform).toBe(`translateY(${cutB * 62}px)`)
    expect(seen.filter((m) => m.attributeName === 'style' && (m.target as HTMLElement).style.height)).toEqual([])
    // Text was written only for the memories that came into view (one text per row element that changed hands).
    const textWrites = seen.filter((m) => m.target.parentElement?.classList.contains('result-text') || (m.target as Element).classList?.contains('result-text'))
    expect(
      new Set(textWrites.map((m) => (m.target.parentElement?.closest('.result') ?? (m.target as Element).closest('.result'))!.getAttribute('data-id'))),
    ).toEqual(new Set(entered))

    // At rest the elements go back into rank order (reading order), each memory keeping its element.
    await act(() => new Promise((r) => setTimeout(r, 450)))
    expect(domIds()).toEqual(shownB)
    for (const id of stayed)
      expect([...document.querySelectorAll('.results > li.result-wrap')].find((x) => x.querySelector('.result')!.getAttribute('data-id') === id)).toBe(
        elementOf.get(id),
      )
  })
})
