/**
 * Where a worker thread's script is: the built `<name>.js` (an electron-vite input, beside
 * the main bundle), or, running from source (tests, bench), `<name>.ts` loaded through tsx's
 * CommonJS hook in a two-line bootstrap. Used by every worker main starts (job worker,
 * embedding map, Postgres bridge).
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

/** `here` is the calling module's folder (its `__dirname`); `what` names the worker in the error. */
export function workerScript(name: string, here: string, what: string): WorkerScript {
  for (const dir of [here, path.join(here, '..'), path.join(here, '..', 'main')]) {
    const js = path.join(dir, `${name}.js`)
    if (fs.existsSync(js)) return { code: js, eval: false, execArgv: withoutModuleHooks(process.execArgv) }
  }
  const ts = path.join(here, `${name}.ts`)
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
