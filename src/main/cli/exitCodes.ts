/**
 * One exit-code rule for every command (README "Exit codes", `recallscope --help`):
 *   0 ok · 2 bad input or usage · 1 runtime failure · 3 a quality gate failed
 * "Bad input" is anything the user can fix by changing what they typed: a missing or
 * wrong file, a bad flag value, a refused path. "Runtime" is everything else: a busy
 * DB, an unreachable embedder, a cancelled run, a bug.
 */
import type { ErrorCode } from '../../shared/result'

const EXIT_RUNTIME = 1
const EXIT_USAGE = 2

const USAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['BAD_INPUT', 'CONFLICT', 'FORBIDDEN', 'NOT_FOUND', 'NOT_SQLITE', 'UNKNOWN_LAYOUT', 'NO_DB'])

/** The exit code for an error code. */
export function exitCodeFor(code: ErrorCode): number {
  return USAGE_CODES.has(code) ? EXIT_USAGE : EXIT_RUNTIME
}

/** The rule as printed by `--help` and the README. */
export const EXIT_CODE_HELP =
  'Exit codes: 0 ok · 2 bad input or usage (missing/invalid file, bad flag, refused path) · 1 runtime failure · 3 quality gate failed (eval --fail-under)'
