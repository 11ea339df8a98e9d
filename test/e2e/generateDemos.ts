/**
 * The e2e demo DBs (demoSizes.ts), generated into the folder named by the first argument, then a `ready` file there
 * (or `failed`, holding the error). globalSetup.ts runs this as a niced child process beside the first test groups,
 * so the run does not wait for it before its first file; harness.ts demoCopy waits for `ready`.
 *
 *   node --import tsx test/e2e/generateDemos.ts DIR
 */
import fs from 'node:fs'
import path from 'node:path'
import { generateDemo } from '../../src/main/demo/generate'
import { DEMO_SIZES, DEMOS_FAILED, DEMOS_READY, demoFileName } from './demoSizes'

const dir = process.argv[2]
try {
  for (const n of DEMO_SIZES) generateDemo({ out: path.join(dir, demoFileName(n)), ...(n === 'default' ? {} : { memories: n }) })
  fs.writeFileSync(path.join(dir, DEMOS_READY), '')
} catch (e) {
  // the stack to the run's output; the file holds the message only (vitest reads stack frames in a thrown message)
  console.error(e)
  fs.writeFileSync(path.join(dir, DEMOS_FAILED), e instanceof Error ? e.message : String(e))
  process.exitCode = 1
}
