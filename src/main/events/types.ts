/**
 * Event sources (docs/internals/design.md "Event sources"): readers that turn an agent's own
 * records (Letta messages, LangGraph checkpoints, Agents SDK sessions, Claude
 * Code transcripts, OTLP trace files, live OTLP posts…) into recall events, so
 * the decision trace (replay / why-not / drivers) runs on real agents, not only
 * on stores that write recallscope's own `recall_events` table.
 *
 * A reader knows its format and nothing about the open store: it yields
 * `LoggedRecall`s whose results carry what the log said (an id, a text, a score).
 * Matching them to the store's memories (exact id → exact text → normalised
 * text) is one shared step (events/match.ts), so every source matches the same
 * way and an unmatched result is listed, never dropped.
 */
import type { Cue, EventDecision, EventOrigin, RecallConfig } from '../../shared/types'

/** One result as the log recorded it (any of id / text may be missing). */
export interface LoggedResult {
  /** 1-based, in returned order */
  rank: number
  /** the id the log gave, in the store's id form: Letta passage id, LangGraph `<namespace joined by '.'>/<key>`, MCP entity name, content hash, span document id */
  id: string | null
  /** the text the log gave (memory content, an observation, a document's content) */
  text: string | null
  /** the score the log gave, when it gave one */
  score: number | null
}

/** One recall as an agent's own records show it, before matching to the store. */
export interface LoggedRecall {
  /** stable within its source and across re-reads (e.g. `letta:<tool call id>`, `otlp:<trace>:<span>`) */
  key: string
  /** epoch ms */
  at: number
  agentId: string | null
  userId: string | null
  sessionId: string | null
  turn: number | null
  query: string | null
  cue?: Cue | null
  /** the framework's recall, when the log says which (a preset name); null = unknown → the framework's preset */
  preset: string | null
  config?: Partial<RecallConfig> | null
  results: LoggedResult[]
  /** result items the log held that were neither an id nor a text: the event log counts each as skipped */
  skippedResults?: number
  origin: EventOrigin
  decision: EventDecision | null
  /**
   * Keep the event only when at least one result matches a memory of the store (a tool not
   * named as a memory tool whose output happens to list items: events/openaiAgents).
   */
  requireMatch?: boolean
}

/** What a read skipped: counted, a few examples kept for the UI ("12 lines skipped: line 40: not JSON …"). */
export interface ReadStats {
  /** recalls read */
  read: number
  /** malformed lines / spans / messages / results skipped */
  skipped: number
  /** up to 20 examples of what was skipped and why */
  problems: { where: string; why: string }[]
}

export function emptyStats(): ReadStats {
  return { read: 0, skipped: 0, problems: [] }
}

/** Count a skipped record, keeping the first 20 reasons. */
export function skip(stats: ReadStats, where: string, why: string): void {
  stats.skipped++
  if (stats.problems.length < 20) stats.problems.push({ where, why })
}

/**
 * One reader of one kind of record. Log-file readers stream (bounded memory on
 * a 100 MB transcript); in-store readers get their rows from the store (SQL
 * stays in src/main/store/).
 */
export interface EventReader {
  kind: EventOrigin['kind']
  /** what it reads, for `info` and the Library ("Claude Code transcript", "OTLP/HTTP JSON trace file") */
  label: string
  /** Every recall in the source, oldest first where the source has an order. Never throws on a bad record: counts it in `stats`. */
  read(stats: ReadStats): AsyncIterable<LoggedRecall> | Iterable<LoggedRecall>
}

/**
 * A log-file format a user can add with `--log PATH` or "Add a trace log…" (logFormats.ts
 * lists the built-ins). Declared here so a format's own module needs no import of the list.
 */
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
