/**
 * Ranked candidates: a stacked bar of weighted contributions per memory, the
 * composite, cut lines where floor / topK / budget fall, dropped candidates
 * greyed with the gate that dropped them, rank-change arrows and new/dropped
 * badges since the previous change. Keyboard: ↑/↓ move, Enter opens. Every
 * candidate is listed; a long list is virtualised.
 */
import { withSubject } from '../../../../shared/subject'
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore, type KeyboardEvent } from 'react'
import type { Features, GateName, RecallConfig, TraceDropped, TraceResult, UnitInfo } from '../../../../shared/types'
import type { RankChange } from './useRecall'
import { FEATURES } from './weights'
import { RowSlots } from './rowSlots'
import { listHeight, rowStart, rowsInView, scrollToShow, slotStart, useScrollBox, type FixedRows } from './fixedRows'
import { useQuietTimer } from '../../lib/quietTimer'

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

/** One list in score order (results and dropped interleaved), as the gates saw it. */
export function toRows(results: readonly TraceResult[], dropped: readonly TraceDropped[]): Row[] {
  const n = results.length + dropped.length
  const rows: Row[] = []
  // Built field by field (one shape for all, no spread): this runs for every candidate on every slider step.
  const put = (r: TraceResult | TraceDropped, gate: GateName | null, rank: number | null, scoreRank: number) =>
    rows.push({
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
    })
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

/** What a slider step changes in a row: written into its element by `writeRowCells`, never rendered by React. */
interface RowCells {
  /** the row's index in score order */
  index: number
  setsize: number
  /** translateY of a virtualised row (below its cut lines); undefined in a whole list */
  start: number | undefined
  rank: number | null
  change: RankChange | undefined
  score: number
  contributions: Features
  /** the bar's full length (the largest score shown) */
  scale: number
  /** the colour scheme the bar is drawn in */
  scheme: string
}

/** What was last written into a row's element (so a step writes only what changed). */
interface Written {
  index: number
  setsize: number
  start: number | undefined
  rank: string
  badge: string
  score: string
  contributions: Features | null
  scale: number
  scheme: string
}
const written = new WeakMap<HTMLElement, Written>()

/**
 * Writes a row's per-step values into its element (`li.result-wrap`, as `ResultRow` renders it): position, index,
 * rank, change badge, score and bar. The only writer of these: React renders the cells empty and the list calls
 * this after every render, so the values shown never depend on what React last rendered (a later direct update
 * of the rows, without a render, writes through the same function). Writes only what differs from the last write
 * into that element: a step rewrites the scores and moves the rows, most ranks and badges stay.
 */
function writeRowCells(li: HTMLElement, v: RowCells): void {
  const row = li.lastElementChild as HTMLElement
  const [rankEl, badgeEl, , bar, scoreEl] = row.children as unknown as [HTMLElement, HTMLElement, HTMLElement, HTMLCanvasElement, HTMLElement]
  let w = written.get(li)
  if (!w) {
    w = { index: -1, setsize: -1, start: undefined, rank: '', badge: '', score: '', contributions: null, scale: NaN, scheme: '' }
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
  const rank = v.rank === null ? '–' : String(v.rank)
  if (rank !== w.rank) rankEl.textContent = w.rank = rank
  const b = badgeOf(v.change)
  const badge = `${b.cls}|${b.text}|${b.title}`
  if (badge !== w.badge) {
    w.badge = badge
    badgeEl.className = b.cls
    badgeEl.textContent = b.text
    if (b.title) badgeEl.title = b.title
    else badgeEl.removeAttribute('title')
  }
  const score = v.score.toFixed(3)
  if (score !== w.score) scoreEl.textContent = w.score = score
  if (v.contributions !== w.contributions || v.scale !== w.scale || v.scheme !== w.scheme) {
    const label = barLabel(v.contributions)
    if (bar.getAttribute('aria-label') !== label) bar.setAttribute('aria-label', label)
    w.contributions = v.contributions
    w.scale = v.scale
    w.scheme = v.scheme
    drawBar(bar, v.contributions, v.scale, v.scheme)
  }
}

export interface ResultsListProps {
  rows: Row[]
  units: Record<string, UnitInfo>
  config: RecallConfig
  changes: Map<string, RankChange>
  selectedId: string | null
  onSelect: (id: string) => void
  onOpen: (id: string) => void
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

/**
 * The row's text and facts: re-rendered only when the memory it shows or its gate changes, not for every new
 * score of a slider step.
 */
const RowBody = memo(function RowBody({
  id,
  u,
  gate,
  tokens,
  wasRank,
}: {
  id: string
  u: UnitInfo | undefined
  gate: GateName | null
  tokens: number
  /** the rank it had before it dropped out, when it just did */
  wasRank: number | null
}) {
  return (
    <div className="result-body">
      <div className="result-text">{u ? withSubject(u.content, u.metadata) : id}</div>
      <div className="result-meta">
        {gate && (
          <span className="gate" title={`dropped: ${GATE_TEXT[gate]}`}>
            ✕ {gate}
          </span>
        )}
        {wasRank !== null && <span className="gate">was #{wasRank}</span>}
        <span className="pill-kind">{u?.kind ?? u?.role ?? (u && u.sessionId === u.id ? 'session' : 'unit')}</span>
        <span>{tokens} tok</span>
        <span className="mono result-id" title={id}>
          {id}
        </span>
      </div>
    </div>
  )
})

/** A gate's cut line: where the gate starts cutting, in score order. */
function CutLineLabel({ line }: { line: CutLine }) {
  return (
    <div className={`cut cut-${line.gate}`} role="separator" aria-label={`cut: ${line.label}`}>
      <span>{line.label}</span>
    </div>
  )
}

interface RowProps {
  id: string
  gate: GateName | null
  tokens: number
  u: UnitInfo | undefined
  /** the rank it had before it dropped out, when it just did */
  wasRank: number | null
  lines: CutLine[] | undefined
  selected: boolean
  focusable: boolean
  /** the row's element, for the list's writer of its per-step values (`writeRowCells`) */
  refKey: number | string
  onElement: (key: number | string, el: HTMLLIElement | null) => void
  onSelect: (id: string) => void
  onOpen: (id: string) => void
}

/**
 * One candidate, with the cut lines drawn above it in a whole list. Its per-step values (position, index, rank,
 * badge, score, bar) are not rendered here but written by the list (`writeRowCells`), so a slider step that only
 * moves and re-scores a row does not render it: it re-renders when the memory it shows, its gate, its selection
 * or its cut lines change.
 */
const ResultRow = memo(function ResultRow({ id, gate, tokens, u, wasRank, lines, selected, focusable, refKey, onElement, onSelect, onOpen }: RowProps) {
  const dpr = typeof window === 'undefined' ? 1 : window.devicePixelRatio || 1
  return (
    <li className="result-wrap" ref={(el) => onElement(refKey, el)}>
      {(lines ?? []).map((l) => (
        <CutLineLabel key={l.gate} line={l} />
      ))}
      <div
        className={`result${gate ? ' dropped' : ''}`}
        data-id={id}
        data-gate={gate ?? 'kept'}
        tabIndex={focusable ? 0 : -1}
        aria-selected={selected}
        onClick={() => onSelect(id)}
        onDoubleClick={() => onOpen(id)}
      >
        <span className="rank" />
        <span className="chg" />
        <RowBody id={id} u={u} gate={gate} tokens={tokens} wasRank={wasRank} />
        {/* Weighted contributions as a stacked bar, drawn by drawBar (writeRowCells); labelled with the four values. */}
        <canvas className="stack" width={BAR_W * dpr} height={BAR_H * dpr} role="img" />
        <span className="score" />
      </div>
    </li>
  )
})

export function ResultsList({ rows, units, config, changes, selectedId, onSelect, onOpen }: ResultsListProps) {
  const lines = useMemo(() => cutLines(rows, config), [rows, config])
  const linesAt = useMemo(() => {
    const m = new Map<number, CutLine[]>()
    for (const l of lines) m.set(l.before, [...(m.get(l.before) ?? []), l])
    return m
  }, [lines])
  const scale = useMemo(() => rows.reduce((m, r) => Math.max(m, r.score), 1e-9), [rows])
  const listRef = useRef<HTMLOListElement>(null)
  const outIds = [...changes].filter(([, c]) => c.after === null).map(([id]) => id)
  const virtual = rows.length > VIRTUAL_ABOVE
  // A long list scrolls in its own box under the summary: the window needs no offset of the list inside the
  // page (which would have to be measured, forcing a layout, whenever a notice above changed).
  const scrollRef = useRef<HTMLDivElement>(null)
  const box = useScrollBox(scrollRef, virtual)
  // Positions are arithmetic over the fixed heights (fixedRows.ts): a step costs the rows in view, not every candidate.
  const geometry = useMemo<FixedRows>(() => ({ count: rows.length, rowPx: ROW_PX, cutPx: CUT_PX, cutsAt: lines.map((l) => l.before) }), [rows.length, lines])
  const shown: { i: number; start: number }[] = []
  if (virtual) {
    const { first, last } = rowsInView(geometry, box.top, box.height, OVERSCAN)
    for (let i = first; i <= last; i++) shown.push({ i, start: slotStart(geometry, i) })
  } else rows.forEach((_, i) => shown.push({ i, start: 0 }))
  // Which element shows which memory (rowSlots.ts): a memory that stays in view keeps its element across a step.
  const [slots] = useState(() => new RowSlots())
  const [sortRequest, setSortRequest] = useState(0)
  const rest = useQuietTimer(REST_MS)
  const shownIds = shown.map(({ i }) => rows[i].id)
  const placed = virtual ? slots.place(shownIds, sortRequest) : null
  const inOrder = !virtual || slots.inOrder(shownIds)
  useEffect(() => {
    if (!inOrder) rest.poke(() => setSortRequest((n) => n + 1))
  })
  const byId = new Map(shown.map((x) => [rows[x.i].id, x]))
  const items = placed ? placed.map((p) => ({ key: p.key, ...byId.get(p.id)! })) : shown.map((x) => ({ key: rows[x.i].id, ...x }))
  // In a virtualised list the cut lines are elements of their own, placed like the rows (by transform, at a fixed
  // height), after the rows in the DOM: a cut line inside a row changed that row's height whenever the line moved to
  // another memory, and a row whose height changes lays out the list, the column and the page again.
  const cuts = virtual ? shown.flatMap(({ i, start }) => (linesAt.get(i) ?? []).map((l, k) => ({ l, top: start + k * CUT_PX }))) : []

  // Each row's per-step values, written into its element after every render (writeRowCells): the rows themselves
  // re-render only when what they show besides these changes.
  const [elements] = useState(() => new Map<number | string, HTMLLIElement>())
  const onElement = useCallback(
    (key: number | string, el: HTMLLIElement | null) => {
      if (el) elements.set(key, el)
      else elements.delete(key)
    },
    [elements],
  )
  const scheme = useSyncExternalStore(subscribeScheme, colorScheme)
  useLayoutEffect(() => {
    for (const { key, i } of items) {
      const el = elements.get(key)
      const r = rows[i]
      if (el)
        writeRowCells(el, {
          index: i,
          setsize: rows.length,
          start: virtual ? rowStart(geometry, i) : undefined,
          rank: r.rank,
          change: changes.get(r.id),
          score: r.score,
          contributions: r.contributions,
          scale,
          scheme,
        })
    }
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
    <ol
      className={`results${virtual ? ' virtual' : ''}`}
      ref={listRef}
      aria-label="Recall results"
      onKeyDown={onKey}
      style={virtual ? { height: listHeight(geometry) } : undefined}
    >
      {items.map(({ key, i }) => {
        const r = rows[i]
        const change = changes.get(r.id)
        return (
          <ResultRow
            key={key}
            id={r.id}
            gate={r.gate}
            tokens={r.tokens}
            u={units[r.id]}
            wasRank={change?.after === null ? change.before : null}
            lines={virtual ? undefined : linesAt.get(i)}
            selected={selectedId === r.id}
            focusable={selectedId === r.id || (selectedId === null && i === 0)}
            refKey={key}
            onElement={onElement}
            onSelect={onSelect}
            onOpen={onOpen}
          />
        )
      })}
      {cuts.map(({ l, top }) => (
        <li key={l.gate} className="cut-wrap" style={{ transform: `translateY(${top}px)` }}>
          <CutLineLabel line={l} />
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
      {outIds.length > 0 && !outIds.every((id) => rows.some((r) => r.id === id)) && (
        <p className="muted small" style={{ padding: 8 }}>
          {outIds.filter((id) => !rows.some((r) => r.id === id)).length} previously injected memories are no longer candidates.
        </p>
      )}
    </>
  )
}
