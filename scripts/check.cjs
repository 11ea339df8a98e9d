#!/usr/bin/env node
/**
 * `npm run check`: the static checks `npm test` runs beside vitest (typecheck, arch, deadcode,
 * format:check, lint) and the build the shell and e2e tests need, run side by side instead of one after
 * the other (scripts/test.cjs reuses TASKS and runTask). Each task's output is buffered and printed whole when it ends (never interleaved), with its
 * time; the exit code is 1 if any failed, after all have finished (one run shows every problem).
 *
 *   node scripts/check.cjs [--jobs N] [task…]      tasks: typecheck arch deadcode format lint build
 *
 * @default --jobs: the number of cores (at least 2). On 2 cores, two at a time is the measured sweet spot:
 * lint and typecheck are each one busy thread for most of their run.
 */
'use strict'

const os = require('node:os')
const { spawn } = require('node:child_process')

/** name → npm script. Longest first, so the slowest start at once. */
const TASKS = [
  ['lint', 'lint'],
  ['typecheck', 'typecheck'],
  ['build', 'build'],
  ['deadcode', 'deadcode'],
  ['arch', 'arch'],
  ['format', 'format:check'],
]

function parseArgs(argv) {
  let jobs = Math.max(2, os.availableParallelism ? os.availableParallelism() : os.cpus().length)
  const names = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--jobs') jobs = Math.max(1, Number(argv[++i]) || 1)
    else names.push(argv[i])
  }
  const unknown = names.filter((n) => !TASKS.some(([t]) => t === n))
  if (unknown.length) throw new Error(`unknown task: ${unknown.join(', ')} (known: ${TASKS.map(([t]) => t).join(', ')})`)
  return { jobs, tasks: names.length ? TASKS.filter(([t]) => names.includes(t)) : TASKS }
}

/**
 * Run one task, its output buffered and printed whole when it ends.
 * @param nice - run it at this niceness (POSIX `nice`; ignored on Windows): scripts/test.cjs lowers the checks'
 *   priority so the tests beside them, some of which measure latencies, come first when both want a core.
 */
function runTask([name, script], { nice = 0 } = {}) {
  const t0 = Date.now()
  return new Promise((resolve) => {
    const npm = ['npm', 'run', '--silent', script]
    const [cmd, ...args] = nice && process.platform !== 'win32' ? ['nice', '-n', String(nice), ...npm] : npm
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('close', (code) => {
      const s = ((Date.now() - t0) / 1000).toFixed(1)
      const ok = code === 0
      process.stdout.write(`\n── ${name} (npm run ${script}): ${ok ? 'ok' : `FAILED (exit ${code})`} in ${s} s\n`)
      if (out.trim() && (!ok || process.env.RECALLSCOPE_CHECK_VERBOSE === '1')) process.stdout.write(out.endsWith('\n') ? out : `${out}\n`)
      resolve({ name, ok, s })
    })
  })
}

async function main() {
  const { jobs, tasks } = parseArgs(process.argv.slice(2))
  const t0 = Date.now()
  const queue = [...tasks]
  const results = []
  await Promise.all(
    Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      while (queue.length) results.push(await runTask(queue.shift()))
    }),
  )
  const failed = results.filter((r) => !r.ok).map((r) => r.name)
  process.stdout.write(
    `\nchecks: ${results.length - failed.length}/${results.length} ok in ${((Date.now() - t0) / 1000).toFixed(1)} s (${jobs} at a time)${failed.length ? `; FAILED: ${failed.join(', ')}` : ''}\n`,
  )
  process.exitCode = failed.length ? 1 : 0
}

module.exports = { TASKS, runTask }

if (require.main === module)
  main().catch((e) => {
    process.stderr.write(`${e.message}\n`)
    process.exitCode = 2
  })
