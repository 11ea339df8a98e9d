/**
 * OTLP/HTTP JSON trace files: one `{resourceSpans: […]}` document, or JSON Lines of them
 * (what the OpenTelemetry Collector's `file` exporter writes, one export batch per line).
 *
 * Memory: JSON Lines stream (one line in memory; lines over lineReader's cap are skipped
 * and counted). A single pretty-printed document must be parsed whole, so it is read only
 * up to MAX_DOCUMENT_BYTES; a larger one is skipped with that reason (convert it to one
 * payload per line, or point the collector's file exporter at it). Two passes over the
 * file: the first keeps a small index (trace id, span id, times) of recall and LLM spans
 * to pick each recall's decision (recalls.ts) wherever in the file it is; the second
 * reads the recalls and the chosen LLM outputs, holding a recall only until its decision
 * span has streamed past.
 */
import fs from 'node:fs'
import path from 'node:path'
import { parseJsonSafe } from '../../safety/json'
import { readJsonLines } from '../lineReader'
import { skip, type EventReader, type LogFormat, type LoggedRecall, type ReadStats } from '../types'
import { isLlmSpan, isRecallSpan, pickDecisionSpan, spanDecision, spanRecall, type SpanTimes } from './recalls'
import { flattenSpans, type FlatSpan } from './spans'
import type { EventDecision } from '../../../shared/types'
import { openRegularFile, readRegularFile } from '../../store/safeFiles'

/** Largest single (not line-delimited) JSON document read. @default 64 MiB */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024

/** Is the file JSON Lines? `.jsonl`, or a first line that is a whole JSON object by itself. */
function isJsonLines(file: string): boolean {
  if (/\.jsonl$/i.test(file)) return true
  // a FIFO planted as a trace file is refused, never waited on (store/safeFiles.ts)
  const fd = openRegularFile(file, 'trace file')
  try {
    const buf = Buffer.alloc(1024 * 1024)
    const n = fs.readSync(fd, buf, 0, buf.length, 0)
    const text = buf.subarray(0, n).toString('utf8')
    const nl = text.indexOf('\n')
    const first = (nl < 0 ? text : text.slice(0, nl)).trim()
    return first.startsWith('{') && parseJsonSafe(first).ok && (nl >= 0 || n < buf.length)
  } finally {
    fs.closeSync(fd)
  }
}

/** Every span of the file, payload by payload. */
async function* fileSpans(file: string, stats: ReadStats, signal?: AbortSignal): AsyncGenerator<FlatSpan> {
  const name = path.basename(file)
  if (isJsonLines(file)) {
    for await (const l of readJsonLines(file, { signal })) {
      if ('problem' in l) skip(stats, `${name}:${l.line}`, l.problem)
      else yield* flattenSpans(l.value, stats, `${name}:${l.line}`)
    }
    return
  }
  const size = fs.statSync(file).size
  if (size > MAX_DOCUMENT_BYTES) {
    skip(stats, name, `a single JSON document of ${size} bytes (over ${MAX_DOCUMENT_BYTES}): write one OTLP payload per line (JSON Lines) instead`)
    return
  }
  const parsed = parseJsonSafe(readRegularFile(file, 'trace file').toString('utf8'))
  if (!parsed.ok) {
    skip(stats, name, `not JSON (${parsed.reason})`)
    return
  }
  yield* flattenSpans(parsed.value, stats, name)
}

const times = (s: FlatSpan): SpanTimes => ({ traceId: s.traceId, spanId: s.spanId, start: s.start, end: s.end })

/** Every recall of one OTLP file with its decision, in file order. */
export async function* readTraceFile(file: string, stats: ReadStats, signal?: AbortSignal): AsyncGenerator<LoggedRecall> {
  const abs = path.resolve(file)
  // Pass 1: the index. A throwaway stats object: pass 2 counts every problem once.
  const recallsByTrace = new Map<string, SpanTimes[]>()
  const llmsByTrace = new Map<string, SpanTimes[]>()
  const scratch: ReadStats = { read: 0, skipped: 0, problems: [] }
  for await (const s of fileSpans(abs, scratch, signal)) {
    const into = isRecallSpan(s) ? recallsByTrace : isLlmSpan(s) ? llmsByTrace : null
    if (!into) continue
    const list = into.get(s.traceId)
    if (list) list.push(times(s))
    else into.set(s.traceId, [times(s)])
  }
  /** recall span id → the span id of its decision */
  const decisionSpan = new Map<string, string>()
  for (const [trace, recalls] of recallsByTrace) {
    const llms = llmsByTrace.get(trace) ?? []
    for (const r of recalls) {
      const d = pickDecisionSpan(r, llms)
      if (d) decisionSpan.set(`${trace}:${r.spanId}`, `${trace}:${d.spanId}`)
    }
  }
  llmsByTrace.clear()
  recallsByTrace.clear()
  const decisions = new Map<string, EventDecision | null>()
  /** decision span → recalls still to receive it (its text is dropped once none is left) */
  const wanted = new Map<string, number>()
  for (const d of decisionSpan.values()) wanted.set(d, (wanted.get(d) ?? 0) + 1)
  const use = (dKey: string) => {
    const left = (wanted.get(dKey) ?? 1) - 1
    if (left > 0) wanted.set(dKey, left)
    else {
      wanted.delete(dKey)
      decisions.delete(dKey)
    }
  }
  // Pass 2: recalls and the outputs of the chosen LLM spans.
  /** recalls whose decision span is further down the file, by that span */
  const waiting = new Map<string, LoggedRecall[]>()
  for await (const s of fileSpans(abs, stats, signal)) {
    const key = `${s.traceId}:${s.spanId}`
    if (wanted.has(key) && isLlmSpan(s)) {
      const d = spanDecision(s)
      decisions.set(key, d)
      const held = waiting.get(key)
      if (held) {
        waiting.delete(key)
        for (const r of held) {
          r.decision = d
          use(key)
          yield r
        }
      }
      continue
    }
    const r = spanRecall(s, 'otlp', abs)
    if (r === null) continue
    if ('problem' in r) {
      skip(stats, path.basename(abs), r.problem)
      continue
    }
    const dKey = decisionSpan.get(key)
    if (dKey && !decisions.has(dKey)) {
      const held = waiting.get(dKey)
      if (held) held.push(r)
      else waiting.set(dKey, [r])
      continue
    }
    r.decision = dKey ? (decisions.get(dKey) ?? null) : null
    if (dKey) use(dKey)
    yield r
  }
  // Decision spans that vanished between the passes (the file changed): the recalls still count.
  for (const held of waiting.values())
    for (const r of held) {
      yield r
    }
}

/** OTLP JSON: `.json`/`.jsonl` whose head holds `"resourceSpans"`. */
function sniffOtlp(file: string, head: string): boolean {
  return /\.jsonl?$/i.test(file) && /"resourceSpans"\s*:/.test(head)
}

export const otlpFormat: LogFormat = {
  name: 'otlp',
  label: 'OTLP/HTTP JSON trace file',
  sniff: sniffOtlp,
  reader(file: string): EventReader {
    return { kind: 'otlp', label: `OTLP trace file ${path.basename(file)}`, read: (stats) => readTraceFile(file, stats) }
  },
}
