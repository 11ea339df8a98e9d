/**
 * Issue 4: re-ranking 1,000 cached candidates with the shared scoring code
 * (src/shared/scoring.ts, the function the renderer runs on every slider move):
 * goal ≤ 2 ms per call (bench/goals.ts).
 */
import { getPreset } from '../src/shared/presets'
import { benchRerank } from '../src/shared/scoring'
import { withBackgroundJob } from './background'
import { GOALS } from './goals'
import { measure, verdict } from './report'
import { scaled } from './scale'
import { fmtMs, median } from './util'

export async function runRerank(): Promise<void> {
  const cfg = getPreset('fieldguide').config
  // Several rounds of 200 calls each: the median round is the number (one GC pause does not decide it).
  const calls = scaled(200, 10)
  const rounds = Array.from({ length: scaled(7, 2) }, () => benchRerank(cfg, 1000, calls))
  const ms = median(rounds.map((r) => r.msPerCall))
  console.log(`rerank 1,000 candidates (hybrid, min-max normalisation, token budget): median ${fmtMs(ms)} per call over ${rounds.length} rounds of ${calls}`)
  console.log(`  rounds: ${rounds.map((r) => fmtMs(r.msPerCall)).join(', ')}; ${rounds[0].results} injected`)
  console.log(`  ${verdict(measure({ name: 'median per call', value: ms, unit: 'ms', goal: GOALS['rerank.idle'] }))}`)
  // The same while a tune runs in the job worker (the UI's slider while a background job works).
  const bg = await withBackgroundJob(() => Array.from({ length: scaled(7, 2) }, () => benchRerank(cfg, 1000, calls)))
  const bgMs = median(bg.out.map((r) => r.msPerCall))
  const busy = measure({ name: 'median per call while a tune runs in the job worker', value: bgMs, unit: 'ms', goal: GOALS['rerank.busy'] })
  console.log(
    `  while a tune runs in the job worker (${bg.configsDone.toLocaleString('en-US')} configs scored meanwhile): median ${fmtMs(bgMs)} per call  ${verdict(busy)}`,
  )
}
