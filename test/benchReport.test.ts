/**
 * The bench records (bench/report.ts, bench/goals.ts, bench/results.ts): how a figure is judged against its
 * goal (inclusive bounds, ratio goals, a missing peer), what the collector refuses, the command line, and the
 * results file's validation (docs/internals/performance.md "The results file").
 */
import { afterEach, describe, expect, it } from 'vitest'
import { GOALS, listGoals, type Goal } from '../bench/goals'
import { parseBenchArgs } from '../bench/index'
import { BENCHES } from '../bench/registry'
import { beginBench, check, describeGoal, endBench, judgeMeasure, measure, verdict } from '../bench/report'
import { formatResults, parseResults } from '../bench/results'
import { RecallscopeError } from '../src/shared/result'
import { sampleResults } from './helpers/benchResults'

const limitGoal = (op: '<=' | '>=', limit: number): Goal => ({ id: 'x.y', bench: 'x', what: 'w', from: 'f', kind: 'limit', op, limit, unit: 'ms' })
const ratioGoal: Goal = { id: 'x.r', bench: 'x', what: 'w', from: 'f', kind: 'ratio', op: '<=', limit: 1.5, of: 'C floor' }

afterEach(() => {
  endBench()
})

describe('judging a figure', () => {
  it('a bound is inclusive: exactly at the limit is met, just past it missed', () => {
    expect(judgeMeasure(limitGoal('<=', 100), 100, null).status).toBe('met')
    expect(judgeMeasure(limitGoal('<=', 100), 100.0001, null).status).toBe('missed')
    expect(judgeMeasure(limitGoal('>=', 0.9), 0.9, null).status).toBe('met')
    expect(judgeMeasure(limitGoal('>=', 0.9), 0.8999, null).status).toBe('missed')
  })

  it('a ratio goal compares value / peer: 51 ms against a 34 ms floor is 1.5×, met; 52 ms is not', () => {
    const peer = { name: 'C floor', value: 34 }
    expect(judgeMeasure(ratioGoal, 51, peer)).toEqual({ status: 'met', ratio: 51 / 34 })
    expect(judgeMeasure(ratioGoal, 52, peer)).toEqual({ status: 'missed', ratio: 52 / 34 })
  })

  it('a ratio goal without its peer (no C compiler) is not judged, neither met nor missed', () => {
    expect(judgeMeasure(ratioGoal, 10, null)).toEqual({ status: 'no-peer', ratio: null })
    // a peer of 0 ms gives no ratio either
    expect(judgeMeasure(ratioGoal, 10, { name: 'C floor', value: 0 })).toEqual({ status: 'no-peer', ratio: null })
  })

  it('a ratio to a peer the goal does not name is a bench bug', () => {
    expect(() => judgeMeasure(ratioGoal, 10, { name: 'sqlite-vec KNN', value: 5 })).toThrow(/ratio to C floor, not to sqlite-vec/)
  })

  it('without a goal a figure still carries its ratio to the peer', () => {
    expect(judgeMeasure(null, 30, { name: 'FTS5', value: 120 })).toEqual({ status: 'no-goal', ratio: 0.25 })
  })

  it('goals print as the benches print them', () => {
    expect(describeGoal(GOALS['eval.cold'])).toBe('≤ 500 ms')
    expect(describeGoal(GOALS['why.pool5000'])).toBe('≤ 1 s')
    expect(describeGoal(GOALS['rerank.idle'])).toBe('≤ 2 ms')
    expect(describeGoal(GOALS['million.rss'])).toBe('≤ 1.5 GB')
    expect(describeGoal(GOALS['dense.cfloor'])).toBe('≤ 1.5× C floor')
    expect(describeGoal(GOALS['dense.exact'])).toBe('all')
  })
})

