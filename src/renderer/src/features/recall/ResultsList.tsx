/**
 * Ranked candidates: a stacked bar of weighted contributions per memory, the
 * composite, cut lines where floor / topK / budget fall, dropped candidates
 * greyed with the gate that dropped them, rank-change arrows and new/dropped
 * badges since the previous change. Keyboard: ↑/↓ move, Enter opens. Every
 * candidate is listed; a long list is virtualised.
 */
import { withSubject } from '../../../../shared/subject'
import {
  memo,
  useCallback,
  useEffect,
  useImperativeHandle,
  useLayoutEffect,
  useMemo,
  useReducer,
  useRef,
  useState,
  useSyncExternalStore,
  type KeyboardEvent,
  type RefObject,
} from 'react'
import { flushSync } from 'react-dom'
import type { Features, GateName, RecallConfig, TraceDropped, TraceResult, UnitInfo } from '../../../../shared/types'
import type { RankChange } from './useRecall'
import { FEATURES } from './weights'
import { RowSlots } from './rowSlots'
import { listHeight, rowStart, rowsInView, scrollToShow, slotStart, useScrollBox, type FixedRows } from './fixedRows'
import { useQuietTimer } from '../../lib/quietTimer'
import { writeText } from '../../lib/writeText'

export const FEATURE_COLORS: Record<keyof Features, string> = {
  similarity: 'var(--f-sim)',
  lexical: 'var(--f-lex)',
  recency: 'var(--f-rec)',
  salience: 'var(--f-sal)',
}

export const GATE_TEXT: Record<GateName, string> = {
  scope: 'out of scope',
  dedupe: 'already in the live transcript (dedupe)',
  minSimilarity: 'similarity below minSimilarity',
  floor: 'score below the floor',
  topK: 'beyond topK',
  budget: 'over the token budget',
}

export interface Row {
  id: string
  score: number
  features: Features
  contributions: Features
  tokens: number
  /** null = injected */
  gate: GateName | null
  rank: number | null
  scoreRank: number
  /** Engram's blend group, as in the trace */
  group?: 'blend'
  /** hybrid + RRF: the arm-rank terms, as in the trace */
  fused?: { dense: number; lexical: number }
}

/**
 * One list in score order (results and dropped interleaved), as the gates saw it. `pool`: rows written over
 * instead of made (the drag fast path's, which it holds only until its next step), and filled with the new ones.
 */
export function toRows(results: readonly TraceResult[], dropped: readonly TraceDropped[], pool?: Row[]): Row[] {
  const n = results.length + dropped.length
  const rows: Row[] = []
  // Built field by field (one shape for all, no spread): this runs for every candidate on every slider step.
  const put = (r: TraceResult | TraceDropped, gate: GateName | null, rank: number | null, scoreRank: number) => {
    const row = pool?.[rows.length]
    if (row) {
      row.id = r.id
      row.score = r.score
      row.features = r.features
      row.contributions = r.contributions
      row.tokens = r.tokens
      row.gate = gate
      row.rank = rank
      row.scoreRank = scoreRank
      row.group = r.group
      row.fused = r.fused
      rows.push(row)
      return
    }
    const made: Row = {
      id: r.id,
      score: r.score,
      features: r.features,
      contributions: r.contributions,
      tokens: r.tokens,
      gate,
      rank,
      scoreRank,
      group: r.group,
      fused: r.fused,
    }
    if (pool) pool.push(made)
    rows.push(made)
  }
  results.forEach((r, i) => put(r, null, r.rank, r.scoreRank ?? i + 1))
  dropped.forEach((d, i) => put(d, d.gate, null, d.scoreRank ?? results.length + i + 1))
  // Score ranks are 1…n, each once (the scorer numbers every candidate): each row goes to its place, no sort
  // (this runs on every slider step). Anything else (a trace from elsewhere) is sorted.
  const placed = new Array<Row | undefined>(n)
  for (const r of rows) {
    const at = r.scoreRank - 1
    if (!Number.isInteger(at) || at < 0 || at >= n || placed[at]) return rows.sort((a, b) => a.scoreRank - b.scoreRank)
    placed[at] = r
  }
  return placed as Row[]
}

