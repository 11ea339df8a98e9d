/**
 * Log-file formats a user can add with `--log PATH` or "Add a trace log…" (a
 * file, or a folder of such files). Each format is one folder under
 * src/main/events/ (claudeCode/, otlp/ …) and registers here, the way a third
 * party would (docs/internals/style.md: built-ins through the same list).
 */
import { claudeCodeFormat } from './claudeCode/transcript'
import { otlpFormat } from './otlp/traceFile'
import type { LogFormat } from './types'

export type { LogFormat } from './types'

/** The built-in formats, in sniffing order (OTLP first: its head test is the stricter one). */
export const LOG_FORMATS: LogFormat[] = [otlpFormat, claudeCodeFormat]
