/**
 * The real data (LoCoMo) lives outside the repo, in ../shared/data, for developers and CI; a user's clone
 * has no such folder. One rule for every test that needs it:
 *  - present: the test runs on it;
 *  - missing on CI (CI set, as every CI service sets it): the file FAILS at load, naming the path, so a
 *    broken checkout can never turn into a green run with the real-data tests silently skipped;
 *  - missing elsewhere: a warning naming the path and the test, and the caller skips.
 * Framework-free (no vitest import), so benches use it too.
 */
import fs from 'node:fs'
import path from 'node:path'

/** ../shared next to the repo. */
export const SHARED_ROOT = path.resolve(__dirname, '../../../shared')

/** The LoCoMo dev split, the file most real-data tests read. */
export const LOCOMO_DEV = 'data/locomo/locomo-dev.json'

/** True on a CI runner: CI is set to anything but "" / "0" / "false". */
export function onCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.CI ?? '').trim().toLowerCase()
  return v !== '' && v !== '0' && v !== 'false'
}

/** The absolute path of `rel` under ../shared, or null when it is missing (no message: benches decide for themselves). */
export function sharedDataPath(rel: string): string | null {
  const p = path.join(SHARED_ROOT, rel)
  return fs.existsSync(p) ? p : null
}

/**
 * The absolute path of `rel` under ../shared for the test `who`. Missing: throws on CI (the test file fails
 * loudly), else warns and returns null so the caller can `describe.skipIf(!file)`.
 */
export function requireSharedData(rel: string, who: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const p = sharedDataPath(rel)
  if (p) return p
  const where = path.join(SHARED_ROOT, rel)
  if (onCi(env)) throw new Error(`${who}: ${where} is missing and CI is set. The real-data tests must run on CI: check out ../shared next to the repo.`)
  console.warn(`${who}: SKIPPED, ${where} is missing (it ships in ../shared for developers and CI; on CI this fails).`)
  return null
}
