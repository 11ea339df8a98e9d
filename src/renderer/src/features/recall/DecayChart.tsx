/**
 * The recency decay curve drawn over the real age distribution of the
 * memories in scope: bars = how many memories are that old at `now`, line =
 * the recency feature 0.5 ^ (age / half-life). Moving the half-life redraws the
 * line only (the histogram is fetched when scope / now / age source change).
 */
import { useMemo } from 'react'
import { Bar, ComposedChart, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'
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

export function DecayChart({
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
  return (
    <div className="decay" aria-label="Decay curve over memory ages">
      <div className="small muted">
        {ages.data
          ? `${ages.data.total.toLocaleString('en-US')} memories in scope; half-life ${fmtHours(halfLifeHours)}`
          : ages.error
            ? ages.error.message
            : 'loading ages…'}
      </div>
      <div style={{ width: '100%', height: 120 }}>
        <ResponsiveContainer>
          <ComposedChart data={data} margin={{ top: 4, right: 4, bottom: 0, left: -18 }}>
            <XAxis dataKey="day" type="number" domain={['dataMin', 'dataMax']} tickFormatter={(d: number) => `${Math.round(d)}d`} fontSize={10} />
            <YAxis yAxisId="n" fontSize={10} allowDecimals={false} />
            <YAxis yAxisId="r" orientation="right" domain={[0, 1]} hide />
            <Tooltip
              formatter={(v, name) => (name === 'recency' ? Number(v).toFixed(3) : v)}
              labelFormatter={(d) => `${Number(d).toFixed(1)} days old`}
              contentStyle={{ fontSize: 11 }}
            />
            <Bar yAxisId="n" dataKey="count" name="memories" fill="var(--border)" isAnimationActive={false} />
            <Line yAxisId="r" dataKey="recency" name="recency" stroke="var(--f-rec)" dot={false} strokeWidth={2} isAnimationActive={false} />
          </ComposedChart>
        </ResponsiveContainer>
      </div>
    </div>
  )
}