export interface CutLine {
  /** the line is drawn before this row index */
  before: number
  label: string
  gate: 'floor' | 'topK' | 'budget' | 'minSimilarity'
}

/** Where each gate starts cutting in score order. */
export function cutLines(rows: readonly Row[], config: Pick<RecallConfig, 'floor' | 'topK' | 'tokenBudget' | 'minSimilarity'>): CutLine[] {
  const lines: CutLine[] = []
  const first = (g: GateName) => rows.findIndex((r) => r.gate === g)
  const f = config.floor !== null ? rows.findIndex((r) => r.score < config.floor!) : -1
  if (f >= 0) lines.push({ before: f, label: `floor ${config.floor!.toFixed(2)}`, gate: 'floor' })
  const k = first('topK')
  if (k >= 0) lines.push({ before: k, label: `topK ${config.topK}`, gate: 'topK' })
  const b = first('budget')
  if (b >= 0) lines.push({ before: b, label: `budget ${config.tokenBudget ?? '∞'} tokens`, gate: 'budget' })
  return lines.sort((x, y) => x.before - y.before)
}

/** A row's rank-change badge: its class, text and tooltip (empty when the rank did not change). */
function badgeOf(change: RankChange | undefined): { cls: string; text: string; title: string } {
  if (!change || change.before === change.after) return { cls: 'chg', text: '', title: '' }
  if (change.before === null) return { cls: 'chg new', text: 'NEW', title: 'newly injected' }
  if (change.after === null) return { cls: 'chg out', text: 'OUT', title: `was rank ${change.before}` }
  const d = change.before - change.after
  return { cls: `chg ${d > 0 ? 'up' : 'down'}`, text: d > 0 ? `▲${d}` : `▼${-d}`, title: `was rank ${change.before}` }
}

/** The bar's size in CSS pixels (recall.css: `.result > .stack`). */
const BAR_W = 150
const BAR_H = 12

const DARK = '(prefers-color-scheme: dark)'
/** 'dark' or 'light': the feature colours differ (styles.css), so the bars are drawn again when it changes. */
function colorScheme(): string {
  return darkQuery()?.matches ? 'dark' : 'light'
}
function subscribeScheme(onChange: () => void): () => void {
  const m = darkQuery()
  if (!m) return () => undefined
  m.addEventListener('change', onChange)
  return () => m.removeEventListener('change', onChange)
}
/** One query for every bar: each bar reads the scheme on every render (a new matchMedia per read cost ~15 µs). */
let dark: MediaQueryList | null | undefined
function darkQuery(): MediaQueryList | null {
  if (dark === undefined) dark = typeof matchMedia === 'function' ? matchMedia(DARK) : null
  return dark
}

/** The feature colours of a scheme, read from the stylesheet once per scheme (reading styles on every draw would force a style pass). */
const colorsByScheme = new Map<string, string[]>()
function featureColors(scheme: string): string[] {
  let colors = colorsByScheme.get(scheme)
  if (!colors) {
    const css = getComputedStyle(document.documentElement)
    colors = FEATURES.map((k) => css.getPropertyValue(FEATURE_VARS[k]).trim() || 'gray')
    colorsByScheme.set(scheme, colors)
  }
  return colors
}

/**
 * Forgets the feature colours read so far, so the next bar reads them from the stylesheet again: for a page whose
 * stylesheet's colours changed without a change of scheme (a test that sets its own computed style; the dom tests
 * share this module across files).
 */
export function forgetFeatureColors(): void {
  colorsByScheme.clear()
}
const FEATURE_VARS: Record<keyof Features, string> = { similarity: '--f-sim', lexical: '--f-lex', recency: '--f-rec', salience: '--f-sal' }

/** A getContext that gave no context (a DOM without canvases, jsdom): not asked again for every bar. */
let noContext: unknown = null

