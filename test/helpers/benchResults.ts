/** Results files for the bench tests (test/benchReport.test.ts, test/benchTable.test.ts), built from numbers chosen here. */
import { RESULTS_FORMAT, type BenchResult, type Figure, type ResultsFile } from '../../bench/results'

const LOAD: [number, number, number] = [0.4, 0.5, 0.6]

/** One bench's result: `figures` measured on `date` with the 1-minute load `load` at its start. */
export function sampleBench(name: string, figures: Figure[], date = '2026-11-27T07:00:00.000Z', load = 0.4): BenchResult {
  return { name, title: `the ${name} bench`, date, seconds: 3, loadStart: [load, 0.5, 0.6], loadEnd: LOAD, status: 'ok', reason: null, figures }
}

/** A small valid results file: a rerank run of one figure (1.5 ms, goal ≤ 2 ms, met), or `benches`. */
export function sampleResults(over: Partial<ResultsFile['run']> = {}, benches?: BenchResult[]): ResultsFile {
  return {
    format: RESULTS_FORMAT,
    machine: { cores: 2, cpu: 'Test CPU', memoryGiB: 8, platform: 'linux x64', node: 'v22.0.0' },
    run: {
      date: '2026-11-27T07:00:00.000Z',
      endDate: '2026-11-27T07:01:00.000Z',
      loadStart: LOAD,
      loadEnd: LOAD,
      argv: ['rerank'],
      smoke: false,
      commit: 'abc1234',
      note: null,
      ...over,
    },
    benches: benches ?? [
      sampleBench('rerank', [
        {
          kind: 'measure',
          name: 'median per call',
          value: 1.5,
          unit: 'ms',
          goal: { id: 'rerank.idle', text: '≤ 2 ms' },
          peer: null,
          ratio: null,
          status: 'met',
        },
      ]),
    ],
  }
}
