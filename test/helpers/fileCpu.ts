/**
 * A vitest setup file that records each test file's CPU time: the test process (its main thread and every worker
 * thread) and the child processes it started and reaped during the file (test/helpers/cpuTime.ts). vitest.config.mts
 * adds it to every node project when RECALLSCOPE_TEST_CPU_LOG names a file; each test file appends one JSON line
 * there. How to read the numbers: docs/internals/testing.md ("Per-file CPU").
 */
import fs from 'node:fs'
import path from 'node:path'
// A test-only module (it runs only as a vitest setup file), like src/renderer/src/test/setup.ts: .dependency-cruiser.cjs
// lists it; .oxlintrc.json does not yet (hence the disable below).
// oxlint-disable-next-line no-restricted-imports -- a vitest setup file, never loaded outside vitest
import { afterAll, beforeAll } from 'vitest'
import { startFileCpu } from './cpuTime'

const LOG = process.env.RECALLSCOPE_TEST_CPU_LOG

if (LOG) {
  // Taken when the setup file runs (before each test file, also without isolation), so the file's import counts.
  const finish = startFileCpu()
  let file = ''
  // oxlint-disable-next-line no-empty-pattern -- vitest reads the first parameter as fixtures (it must destructure); the file is the second
  beforeAll(({}, suite) => {
    file = path.relative(process.cwd(), suite.file.filepath)
  })
  afterAll(() => fs.appendFileSync(LOG, finish(file)))
}