/**
 * Weighted contributions as a stacked bar on the row's canvas, the segments left to right, each feature's share
 * of `scale` wide. A canvas: a slider step changes every bar in view, and four filled rectangles cost next to
 * nothing to repaint, where a hard-stop gradient background cost ~1 ms of paint and style a step for 14 bars, and
 * one element per segment more (docs/internals/performance.md, "Recall sliders"). The track and the rounded
 * corners are the element's CSS; the segments take the feature colours of the current colour scheme.
 */
function drawBar(canvas: HTMLCanvasElement | null, c: Features, scale: number, scheme: string): void {
  // The method itself is the key (a test's stub is another one): read, never called, here.
  if (!canvas || Reflect.get(canvas, 'getContext') === noContext) return
  const g = canvas.getContext('2d')
  if (!g) {
    noContext = Reflect.get(canvas, 'getContext')
    return
  }
  const dpr = canvas.width / BAR_W
  g.setTransform(dpr, 0, 0, dpr, 0, 0)
  g.clearRect(0, 0, BAR_W, BAR_H)
  const colors = featureColors(scheme)
  let at = 0
  FEATURES.forEach((k, i) => {
    const w = (BAR_W * Math.max(0, c[k])) / (scale || 1)
    g.fillStyle = colors[i]
    g.fillRect(at, 0, w, BAR_H)
    at += w
  })
}

/** A bar's accessible text: the four contributions. */
function barLabel(c: Features): string {
  return `similarity ${c.similarity.toFixed(3)}, lexical ${c.lexical.toFixed(3)}, recency ${c.recency.toFixed(3)}, salience ${c.salience.toFixed(3)}`
}

/**
 * Everything a row shows: written into its element by `writeRow`, never rendered by React. A slider drag updates
 * the rows without a React render (the drag fast path, `ResultsListHandle.show`), and a render writes through the
 * same function, so what a row shows never depends on which of the two wrote it last.
 */
interface RowValues {
  /** the row's index in score order */
  index: number
  setsize: number
  /** translateY of a virtualised row (below its cut lines); undefined in a whole list */
  start: number | undefined
  id: string
  u: UnitInfo | undefined
  gate: GateName | null
  tokens: number
  rank: number | null
  change: RankChange | undefined
  score: number
  contributions: Features
  /** the bar's full length (the largest score shown) */
  scale: number
  /** the colour scheme the bar is drawn in */
  scheme: string
  selected: boolean
  focusable: boolean
}

/** What was last written into a row's element (so a step writes only what changed). */
interface Written {
  index: number
  setsize: number
  start: number | undefined
  id: string
  u: UnitInfo | undefined | null
  textId: string
  gate: GateName | null | undefined
  meta: string
  rank: string
  badge: string
  score: string
  contributions: Features | null
  cx: number
  cy: number
  cz: number
  cw: number
  scale: number
  scheme: string
  selected: boolean | null
  focusable: boolean | null
}
const written = new WeakMap<HTMLElement, Written>()

/** The memory's kind as the row's pill shows it. */
function kindOf(u: UnitInfo | undefined): string {
  return u?.kind ?? u?.role ?? (u && u.sessionId === u.id ? 'session' : 'unit')
}

/** A `<span>` with a class (or none), a tooltip (or none) and text. */
function span(cls: string, text: string, title?: string): HTMLSpanElement {
  const s = document.createElement('span')
  if (cls) s.className = cls
  if (title) s.title = title
  s.textContent = text
  return s
}

/**
 * Writes a row's values into its element (`li.result-wrap`, as `ResultRow` renders it): position, index, the
 * memory it shows (its id, gate, selection, text and facts), rank, change badge, score and bar. The only writer
 * of these: React renders the row's skeleton and the list calls this after every render, and the drag fast path
 * calls it without one. Writes only what differs from the last write into that element: a step rewrites the
 * scores and moves the rows; a memory's text is written only when the element takes another memory.
 */
