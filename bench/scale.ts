/**
 * Smoke mode (`npm run bench -- --smoke`): every bench runs its real code path
 * on tiny inputs, in seconds, so `npm test` can run them all and a bench that
 * no longer loads or runs fails CI instead of rotting. The numbers it prints
 * mean nothing; only that every step ran does.
 */
import path from 'node:path'

/** True when `--smoke` is on the command line (or RECALLSCOPE_BENCH_SMOKE=1, for benches run in a child process). */
export const SMOKE = process.argv.includes('--smoke') || process.env.RECALLSCOPE_BENCH_SMOKE === '1'
// Benches that time a fresh child process (firstpage, millionapp) load bench modules there too: same sizes.
if (SMOKE) process.env.RECALLSCOPE_BENCH_SMOKE = '1'

/** The full-size value, or the tiny one in smoke mode. */
export function scaled<T>(full: T, smoke: T): T {
  return SMOKE ? smoke : full
}

/**
 * Where generated fixtures are cached: RECALLSCOPE_BENCH_CACHE if set (the smoke test points it at a temp
 * folder), else .bench-cache/ (git-ignored), with smoke fixtures in their own subfolder so a smoke run never
 * leaves a tiny file where a full run expects a big one.
 * @default <repo>/.bench-cache
 */
export const CACHE = process.env.RECALLSCOPE_BENCH_CACHE ?? path.resolve(__dirname, '../.bench-cache', SMOKE ? 'smoke' : '')
