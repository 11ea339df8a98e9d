/**
 * Figures as records: each bench prints its lines as before and, for every number that matters, records
 * it (`measure`) or an exactness check (`check`) here, with the goal it is judged against (bench/goals.ts)
 * and the peer or floor measured in the same run that it is a ratio to. bench/index.ts collects the
 * records bench by bench and writes them with `--json FILE` (bench/results.ts);
 * docs/internals/performance.md "Bench results" is generated from saved ones.
 */
import { GOALS, type Goal, type Unit } from './goals'
import type { CheckRecord, Figure, MeasureRecord, Status } from './results'

export interface Peer {
  /** As the goal names it: 'C floor', 'sqlite-vec KNN', 'FTS5'. */
  name: string
  value: number
  /** @default the figure's unit */
  unit?: Unit
}

/** A number of the unit: `32.1 ms`, `1.2 s`, `0.94×`, `1.07 GB`. */
export function formatValue(value: number, unit: Unit): string {
  const num = (x: number, digits: number) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 })
  switch (unit) {
    case 'ms':
      if (value >= 1000) return `${num(value / 1000, value >= 10_000 ? 1 : 2)} s`
      return value < 1 ? `${num(value * 1000, 0)} µs` : value < 100 ? `${value.toFixed(2)} ms` : `${num(value, 0)} ms`
    case 's':
      return `${num(value, 2)} s`
    case '×':
      // two significant digits below 1 (a floor 300× faster reads 0.0033×, not 0×)
      return value < 1 ? `${Number(value.toPrecision(2))}×` : `${num(value, 2)}×`
    case 'count':
      return num(value, 0)
    case 'fraction':
      return num(value, 3)
    default:
      return `${num(value, value < 10 ? 2 : value < 100 ? 1 : 0)} ${unit}`
  }
}

/** A goal's bound as words fit for a goal column: `≤ 1 s`, `≤ 1.5× C floor`. */
function formatBound(value: number, unit: Unit): string {
  if (unit === 'ms' && value >= 1000) return `${value / 1000} s`
  return unit === 'count' || unit === 'fraction' ? String(value) : `${value} ${unit}`
}

const round4 = (x: number) => Number(x.toPrecision(4))

const OP = { '<=': '≤', '>=': '≥' } as const

/** A goal's comparison as printed and saved: `≤ 100 ms`, `≤ 1.5× C floor`, `all`. */
export function describeGoal(goal: Goal): string {
  if (goal.kind === 'all') return 'all'
  if (goal.kind === 'ratio') return `${OP[goal.op]} ${goal.limit}× ${goal.of}`
  return `${OP[goal.op]} ${formatBound(goal.limit, goal.unit)}`
}

const holds = (op: '<=' | '>=', x: number, limit: number) => (op === '<=' ? x <= limit : x >= limit)

/**
 * A figure judged against its goal: `met` when the bound holds (bounds are inclusive), `missed` when not,
 * `no-peer` for a ratio goal whose peer this run did not measure (no C compiler), `no-goal` without a goal.
 */
export function judgeMeasure(goal: Goal | null, value: number, peer: Peer | null): { status: Status; ratio: number | null } {
  const ratio = peer && peer.value > 0 ? value / peer.value : null
  if (!goal) return { status: 'no-goal', ratio }
  if (goal.kind === 'all') throw new Error(`goal ${goal.id} is an exactness check: record it with check()`)
  if (goal.kind === 'limit') return { status: holds(goal.op, value, goal.limit) ? 'met' : 'missed', ratio }
  if (!peer || ratio === null) return { status: 'no-peer', ratio: null }
  if (peer.name !== goal.of) throw new Error(`goal ${goal.id} is a ratio to ${goal.of}, not to ${peer.name}`)
  return { status: holds(goal.op, ratio, goal.limit) ? 'met' : 'missed', ratio }
}

/** An exactness check: `met` when every case passed (and there was one), else `missed`; `no-goal` when informational. */
function judgeCheck(required: boolean, passed: number, total: number): Status {
  if (!required) return 'no-goal'
  return total > 0 && passed === total ? 'met' : 'missed'
}