function writeRow(li: HTMLElement, v: RowValues): void {
  const row = li.lastElementChild as HTMLElement
  const [rankEl, badgeEl, body, bar, scoreEl] = row.children as unknown as [HTMLElement, HTMLElement, HTMLElement, HTMLCanvasElement, HTMLElement]
  let w = written.get(li)
  if (!w) {
    w = {
      index: -1,
      setsize: -1,
      start: undefined,
      id: '',
      u: null,
      textId: '',
      gate: undefined,
      meta: '',
      rank: '',
      badge: '',
      score: '',
      contributions: null,
      cx: NaN,
      cy: NaN,
      cz: NaN,
      cw: NaN,
      scale: NaN,
      scheme: '',
      selected: null,
      focusable: null,
    }
    written.set(li, w)
  }
  if (v.index !== w.index) {
    w.index = v.index
    li.setAttribute('data-index', String(v.index))
    li.setAttribute('aria-posinset', String(v.index + 1))
  }
  if (v.setsize !== w.setsize) {
    w.setsize = v.setsize
    li.setAttribute('aria-setsize', String(v.setsize))
  }
  if (v.start !== w.start || (v.start === undefined && li.style.transform)) {
    w.start = v.start
    li.style.transform = v.start === undefined ? '' : `translateY(${v.start}px)`
  }
  if (v.id !== w.id) {
    w.id = v.id
    row.setAttribute('data-id', v.id)
  }
  if (v.gate !== w.gate) {
    w.gate = v.gate
    row.className = v.gate ? 'result dropped' : 'result'
    row.setAttribute('data-gate', v.gate ?? 'kept')
  }
  if (v.selected !== w.selected) {
    w.selected = v.selected
    row.setAttribute('aria-selected', String(v.selected))
  }
  if (v.focusable !== w.focusable) {
    w.focusable = v.focusable
    row.tabIndex = v.focusable ? 0 : -1
  }
  writeBody(body, v, w)
  const rank = v.rank === null ? '–' : String(v.rank)
  if (rank !== w.rank) writeText(rankEl, (w.rank = rank))
  const b = badgeOf(v.change)
  const badge = `${b.cls}|${b.text}|${b.title}`
  if (badge !== w.badge) {
    w.badge = badge
    badgeEl.className = b.cls
    writeText(badgeEl, b.text)
    if (b.title) badgeEl.title = b.title
    else badgeEl.removeAttribute('title')
  }
  const score = v.score.toFixed(3)
  if (score !== w.score) writeText(scoreEl, (w.score = score))
  // By value: the drag fast path re-ranks into the same contribution objects step after step.
  const c = v.contributions
  if (c.similarity !== w.cx || c.lexical !== w.cy || c.recency !== w.cz || c.salience !== w.cw || v.scale !== w.scale || v.scheme !== w.scheme) {
    const label = barLabel(c)
    if (bar.getAttribute('aria-label') !== label) bar.setAttribute('aria-label', label)
    w.cx = c.similarity
    w.cy = c.lexical
    w.cz = c.recency
    w.cw = c.salience
    w.scale = v.scale
    w.scheme = v.scheme
    drawBar(bar, c, v.scale, v.scheme)
  }
}

/**
 * The row's text and facts (`.result-body`): the text node rewritten only when the element takes another memory
 * (a memory that stays in view keeps its text untouched), the facts line when one of its facts changed.
 */
function writeBody(body: HTMLElement, v: RowValues, w: Written): void {
  if (!body.firstElementChild) {
    const text = document.createElement('div')
    text.className = 'result-text'
    text.appendChild(document.createTextNode(''))
    const meta = document.createElement('div')
    meta.className = 'result-meta'
    body.append(text, meta)
  }
  const [textEl, metaEl] = body.children as unknown as [HTMLElement, HTMLElement]
  if (v.u !== w.u || v.id !== w.textId) {
    w.u = v.u
    w.textId = v.id
    const t = v.u ? withSubject(v.u.content, v.u.metadata) : v.id
    const node = textEl.firstChild as Text
    if (node.data !== t) node.data = t
  }
  const wasRank = v.change?.after === null ? v.change.before : null
  const kind = kindOf(v.u)
  const meta = `${v.gate}|${wasRank}|${kind}|${v.tokens}|${v.id}`
  if (meta === w.meta) return
  w.meta = meta
  const spans: HTMLSpanElement[] = []
  if (v.gate) spans.push(span('gate', `✕ ${v.gate}`, `dropped: ${GATE_TEXT[v.gate]}`))
  if (wasRank !== null) spans.push(span('gate', `was #${wasRank}`))
  spans.push(span('pill-kind', kind), span('', `${v.tokens} tok`), span('mono result-id', v.id, v.id))
  metaEl.replaceChildren(...spans)
}

