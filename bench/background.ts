/**
 * A background job for benches that must hold their numbers while one runs
 * (issue 13 goal 6): a long tune in the app's job worker (src/main/jobs/) on the
 * 3,000-memory demo DB and its judged cases, started the way the UI starts one.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { App } from '../src/main/api/app'
import { scaled } from './scale'
import { demoDb } from './util'

/** Run `fn` while a tune runs in the job worker; the tune is cancelled afterwards. */
export async function withBackgroundJob<T>(fn: () => Promise<T> | T): Promise<{ out: T; configsDone: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-bg-'))
  const app = new App({ mode: 'browser', dataDir: dir })
  app.open(demoDb(scaled(3000, 300)))
  const ac = new AbortController()
  let done = 0
  let searching = false
  const job = app
    .offThread(
      'tune',
      { embedder: 'hashing', embedderOptions: {}, now: Date.now(), trials: 100_000, seed: 1 },
      {
        signal: ac.signal,
        progress: (d, _t, message) => {
          // Gathering reports cases; the search reports "N / budget configs …".
          if (message?.includes('configs')) {
            searching = true
            done = d
          }
        },
      },
    )
    .catch(() => null)
  try {
    // Measure once the job searches at full speed: past gathering and its first (slow) configs, the start
    // config and the baselines.
    for (let i = 0; i < 2400 && !(searching && done >= scaled(300, 10)); i++) await new Promise((r) => setTimeout(r, 50))
    const before = done
    const out = await fn()
    // The cancelled tune reports how many configs it scored in all.
    ac.abort()
    const report = await job
    return { out, configsDone: (report?.trials ?? done) - before }
  } finally {
    ac.abort()
    await job
    app.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
