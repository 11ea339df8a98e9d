/**
 * Eval charts (recharts 3): a metric's history over runs, a run's metrics as
 * bars with their 95% intervals, the distribution of a per-case metric, metric
 * deltas of a comparison, and tune's convergence curve. Charts size themselves
 * to their box (a fixed fallback where the box cannot be measured).
 */
import { useEffect, useRef, useState, type ReactNode } from 'react'
import { Bar, BarChart, CartesianGrid, Cell, ErrorBar, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from 'recharts'
import type { EvalRunSummary } from '../../../../shared/eval'
import { fmtDate } from '../../lib/format'

/** Measure the box's width; children draw at that width. */
function Sized({ height, children, label }: { height: number; children: (width: number) => ReactNode; label: string }) {
  const ref = useRef<HTMLDivElement>(null)
  const [w, setW] = useState(640)
  useEffect(() => {
    const el = ref.current
    if (!el) return
    const measure = () => {
      const cw = el.clientWidth
      if (cw > 0) setW(cw)
    }
    measure()
    if (typeof ResizeObserver === 'undefined') return
    const ro = new ResizeObserver(measure)
    ro.observe(el)
    return () => ro.disconnect()
  }, [])
  return (
    <div ref={ref} className="chart" style={{ height }} role="img" aria-label={label}>
      {children(w)}
    </div>
  )
}

const tick = { fontSize: 10 }
const f3 = (v: unknown) => (typeof v === 'number' ? v.toFixed(3) : String(v))

/** A run name shortened for an axis tick (the tooltip has the whole name). */
function shortName(name: string, max = 16): string {
  return name.length > max ? `${name.slice(0, max - 1)}…` : name
}

/**
 * The chosen metric for every run that has it, oldest → newest, one point per
 * run named on the x-axis. Points, not a line: consecutive runs are unrelated
 * configs, and a line between them would draw a trend that is not there.
 */
export function MetricHistoryChart({
  runs,
  metric,
  selectedId,
  onSelect,
}: {
  runs: readonly EvalRunSummary[]
  metric: string
  selectedId?: string | null
  onSelect?: (id: string) => void
}) {
  const data = [...runs]
    .filter((r) => r.metrics[metric] !== undefined && r.metrics[metric] !== null)
    .sort((a, b) => a.createdAt - b.createdAt)
    .map((r, i) => ({ i, id: r.id, name: r.name || r.preset || r.id, when: fmtDate(r.createdAt), value: r.metrics[metric] as number }))
  if (data.length === 0) return <div className="notice">No run has {metric} yet.</div>
  // 0..1 metrics get a fixed 0–1 axis with quarter ticks (runs stay comparable as the list grows); counts get nice auto ticks.
  const unit = data.every((d) => d.value >= 0 && d.value <= 1)
  const height = 220
  return (
    <Sized height={height} label={`${metric} over runs`}>
      {(w) => (
        <LineChart
          width={w}
          height={height}
          data={data}
          margin={{ top: 8, right: 16, bottom: 4, left: 0 }}
          onClick={(e) => onSelect && typeof e?.activeIndex === 'number' && onSelect(data[e.activeIndex]?.id)}
        >
          <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" />
          <XAxis
            dataKey="i"
            type="category"
            tick={{ fontSize: 10, fill: 'var(--muted)' }}
            tickFormatter={(i: number) => shortName(data[i]?.name ?? '')}
            interval="preserveStartEnd"
            minTickGap={6}
            angle={-28}
            textAnchor="end"
            height={62}
            // inset the first and last runs so their points and (slanted) names are not cut at the edges
            padding={{ left: 48, right: 24 }}
            label={{ value: 'run (oldest → newest)', position: 'insideBottomRight', offset: 0, fontSize: 10, fill: 'var(--muted)' }}
          />
          <YAxis
            tick={{ fontSize: 10, fill: 'var(--muted)' }}
            width={44}
            domain={unit ? [0, 1] : [0, 'auto']}
            ticks={unit ? [0, 0.25, 0.5, 0.75, 1] : undefined}
            tickFormatter={(v: number) => (unit ? v.toFixed(2) : String(v))}
          />
          <Tooltip
            contentStyle={{ fontSize: 11 }}
            formatter={(v) => [f3(v), metric]}
            labelFormatter={(_, p) => {
              // recharts types the payload as any: it is one of our points
              const pt = p?.[0]?.payload as (typeof data)[number] | undefined
              return pt ? `${pt.name} · ${pt.when}` : ''
            }}
          />
          <Line
            dataKey="value"
            stroke="none"
            isAnimationActive={false}
            activeDot={{ r: 6, fill: 'var(--accent)' }}
            dot={(props: { cx?: number; cy?: number; payload?: { id: string } }) => (
              <circle
                key={props.payload?.id}
                cx={props.cx}
                cy={props.cy}
                r={props.payload?.id === selectedId ? 6 : 4}
                fill={props.payload?.id === selectedId ? 'var(--accent)' : 'var(--panel)'}
                stroke="var(--accent)"
                strokeWidth={2}
                data-run={props.payload?.id}
              />
            )}
          />
        </LineChart>
      )}
    </Sized>
  )
}

/** A run's 0..1 metrics as bars with 95% bootstrap intervals. */
export function MetricBars({ metrics, intervals }: { metrics: Record<string, number | null>; intervals?: Record<string, { lo: number; hi: number } | null> }) {
  const data = Object.entries(metrics)
    .filter(([k, v]) => v !== null && k !== 'tokens' && k !== 'falseInjection')
    .map(([k, v]) => {
      const ci = intervals?.[k]
      return { metric: k, value: v as number, err: ci ? [Math.max(0, (v as number) - ci.lo), Math.max(0, ci.hi - (v as number))] : [0, 0] }
    })
  return (
    <Sized height={200} label="Run metrics">
      {(w) => (
        <BarChart width={w} height={200} data={data} margin={{ top: 8, right: 8, bottom: 4, left: -14 }}>
          <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="metric" tick={tick} interval={0} />
          <YAxis tick={tick} domain={[0, 1]} />
          <Tooltip contentStyle={{ fontSize: 11 }} formatter={(v) => f3(v)} />
          <Bar dataKey="value" fill="var(--accent)" isAnimationActive={false}>
            <ErrorBar dataKey="err" width={4} stroke="var(--text)" />
          </Bar>
        </BarChart>
      )}
    </Sized>
  )
}

/** How a per-case metric is spread: 10 bins over 0..1. */
export function DistributionChart({ values, metric }: { values: readonly number[]; metric: string }) {
  const bins = Array.from({ length: 10 }, (_, i) => ({ bin: `${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)}`, count: 0 }))
  for (const v of values) bins[Math.min(9, Math.max(0, Math.floor(v * 10)))].count++
  return (
    <Sized height={160} label={`Distribution of ${metric} over cases`}>
      {(w) => (
        <BarChart width={w} height={160} data={bins} margin={{ top: 8, right: 8, bottom: 4, left: -14 }}>
          <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="bin" tick={tick} interval={1} />
          <YAxis tick={tick} allowDecimals={false} />
          <Tooltip contentStyle={{ fontSize: 11 }} />
          <Bar dataKey="count" name="cases" fill="var(--f-rec)" isAnimationActive={false} />
        </BarChart>
      )}
    </Sized>
  )
}

/** Mean metric deltas vs the baseline (green up, red down; lower-is-better metrics flip). */
export function DeltaBars({ rows }: { rows: { metric: string; delta: number; good: boolean }[] }) {
  return (
    <Sized height={200} label="Metric deltas vs baseline">
      {(w) => (
        <BarChart width={w} height={200} data={rows} margin={{ top: 8, right: 8, bottom: 4, left: -8 }}>
          <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="metric" tick={tick} interval={0} />
          <YAxis tick={tick} />
          <ReferenceLine y={0} stroke="var(--muted)" />
          <Tooltip contentStyle={{ fontSize: 11 }} formatter={(v) => (typeof v === 'number' ? (v >= 0 ? '+' : '') + v.toFixed(4) : String(v))} />
          <Bar dataKey="delta" isAnimationActive={false}>
            {rows.map((r) => (
              <Cell key={r.metric} fill={r.delta === 0 ? 'var(--muted)' : r.good ? 'var(--ok)' : 'var(--danger)'} />
            ))}
          </Bar>
        </BarChart>
      )}
    </Sized>
  )
}

/** Tune: each trial's train score (dots) and the best so far (line). */
export function ConvergenceChart({ curve, metric, base }: { curve: { trial: number; best: number; value: number }[]; metric: string; base: number | null }) {
  return (
    <Sized height={200} label={`Tune convergence of ${metric}`}>
      {(w) => (
        <LineChart width={w} height={200} data={curve} margin={{ top: 8, right: 12, bottom: 4, left: -14 }}>
          <CartesianGrid stroke="var(--border)" strokeDasharray="3 3" />
          <XAxis dataKey="trial" tick={tick} type="number" domain={[0, 'dataMax']} />
          <YAxis tick={tick} domain={[0, 'auto']} />
          <Tooltip contentStyle={{ fontSize: 11 }} formatter={(v, n) => [f3(v), n]} labelFormatter={(l) => `trial ${Number(l)}`} />
          {base !== null && (
            <ReferenceLine
              y={base}
              stroke="var(--muted)"
              strokeDasharray="4 4"
              label={{ value: 'base', fontSize: 10, fill: 'var(--muted)', position: 'insideBottomRight' }}
            />
          )}
          <Line
            dataKey="value"
            name="this config"
            stroke="var(--border)"
            dot={{ r: 1.5, fill: 'var(--muted)', stroke: 'none' }}
            strokeWidth={0}
            isAnimationActive={false}
          />
          <Line dataKey="best" name="best so far" stroke="var(--accent)" dot={false} strokeWidth={2} isAnimationActive={false} type="stepAfter" />
        </LineChart>
      )}
    </Sized>
  )
}
