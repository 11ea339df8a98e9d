/**
 * Temp files this process is writing (import outputs before their rename, export temp
 * files), removed on exit and on SIGINT/SIGTERM so an interrupted run "leaves nothing
 * behind" (README). SQLite temp DBs register with their side files.
 */
import fs from 'node:fs'
import path from 'node:path'
import { SQLITE_SIDE_SUFFIXES } from './fileIdentity'

const temps = new Set<string>()
const outputs = new Set<string>()

/** Track a temp file (and, for a SQLite temp DB, its -wal/-shm/-journal). Returns the release function. */
export function registerTemp(file: string, opts: { sqlite?: boolean } = {}): () => void {
  const files = opts.sqlite ? SQLITE_SIDE_SUFFIXES.map((s) => file + s) : [file]
  for (const f of files) temps.add(f)
  return () => {
    for (const f of files) temps.delete(f)
  }
}

/**
 * Track the temp files this process writes for an output (`<output>…tmp-<pid>-<time>` and
 * their side files) when a worker thread writes them: its registerTemp list lives in that
 * thread, which a signal handler on the main thread cannot see. Returns the release function.
 */
export function registerTempsOf(output: string): () => void {
  const abs = path.resolve(output)
  outputs.add(abs)
  return () => void outputs.delete(abs)
}

function tempsOf(output: string): string[] {
  const dir = path.dirname(output)
  const base = path.basename(output)
  const ours = new RegExp(`\\.tmp-${process.pid}-\\d+(${SQLITE_SIDE_SUFFIXES.filter(Boolean).join('|')})?$`)
  try {
    return fs
      .readdirSync(dir)
      .filter((f) => f.startsWith(base) && ours.test(f))
      .map((f) => path.join(dir, f))
  } catch {
    return []
  }
}

/** Remove every tracked temp file (best effort, synchronous: safe in 'exit' handlers). */
export function removeTemps(): number {
  for (const o of outputs) for (const f of tempsOf(o)) temps.add(f)
  outputs.clear()
  let n = 0
  for (const f of temps) {
    try {
      fs.rmSync(f, { force: true })
      n++
    } catch {
      /* already gone or not ours to remove */
    }
  }
  temps.clear()
  return n
}

let installed = false

/**
 * Remove temp files on exit, and on SIGINT/SIGTERM exit with 130/143 after removing them
 * (a listener replaces Node's default exit, so this one exits itself). For one-shot CLI
 * commands; `serve` handles its own signals and calls removeTemps() on the way out.
 */
export function installTempCleanup(opts: { signals?: boolean } = {}): void {
  if (installed) return
  installed = true
  process.on('exit', () => void removeTemps())
  if (opts.signals === false) return
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(sig, () => {
      removeTemps()
      process.exit(code)
    })
  }
}
