/**
 * The recency decay curve drawn over the real age distribution of the
 * memories in scope: bars = how many memories are that old at `now`, line =
 * the recency feature 0.5 ^ (age / half-life). Moving the half-life redraws the
 * line only (the histogram is fetched when scope / now / age source change).
 *
 * Plain SVG in a fixed viewBox, scaled by the browser: a slider step redraws
 * one polyline, with no chart library measuring paths or animating
 * (docs/internals/performance.md, "Recall sliders").
 */
import { memo, useMemo } from 'react'
import type { RecallConfig } from '../../../../shared/types'
import { recencyOf } from '../../../../shared/scoring'
import { call } from '../../lib/api'
import { useAsync } from '../../lib/useAsync'
import { fmtHours } from './weights'

const DAY = 86_400_000

/** Histogram bins → chart points: age in days, count, and recency at the bin's middle age. */
export function decayPoints(
  bins: readonly { startMs: number; endMs: number; count: number }[],
  halfLifeHours: number,
): { day: number; count: number; recency: number }[] {
  return bins.map((b) => {
    const mid = (b.startMs + b.endMs) / 2
    return { day: mid / DAY, count: b.count, recency: recencyOf(mid, halfLifeHours) }
  })
}

/** The chart's drawing box (SVG user units; the element scales it to the panel's width, keeping its shape). */
const W = 300
const H = 120
const PAD = { left: 26, right: 4, top: 4, bottom: 16 }

export const DecayChart = memo(function DecayChart({
  scope,
  now,
  from,
  halfLifeHours,
}: {
  scope: RecallConfig['scope']
  now: number
  from: 'last_used' | 'created'
  halfLifeHours: number
}) {
  const key = JSON.stringify({ scope, now: Math.round(now / 60_000), from })
  const ages = useAsync(() => call('recall.ages', { scope, now, from, bins: 30 }), [key])
  const data = useMemo(() => (ages.data ? decayPoints(ages.data.bins, halfLifeHours) : []), [ages.data, halfLifeHours])
  const bins = ages.data?.bins
  // The histogram depends on the ages only: the half-life slider leaves these elements alone.
  // No bins when no memory in scope has a time (a mapped table without a created column): no bars, no crash.
  const bars = useMemo(() => (bins?.length ? histogramBars(bins) : null), [bins])
  const line = useMemo(() => {
    if (!bins?.length) return ''
    const x = xScale(bins)
    return data.map((p) => `${x(p.day * DAY).toFixed(1)},${(PAD.top + (1 - p.recency) * (H - PAD.top - PAD.bottom)).toFixed(1)}`).join(' ')
  }, [bins, data])
  return (
    <div className="decay" aria-label="Decay curve over memory ages">
      <div className="small muted">
        {ages.data
          ? `${ages.data.total.toLocaleString('en-US')} memories in scope; half-life ${fmtHours(halfLifeHours)}`
          : ages.error
            ? ages.error.message
            : 'loading ages…'}
      </div>
      <svg className="decay-chart" viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label="memories by age, and the recency curve">
        {bars && (
          <>
            <g className="decay-bars">
              {bars.rects.map((r, i) => (
                <rect key={i} x={r.x} y={r.y} width={r.w} height={r.h}>
                  <title>{r.title}</title>
                </rect>
              ))}
            </g>
            <g className="decay-axis">
              <line x1={PAD.left} x2={W - PAD.right} y1={H - PAD.bottom} y2={H - PAD.bottom} />
              {bars.ticks.map((t) => (
                <text key={t.x} x={t.x} y={H - 4} textAnchor={t.anchor}>
                  {t.label}
                </text>
              ))}
              <text x={PAD.left - 3} y={PAD.top + 8} textAnchor="end">
                {bars.max}
              </text>
              <text x={PAD.left - 3} y={H - PAD.bottom} textAnchor="end">
                0
              </text>
            </g>
          </>
        )}
        {line && <polyline className="decay-line" points={line} fill="none" vectorEffect="non-scaling-stroke" />}
      </svg>
    </div>
  )
})

type Bin = { startMs: number; endMs: number; count: number }

/** Age (ms) → x in the drawing box, over the bins' whole span. */
function xScale(bins: readonly Bin[]): (ms: number) => number {
  const lo = bins[0].startMs
  const hi = bins[bins.length - 1].endMs
  const span = hi > lo ? hi - lo : 1
  return (ms) => PAD.left + ((ms - lo) / span) * (W - PAD.left - PAD.right)
}

/** One rectangle per bin (height ∝ count), five day ticks and the largest count. */
function histogramBars(bins: readonly Bin[]) {
  const x = xScale(bins)
  const max = Math.max(1, ...bins.map((b) => b.count))
  const plot = H - PAD.top - PAD.bottom
  const rects = bins.map((b) => {
    const h = (b.count / max) * plot
    return {
      x: x(b.startMs),
      y: H - PAD.bottom - h,
      w: Math.max(0.5, x(b.endMs) - x(b.startMs) - 0.5),
      h,
      title: `${b.count.toLocaleString('en-US')} memories ${(b.startMs / DAY).toFixed(1)}–${(b.endMs / DAY).toFixed(1)} days old`,
    }
  })
  const lo = bins[0].startMs
  const hi = bins[bins.length - 1].endMs
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const ms = lo + f * (hi - lo)
    // The end labels hang inward: centred, they would be cut by the box's edges.
    const anchor: 'start' | 'end' | 'middle' = f === 0 ? 'start' : f === 1 ? 'end' : 'middle'
    return { x: x(ms), label: `${Math.round(ms / DAY)}d`, anchor }
  })
  return { rects, ticks, max }
}
