import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { RecallscopeError } from '../shared/result'
import { WORKER_ENTRIES, type WorkerName } from './workerEntries'
import { workerScript } from './workerScript'

let dir: string
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-worker-script-'))
})
afterEach(() => {
  vi.unstubAllEnvs()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** The source folder of a worker's entry module (what its caller passes as `here` when running from source). */
const sourceDir = (name: WorkerName) => path.dirname(path.join(__dirname, WORKER_ENTRIES[name]))

describe('workerScript', () => {
  it('every listed entry exists in the source tree', () => {
    for (const entry of Object.values(WORKER_ENTRIES)) expect(fs.existsSync(path.join(__dirname, entry)), entry).toBe(true)
  })

  it('from source without RECALLSCOPE_WORKER_DIR: the .ts through tsx', () => {
    vi.stubEnv('RECALLSCOPE_WORKER_DIR', '')
    const s = workerScript('jobWorker', sourceDir('jobWorker'), 'job worker')
    expect(s.eval).toBe(true)
    expect(s.code).toContain(JSON.stringify(path.join(sourceDir('jobWorker'), 'jobWorker.ts')))
    expect(s.code).toMatch(/tsx.*register\(\)/)
  })

  it('from source with RECALLSCOPE_WORKER_DIR: the prebuilt script there', () => {
    fs.writeFileSync(path.join(dir, 'mapWorker.js'), '')
    vi.stubEnv('RECALLSCOPE_WORKER_DIR', dir)
    expect(workerScript('mapWorker', sourceDir('mapWorker'), 'map worker')).toEqual({ code: path.join(dir, 'mapWorker.js'), eval: false })
  })

  it('RECALLSCOPE_WORKER_DIR without the script: a typed error naming it, no silent fallback to tsx', () => {
    vi.stubEnv('RECALLSCOPE_WORKER_DIR', dir)
    let err: unknown
    try {
      workerScript('pgWorker', sourceDir('pgWorker'), 'Postgres worker')
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(RecallscopeError)
    expect((err as RecallscopeError).message).toContain(path.join(dir, 'pgWorker.js'))
  })

  it('a built script beside the caller wins over RECALLSCOPE_WORKER_DIR (the app and the CLI run their own build)', () => {
    const built = path.join(dir, 'out', 'main')
    fs.mkdirSync(built, { recursive: true })
    fs.writeFileSync(path.join(built, 'hostWorker.js'), '')
    const prebuilt = path.join(dir, 'prebuilt')
    fs.mkdirSync(prebuilt)
    fs.writeFileSync(path.join(prebuilt, 'hostWorker.js'), '')
    vi.stubEnv('RECALLSCOPE_WORKER_DIR', prebuilt)
    // a chunk folder under out/main calls with its own __dirname: the script one level up is found
    fs.mkdirSync(path.join(built, 'chunks'))
    expect(workerScript('hostWorker', path.join(built, 'chunks'), 'store host')).toEqual({ code: path.join(built, 'hostWorker.js'), eval: false })
  })

  it('nothing anywhere: a typed error', () => {
    vi.stubEnv('RECALLSCOPE_WORKER_DIR', '')
    expect(() => workerScript('jobWorker', dir, 'job worker')).toThrow(/job worker script is missing/)
  })
})