/** Writes a cut line's label (`.cut` as `CutLineLabel` renders it). */
function writeCut(cut: HTMLElement, line: CutLine): void {
  const label = `cut: ${line.label}`
  if (cut.getAttribute('aria-label') !== label) cut.setAttribute('aria-label', label)
  writeText(cut.firstElementChild, line.label)
}

/** What the list shows: rendered by React from its props, or shown without a render by the drag fast path. */
export interface ListState {
  rows: Row[]
  /** the gates' knobs (the cut lines) */
  config: Pick<RecallConfig, 'floor' | 'topK' | 'tokenBudget' | 'minSimilarity'>
  changes: Map<string, RankChange>
  selectedId: string | null
}

/** The list's imperative side, for the Recall screen's drag fast path (docs/internals/performance.md, "Round 5: a held slider without React"). */
export interface ResultsListHandle {
  /**
   * Shows `state` as a render of the list would: written into the row elements without a React render when the
   * elements (which memory goes where aside) and the cut lines in view stay the same, else by a render of the list
   * alone (a row element or a cut line came or went). Until the list's props change, a render of the list (a
   * scroll, the rows' re-sort at rest) shows this state, not the props'.
   */
  show: (state: ListState) => void
}

export interface ResultsListProps {
  rows: Row[]
  units: Record<string, UnitInfo>
  config: ListState['config']
  changes: Map<string, RankChange>
  selectedId: string | null
  onSelect: (id: string) => void
  onOpen: (id: string) => void
  /** the list's imperative side (`show`, for the drag fast path), set while the list is mounted */
  handle?: RefObject<ResultsListHandle | null>
}

/**
 * Longer lists are virtualised: only the rows in view (plus a margin) are in the DOM, so a slider step at
 * 1,000 candidates re-renders a screenful, not a thousand rows (docs/internals/performance.md). Shorter ones
 * are rendered whole (nothing to gain, and every row stays findable by the browser's find-in-page).
 */
const VIRTUAL_ABOVE = 60
/**
 * A row's height is known without measuring it (recall.css fixes both): `.result` 62 px, each cut line above
 * it 23 px. Measuring rows (reading their layout) on every slider step forced a layout per row.
 */
const ROW_PX = 62
const CUT_PX = 23
/** Rows drawn beyond the visible ones on each side: enough for a keyboard step; each one more is laid out every slider step. */
const OVERSCAN = 3
/**
 * After the ranking or the scroll position last changed, the rows go back into rank order in the DOM this much
 * later (rowSlots.ts): not during a drag, where each move would lay a row out again.
 */
const REST_MS = 300

/** A gate's cut line: where the gate starts cutting, in score order. Its label is written (`writeCut`). */
function CutLineLabel({ gate }: { gate: CutLine['gate'] }) {
  return (
    <div className={`cut cut-${gate}`} role="separator">
      <span />
    </div>
  )
}

interface RowProps {
  /** the gates of the cut lines drawn above it (a whole list), joined by commas */
  lineGates: string
  /** the row's element, for the list's writer of its values (`writeRow`) */
  refKey: number | string
  onElement: (key: number | string, el: HTMLLIElement | null) => void
  onSelect: (id: string) => void
  onOpen: (id: string) => void
}

/**
 * One row's skeleton, with the cut lines drawn above it in a whole list. Everything it shows (the memory, its gate
 * and selection, position, rank, badge, score, bar) is written by the list (`writeRow`), so a slider step does not
 * render it, and the drag fast path can change it without a render. It reads the memory it stands for from its
 * element when clicked.
 */