/** `met`, `MISSED`, or why a goal was not judged: the word every bench prints after a goal. */
export function statusWord(f: Figure): string {
  if (f.status === 'met') return 'met'
  if (f.status === 'missed') return 'MISSED'
  if (f.status === 'no-peer') {
    const g = f.goal?.id ? (GOALS as Record<string, Goal | undefined>)[f.goal.id] : undefined
    return `not judged (no ${g?.kind === 'ratio' ? g.of : 'peer'} in this run)`
  }
  return ''
}

/** `goal ≤ 2 ms  met`: the goal and the word, for the end of a printed line ('' without a goal). */
export function verdict(f: Figure): string {
  if (!f.goal) return ''
  return `goal ${f.goal.text}  ${statusWord(f)}`
}

// --- the collector: bench/index.ts starts one per bench ---------------------------------------------------

let bench: string | null = null
let figures: Figure[] = []
let skipReason: string | null = null

/** Start collecting the records of bench `name` (bench/index.ts, before it runs the bench). */
export function beginBench(name: string): void {
  bench = name
  figures = []
  skipReason = null
}

/** The records collected since beginBench, and the reason the bench gave if it skipped itself. */
export function endBench(): { figures: Figure[]; skipped: string | null } {
  const out = { figures, skipped: skipReason }
  bench = null
  figures = []
  skipReason = null
  return out
}

/** The bench could not run here (no data, no Chromium): said in its output and in the results file. */
export function skipBench(reason: string): void {
  skipReason = reason
  console.log(`SKIPPED: ${reason}`)
}

function push<T extends Figure>(f: T, goal: Goal | undefined): T {
  if (goal && bench !== null && goal.bench !== bench) throw new Error(`bench ${bench} records goal ${goal.id}, which belongs to ${goal.bench}`)
  if (figures.some((x) => x.name === f.name)) throw new Error(`bench ${bench}: figure "${f.name}" recorded twice`)
  figures.push(f)
  return f
}

/**
 * Record a figure: `value` in `unit`, judged against `goal` (bench/goals.ts; its unit must match), as a ratio to
 * `peer` when one was measured in the same run. Returns the record; `verdict(record)` is the text to print.
 */
export function measure(m: { name: string; value: number; unit: Unit; goal?: Goal; peer?: Peer | null }): MeasureRecord {
  if (!Number.isFinite(m.value)) throw new Error(`figure "${m.name}": ${m.value} is not a number`)
  if (m.goal?.kind === 'limit' && m.goal.unit !== m.unit) throw new Error(`figure "${m.name}" is in ${m.unit}, its goal ${m.goal.id} in ${m.goal.unit}`)
  const peer = m.peer && Number.isFinite(m.peer.value) ? { name: m.peer.name, value: m.peer.value, unit: m.peer.unit ?? m.unit } : null
  // Judged on the numbers as measured; saved to 4 significant digits (timings vary more than that between runs).
  const { status, ratio } = judgeMeasure(m.goal ?? null, m.value, peer)
  return push<MeasureRecord>(
    {
      kind: 'measure',
      name: m.name,
      value: round4(m.value),
      unit: m.unit,
      goal: m.goal ? { id: m.goal.id, text: describeGoal(m.goal) } : null,
      peer: peer && { ...peer, value: round4(peer.value) },
      ratio: ratio === null ? null : round4(ratio),
      status,
    },
    m.goal,
  )
}

/**
 * Record an exactness check: `passed` of `total` cases agreed with the reference. `goal`: a goal of bench/goals.ts,
 * or 'all' (every case must pass, not a listed goal), or none (informational: the C floor's own top-k).
 */
export function check(c: { name: string; passed: number; total: number; goal?: Goal | 'all' }): CheckRecord {
  const goal = c.goal === 'all' ? { id: null, text: 'all' } : c.goal ? { id: c.goal.id, text: describeGoal(c.goal) } : null
  return push<CheckRecord>(
    { kind: 'check', name: c.name, passed: c.passed, total: c.total, goal, status: judgeCheck(goal !== null, c.passed, c.total) },
    c.goal === 'all' ? undefined : c.goal,
  )
}

/** `yes (12/12)` or `NO: 3 of 12 differ`, for a check's printed line. */
export function checkWord(c: CheckRecord): string {
  return c.passed === c.total ? `yes (${c.passed}/${c.total})` : `NO: ${c.total - c.passed} of ${c.total} differ`
}
