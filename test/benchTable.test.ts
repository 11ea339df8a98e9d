/**
 * The docs table generated from saved bench results (scripts/benchTable.ts): a goal met, a goal missed, a ratio
 * goal whose peer was not measured, a goal never measured, the load average beside each figure, the newest run
 * of a bench winning, and typed errors for a malformed or smoke results file and a page without its region.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { formatResults } from '../bench/results'
import { addResults, loadSaved, renderBenchRegion, replaceRegion, type Saved } from '../scripts/benchTable'
import { RecallscopeError } from '../src/shared/result'
import { sampleBench, sampleResults } from './helpers/benchResults'
import { tmpDir } from './helpers/tmp'

/** The table row whose first cells match `start`, split into cells. */
function rowOf(region: string, start: RegExp): string[] {
  const line = region.split('\n').find((l) => start.test(l))
  if (!line) throw new Error(`no row matching ${start}`)
  return line.split(' | ').map((c) => c.replace(/^\| /, '').replace(/ \|$/, '').trim())
}

const busy = sampleBench(
  'dense',
  [
    {
      kind: 'measure',
      name: 'ours: runRecall, whole DB, vs the C floor',
      value: 60,
      unit: 'ms',
      goal: { id: 'dense.cfloor', text: '≤ 1.5× C floor' },
      peer: { name: 'C floor', value: 30, unit: 'ms' },
      ratio: 2,
      status: 'missed',
    },
    {
      kind: 'measure',
      name: 'ours: dense arm, whole DB, vs the plain JS scan',
      value: 40,
      unit: 'ms',
      goal: { id: 'dense.plain', text: '≤ 1× plain JS scan' },
      peer: null,
      ratio: null,
      status: 'no-peer',
    },
    { kind: 'check', name: 'ours: same top-30', passed: 15, total: 15, goal: { id: 'dense.exact', text: 'all' }, status: 'met' },
  ],
  '2026-11-27T06:00:00.000Z',
  9.25,
)

describe('the bench table in docs/internals/performance.md', () => {
  const saved: Saved[] = [
    { file: 'a.json', results: sampleResults() },
    { file: 'b.json', results: sampleResults({}, [busy]) },
  ]
  const region = renderBenchRegion(saved)

  it('a met goal: the figure, its status, the date and load of its run', () => {
    expect(rowOf(region, /^\| re-rank 1,000 candidates, median per call/)).toEqual([
      're-rank 1,000 candidates, median per call ≤ 2 ms',
      'issue 13 · 6',
      '`rerank`',
      'median per call',
      '1.50 ms',
      '',
      'met',
      '2026-11-27 07:00, load 0.4 → 0.4',
    ])
  })

  it('a missed goal in bold with its ratio to the peer, and "under load" when the bench started above the core count', () => {
    const r = rowOf(region, /^\| 100k × 768 exact dense top-30/)
    expect(r.slice(4)).toEqual(['60.00 ms', '2× C floor (30.00 ms)', '**MISSED**', '2026-11-27 06:00, load 9.3 → 0.4 (under load)'])
  })

  it('a ratio goal whose peer the run did not measure: not judged', () => {
    expect(rowOf(region, /^\| 100k × 768 dense arm as fast/)[6]).toBe('not judged (no plain JS scan in this run)')
  })

  it('an exactness check as passed/total, and a goal no saved file measured as not measured', () => {
    expect(rowOf(region, /^\| 100k × 768: every method/)[4]).toBe('15/15 same')
    expect(rowOf(region, /^\| 1M × 768 in the app: close/).slice(4)).toEqual(['—', '', 'not measured', 'not in the saved results'])
  })

  it('every figure of a bench under a heading with its run', () => {
    expect(region).toContain('#### `dense` — 2026-11-27 06:00 UTC, load 9.3 → 0.4 (under load)')
    expect(region).toMatch(/^\| ours: same top-30 \| 15\/15 same \| all \| {2}\| met \|$/m)
  })

  it('the newest saved run of a bench is the one shown', () => {
    const newer = sampleResults({}, [
      sampleBench(
        'rerank',
        [
          {
            kind: 'measure',
            name: 'median per call',
            value: 2.5,
            unit: 'ms',
            goal: { id: 'rerank.idle', text: '≤ 2 ms' },
            peer: null,
            ratio: null,
            status: 'missed',
          },
        ],
        '2026-11-28T07:00:00.000Z',
      ),
    ])
    const r = renderBenchRegion([...saved, { file: 'c.json', results: newer }])
    expect(rowOf(r, /^\| re-rank 1,000 candidates, median per call/).slice(4, 7)).toEqual(['2.50 ms', '', '**MISSED**'])
    // and in another order of files, the same
    expect(renderBenchRegion([{ file: 'c.json', results: newer }, ...saved])).toBe(r)
  })

  it('a figure judged against an earlier bound says so', () => {
    const old = sampleResults({}, [
      sampleBench('rerank', [
        {
          kind: 'measure',
          name: 'median per call',
          value: 1.5,
          unit: 'ms',
          goal: { id: 'rerank.idle', text: '≤ 3 ms' },
          peer: null,
          ratio: null,
          status: 'met',
        },
      ]),
    ])
    expect(rowOf(renderBenchRegion([{ file: 'o.json', results: old }]), /^\| re-rank 1,000 candidates, median per call/)[6]).toBe('met (against ≤ 3 ms)')
  })

  it('replaces only the marked region, and a page without it is BAD_INPUT', () => {
    const doc = 'before\n<!-- bench:begin -->\nold\n<!-- bench:end -->\nafter\n'
    expect(replaceRegion(doc, '<!-- bench:begin -->\nnew\n<!-- bench:end -->')).toBe('before\n<!-- bench:begin -->\nnew\n<!-- bench:end -->\nafter\n')
    expect(() => replaceRegion('no markers', 'x', 'page.md')).toThrow(RecallscopeError)
    expect(() => replaceRegion('no markers', 'x', 'page.md')).toThrow(/^page\.md: no <!-- bench:begin -->/)
  })
})