const ResultRow = memo(function ResultRow({ lineGates, refKey, onElement, onSelect, onOpen }: RowProps) {
  const dpr = typeof window === 'undefined' ? 1 : window.devicePixelRatio || 1
  return (
    <li className="result-wrap" ref={(el) => onElement(refKey, el)}>
      {lineGates && lineGates.split(',').map((g) => <CutLineLabel key={g} gate={g as CutLine['gate']} />)}
      <div
        className="result"
        onClick={(e) => onSelect(e.currentTarget.getAttribute('data-id')!)}
        onDoubleClick={(e) => onOpen(e.currentTarget.getAttribute('data-id')!)}
      >
        <span className="rank" />
        <span className="chg" />
        <div className="result-body" />
        {/* Weighted contributions as a stacked bar, drawn by drawBar (writeRow); labelled with the four values. */}
        <canvas className="stack" width={BAR_W * dpr} height={BAR_H * dpr} role="img" />
        <span className="score" />
      </div>
    </li>
  )
})

/** Where everything goes for one state of the list (the same arithmetic for a render and for the drag fast path). */
interface Placed {
  virtual: boolean
  geometry: FixedRows
  linesAt: Map<number, CutLine[]>
  /** the row elements, in DOM order: their keys and the row index each shows */
  items: { key: number | string; i: number }[]
  /** the memories in view, in rank order */
  ids: string[]
  /** a virtualised list's cut lines in view, with their positions */
  cuts: { l: CutLine; top: number }[]
  scale: number
  /** ids once injected that are no longer candidates */
  gone: number
  /** the elements' structure: equal for two states that differ only in what the elements show */
  shape: string
}

/** The list's state placed in its scroll box (`top`, `height`), the row elements given out by `slots`. */
function placeList(s: ListState, box: { top: number; height: number }, slots: RowSlots, sortRequest: number): Placed {
  const { rows } = s
  const lines = cutLines(rows, s.config)
  const linesAt = new Map<number, CutLine[]>()
  for (const l of lines) linesAt.set(l.before, [...(linesAt.get(l.before) ?? []), l])
  let scale = 1e-9
  for (const r of rows) if (r.score > scale) scale = r.score
  const virtual = rows.length > VIRTUAL_ABOVE
  // Positions are arithmetic over the fixed heights (fixedRows.ts): a step costs the rows in view, not every candidate.
  const geometry: FixedRows = { count: rows.length, rowPx: ROW_PX, cutPx: CUT_PX, cutsAt: lines.map((l) => l.before) }
  const shown: { i: number; start: number }[] = []
  if (virtual) {
    const { first, last } = rowsInView(geometry, box.top, box.height, OVERSCAN)
    for (let i = first; i <= last; i++) shown.push({ i, start: slotStart(geometry, i) })
  } else rows.forEach((_, i) => shown.push({ i, start: 0 }))
  const ids = shown.map(({ i }) => rows[i].id)
  let items: Placed['items']
  if (virtual) {
    // Which element shows which memory (rowSlots.ts): a memory that stays in view keeps its element across a step.
    const byId = new Map(shown.map((x) => [rows[x.i].id, x.i]))
    items = slots.place(ids, sortRequest).map((p) => ({ key: p.key, i: byId.get(p.id)! }))
  } else items = shown.map(({ i }) => ({ key: rows[i].id, i }))
  // In a virtualised list the cut lines are elements of their own, placed like the rows (by transform, at a fixed
  // height), after the rows in the DOM: a cut line inside a row changed that row's height whenever the line moved to
  // another memory, and a row whose height changes lays out the list, the column and the page again.
  const cuts = virtual ? shown.flatMap(({ i, start }) => (linesAt.get(i) ?? []).map((l, k) => ({ l, top: start + k * CUT_PX }))) : []
  // A few ids at most (those once injected), each looked for in the rows: no set of every candidate a step.
  let gone = 0
  for (const [id, c] of s.changes) if (c.after === null && !rows.some((r) => r.id === id)) gone++
  const shape = [
    virtual ? 'v' : 'w',
    gone,
    items.map(({ key, i }) => (virtual ? key : `${key}:${(linesAt.get(i) ?? []).map((l) => l.gate).join(',')}`)).join(' '),
    cuts.map((c) => c.l.gate).join(','),
  ].join('|')
  return { virtual, geometry, linesAt, items, ids, cuts, scale, gone, shape }
}

