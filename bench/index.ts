/**
 * `npm run bench [-- NAME…] [--smoke] [--json FILE] [--note TEXT]`: benchmarks that print medians and ratios
 * measured in one run on this machine, each goal followed by `met` or `MISSED`. Without names, runs them all.
 * Large fixtures are generated once into .bench-cache/ (git-ignored) and reused.
 * `--smoke` runs every bench on tiny inputs (bench/scale.ts): seconds, numbers meaningless; `npm test`
 * runs it (test/shell/benchSmoke.test.ts) so a bench that stops loading or running fails CI.
 * `--json FILE` writes every bench's records (bench/report.ts) with the machine and its load average to FILE
 * (bench/results.ts; rewritten after each bench, so an interrupted run keeps what it measured);
 * `npm run bench:docs -- FILE` puts them into docs/internals/performance.md.
 * A bench that throws does not stop the others; the exit code is 1 if any threw or an exactness check failed.
 */
import path from 'node:path'
import { BENCHES } from './registry'
import { beginBench, endBench, statusWord } from './report'
import { describeCommit, describeMachine, readLoad, RESULTS_FORMAT, writeResults, type BenchResult, type ResultsFile } from './results'
import { SMOKE } from './scale'
import { readCpuSeconds } from '../test/helpers/cpuTime'

/** The command line: bench names, and the two flags that take a value. */
export function parseBenchArgs(argv: string[]): { names: string[]; json: string | null; note: string | null } {
  const names: string[] = []
  let json: string | null = null
  let note: string | null = null
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const eq = /^--(json|note)=(.*)$/.exec(a)
    if (eq) {
      if (eq[1] === 'json') json = eq[2]
      else note = eq[2]
    } else if (a === '--json' || a === '--note') {
      const v = argv[++i]
      if (v === undefined || v.startsWith('--')) throw new Error(`${a} needs a value`)
      if (a === '--json') json = v
      else note = v
    } else if (!a.startsWith('-')) names.push(a)
  }
  return { names, json, note }
}

async function main() {
  const args = parseBenchArgs(process.argv.slice(2))
  const todo = args.names.length ? BENCHES.filter((b) => args.names.includes(b.name)) : BENCHES
  const unknown = args.names.filter((n) => !BENCHES.some((b) => b.name === n))
  if (unknown.length) {
    console.error(`Unknown bench: ${unknown.join(', ')}. Available: ${BENCHES.map((b) => b.name).join(', ')}`)
    process.exit(2)
  }
  if (SMOKE) console.log('SMOKE MODE: tiny inputs; the numbers below say nothing about performance.')
  const results: ResultsFile = {
    format: RESULTS_FORMAT,
    machine: describeMachine(),
    run: {
      date: new Date().toISOString(),
      endDate: new Date().toISOString(),
      loadStart: readLoad(),
      loadEnd: readLoad(),
      argv: process.argv.slice(2),
      smoke: SMOKE,
      commit: describeCommit(path.resolve(__dirname, '..')),
      note: args.note,
    },
    benches: [],
  }
  const save = () => {
    if (!args.json) return
    results.run.endDate = new Date().toISOString()
    results.run.loadEnd = readLoad()
    writeResults(args.json, results)
  }
  const failed: string[] = []
  const missed: string[] = []
  for (const b of todo) {
    console.log(`\n## ${b.name} — ${b.title}`)
    const date = new Date().toISOString()
    const loadStart = readLoad()
    const t0 = performance.now()
    const cpu0 = readCpuSeconds()
    let error: string | null = null
    beginBench(b.name)
    try {
      await b.run()
    } catch (e) {
      failed.push(b.name)
      error = e instanceof Error ? e.message : String(e)
      console.error(`bench ${b.name} FAILED:`, e)
    }
    const { figures, skipped } = endBench()
    const seconds = (performance.now() - t0) / 1000
    const cpu = readCpuSeconds()
    const r: BenchResult = {
      name: b.name,
      title: b.title,
      date,
      seconds: Math.round(seconds * 10) / 10,
      loadStart,
      loadEnd: readLoad(),
      status: error ? 'failed' : skipped ? 'skipped' : 'ok',
      reason: error ?? skipped,
      figures,
    }
    results.benches.push(r)
    const judged = figures.filter((f) => f.status !== 'no-goal')
    const bad = judged.filter((f) => f.status !== 'met')
    for (const f of bad) missed.push(`${b.name}: ${f.name} — ${f.goal?.text ?? ''} ${statusWord(f)}`)
    if (figures.some((f) => f.kind === 'check' && f.status === 'missed')) failed.push(`${b.name} (exactness)`)
    console.log(
      `(${seconds.toFixed(1)} s; goals: ${judged.length - bad.length} met${bad.length ? `, ${bad.length} not: ${bad.map((f) => f.name).join('; ')}` : ''}; load average ${loadStart[0].toFixed(2)} → ${r.loadEnd[0].toFixed(2)}; CPU ${(cpu.self - cpu0.self).toFixed(1)} s here + ${(cpu.children - cpu0.children).toFixed(1)} s in child processes)`,
    )
    save()
  }
  if (missed.length) console.log(`\nGoals not met:\n${missed.map((m) => `  ${m}`).join('\n')}`)
  if (args.json) console.log(`\nresults written to ${args.json} (npm run bench:docs -- ${args.json} adds them to docs/internals/performance.md)`)
  if (failed.length) {
    console.error(`\n${failed.length} bench${failed.length === 1 ? '' : 'es'} failed: ${failed.join(', ')}`)
    process.exit(1)
  }
  // Scan-pool worker threads and the like must not keep a finished run alive.
  process.exit(0)
}

if (require.main === module)
  main().catch((e) => {
    console.error(e)
    process.exit(1)
  })