describe('the collector', () => {
  it('records figures and checks with their verdicts, values to 4 significant digits', () => {
    beginBench('rerank')
    const a = measure({ name: 'median per call', value: 1.23456, unit: 'ms', goal: GOALS['rerank.idle'] })
    const b = measure({ name: 'busy', value: 2.5, unit: 'ms', goal: GOALS['rerank.busy'] })
    const c = check({ name: 'same', passed: 12, total: 12, goal: 'all' })
    const d = check({ name: 'one differs', passed: 11, total: 12, goal: 'all' })
    const e = check({ name: 'peer answer', passed: 3, total: 12 })
    const { figures, skipped } = endBench()
    expect(skipped).toBeNull()
    expect(figures).toEqual([a, b, c, d, e])
    expect(a).toMatchObject({ value: 1.235, status: 'met', goal: { id: 'rerank.idle', text: '≤ 2 ms' } })
    expect(verdict(a)).toBe('goal ≤ 2 ms  met')
    expect(verdict(b)).toBe('goal ≤ 2 ms  MISSED')
    expect([c.status, d.status, e.status]).toEqual(['met', 'missed', 'no-goal'])
    expect(check({ name: 'no cases', passed: 0, total: 0, goal: 'all' }).status).toBe('missed')
  })

  it('a ratio goal whose peer was not measured says so in the printed line', () => {
    beginBench('dense')
    const f = measure({ name: 'vs floor', value: 30, unit: 'ms', goal: GOALS['dense.cfloor'], peer: null })
    expect(f.status).toBe('no-peer')
    expect(verdict(f)).toBe('goal ≤ 1.5× C floor  not judged (no C floor in this run)')
  })

  it('refuses a goal of another bench, a unit that is not the goal’s, a figure twice, and a value that is not a number', () => {
    beginBench('rerank')
    expect(() => measure({ name: 'x', value: 1, unit: 'ms', goal: GOALS['why.pool5000'] })).toThrow(/belongs to why/)
    expect(() => measure({ name: 'x', value: 1, unit: 's', goal: GOALS['rerank.idle'] })).toThrow(/in s, its goal rerank.idle in ms/)
    measure({ name: 'x', value: 1, unit: 'ms' })
    expect(() => measure({ name: 'x', value: 2, unit: 'ms' })).toThrow(/recorded twice/)
    expect(() => measure({ name: 'y', value: NaN, unit: 'ms' })).toThrow(/not a number/)
  })
})

describe('the goals list', () => {
  it('every goal belongs to a registered bench, once', () => {
    const names = new Set(BENCHES.map((b) => b.name))
    const goals = listGoals()
    expect(goals.filter((g) => !names.has(g.bench)).map((g) => g.id)).toEqual([])
    expect(new Set(goals.map((g) => g.id)).size).toBe(goals.length)
  })

  it('holds the goals of issue 24 with their bounds', () => {
    const bounds = Object.fromEntries(listGoals().map((g) => [g.id, describeGoal(g)]))
    expect(bounds).toMatchObject({
      'ui.step': '≤ 16 ms',
      'millionapp.dense': '≤ 100 ms',
      'millionapp.recall': '≤ 100 ms',
      'millionapp.open': '≤ 10 s',
      'millionapp.close': '≤ 200 ms',
      'eval.cold': '≤ 500 ms',
      'map.umap5k': '≤ 5 s',
      'map.umap20k': '≤ 20 s',
      'map.pca': '≤ 200 ms',
    })
  })
})

describe('the command line', () => {
  it('takes bench names, --json FILE or --json=FILE, --note TEXT, and passes other flags by', () => {
    expect(parseBenchArgs(['rerank', '--smoke', '--json', 'out.json', 'why', '--rows=500', '--note', 'idle'])).toEqual({
      names: ['rerank', 'why'],
      json: 'out.json',
      note: 'idle',
    })
    expect(parseBenchArgs(['--json=a.json'])).toEqual({ names: [], json: 'a.json', note: null })
    expect(() => parseBenchArgs(['rerank', '--json'])).toThrow(/--json needs a value/)
    expect(() => parseBenchArgs(['--json', '--smoke'])).toThrow(/--json needs a value/)
  })
})

describe('the results file', () => {
  it('round-trips through its text, one figure per line', () => {
    const r = sampleResults()
    const text = formatResults(r)
    expect(parseResults(text, 'r.json')).toEqual(r)
    expect(text.split('\n').filter((l) => l.includes('"kind":"measure"'))).toHaveLength(1)
  })

  it('a file that is not JSON, or not the format, is BAD_INPUT naming the file and the field', () => {
    const bad = (text: string) => {
      try {
        parseResults(text, 'docs/internals/bench/broken.json')
      } catch (e) {
        return e
      }
      throw new Error('accepted')
    }
    const notJson = bad('{"format": ')
    expect(notJson).toBeInstanceOf(RecallscopeError)
    expect(notJson).toMatchObject({ code: 'BAD_INPUT', message: expect.stringMatching(/^docs\/internals\/bench\/broken\.json: not JSON/) })
    const r = sampleResults() as unknown as { benches: { figures: { unit: string }[] }[] }
    r.benches[0].figures[0].unit = 'furlongs'
    expect(bad(JSON.stringify(r))).toMatchObject({
      code: 'BAD_INPUT',
      message: expect.stringMatching(/^docs\/internals\/bench\/broken\.json: not a recallscope-bench\/1 results file: benches\.0\.figures\.0\.unit/),
    })
    expect(bad(JSON.stringify({ ...sampleResults(), format: 'other/1' }))).toMatchObject({ code: 'BAD_INPUT', message: expect.stringMatching(/format/) })
  })
})
