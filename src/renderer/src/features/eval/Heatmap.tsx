/**
 * Tune's weight-simplex heatmap: three weights on the corners of a triangle
 * (the fourth held at the best config's value), the train metric at every grid
 * point, drawn as the lattice's small triangles coloured by the mean of their
 * corners. The best config is marked; hovering a cell names its weights.
 */
import type { TuneHeatmap } from '../../../../shared/eval'

/** viridis stops: readable on light and dark panels, ordered for colour-blind readers. */
const STOPS = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725']

export function heatColor(t: number): string {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (STOPS.length - 1)
  const i = Math.min(STOPS.length - 2, Math.floor(x))
  const f = x - i
  const a = STOPS[i]
  const b = STOPS[i + 1]
  const ch = (s: string, o: number) => parseInt(s.slice(o, o + 2), 16)
  const mix = (o: number) => Math.round(ch(a, o) + (ch(b, o) - ch(a, o)) * f)
  return `rgb(${mix(1)}, ${mix(3)}, ${mix(5)})`
}

const W = 360
const H = 320
const PAD = 28
// Corners: axis 0 on top, axis 1 bottom-left, axis 2 bottom-right.
const TOP = { x: W / 2, y: PAD }
const BL = { x: PAD, y: H - PAD }
const BR = { x: W - PAD, y: H - PAD }

function point(a: number, b: number, c: number) {
  return { x: a * TOP.x + b * BL.x + c * BR.x, y: a * TOP.y + b * BL.y + c * BR.y }
}

export function Heatmap({ map, best, metric }: { map: TuneHeatmap; best: { [feature: string]: number }; metric: string }) {
  const n = map.steps
  const mass = 1 - map.fixed.weight
  if (mass <= 1e-9) return <div className="notice">The best config puts all weight on {map.fixed.feature}: nothing to draw.</div>
  const grid = new Map<string, number>()
  for (const c of map.cells) grid.set(`${Math.round((c.w[0] / mass) * n)},${Math.round((c.w[1] / mass) * n)}`, c.value)
  const span = map.max - map.min
  const norm = (v: number) => (span > 0 ? (v - map.min) / span : 0.5)
  const at = (i: number, j: number) => grid.get(`${i},${j}`)
  const tris: { pts: { x: number; y: number }[]; v: number; w: [number, number, number] }[] = []
  const add = (vs: [number, number][]) => {
    const vals = vs.map(([i, j]) => at(i, j))
    if (vals.some((v) => v === undefined)) return
    const v = (vals as number[]).reduce((s, x) => s + x, 0) / vals.length
    const ci = vs.reduce((s, [i]) => s + i, 0) / vs.length
    const cj = vs.reduce((s, [, j]) => s + j, 0) / vs.length
    tris.push({
      pts: vs.map(([i, j]) => point(i / n, j / n, (n - i - j) / n)),
      v,
      w: [(ci / n) * mass, (cj / n) * mass, ((n - ci - cj) / n) * mass],
    })
  }
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n - i; j++) {
      add([
        [i, j],
        [i + 1, j],
        [i, j + 1],
      ])
      if (i + j <= n - 2)
        add([
          [i + 1, j],
          [i, j + 1],
          [i + 1, j + 1],
        ])
    }
  const bw = map.axes.map((a) => (best[a] ?? 0) / mass)
  const bp = point(bw[0], bw[1], bw[2])
  const f2 = (x: number) => x.toFixed(2)
  return (
    <figure className="heatmap">
      <svg viewBox={`0 0 ${W} ${H}`} width="100%" style={{ maxWidth: W }} role="img" aria-label={`${metric} over the weights of ${map.axes.join(', ')}`}>
        {tris.map((t, k) => (
          <polygon
            key={k}
            points={t.pts.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')}
            fill={heatColor(norm(t.v))}
            stroke={heatColor(norm(t.v))}
            strokeWidth={0.5}
            data-value={t.v}
          >
            <title>{`${map.axes[0]} ${f2(t.w[0])} · ${map.axes[1]} ${f2(t.w[1])} · ${map.axes[2]} ${f2(t.w[2])} → ${metric} ${t.v.toFixed(4)}`}</title>
          </polygon>
        ))}
        <circle cx={bp.x} cy={bp.y} r={6} fill="none" stroke="white" strokeWidth={2.5} />
        <circle cx={bp.x} cy={bp.y} r={6} fill="none" stroke="black" strokeWidth={1} data-testid="heatmap-best">
          <title>best config</title>
        </circle>
        <text x={TOP.x} y={TOP.y - 10} textAnchor="middle" className="hm-axis">
          {map.axes[0]}
        </text>
        <text x={BL.x - 4} y={BL.y + 18} textAnchor="start" className="hm-axis">
          {map.axes[1]}
        </text>
        <text x={BR.x + 4} y={BR.y + 18} textAnchor="end" className="hm-axis">
          {map.axes[2]}
        </text>
      </svg>
      <figcaption className="small muted">
        <span className="hm-scale">
          <span>{map.min.toFixed(3)}</span>
          <span className="hm-bar" style={{ background: `linear-gradient(90deg, ${STOPS.join(', ')})` }} />
          <span>{map.max.toFixed(3)}</span>
        </span>
        {metric} (train) with {map.fixed.feature} held at {map.fixed.weight.toFixed(2)} and every other knob as in the best config; ○ = best.
      </figcaption>
    </figure>
  )
}
