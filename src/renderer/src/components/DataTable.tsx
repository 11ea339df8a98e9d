/**
 * A virtualised table over a server-paged list (TanStack Table v9 for columns,
 * headers, sizes, visibility and sort state; TanStack Virtual for the rows).
 * Only the pages around the viewport are fetched, so a million rows scroll
 * like a hundred.
 *
 * Columns: drag a header's right edge to resize, pick the shown ones under
 * "Columns" (both remembered per table in localStorage). The table fits its
 * box: the `grow` column takes the spare width, and gives it back down to its
 * minimum before the table scrolls sideways.
 */
import { useEffect, useEffectEvent, useMemo, useRef, useState, type KeyboardEvent, type PointerEvent as ReactPointerEvent, type ReactNode } from 'react'
import { useVirtualizer } from '@tanstack/react-virtual'
import {
  columnSizingFeature,
  columnVisibilityFeature,
  rowSortingFeature,
  tableFeatures,
  useTable,
  type ColumnDef,
  type ColumnSizingState,
  type ColumnVisibilityState,
  type RowData,
  type SortingState,
} from '@tanstack/react-table'
import type { Page } from '../../../shared/types'
import { fitWidths } from './fitWidths'
import './dataTable.css'

export const tableFeatureSet = tableFeatures({ columnSizingFeature, columnVisibilityFeature, rowSortingFeature })
export type Features = typeof tableFeatureSet
export type Columns<T extends RowData> = ColumnDef<Features, T, unknown>[]

const PAGE = 100
const ROW_H = 32
/** Browsers cap element heights (~33M px): scroll range is capped, the footer says so. */
const MAX_ROWS = 500_000

export interface DataTableProps<T extends RowData> {
  columns: Columns<T>
  /** Fetch one page; `sort` is the first sorting entry, if any. */
  fetchPage: (offset: number, limit: number, sort: { id: string; desc: boolean } | null) => Promise<Page<T>>
  /** Changing this key drops the cache and refetches (filters). */
  queryKey: string
  rowId: (row: T) => string
  selectedId?: string | null
  onSelect?: (row: T) => void
  initialSorting?: SortingState
  /** Told the sort the user picked (e.g. to keep it in the URL). */
  onSortChange?: (sort: { id: string; desc: boolean } | null) => void
  /** Shown when there are no rows. */
  empty?: ReactNode
  label: string
  /** The column that takes spare width (and gives it back first). @default none: extra width is left empty */
  grow?: string
  /** The least share of the table's width the `grow` column keeps; the others shrink toward their minimums for it. @default 0 */
  growShare?: number
  /** Columns hidden until the user shows them (the chooser remembers the user's pick). */
  defaultHidden?: readonly string[]
  /** Extra controls in the footer (e.g. export buttons); a function gets the current sort. */
  tools?: ReactNode | ((sort: { id: string; desc: boolean } | null) => ReactNode)
}

/** What the table remembers per label: the user's column widths and shown columns. */
interface SavedLayout {
  sizing?: ColumnSizingState
  visibility?: ColumnVisibilityState
}
const layoutKey = (label: string) => `recallscope.table.${label}`
function readLayout(label: string): SavedLayout {
  try {
    const raw = localStorage.getItem(layoutKey(label))
    const v = raw ? (JSON.parse(raw) as unknown) : null
    return v && typeof v === 'object' ? v : {}
  } catch {
    return {}
  }
}
function writeLayout(label: string, layout: SavedLayout): void {
  try {
    localStorage.setItem(layoutKey(label), JSON.stringify(layout))
  } catch {
    // storage full or disabled: the layout just is not remembered
  }
}

/** A column's name for the chooser: its header text, else its id. */
function columnName(def: { header?: unknown; id?: string }): string {
  return typeof def.header === 'string' ? def.header : (def.id ?? '')
}

