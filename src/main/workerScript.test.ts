import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { RecallscopeError } from '../shared/result'
import { WORKER_ENTRIES, type WorkerName } from './workerEntries'
import { withoutModuleHooks, workerScript } from './workerScript'

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('workerScript', () => {
  it('drops module hooks (both spellings) and keeps every other flag', () => {
    const argv = [
      '--require',
      '/x/preflight.cjs',
      '--max-old-space-size=512',
      '--import',
      'file:///x/loader.mjs',
      '-r',
      'a',
      '--loader=b',
      '--experimental-loader',
      'c',
      '--stack-size=900',
      '--enable-source-maps',
    ]
    expect(withoutModuleHooks(argv)).toEqual(['--max-old-space-size=512', '--stack-size=900', '--enable-source-maps'])
    expect(withoutModuleHooks([])).toEqual([])
  })

  it('starts a built script without the module hooks, a source one with the process flags', () => {
    // the test run's prebuilt workers (test/helpers/testWorkers.ts) would stand in for the source one
    vi.stubEnv('RECALLSCOPE_WORKER_DIR', '')
    // Inside the repo (git-ignored .cache): a source script finds tsx from where it lies.
    fs.mkdirSync(path.join(__dirname, '../../.cache'), { recursive: true })
    const dir = fs.mkdtempSync(path.join(__dirname, '../../.cache/workerScript-'))
    try {
      fs.writeFileSync(path.join(dir, 'w.js'), '')
      const built = workerScript('w', dir, 'test worker')
      expect(built).toEqual({ code: path.join(dir, 'w.js'), eval: false, execArgv: withoutModuleHooks(process.execArgv) })
      fs.rmSync(path.join(dir, 'w.js'))
      fs.writeFileSync(path.join(dir, 'w.ts'), '')
      const source = workerScript('w', dir, 'test worker')
      expect(source.eval).toBe(true)
      expect(source.execArgv).toBeUndefined()
      fs.rmSync(path.join(dir, 'w.ts'))
      expect(() => workerScript('w', dir, 'test worker')).toThrow(/test worker script is missing/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('workerScript with RECALLSCOPE_WORKER_DIR (the prebuilt workers of a test run)', () => {
  let dir: string
  const fresh = () => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-worker-script-')))
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))
  /** The source folder of a worker's entry module (what its caller passes as `here` when running from source). */
  const sourceDir = (name: WorkerName) => path.dirname(path.join(__dirname, WORKER_ENTRIES[name]))

  it('every listed entry exists in the source tree', () => {
    fresh()
    for (const entry of Object.values(WORKER_ENTRIES)) expect(fs.existsSync(path.join(__dirname, entry)), entry).toBe(true)
  })

  it('from source: the prebuilt script there, started without module hooks', () => {
    fs.writeFileSync(path.join(fresh(), 'mapWorker.js'), '')
    vi.stubEnv('RECALLSCOPE_WORKER_DIR', dir)
    expect(workerScript('mapWorker', sourceDir('mapWorker'), 'map worker')).toEqual({
      code: path.join(dir, 'mapWorker.js'),
      eval: false,
      execArgv: withoutModuleHooks(process.execArgv),
    })
  })

  it('without the script there: a typed error naming it, no silent fallback to tsx', () => {
    vi.stubEnv('RECALLSCOPE_WORKER_DIR', fresh())
    let err: unknown
    try {
      workerScript('pgWorker', sourceDir('pgWorker'), 'Postgres worker')
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(RecallscopeError)
    expect((err as RecallscopeError).message).toContain(path.join(dir, 'pgWorker.js'))
  })

  it('a built script beside the caller wins (the app and the CLI run their own build)', () => {
    const built = path.join(fresh(), 'out', 'main')
    fs.mkdirSync(path.join(built, 'chunks'), { recursive: true })
    fs.writeFileSync(path.join(built, 'hostWorker.js'), '')
    fs.mkdirSync(path.join(dir, 'prebuilt'))
    fs.writeFileSync(path.join(dir, 'prebuilt', 'hostWorker.js'), '')
    vi.stubEnv('RECALLSCOPE_WORKER_DIR', path.join(dir, 'prebuilt'))
    // a chunk under out/main calls with its own __dirname: the script one level up is found
    expect(workerScript('hostWorker', path.join(built, 'chunks'), 'store host').code).toBe(path.join(built, 'hostWorker.js'))
  })
})
