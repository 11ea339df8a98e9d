/**
 * Where a worker thread's script is: the built `<name>.js` (an electron-vite input, beside
 * the main bundle), or, running from source (tests, bench), a prebuilt `<name>.js` in
 * RECALLSCOPE_WORKER_DIR if that is set (the test run builds the workers once there), else
 * `<name>.ts` loaded through tsx's CommonJS hook in a two-line bootstrap. Used by every
 * worker main starts (src/main/workerEntries.ts lists them).
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { RecallscopeError } from '../shared/result'

/** A worker's script and how to start it: `new Worker(code, { eval, execArgv })`. */
export interface WorkerScript {
  code: string
  eval: boolean
  /** the Node flags the thread starts with (undefined: the process's own) */
  execArgv?: string[]
}

/**
 * `here` is the calling module's folder (its `__dirname`); `what` names the worker in the error.
 * RECALLSCOPE_WORKER_DIR: a folder of worker scripts built from this source tree, used in place of tsx when
 * running from source. tsx compiles and loads the worker's ~100 modules on every start (~0.85 s of CPU for the
 * job worker, against ~0.25 s for one built file, measured); the tests start hundreds of workers
 * (docs/internals/testing.md). The app's own build never consults it: its scripts are found beside it first.
 */
export function workerScript(name: string, here: string, what: string): WorkerScript {
  for (const dir of [here, path.join(here, '..'), path.join(here, '..', 'main')]) {
    const js = path.join(dir, `${name}.js`)
    if (fs.existsSync(js)) return { code: js, eval: false, execArgv: withoutModuleHooks(process.execArgv) }
  }
  const ts = path.join(here, `${name}.ts`)
  const prebuilt = process.env.RECALLSCOPE_WORKER_DIR
  if (prebuilt && fs.existsSync(ts)) {
    const js = path.join(prebuilt, `${name}.js`)
    // Set but missing is a broken test setup, not a reason to fall back silently (and slowly) to tsx.
    if (!fs.existsSync(js)) throw new RecallscopeError('INTERNAL', `The ${what} script is missing from RECALLSCOPE_WORKER_DIR (${js})`)
    return { code: js, eval: false, execArgv: withoutModuleHooks(process.execArgv) }
  }
  if (fs.existsSync(ts)) {
    const tsx = createRequire(ts).resolve('tsx/cjs/api')
    return { code: `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(ts)})`, eval: true }
  }
  throw new RecallscopeError('INTERNAL', `The ${what} script is missing (looked beside ${here})`)
}

/** Flags that load a module into every thread before its script (tsx's loader, instrumentation). */
const HOOK_FLAGS = new Set(['--require', '-r', '--import', '--loader', '--experimental-loader'])

/**
 * `argv` without module hooks. A worker inherits the process's flags; under tsx (tests, benches, `npm run dev`)
 * those load tsx's TypeScript loader into the thread first: ~150 ms of CPU before a built script's first line,
 * which needs no loader (docs/internals/performance.md, "The map").
 */
export function withoutModuleHooks(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i].split('=')[0]
    if (!HOOK_FLAGS.has(flag)) out.push(argv[i])
    else if (!argv[i].includes('=')) i++ // the flag's value is the next argument
  }
  return out
}
