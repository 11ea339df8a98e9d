/**
 * The results file `npm run bench -- … --json FILE` writes and `npm run bench:docs` reads: one format,
 * `recallscope-bench/1`, described field by field in docs/internals/performance.md "The results file".
 * The zod schema is the format's definition; the types are inferred from it.
 */
import fs from 'node:fs'
import os from 'node:os'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { z } from 'zod'
import { describeIssues, RecallscopeError } from '../src/shared/result'
import { UNITS } from './goals'

export const RESULTS_FORMAT = 'recallscope-bench/1'

const unit = z.enum(UNITS)
// zod 4 numbers are finite (NaN and ±Infinity fail)
const finite = z.number()
const status = z.enum(['met', 'missed', 'no-goal', 'no-peer'])
const load = z.tuple([finite, finite, finite])
/** The goal a record was judged against: its id in bench/goals.ts and its comparison as printed (`≤ 100 ms`). */
const goalRef = z.object({ id: z.string().nullable(), text: z.string() })

const measureRecord = z.object({
  kind: z.literal('measure'),
  name: z.string().min(1),
  value: finite,
  unit,
  goal: goalRef.nullable(),
  /** What the figure is a ratio to, measured in the same run (the C floor, sqlite-vec, FTS5…). */
  peer: z.object({ name: z.string().min(1), value: finite, unit }).nullable(),
  /** value / peer.value */
  ratio: finite.nullable(),
  status,
})

const checkRecord = z.object({
  kind: z.literal('check'),
  name: z.string().min(1),
  passed: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  goal: goalRef.nullable(),
  status,
})

const figure = z.discriminatedUnion('kind', [measureRecord, checkRecord])

const benchResult = z.object({
  name: z.string().min(1),
  title: z.string(),
  /** ISO date the bench started */
  date: z.iso.datetime(),
  seconds: finite,
  /** os.loadavg() (1, 5, 15 minutes) when the bench started and when it ended */
  loadStart: load,
  loadEnd: load,
  /** 'skipped' with a reason when it could not run here (no data, no Chromium); 'failed' when it threw */
  status: z.enum(['ok', 'skipped', 'failed']),
  reason: z.string().nullable(),
  figures: z.array(figure),
})

const resultsFile = z.object({
  format: z.literal(RESULTS_FORMAT),
  machine: z.object({
    cores: z.number().int().positive(),
    cpu: z.string(),
    memoryGiB: finite,
    platform: z.string(),
    node: z.string(),
  }),
  run: z.object({
    date: z.iso.datetime(),
    endDate: z.iso.datetime(),
    loadStart: load,
    loadEnd: load,
    argv: z.array(z.string()),
    smoke: z.boolean(),
    /** `git describe --always --dirty` of the tree that ran, null outside a git checkout */
    commit: z.string().nullable(),
    /** `--note TEXT`: what else the machine was doing, in words */
    note: z.string().nullable(),
  }),
  benches: z.array(benchResult),
})

export type Status = z.infer<typeof status>
export type MeasureRecord = z.infer<typeof measureRecord>
export type CheckRecord = z.infer<typeof checkRecord>
export type Figure = z.infer<typeof figure>
export type BenchResult = z.infer<typeof benchResult>
export type ResultsFile = z.infer<typeof resultsFile>
export type Machine = ResultsFile['machine']

/** This machine, for the results file. */
export function describeMachine(): Machine {
  const cpus = os.cpus()
  return {
    cores: cpus.length,
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    platform: `${process.platform} ${process.arch}`,
    node: process.version,
  }
}

/** os.loadavg() rounded to hundredths. */
export function readLoad(): [number, number, number] {
  const [a, b, c] = os.loadavg()
  const r = (x: number) => Math.round(x * 100) / 100
  return [r(a), r(b), r(c)]
}

/** `git describe --always --dirty` of the repo, or null (no git, not a checkout). */
export function describeCommit(root: string): string | null {
  const r = spawnSync('git', ['describe', '--always', '--dirty'], { cwd: root, encoding: 'utf8' })
  return r.status === 0 ? r.stdout.trim() || null : null
}

/** Parse a results file's text; a malformed one is a BAD_INPUT error naming the file and the first bad field. */
export function parseResults(text: string, file: string): ResultsFile {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    throw new RecallscopeError('BAD_INPUT', `${file}: not JSON (${(e as Error).message})`, { file })
  }
  const r = resultsFile.safeParse(json)
  if (!r.success) throw new RecallscopeError('BAD_INPUT', `${file}: not a ${RESULTS_FORMAT} results file: ${describeIssues(r.error)}`, { file })
  return r.data
}

/** Read and validate a results file (NOT_FOUND when it is absent). */
export function readResults(file: string): ResultsFile {
  if (!fs.existsSync(file)) throw new RecallscopeError('NOT_FOUND', `${file}: no such results file`, { file })
  return parseResults(fs.readFileSync(file, 'utf8'), file)
}

/** Write a results file (validated first, so a bug in a bench never leaves a file bench:docs rejects). */
export function writeResults(file: string, results: ResultsFile): void {
  const checked = resultsFile.parse(results)
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  const tmp = `${file}.tmp`
  fs.writeFileSync(tmp, formatResults(checked))
  fs.renameSync(tmp, file)
}

/** The file's text: one line per figure (a diff shows which figures changed), small enough to keep in the repo. */
export function formatResults(r: ResultsFile): string {
  const line = (x: unknown) => JSON.stringify(x)
  const benches = r.benches.map(({ figures, ...rest }) => {
    const head = line(rest).slice(0, -1)
    return figures.length ? `    ${head},"figures":[\n${figures.map((f) => `      ${line(f)}`).join(',\n')}\n    ]}` : `    ${head},"figures":[]}`
  })
  return `{\n  "format": ${line(r.format)},\n  "machine": ${line(r.machine)},\n  "run": ${line(r.run)},\n  "benches": [\n${benches.join(',\n')}\n  ]\n}\n`
}
