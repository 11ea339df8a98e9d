#!/usr/bin/env node
/**
 * `npm test`: the build, then every vitest project and the static checks of scripts/check.cjs (lint,
 * typecheck, deadcode, arch, format) at the same time instead of one after the other. Most of the test
 * time is spent waiting on child processes (serve, Chromium, the CLI, PGlite), which leaves a core free
 * for the checks; run in sequence the two took 125 s + 720 s on 2 idle cores (docs/internals/testing.md).
 *
 *   node scripts/test.cjs [vitest args…]     e.g. npm test -- --project e2e
 *
 * vitest's output streams as it runs; each check prints its result line (and its output if it failed)
 * when it ends. The exit code is 1 if the build, a check or vitest failed, after all have finished.
 *
 * Environment: RECALLSCOPE_TEST_CHECK_JOBS checks at a time (default: the number of cores, as `npm run check`),
 * RECALLSCOPE_TEST_CHECK_NICE their niceness (default 10; 0 turns it off). Niced, the checks take the CPU the
 * tests leave while they wait, and the tests (some measure latencies) win a contended core; no CPU is lost
 * either way, so the whole run ends when the work of both is done.
 */
'use strict'

const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { TASKS, runTask } = require('./check.cjs')

const ROOT = path.resolve(__dirname, '..')

function envInt(name, fallback) {
  const v = Number(process.env[name])
  return Number.isInteger(v) && v >= 0 ? v : fallback
}

function runVitest(args) {
  const t0 = Date.now()
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', ...args], { cwd: ROOT, stdio: 'inherit' })
    child.on('close', (code) => resolve({ name: 'vitest', ok: code === 0, s: ((Date.now() - t0) / 1000).toFixed(1) }))
  })
}

async function main() {
  const t0 = Date.now()
  const jobs = Math.max(1, envInt('RECALLSCOPE_TEST_CHECK_JOBS', os.availableParallelism ? os.availableParallelism() : os.cpus().length))
  const nice = envInt('RECALLSCOPE_TEST_CHECK_NICE', 10)
  // The shell and e2e projects run the built app (out/): build first. A failed build still lets the checks
  // and the other projects run, so one run shows every problem.
  const build = await runTask(
    TASKS.find(([n]) => n === 'build'),
    {},
  )
  const queue = TASKS.filter(([n]) => n !== 'build')
  const checks = []
  const checking = Promise.all(
    Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      while (queue.length) checks.push(await runTask(queue.shift(), { nice }))
    }),
  )
  const vitest = await runVitest(process.argv.slice(2))
  await checking
  const all = [build, ...checks, vitest]
  const failed = all.filter((r) => !r.ok).map((r) => r.name)
  process.stdout.write(
    `\nnpm test: ${all.map((r) => `${r.name} ${r.s} s`).join(', ')}; ${((Date.now() - t0) / 1000).toFixed(1)} s in all${failed.length ? `; FAILED: ${failed.join(', ')}` : ', all ok'}\n`,
  )
  process.exitCode = failed.length ? 1 : 0
}

main().catch((e) => {
  process.stderr.write(`${e.stack || e.message}\n`)
  process.exitCode = 2
})
