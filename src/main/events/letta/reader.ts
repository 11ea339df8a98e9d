/**
 * Recall events from a Letta V1 server's own `messages` (read by
 * store/frameworks/letta/records.ts): every `archival_memory_search` (→
 * archival passages) and `conversation_search` (→ messages) the agent called.
 *
 * Shapes (letta-ai/letta: orm/message.py, schemas/message.py,
 * services/tool_executor/core_tool_executor.py):
 *  - the call: an assistant message whose `tool_calls` JSON holds
 *    `{id, type: 'function', function: {name, arguments: '<JSON {query, …}>'}}`;
 *  - the result: a `tool` message with that `tool_call_id`; its text (the
 *    matching `tool_returns[].func_response`, else the text content parts, else
 *    `text`) is JSON `{"status", "message", "time"}` whose `message` is the
 *    tool's return printed by Python: a list of dicts `{timestamp, content,
 *    tags, id?, relevance?}` (`id` = the passage id in current Letta; older
 *    ones give only `timestamp` + `content`), for conversation_search a dict
 *    `{message, results: [...]}` (older: a string with the list after a colon);
 *  - the decision: the next assistant message of the same conversation (its
 *    `send_message` text, its text, or its first other tool call).
 * A message or result that does not parse is skipped and counted, never fatal.
 */
import type { EventDecision } from '../../../shared/types'
import type { LettaMessageRow } from '../../store/agentRecords'
import { parsePyLiteral } from '../pyLiteral'
import { resultOfItem } from '../toolOutput'
import { skip, type EventReader, type LoggedRecall, type LoggedResult, type ReadStats } from '../types'

/** The Letta tools that search memory, and what they search. */
const SEARCH_TOOLS = new Set(['archival_memory_search', 'conversation_search'])

interface PendingCall {
  callId: string
  tool: string
  query: string | null
  at: number
  row: LettaMessageRow
}

export function lettaReader(rows: () => Iterable<LettaMessageRow>, label: string): EventReader {
  return {
    kind: 'letta',
    label,
    *read(stats: ReadStats) {
      let group = ''
      const pending = new Map<string, PendingCall>()
      // Recalls whose decision is the next assistant message of the conversation.
      let waiting: LoggedRecall[] = []
      const flush = function* () {
        yield* waiting
        waiting = []
        pending.clear()
      }
      for (const row of rows()) {
        const g = `${row.agentId ?? ''}\u0000${row.conversationId ?? ''}`
        if (g !== group) {
          yield* flush()
          group = g
        }
        if (row.role === 'assistant') {
          const calls = parseToolCalls(row, stats)
          if (waiting.length) {
            const d = decisionOf(row, calls)
            if (d) {
              for (const w of waiting) w.decision = d
              yield* waiting
              waiting = []
            }
          }
          for (const c of calls) {
            if (!SEARCH_TOOLS.has(c.name)) continue
            let query: string | null = null
            try {
              const a: unknown = JSON.parse(c.arguments || '{}')
              if (a && typeof a === 'object' && typeof (a as { query?: unknown }).query === 'string') query = (a as { query: string }).query
            } catch {
              skip(stats, `message ${row.id}`, `${c.name} arguments are not JSON`)
            }
            pending.set(c.id, { callId: c.id, tool: c.name, query, at: row.createdAt ?? 0, row })
          }
          continue
        }
        if (row.role !== 'tool' || !row.toolCallId) continue
        const call = pending.get(row.toolCallId)
        if (!call) continue
        pending.delete(row.toolCallId)
        const results = resultsOf(row, call, stats)
        if (results === null) continue
        waiting.push({
          key: `letta:${call.callId}`,
          at: call.at,
          agentId: call.row.agentId,
          userId: null,
          sessionId: call.row.conversationId ?? call.row.agentId,
          turn: call.row.sequenceId,
          query: call.query,
          preset: null,
          results,
          origin: { kind: 'letta', tool: call.tool, messageId: row.id, callId: call.callId },
          decision: null,
        })
      }
      yield* flush()
    },
  }
}

interface ToolCall {
  id: string
  name: string
  arguments: string
}

function parseToolCalls(row: LettaMessageRow, stats: ReadStats): ToolCall[] {
  if (!row.toolCalls || row.toolCalls === 'null') return []
  let v: unknown
  try {
    v = JSON.parse(row.toolCalls)
  } catch {
    skip(stats, `message ${row.id}`, 'tool_calls is not JSON')
    return []
  }
  if (!Array.isArray(v)) return []
  const out: ToolCall[] = []
  for (const c of v) {
    const f = c && typeof c === 'object' ? (c as { function?: unknown }).function : null
    const id = c && typeof c === 'object' ? (c as { id?: unknown }).id : null
    if (!f || typeof f !== 'object' || typeof id !== 'string') continue
    const name = (f as { name?: unknown }).name
    const args = (f as { arguments?: unknown }).arguments
    if (typeof name === 'string') out.push({ id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) })
  }
  return out
}