export function DataTable<T extends RowData>(props: DataTableProps<T>) {
  const { columns, fetchPage, queryKey, rowId, selectedId, onSelect, label } = props
  const [sorting, setSorting] = useState<SortingState>(props.initialSorting ?? [])
  const [saved] = useState(() => readLayout(label))
  const [columnSizing, setColumnSizing] = useState<ColumnSizingState>(saved.sizing ?? {})
  const [columnVisibility, setColumnVisibility] = useState<ColumnVisibilityState>(
    () => saved.visibility ?? Object.fromEntries((props.defaultHidden ?? []).map((id) => [id, false])),
  )
  useEffect(() => writeLayout(label, { sizing: columnSizing, visibility: columnVisibility }), [label, columnSizing, columnVisibility])
  const [boxWidth, setBoxWidth] = useState(0)
  const [pages, setPages] = useState<Map<number, T[]>>(() => new Map())
  const [meta, setMeta] = useState<{ total: number; truncated: boolean; tookMs: number } | null>(null)
  const [error, setError] = useState<string | null>(null)
  const inflight = useRef(new Set<number>())
  const generation = useRef(0)
  const scrollRef = useRef<HTMLDivElement>(null)
  const [focusIndex, setFocusIndex] = useState(0)

  const sortKey = sorting[0] ? `${sorting[0].id}:${sorting[0].desc}` : ''
  const onSortChange = useEffectEvent(() => props.onSortChange?.(sorting[0] ? { id: sorting[0].id, desc: sorting[0].desc } : null))
  const firstSort = useRef(sortKey)
  useEffect(() => {
    if (sortKey !== firstSort.current) onSortChange()
    firstSort.current = sortKey
  }, [sortKey])
  // Reset on a new query or sort.
  useEffect(() => {
    generation.current++
    inflight.current.clear()
    setPages(new Map())
    setMeta(null)
    setError(null)
    setFocusIndex(0)
    scrollRef.current?.scrollTo({ top: 0 })
    void load(0)
  }, [queryKey, sortKey])

  // An effect event: the effects above and below start loads, and each load must see the current fetchPage and
  // sorting without those being reasons to re-run the effects (queryKey and sortKey are).
  const load = useEffectEvent(async (pageIndex: number) => {
    if (inflight.current.has(pageIndex)) return
    inflight.current.add(pageIndex)
    const gen = generation.current
    try {
      const p = await fetchPage(pageIndex * PAGE, PAGE, sorting[0] ? { id: sorting[0].id, desc: sorting[0].desc } : null)
      if (gen !== generation.current) return
      setPages((prev) => {
        const next = new Map(prev)
        next.set(pageIndex, p.rows)
        // Keep memory bounded: drop pages far from this one.
        if (next.size > 24) for (const k of next.keys()) if (Math.abs(k - pageIndex) > 12) next.delete(k)
        return next
      })
      setMeta({ total: p.total, truncated: p.truncated, tookMs: p.tookMs })
    } catch (e) {
      if (gen === generation.current) setError((e as Error).message)
    } finally {
      if (gen === generation.current) inflight.current.delete(pageIndex)
    }
  })

  const count = Math.min(meta?.total ?? 0, MAX_ROWS)
  // TanStack Virtual's API returns functions the React Compiler cannot memoise, so the compiler would skip this
  // component. We do not run the compiler, and nothing here memoises what the virtualizer returns.
  // eslint-disable-next-line react-hooks/incompatible-library -- not compiled; nothing memoises the virtualizer's results
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_H,
    overscan: 12,
  })
  const items = virtualizer.getVirtualItems()
  const first = items[0]?.index ?? 0
  const last = items[items.length - 1]?.index ?? 0

  // Fetch the pages the viewport needs (debounced while scrolling fast).
  useEffect(() => {
    if (!meta) return
    const t = setTimeout(() => {
      for (let p = Math.floor(first / PAGE); p <= Math.floor(last / PAGE); p++) if (!pages.has(p)) void load(p)
    }, 40)
    return () => clearTimeout(t)
  }, [first, last, meta, pages])

  // The table sees only loaded rows; each keeps its absolute index.
  const data = useMemo(() => {
    const out: (T & { __i: number })[] = []
    for (const [p, rows] of [...pages].sort((a, b) => a[0] - b[0]))
      rows.forEach((r, i) => out.push(Object.assign(Object.create(null) as object, r, { __i: p * PAGE + i })))
    return out
  }, [pages])

  const table = useTable({
    features: tableFeatureSet,
    columns: columns as Columns<T & { __i: number }>,
    data,
    getRowId: (r) => `${r.__i}`,
    state: { sorting, columnSizing, columnVisibility },
    onSortingChange: setSorting,
    onColumnSizingChange: setColumnSizing,
    onColumnVisibilityChange: setColumnVisibility,
    manualSorting: true,
    enableMultiSort: false,
    enableSortingRemoval: false,
  })
  // The row model is memoised by the table on its data, so its identity is what says the rows changed.
  const rowModel = table.getRowModel()
  const rowsByIndex = useMemo(() => {
    const m = new Map<number, (typeof rowModel.rows)[number]>()
    for (const r of rowModel.rows) m.set(r.original.__i, r)
    return m
  }, [rowModel])

  const rowAt = (i: number): T | undefined => pages.get(Math.floor(i / PAGE))?.[i % PAGE]

  const onKeyDown = (e: KeyboardEvent) => {
    if (!count) return
    let next = focusIndex
    if (e.key === 'ArrowDown') next = Math.min(count - 1, focusIndex + 1)
    else if (e.key === 'ArrowUp') next = Math.max(0, focusIndex - 1)
    else if (e.key === 'PageDown') next = Math.min(count - 1, focusIndex + 20)
    else if (e.key === 'PageUp') next = Math.max(0, focusIndex - 20)
    else if (e.key === 'Home') next = 0
    else if (e.key === 'End') next = count - 1
    else if (e.key === 'Enter') {
      const r = rowAt(focusIndex)
      if (r) onSelect?.(r)
      e.preventDefault()
      return
    } else return
    e.preventDefault()
    setFocusIndex(next)
    virtualizer.scrollToIndex(next, { align: 'auto' })
    const r = rowAt(next)
    if (r) onSelect?.(r)
    requestAnimationFrame(() => scrollRef.current?.querySelector<HTMLElement>(`tr[data-index="${next}"]`)?.focus())
  }

  const headers = table.getHeaderGroups()[0]?.headers ?? []
  // Measure the scroll box: the widths fit it (the grow column takes up or gives back the difference).
  useEffect(() => {
    const el = scrollRef.current
    if (!el) return
    const measure = () => setBoxWidth(el.clientWidth)
    measure()
    if (typeof ResizeObserver === 'undefined') return
    const ro = new ResizeObserver(measure)
    ro.observe(el)
    return () => ro.disconnect()
  }, [])
  const widths = fitWidths(
    headers.map((h) => ({ id: h.id, size: h.getSize(), min: h.column.columnDef.minSize ?? 48, grow: h.id === props.grow })),
    boxWidth,
    props.growShare,
  )
  const totalWidth = headers.reduce((s, h) => s + (widths.get(h.id) ?? h.getSize()), 0)

  // Drag a header's right edge: the column's width follows the pointer (min 48 px).
  const startResize = (e: ReactPointerEvent<HTMLSpanElement>, id: string, from: number, min: number) => {
    e.preventDefault()
    e.stopPropagation()
    const x0 = e.clientX
    const el = e.currentTarget
    el.setPointerCapture(e.pointerId)
    const move = (ev: PointerEvent) => setColumnSizing((s) => ({ ...s, [id]: Math.max(min, Math.round(from + ev.clientX - x0)) }))
    const up = () => {
      el.removeEventListener('pointermove', move)
      el.removeEventListener('pointerup', up)
      el.removeEventListener('pointercancel', up)
    }
    el.addEventListener('pointermove', move)
    el.addEventListener('pointerup', up)
    el.addEventListener('pointercancel', up)
  }

  return (
    <div className="dt">
      <div className="dt-scroll" ref={scrollRef} onKeyDown={onKeyDown}>
        <table aria-label={label} aria-rowcount={count} style={{ width: totalWidth }}>
          <colgroup>
            {headers.map((h) => (
              <col key={h.id} style={{ width: widths.get(h.id) }} />
            ))}
          </colgroup>
          <thead>
            <tr>
              {headers.map((h) => {
                const sorted = h.column.getIsSorted()
                const can = h.column.getCanSort()
                const min = h.column.columnDef.minSize ?? 48
                return (
                  <th
                    key={h.id}
                    className={can ? 'sortable' : undefined}
                    aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : undefined}
                    onClick={can ? h.column.getToggleSortingHandler() : undefined}
                    title={can ? 'Sort' : undefined}
                    data-col={h.id}
                  >
                    <table.FlexRender header={h} />
                    {sorted ? (sorted === 'asc' ? ' ▲' : ' ▼') : ''}
                    <span
                      className="dt-resize"
                      role="separator"
                      aria-orientation="vertical"
                      // not "Resize Kind": a label holding the column name would also answer to a search for the Kind filter
                      aria-label="Resize column"
                      title="Drag to resize; double-click for the default width"
                      onPointerDown={(e) => startResize(e, h.id, widths.get(h.id) ?? h.getSize(), min)}
                      onClick={(e) => e.stopPropagation()}
                      onDoubleClick={(e) => {
                        e.stopPropagation()
                        h.column.resetSize()
                      }}
                    />
                  </th>
                )
              })}
            </tr>
          </thead>
          <tbody>
            {items.length > 0 && <tr style={{ height: items[0].start }} aria-hidden />}
            {items.map((vi) => {
              const row = rowsByIndex.get(vi.index)
              if (!row)
                return (
                  <tr key={`s${vi.index}`} data-index={vi.index} aria-busy>
                    {headers.map((h) => (
                      <td key={h.id}>
                        <span className="skeleton">loading</span>
                      </td>
                    ))}
                  </tr>
                )
              const id = rowId(row.original)
              return (
                <tr
                  key={id}
                  data-index={vi.index}
                  data-id={id}
                  tabIndex={vi.index === focusIndex ? 0 : -1}
                  aria-selected={selectedId === id}
                  onClick={() => {
                    setFocusIndex(vi.index)
                    onSelect?.(row.original)
                  }}
                >
                  {row.getVisibleCells().map((cell) => (
                    <td key={cell.id} data-col={cell.column.id}>
                      <table.FlexRender cell={cell} />
                    </td>
                  ))}
                </tr>
              )
            })}
            {items.length > 0 && <tr style={{ height: virtualizer.getTotalSize() - items[items.length - 1].end }} aria-hidden />}
          </tbody>
        </table>
        {meta && meta.total === 0 && <div style={{ padding: 16 }}>{props.empty ?? <span className="muted">No rows.</span>}</div>}
      </div>
      <div className="dt-foot">
        {error ? (
          <span className="error">{error}</span>
        ) : meta ? (
          <>
            <span data-testid="table-total">{meta.truncated ? `${meta.total.toLocaleString('en-US')}+` : meta.total.toLocaleString('en-US')} rows</span>
            {count < meta.total && <span>(scroll shows the first {count.toLocaleString('en-US')}; narrow the filters)</span>}
            <span className="spacer" style={{ flex: 1 }} />
            <span>page query {Math.round(meta.tookMs)} ms</span>
          </>
        ) : (
          <span>loading…</span>
        )}
        {!meta && <span className="spacer" style={{ flex: 1 }} />}
        {typeof props.tools === 'function' ? props.tools(sorting[0] ? { id: sorting[0].id, desc: sorting[0].desc } : null) : props.tools}
        <ColumnChooser
          label={label}
          columns={table.getAllLeafColumns().map((c) => ({
            id: c.id,
            name: columnName(c.columnDef),
            visible: c.getIsVisible(),
            toggle: (v: boolean) => c.toggleVisibility(v),
          }))}
          onResetWidths={() => setColumnSizing({})}
        />
      </div>
    </div>
  )
}

