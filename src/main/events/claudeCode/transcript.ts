/**
 * Claude Code transcripts (`~/.claude/projects/<encoded cwd>/<session>.jsonl`) as recall
 * events. One JSON object per line; the lines read are
 *   {type:'assistant', timestamp, sessionId, cwd, uuid, message:{id, content:[{type:'tool_use', id, name, input} | {type:'text', text} …]}}
 *   {type:'user', timestamp, sessionId, message:{content:[{type:'tool_result', tool_use_id, content, is_error?}]}, toolUseResult?, mcpMeta?}
 * (format as documented by oneryalcin/agent-schemas claude-code/v2.1.144/session.schema.json).
 * A recall is a `tool_use` of an MCP memory tool (results.ts) paired with its
 * `tool_result` by id; its decision is the first `text` or `tool_use` block of a later
 * assistant line. Every other line type is passed over; a line that is not JSON, a
 * result that cannot be read and a tool error are skipped and counted.
 *
 * Streaming: one line in memory at a time, plus the memory tool calls still waiting for
 * their result and the recalls waiting for their decision (both capped).
 */
import path from 'node:path'
import type { EventDecision } from '../../../shared/types'
import { readJsonLines } from '../lineReader'
import { skip, type EventReader, type LogFormat, type LoggedRecall, type ReadStats } from '../types'
import { contentText, memoryTool, readToolResults, toolQuery, type MemoryTool } from './results'

/** Calls without a result yet, and recalls without a decision yet, kept at most (oldest go first: a broken log cannot grow memory). */
const MAX_WAITING = 10_000
/** Longest decision text kept. */
const MAX_DECISION_CHARS = 4000

interface PendingCall {
  tool: MemoryTool
  name: string
  input: unknown
  at: number
  line: number
  sessionId: string | null
  messageId: string | null
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)

function lineTime(v: Record<string, unknown>): number | null {
  const t = typeof v.timestamp === 'string' ? Date.parse(v.timestamp) : typeof v.timestamp === 'number' ? v.timestamp : NaN
  return Number.isFinite(t) ? t : null
}

function blocks(v: Record<string, unknown>): Record<string, unknown>[] {
  const msg = isObj(v.message) ? v.message : null
  return msg && Array.isArray(msg.content) ? msg.content.filter(isObj) : []
}

/** The first text or tool call of an assistant line: what the agent did next. */
function decisionOf(v: Record<string, unknown>, at: number | null): EventDecision | null {
  for (const b of blocks(v)) {
    if (b.type === 'text' && typeof b.text === 'string' && b.text.trim() !== '') {
      return { text: b.text.slice(0, MAX_DECISION_CHARS), toolCall: null, at, via: 'assistant message' }
    }
    if (b.type === 'tool_use' && typeof b.name === 'string') {
      let args: string
      try {
        args = JSON.stringify(b.input ?? {}).slice(0, MAX_DECISION_CHARS)
      } catch {
        args = '{}'
      }
      return { text: null, toolCall: { name: b.name, arguments: args }, at, via: 'tool call' }
    }
  }
  return null
}

/** Every memory recall of one transcript file, in file order. */
export async function* readTranscript(file: string, stats: ReadStats, signal?: AbortSignal): AsyncGenerator<LoggedRecall> {
  const abs = path.resolve(file)
  const calls = new Map<string, PendingCall>()
  let waiting: LoggedRecall[] = []
  const release = function* (decision: EventDecision | null): Generator<LoggedRecall> {
    const out = waiting
    waiting = []
    for (const r of out) {
      r.decision = decision
      yield r
    }
  }
  for await (const l of readJsonLines(abs, { signal })) {
    if ('problem' in l) {
      skip(stats, `${path.basename(abs)}:${l.line}`, l.problem)
      continue
    }
    const v = l.value
    const at = lineTime(v)
    if (v.type === 'assistant') {
      if (waiting.length) {
        const d = decisionOf(v, at)
        if (d) yield* release(d)
      }
      for (const b of blocks(v)) {
        if (b.type !== 'tool_use' || typeof b.name !== 'string' || typeof b.id !== 'string') continue
        const tool = memoryTool(b.name)
        if (!tool) continue
        if (calls.size >= MAX_WAITING) calls.delete(calls.keys().next().value!)
        calls.set(b.id, {
          tool,
          name: b.name,
          input: b.input,
          at: at ?? 0,
          line: l.line,
          sessionId: str(v.sessionId),
          messageId: isObj(v.message) ? str(v.message.id) : str(v.uuid),
        })
      }
    } else if (v.type === 'user') {
      for (const b of blocks(v)) {
        if (b.type !== 'tool_result' || typeof b.tool_use_id !== 'string') continue
        const call = calls.get(b.tool_use_id)
        if (!call) continue
        calls.delete(b.tool_use_id)
        const where = `${path.basename(abs)}:${l.line}`
        if (b.is_error === true) {
          skip(stats, where, `${call.name} returned an error: ${(contentText(b.content) ?? '').slice(0, 200)}`)
          continue
        }
        const read = readToolResults(call.tool, { content: b.content, toolUseResult: v.toolUseResult, mcpMeta: v.mcpMeta })
        if (read === null) {
          skip(
            stats,
            where,
            `${call.name} result is not a ${call.tool.family === 'graph' ? 'knowledge-graph answer ({entities: […]})' : 'mcp-memory-service answer'}`,
          )
          continue
        }
        for (let n = 0; n < read.bad; n++) skip(stats, where, `a ${call.name} result item has neither an id nor a text`)
        if (waiting.length >= MAX_WAITING) {
          const r = waiting.shift()!
          yield r
        }
        waiting.push({
          key: `claude-code:${call.sessionId ?? path.basename(abs, '.jsonl')}:${b.tool_use_id}`,
          at: call.at || at || 0,
          agentId: null,
          userId: null,
          sessionId: call.sessionId,
          turn: null,
          query: toolQuery(call.input),
          preset: null,
          config: null,
          results: read.results,
          origin: { kind: 'claude-code', tool: call.name, file: abs, line: call.line, messageId: call.messageId, callId: b.tool_use_id },
          decision: null,
        })
      }
    }
  }
  // The transcript ends before the agent did anything else.
  yield* release(null)
}

/** Does this file's head look like a Claude Code transcript? JSONL whose lines carry sessionId and a user/assistant/summary type. */
function sniffTranscript(file: string, head: string): boolean {
  if (!/\.jsonl$/i.test(file)) return false
  for (const line of head.split('\n').slice(0, 20)) {
    if (line.trim() === '') continue
    try {
      const v = JSON.parse(line) as Record<string, unknown>
      if (isObj(v) && typeof v.type === 'string' && ('sessionId' in v || 'leafUuid' in v) && isObj(v.message)) return true
      if (isObj(v) && typeof v.type === 'string' && ['summary', 'queue-operation', 'file-history-snapshot', 'permission-mode'].includes(v.type)) continue
      if (!isObj(v) || !('sessionId' in v)) return false
    } catch {
      // the last line of the head is usually cut: keep looking at the others
    }
  }
  return false
}

export const claudeCodeFormat: LogFormat = {
  name: 'claude-code',
  label: 'Claude Code transcript (JSONL)',
  sniff: sniffTranscript,
  reader(file: string): EventReader {
    return { kind: 'claude-code', label: `Claude Code transcript ${path.basename(file)}`, read: (stats) => readTranscript(file, stats) }
  },
}
