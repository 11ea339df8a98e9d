/**
 * The demo DB tests serve and read, generated once per process and copied (framework-free: benches and scripts
 * may import it). Generating a 300–1,500-memory demo costs 0.3–1.5 s of CPU (the recall engine computes its
 * events); copying the file costs milliseconds, and with unit and integration running several files per worker
 * (vitest `isolate: false`) the files of a worker share one generation per option set. The generator is
 * deterministic (fixed seed, fixed end date), so a copy holds the very bytes generateDemo would write at `out`.
 * The caller owns its copy: it may write to it or hash it.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { generateDemo, type DemoOptions } from '../../src/main/demo/generate'

type DemoResult = ReturnType<typeof generateDemo>

/** The options a copy can stand for: the ones that only shape the data (no callbacks, no `force`). */
type CopyableOptions = Pick<DemoOptions, 'seed' | 'memories' | 'events' | 'cases'>

let cacheDir: string | null = null
const generated = new Map<string, { file: string; result: DemoResult }>()

/** This process's template folder, removed when the process exits. */
function ensureCacheDir(): string {
  if (cacheDir) return cacheDir
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-demo-templates-'))
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
  cacheDir = dir
  return dir
}

/**
 * Write the demo DB of `opts` at `out` (and its workspace `<out>.recallscope` with the eval cases, unless
 * `cases: false`), as generateDemo({ out, ...opts }) would; returns generateDemo's result with `path: out`.
 * `out` must not exist yet (generateDemo's own rule without `force`).
 */
export function writeDemoDb(out: string, opts: CopyableOptions = {}): DemoResult {
  const key = JSON.stringify([opts.seed ?? null, opts.memories ?? null, opts.events ?? null, opts.cases ?? null])
  let t = generated.get(key)
  if (!t) {
    const file = path.join(ensureCacheDir(), `${crypto.createHash('sha256').update(key).digest('hex').slice(0, 16)}.db`)
    t = { file, result: generateDemo({ ...opts, out: file }) }
    generated.set(key, t)
  }
  if (fs.existsSync(out)) throw new Error(`writeDemoDb: ${out} already exists`)
  // Every file the generator left beside the DB (the workspace `.recallscope`; -wal/-shm if any), same suffix.
  const base = path.basename(t.file)
  for (const name of fs.readdirSync(path.dirname(t.file)))
    if (name.startsWith(base)) fs.copyFileSync(path.join(path.dirname(t.file), name), out + name.slice(base.length))
  return { ...t.result, path: out }
}