/** "Columns": tick the shown columns; reset the widths to their defaults. */
function ColumnChooser({
  label,
  columns,
  onResetWidths,
}: {
  label: string
  columns: { id: string; name: string; visible: boolean; toggle: (v: boolean) => void }[]
  onResetWidths: () => void
}) {
  const [open, setOpen] = useState(false)
  const ref = useRef<HTMLSpanElement>(null)
  useEffect(() => {
    if (!open) return
    const close = (e: MouseEvent) => ref.current && !ref.current.contains(e.target as Node) && setOpen(false)
    document.addEventListener('mousedown', close)
    return () => document.removeEventListener('mousedown', close)
  }, [open])
  const shown = columns.filter((c) => c.visible).length
  return (
    <span
      className="dt-chooser"
      ref={ref}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && open) {
          e.stopPropagation()
          setOpen(false)
          ref.current?.querySelector<HTMLButtonElement>('button')?.focus()
        }
      }}
    >
      <button type="button" className="btn small" aria-expanded={open} aria-haspopup="true" onClick={() => setOpen((o) => !o)}>
        Columns {shown}/{columns.length}
      </button>
      {open && (
        <div className="dt-chooser-pop" role="group" aria-label={`${label} columns`}>
          {columns.map((c, i) => (
            <label key={c.id} className="toggle">
              <input
                type="checkbox"
                autoFocus={i === 0}
                checked={c.visible}
                // the last shown column stays: a table with no columns shows nothing to click
                disabled={c.visible && shown === 1}
                onChange={(e) => c.toggle(e.target.checked)}
              />
              {c.name || c.id}
            </label>
          ))}
          <button type="button" className="btn small" onClick={onResetWidths}>
            Reset widths (fit to width)
          </button>
        </div>
      )}
    </span>
  )
}