/**
 * What one mounted list keeps between renders and drag steps: the row and cut elements, which element shows which
 * memory, the state the drag fast path showed last (over the props it was shown on), and what the last render
 * drew, so a drag step knows whether it can be written without one.
 */
class ListCore {
  readonly slots = new RowSlots()
  readonly elements = new Map<number | string, HTMLLIElement>()
  readonly cutElements = new Map<string, HTMLLIElement>()
  private shown: { base: ListState; state: ListState } | null = null
  /** the last render's: props rows, structure, scroll box, units, colour scheme, rest sort, re-render */
  private last: {
    list: HTMLOListElement | null
    props: ListState
    shape: string
    box: { top: number; height: number }
    units: Record<string, UnitInfo>
    scheme: string
    sortRequest: number
    rerender: () => void
    /** the rows go back into rank order once the list rests (a drag step that leaves them out of order pokes it) */
    sortAtRest: () => void
  } | null = null

  /** The state a render shows: the drag fast path's while the props are the ones it was shown over (the same object), else the props'. */
  stateFor(props: ListState): ListState {
    return this.shown && this.shown.base === props ? this.shown.state : props
  }

  /** After a render: what it drew, and its values written into the elements. */
  rendered(props: ListState, s: ListState, p: Placed, ctx: Omit<NonNullable<ListCore['last']>, 'props' | 'shape'>): void {
    if (this.shown && this.shown.base !== props) this.shown = null
    this.last = { props, shape: p.shape, ...ctx }
    this.write(s, p)
  }

  /** ResultsListHandle.show. */
  show(state: ListState): void {
    const last = this.last
    if (!last) return
    this.shown = { base: last.props, state }
    const p = placeList(state, last.box, this.slots, last.sortRequest)
    if (p.shape !== last.shape) flushSync(last.rerender)
    else {
      this.write(state, p)
      if (p.virtual && !this.slots.inOrder(p.ids)) last.sortAtRest()
    }
  }

  private write(s: ListState, p: Placed): void {
    const last = this.last!
    const { rows, changes, selectedId } = s
    for (const { key, i } of p.items) {
      const el = this.elements.get(key)
      const r = rows[i]
      if (!el) continue
      writeRow(el, {
        index: i,
        setsize: rows.length,
        start: p.virtual ? rowStart(p.geometry, i) : undefined,
        id: r.id,
        u: last.units[r.id],
        gate: r.gate,
        tokens: r.tokens,
        rank: r.rank,
        change: changes.get(r.id),
        score: r.score,
        contributions: r.contributions,
        scale: p.scale,
        scheme: last.scheme,
        selected: selectedId === r.id,
        focusable: selectedId === r.id || (selectedId === null && i === 0),
      })
      if (!p.virtual) {
        const ls = p.linesAt.get(i)
        if (ls) el.querySelectorAll<HTMLElement>(':scope > .cut').forEach((c, k) => writeCut(c, ls[k]))
      }
    }
    for (const { l, top } of p.cuts) {
      const li = this.cutElements.get(l.gate)
      if (!li) continue
      const t = `translateY(${top}px)`
      if (li.style.transform !== t) li.style.transform = t
      writeCut(li.firstElementChild as HTMLElement, l)
    }
    if (last.list) {
      const h = p.virtual ? `${listHeight(p.geometry)}px` : ''
      if (last.list.style.height !== h) last.list.style.height = h
    }
  }
}

