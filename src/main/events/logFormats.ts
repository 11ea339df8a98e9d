/**
 * Log-file formats a user can add with `--log PATH` or "Add a trace log…" (a
 * file, or a folder of such files). Each format is one folder under
 * src/main/events/ (claudeCode/, otlp/ …) and registers here, the way a third
 * party would (docs/internals/style.md: built-ins through the same list).
 */
import type { EventReader } from './types'

export interface LogFormat {
  /** e.g. 'claude-code', 'otlp' */
  name: string
  /** what it reads, for messages ("Claude Code transcript (JSONL)") */
  label: string
  /** Cheap, never throws: is this file (its path and first 64 KiB) of this format? */
  sniff(file: string, head: string): boolean
  /** A streaming reader of one file (bounded memory). */
  reader(file: string): EventReader
}

/** The built-in formats, in sniffing order. */
export const LOG_FORMATS: LogFormat[] = []
