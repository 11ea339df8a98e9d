/**
 * JSON Lines from a log file, streamed with bounded memory: the file is read in
 * chunks and split on '\n' by hand (readline keeps a whole line in memory however
 * long it is), so a line over `maxLineBytes` is dropped as it streams past and
 * reported as overlong instead of filling memory. Lines are parsed with the
 * nesting-limited JSON parser (safety/json); a line that is not a JSON object is
 * reported too. Nothing here throws on content: the caller counts what was bad.
 */
import fs from 'node:fs'
import { parseJsonSafe } from '../safety/json'
import { openRegularFile } from '../store/safeFiles'

/** Longest line parsed. A Claude Code line holding a large tool result is a few MB; an OTLP collector batch line can be larger. @default 32 MiB */
const MAX_LINE_BYTES = 32 * 1024 * 1024

/** One line of a JSONL file: the parsed object, or why it was not one. */
export type JsonLine = { line: number; value: Record<string, unknown> } | { line: number; problem: string }

/**
 * Every non-blank line of `file` in order (1-based line numbers), parsed. Memory stays
 * within one line (at most `maxLineBytes`) plus one read chunk.
 */
export async function* readJsonLines(file: string, opts: { maxLineBytes?: number; signal?: AbortSignal } = {}): AsyncGenerator<JsonLine> {
  const cap = opts.maxLineBytes ?? MAX_LINE_BYTES
  // opened as a regular file only: a planted FIFO is refused (BAD_INPUT), never waited on (store/safeFiles.ts)
  const stream = fs.createReadStream('', { fd: openRegularFile(file, 'log file'), highWaterMark: 256 * 1024 })
  let parts: Buffer[] = []
  let size = 0
  let overlong = false
  let lineNo = 0
  const finish = (): JsonLine | null => {
    lineNo++
    const wasOverlong = overlong
    const buf = parts.length === 1 ? parts[0] : Buffer.concat(parts, size)
    parts = []
    size = 0
    overlong = false
    if (wasOverlong) return { line: lineNo, problem: `line over ${cap} bytes (skipped unread)` }
    const text = buf.toString('utf8')
    if (text.trim() === '') return null
    const parsed = parseJsonSafe(text)
    if (!parsed.ok) return { line: lineNo, problem: `not JSON (${parsed.reason})` }
    const v = parsed.value
    if (!v || typeof v !== 'object' || Array.isArray(v)) return { line: lineNo, problem: 'not a JSON object' }
    return { line: lineNo, value: v as Record<string, unknown> }
  }
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (opts.signal?.aborted) return
      let start = 0
      for (;;) {
        const nl = chunk.indexOf(10, start)
        const end = nl < 0 ? chunk.length : nl
        if (!overlong) {
          if (size + (end - start) > cap) {
            overlong = true
            parts = []
            size = 0
          } else if (end > start) {
            parts.push(chunk.subarray(start, end))
            size += end - start
          }
        }
        if (nl < 0) break
        const r = finish()
        if (r) yield r
        start = nl + 1
      }
    }
    if (size > 0 || overlong) {
      const r = finish()
      if (r) yield r
    }
  } finally {
    stream.destroy()
  }
}