/** The text parts of a message's content JSON, joined. */
function contentText(content: string | null): string | null {
  if (!content) return null
  try {
    const v: unknown = JSON.parse(content)
    if (!Array.isArray(v)) return null
    const parts = v.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : null))
    const t = parts.filter((x): x is string => x !== null)
    return t.length ? t.join('\n') : null
  } catch {
    return null
  }
}

/** What the agent did next: send_message's text, else its text, else its first tool call. */
function decisionOf(row: LettaMessageRow, calls: ToolCall[]): EventDecision | null {
  const at = row.createdAt
  const send = calls.find((c) => c.name === 'send_message')
  if (send) {
    try {
      const a: unknown = JSON.parse(send.arguments)
      const m = a && typeof a === 'object' ? (a as { message?: unknown }).message : null
      if (typeof m === 'string') return { text: m, toolCall: null, at, via: 'send_message' }
    } catch {
      /* fall through to the call itself */
    }
  }
  const other = calls[0]
  if (other) return { text: null, toolCall: { name: other.name, arguments: other.arguments }, at, via: 'tool call' }
  const text = row.text || contentText(row.content)
  return text ? { text, toolCall: null, at, via: 'assistant message' } : null
}

/** The tool's return text: tool_returns[].func_response of this call, else the content's text, else `text`. */
function returnText(row: LettaMessageRow): string | null {
  if (row.toolReturns && row.toolReturns !== 'null') {
    try {
      const v: unknown = JSON.parse(row.toolReturns)
      if (Array.isArray(v)) {
        const hit: unknown = v.find((x: unknown) => x && typeof x === 'object' && (x as { tool_call_id?: unknown }).tool_call_id === row.toolCallId) ?? v[0]
        const r = hit && typeof hit === 'object' ? (hit as { func_response?: unknown }).func_response : null
        if (typeof r === 'string') return r
      }
    } catch {
      /* older rows: the content holds it */
    }
  }
  return contentText(row.content) ?? row.text
}

/** The results of a search call; null (skipped, counted) when its text does not parse. */
function resultsOf(row: LettaMessageRow, call: PendingCall, stats: ReadStats): LoggedResult[] | null {
  const where = `message ${row.id} (${call.tool})`
  const text = returnText(row)
  if (text === null) {
    skip(stats, where, 'the tool message has no text')
    return null
  }
  let envelope: unknown
  try {
    envelope = JSON.parse(text)
  } catch {
    skip(stats, where, 'the tool result is not JSON {"status", "message", "time"}')
    return null
  }
  const status = envelope && typeof envelope === 'object' ? (envelope as { status?: unknown }).status : undefined
  if (typeof status === 'string' && status.toUpperCase() !== 'OK') {
    skip(stats, where, `the search failed (status ${status})`)
    return null
  }
  const message = envelope && typeof envelope === 'object' ? (envelope as { message?: unknown }).message : undefined
  let items: unknown
  if (typeof message === 'string') {
    const m = message.trim()
    if (m === 'None' || m === '' || /^No results found/i.test(m)) return []
    try {
      items = parsePyLiteral(m)
    } catch (e) {
      // Older conversation_search: "Showing 3 of 3 results (page 0/0): [...]"
      const at = m.indexOf('[')
      try {
        items = at > 0 ? parsePyLiteral(m.slice(at)) : undefined
      } catch {
        items = undefined
      }
      if (items === undefined) {
        skip(stats, where, `the result message is not a Python list (${(e as Error).message})`)
        return null
      }
    }
  } else items = message
  // A dict {message, results} (conversation_search), or a (list, count) tuple (older archival search).
  if (items && typeof items === 'object' && !Array.isArray(items) && Array.isArray((items as { results?: unknown }).results))
    items = (items as { results: unknown[] }).results
  if (Array.isArray(items) && items.length === 2 && Array.isArray(items[0]) && typeof items[1] === 'number') items = items[0]
  if (!Array.isArray(items)) {
    skip(stats, where, 'the result is not a list of results')
    return null
  }
  const out: LoggedResult[] = []
  items.forEach((it, n) => {
    const r = resultOfItem(it, n + 1)
    if (r) out.push(r)
    else skip(stats, `${where} result ${n + 1}`, 'neither an id nor a text')
  })
  return out
}