export function ResultsList(props: ResultsListProps) {
  const { units, onSelect, onOpen, handle } = props
  const [core] = useState(() => new ListCore())
  const fromProps = useMemo<ListState>(
    () => ({ rows: props.rows, config: props.config, changes: props.changes, selectedId: props.selectedId }),
    [props.rows, props.config, props.changes, props.selectedId],
  )
  const s = core.stateFor(fromProps)
  const { rows, selectedId } = s
  const [, rerender] = useReducer((n: number) => n + 1, 0)
  useImperativeHandle(handle, () => ({ show: (state: ListState) => core.show(state) }), [core])
  const listRef = useRef<HTMLOListElement>(null)
  // A long list scrolls in its own box under the summary: the window needs no offset of the list inside the
  // page (which would have to be measured, forcing a layout, whenever a notice above changed).
  const scrollRef = useRef<HTMLDivElement>(null)
  const box = useScrollBox(scrollRef, rows.length > VIRTUAL_ABOVE)
  const [sortRequest, setSortRequest] = useState(0)
  const rest = useQuietTimer(REST_MS)
  const p = placeList(s, box, core.slots, sortRequest)
  const { virtual, geometry } = p
  const inOrder = !virtual || core.slots.inOrder(p.ids)
  useEffect(() => {
    if (!inOrder) rest.poke(() => setSortRequest((n) => n + 1))
  })

  const onElement = useCallback(
    (key: number | string, el: HTMLLIElement | null) => {
      if (el) core.elements.set(key, el)
      else core.elements.delete(key)
    },
    [core],
  )
  const scheme = useSyncExternalStore(subscribeScheme, colorScheme)
  // Every row's values written into its element after every render (writeRow): the rows never re-render for them.
  useLayoutEffect(() => {
    core.rendered(fromProps, s, p, {
      list: listRef.current,
      box,
      units,
      scheme,
      sortRequest,
      rerender,
      sortAtRest: () => rest.poke(() => setSortRequest((n) => n + 1)),
    })
  })

  const focusRow = (id: string) => listRef.current?.querySelector<HTMLElement>(`[data-id="${CSS.escape(id)}"]`)?.focus()
  const onKey = (e: KeyboardEvent) => {
    const i = rows.findIndex((r) => r.id === selectedId)
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault()
      const ni = Math.min(rows.length - 1, Math.max(0, i + (e.key === 'ArrowDown' ? 1 : -1)))
      const next = rows[ni]
      if (next) {
        onSelect(next.id)
        const el = scrollRef.current
        if (virtual && el) {
          // The row may not be in the DOM yet: bring it into view, then focus it once drawn.
          el.scrollTop = scrollToShow(geometry, ni, el.scrollTop, el.clientHeight)
          requestAnimationFrame(() => focusRow(next.id))
        } else focusRow(next.id)
      }
    } else if (e.key === 'Enter' && selectedId) {
      e.preventDefault()
      onOpen(selectedId)
    }
  }

  const list = (
    <ol className={`results${virtual ? ' virtual' : ''}`} ref={listRef} aria-label="Recall results" onKeyDown={onKey}>
      {p.items.map(({ key, i }) => (
        <ResultRow
          key={key}
          lineGates={virtual ? '' : (p.linesAt.get(i) ?? []).map((l) => l.gate).join(',')}
          refKey={key}
          onElement={onElement}
          onSelect={onSelect}
          onOpen={onOpen}
        />
      ))}
      {p.cuts.map(({ l }) => (
        <li
          key={l.gate}
          className="cut-wrap"
          ref={(el) => {
            if (el) core.cutElements.set(l.gate, el)
            else core.cutElements.delete(l.gate)
          }}
        >
          <CutLineLabel gate={l.gate} />
        </li>
      ))}
    </ol>
  )
  return (
    <>
      {virtual ? (
        <div className="results-scroll" ref={scrollRef}>
          {list}
        </div>
      ) : (
        list
      )}
      {p.gone > 0 && (
        <p className="muted small" style={{ padding: 8 }}>
          {p.gone} previously injected memories are no longer candidates.
        </p>
      )}
    </>
  )
}
