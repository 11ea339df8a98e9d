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

/** `here` is the calling module's folder (its `__dirname`); `what` names the worker in the error. */
export function workerScript(name: string, here: string, what: string): { code: string; eval: boolean } {
  for (const dir of [here, path.join(here, '..'), path.join(here, '..', 'main')]) {
    const js = path.join(dir, `${name}.js`)
    if (fs.existsSync(js)) return { code: js, eval: false }
  }
  const ts = path.join(here, `${name}.ts`)
  if (fs.existsSync(ts)) {
    const tsx = createRequire(ts).resolve('tsx/cjs/api')
    return { code: `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(ts)})`, eval: true }
  }
  throw new RecallscopeError('INTERNAL', `The ${what} script is missing (looked beside ${here})`)
}
