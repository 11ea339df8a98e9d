/**
 * vitest globalSetup of the node projects: builds the worker thread scripts (src/main/workerEntries.ts) once per
 * run, from the source under test, into .cache/test-workers/<pid>/ and points RECALLSCOPE_WORKER_DIR at them, so a
 * worker the tests start loads one built file instead of compiling its modules through tsx on every start
 * (src/main/workerScript.ts; ~0.85 → ~0.25 s of CPU per job worker, and the integration tests start hundreds:
 * docs/internals/testing.md). The folder sits inside the repository so the bundles' `require`s of node_modules
 * and appRoot() resolve as they do from src/.
 *
 * Every project lists this setup; the first to run builds, the others find the variable set. In watch mode the
 * scripts are rebuilt before each rerun, so a worker never runs code older than the source.
 */
import fs from 'node:fs'
import path from 'node:path'
import { build } from 'vite'
import { WORKER_ENTRIES } from '../../src/main/workerEntries'

const ROOT = path.resolve(__dirname, '../..')
const BASE = path.join(ROOT, '.cache', 'test-workers')

/**
 * Build every worker script into `outDir` (`<name>.js` plus shared chunks), and the child processes' processLib.js,
 * CommonJS for Node, deps left as requires.
 */
export async function buildTestWorkers(outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: ROOT,
    logLevel: 'warn',
    // zod bundled, as in the app's build (electron.vite.config.ts): require('zod') loads 95 files, ~90 ms of CPU
    // in every worker thread that starts
    ssr: { noExternal: ['zod'] },
    build: {
      // ssr: a Node bundle; node_modules stay require()s (the native addon cannot be bundled), as in the app's build
      ssr: true,
      outDir,
      emptyOutDir: true,
      target: 'node20',
      minify: false,
      reportCompressedSize: false,
      rolldownOptions: {
        input: {
          ...Object.fromEntries(Object.entries(WORKER_ENTRIES).map(([name, entry]) => [name, path.join(ROOT, 'src/main', entry)])),
          // what the trust tests' child processes require (test/helpers/processLib.ts), sharing the workers' chunks
          processLib: path.join(ROOT, 'test/helpers/processLib.ts'),
        },
        output: { format: 'cjs', entryFileNames: '[name].js' },
      },
    },
  })
}

/** Folders of runs whose process is gone (killed before its exit handler ran). */
function removeStale(): void {
  for (const e of fs.existsSync(BASE) ? fs.readdirSync(BASE) : []) {
    const pid = Number(e)
    let alive = Number.isInteger(pid) && pid > 0
    try {
      if (alive) process.kill(pid, 0)
    } catch (err) {
      alive = (err as NodeJS.ErrnoException).code === 'EPERM'
    }
    if (!alive) fs.rmSync(path.join(BASE, e), { recursive: true, force: true })
  }
}

export default async function setup(project: { onTestsRerun(cb: () => Promise<void> | void): void }): Promise<void> {
  if (process.env.RECALLSCOPE_WORKER_DIR) return
  removeStale()
  const dir = path.join(BASE, String(process.pid))
  await buildTestWorkers(dir)
  // Set before the test processes start: they inherit it.
  process.env.RECALLSCOPE_WORKER_DIR = dir
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
  project.onTestsRerun(() => buildTestWorkers(dir))
}