describe('saved results files', () => {
  it('a malformed file in the folder is a BAD_INPUT error naming it', () => {
    const t = tmpDir('recallscope-benchtable-')
    try {
      fs.writeFileSync(path.join(t.dir, 'good.json'), formatResults(sampleResults()))
      fs.writeFileSync(path.join(t.dir, 'broken.json'), '{"format": "recallscope-bench/1", "machine": {}}')
      let err: unknown
      try {
        loadSaved(t.dir)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(RecallscopeError)
      expect(err).toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining(path.join(t.dir, 'broken.json')) })
    } finally {
      t.cleanup()
    }
  })

  it('a smoke run is refused; a real one is split into one file per bench, failed and skipped ones left out', () => {
    const t = tmpDir('recallscope-benchtable-')
    try {
      const smoke = path.join(t.dir, 'smoke.json')
      fs.writeFileSync(smoke, formatResults(sampleResults({ smoke: true })))
      expect(() => addResults(smoke, path.join(t.dir, 'saved'))).toThrow(/--smoke run/)

      const failed = { ...sampleBench('why', []), status: 'failed' as const, reason: 'boom' }
      const run = path.join(t.dir, 'run.json')
      fs.writeFileSync(run, formatResults(sampleResults({}, [sampleResults().benches[0], busy, failed])))
      const said = addResults(run, path.join(t.dir, 'saved'))
      expect(said[2]).toBe('why: failed (boom), not saved')
      expect(fs.readdirSync(path.join(t.dir, 'saved')).sort()).toEqual(['dense.json', 'rerank.json'])
      const back = loadSaved(path.join(t.dir, 'saved'))
      expect(back.map((s) => s.results.benches.map((b) => b.name))).toEqual([['dense'], ['rerank']])
      // adding again says what it replaced
      expect(addResults(run, path.join(t.dir, 'saved'))[0]).toMatch(
        /^rerank: saved .*rerank\.json \(2026-11-27 07:00 UTC, load 0\.4\), replacing the run of 2026-11-27 07:00 UTC, load 0\.4$/,
      )
    } finally {
      t.cleanup()
    }
  })
})
