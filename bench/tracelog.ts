/**
 * Issue 20: "a 100 MB transcript is read streaming with bounded memory". Writes a Claude
 * Code transcript of about 100 MB (file reads with 16 KB results, assistant replies, and
 * an MCP knowledge-graph search every 40 exchanges, plus one 40 MB line that must be
 * skipped unread), then reads it with the transcript reader and reports the read time,
 * recalls read, lines skipped, and the peak RSS growth over the baseline, sampled every
 * 20 ms during the read. The same for an OTLP JSON Lines file of about 100 MB.
 */
import { check, measure as record } from './report'
import { scaled } from './scale'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { readTranscript } from '../src/main/events/claudeCode/transcript'
import { readTraceFile } from '../src/main/events/otlp/traceFile'
import { emptyStats, type LoggedRecall, type ReadStats } from '../src/main/events/types'

const MB = 1024 * 1024

function writeTranscript(file: string, targetBytes: number): number {
  const fd = fs.openSync(file, 'w')
  const session = crypto.randomUUID()
  let t = Date.parse('2026-01-01T00:00:00Z')
  let bytes = 0
  let recalls = 0
  const put = (o: unknown) => {
    const line = JSON.stringify(o) + '\n'
    bytes += Buffer.byteLength(line)
    fs.writeSync(fd, line)
  }
  const base = (type: string) => ({
    type,
    sessionId: session,
    cwd: '/work/app',
    version: '2.1.144',
    uuid: crypto.randomUUID(),
    timestamp: new Date((t += 1000)).toISOString(),
  })
  const filler = 'x'.repeat(16 * 1024)
  for (let i = 0; bytes < targetBytes; i++) {
    const id = `toolu_${i.toString(36).padStart(12, '0')}`
    if (i % 40 === 0) {
      put({
        ...base('assistant'),
        message: { id: `msg_${i}`, role: 'assistant', content: [{ type: 'tool_use', id, name: 'mcp__memory__search_nodes', input: { query: `topic ${i}` } }] },
      })
      const entities = [{ name: `Entity ${i}`, entityType: 'thing', observations: [`fact ${i} a`, `fact ${i} b`] }]
      put({
        ...base('user'),
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text: JSON.stringify({ entities, relations: [] }, null, 2) }] }],
        },
        toolUseResult: { structuredContent: { entities, relations: [] } },
      })
      recalls++
    } else {
      put({
        ...base('assistant'),
        message: { id: `msg_${i}`, role: 'assistant', content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: `/work/app/f${i}.ts` } }] },
      })
      put({ ...base('user'), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: filler }] } })
    }
    put({ ...base('assistant'), message: { id: `msg_${i}b`, role: 'assistant', content: [{ type: 'text', text: `Step ${i} done.` }] } })
    if (i === 100) {
      // one line over the reader's 32 MiB cap: skipped as it streams past, never held
      const big = 'y'.repeat(scaled(40, 1) * MB)
      put({ ...base('user'), message: { role: 'user', content: big } })
    }
  }
  fs.closeSync(fd)
  return recalls
}

function writeOtlp(file: string, targetBytes: number): number {
  const fd = fs.openSync(file, 'w')
  let bytes = 0
  let recalls = 0
  const kv = (key: string, v: string) => ({ key, value: { stringValue: v } })
  const filler = 'z'.repeat(8 * 1024)
  for (let i = 0; bytes < targetBytes; i++) {
    const trace = crypto.randomBytes(16).toString('hex')
    const t = BigInt(Date.parse('2026-01-01T00:00:00Z') + i * 10_000) * 1_000_000n
    const span = (name: string, off: bigint, attrs: { key: string; value: unknown }[]) => ({
      traceId: trace,
      spanId: crypto.randomBytes(8).toString('hex'),
      name,
      startTimeUnixNano: String(t + off),
      endTimeUnixNano: String(t + off + 1_000_000n),
      attributes: attrs,
    })
    const spans = [
      span('retrieval', 0n, [
        kv('gen_ai.operation.name', 'retrieval'),
        kv('gen_ai.retrieval.query.text', `question ${i}`),
        kv('gen_ai.retrieval.documents', JSON.stringify([{ id: `doc-${i}`, score: 0.9 }])),
      ]),
      span('chat', 5_000_000n, [kv('gen_ai.operation.name', 'chat'), kv('gen_ai.completion.0.content', `answer ${i} ${filler}`)]),
    ]
    const line =
      JSON.stringify({ resourceSpans: [{ resource: { attributes: [kv('service.name', 'bench')] }, scopeSpans: [{ scope: { name: 'b' }, spans }] }] }) + '\n'
    bytes += Buffer.byteLength(line)
    fs.writeSync(fd, line)
    recalls++
  }
  fs.closeSync(fd)
  return recalls
}

async function measure(label: string, file: string, expected: number, read: (stats: ReadStats) => AsyncIterable<LoggedRecall>): Promise<void> {
  global.gc?.()
  const base = process.memoryUsage().rss
  let peak = base
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20)
  const stats = emptyStats()
  const t0 = performance.now()
  let n = 0
  let decided = 0
  for await (const r of read(stats)) {
    n++
    if (r.decision) decided++
  }
  const ms = performance.now() - t0
  clearInterval(timer)
  peak = Math.max(peak, process.memoryUsage().rss)
  const size = fs.statSync(file).size
  record({ name: `${label}: read time`, value: ms / 1000, unit: 's' })
  record({ name: `${label}: read speed`, value: size / MB / (ms / 1000), unit: 'MB/s' })
  record({ name: `${label}: peak RSS growth`, value: (peak - base) / MB, unit: 'MiB' })
  check({ name: `${label}: as many recalls read as written`, passed: n === expected ? 1 : 0, total: 1, goal: 'all' })
  console.log(
    `${label}: ${(size / MB).toFixed(1)} MB read in ${(ms / 1000).toFixed(2)} s (${(size / MB / (ms / 1000)).toFixed(0)} MB/s); ` +
      `${n} recalls (${expected} written, ${decided} with a decision), ${stats.skipped} skipped; peak RSS growth ${((peak - base) / MB).toFixed(1)} MB`,
  )
  if (n !== expected) throw new Error(`${label}: read ${n} recalls, wrote ${expected}`)
}

export async function runTraceLogBench(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-tracelog-'))
  try {
    const transcript = path.join(dir, 'session.jsonl')
    const wrote = writeTranscript(transcript, scaled(100, 2) * MB)
    await measure('Claude Code transcript', transcript, wrote, (s) => readTranscript(transcript, s))
    fs.rmSync(transcript)
    const otlp = path.join(dir, 'traces.jsonl')
    const spans = writeOtlp(otlp, scaled(100, 2) * MB)
    await measure('OTLP JSON Lines (two passes)', otlp, spans, (s) => readTraceFile(otlp, s))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
