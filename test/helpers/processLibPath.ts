import fs from 'node:fs'
import path from 'node:path'

/**
 * The built test/helpers/processLib.ts of this run (in RECALLSCOPE_WORKER_DIR, test/helpers/testWorkers.ts), for a
 * child process to `require`. Throws when the run did not build it: a child that fell back to tsx would only be slow,
 * so a broken setup says so instead.
 */
export function processLibPath(): string {
  const dir = process.env.RECALLSCOPE_WORKER_DIR
  const lib = dir ? path.join(dir, 'processLib.js') : ''
  if (!dir || !fs.existsSync(lib)) throw new Error(`processLib.js is not built (RECALLSCOPE_WORKER_DIR=${dir ?? 'unset'}): run through vitest's node projects`)
  return lib
}
