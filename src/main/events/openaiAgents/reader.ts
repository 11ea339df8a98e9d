/**
 * Recall events from an OpenAI Agents SDK session (rows read by
 * store/frameworks/openaiAgents/records.ts): a `function_call` item
 * (`{type, call_id, name, arguments}`) paired with its `function_call_output`
 * (`{type, call_id, output}`) by `call_id`. A tool whose name says memory /
 * recall / search / retrieve is a recall; any other tool is one only when its
 * output lists items of which at least one matches a memory of the store. The
 * output is read as JSON (a list, or an object with `results` / `memories` …),
 * else a Python literal, else one result per line. The decision is the next
 * assistant message (its output_text parts), else the next other function call.
 */
import type { EventDecision } from '../../../shared/types'
import type { AgentsItemRow } from '../../store/agentRecords'
import { resultsOfToolText } from '../toolOutput'
import { skip, type EventReader, type LoggedRecall, type ReadStats } from '../types'

/** Tool names that say they read memory. */
const MEMORY_TOOL_NAME = /memor|recall|search|retriev/i

type Item = Record<string, unknown>

function textOf(item: Item): string | null {
  if (typeof item.content === 'string') return item.content
  if (!Array.isArray(item.content)) return null
  const parts = item.content.map((p) => (p && typeof p === 'object' && typeof (p as Item).text === 'string' ? ((p as Item).text as string) : null))
  const t = parts.filter((x): x is string => x !== null)
  return t.length ? t.join('\n') : null
}

function outputText(o: unknown): string | null {
  if (typeof o === 'string') return o
  if (Array.isArray(o)) {
    // A list of output parts ({type: 'input_text', text}) or already a list of items.
    const texts = o.map((p) =>
      p && typeof p === 'object' && typeof (p as Item).text === 'string' && typeof (p as Item).type === 'string' ? ((p as Item).text as string) : null,
    )
    if (texts.every((x) => x !== null) && texts.length) return texts.join('\n')
    return JSON.stringify(o)
  }
  return o === null || o === undefined ? null : JSON.stringify(o)
}

export function openaiAgentsReader(rows: () => Iterable<AgentsItemRow>, label: string): EventReader {
  return {
    kind: 'openai-agents',
    label,
    *read(stats: ReadStats) {
      let session: string | null = null
      const calls = new Map<string, { name: string; args: string; row: AgentsItemRow; index: number }>()
      let waiting: LoggedRecall[] = []
      let index = 0
      const flush = function* () {
        yield* waiting
        waiting = []
        calls.clear()
      }
      for (const row of rows()) {
        if (row.sessionId !== session) {
          yield* flush()
          session = row.sessionId
          index = 0
        }
        index++
        let item: Item
        try {
          const v: unknown = JSON.parse(row.data)
          if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object')
          item = v as Item
        } catch {
          // The SDK skips such rows too (get_items).
          skip(stats, `item ${row.rowId}`, 'message_data is not a JSON object')
          continue
        }
        const type = typeof item.type === 'string' ? item.type : item.role ? 'message' : null
        if (type === 'function_call' && typeof item.call_id === 'string' && typeof item.name === 'string') {
          if (waiting.length) {
            const d: EventDecision = {
              text: null,
              toolCall: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}) },
              at: row.createdAt,
              via: 'tool call',
            }
            for (const w of waiting) w.decision = d
            yield* waiting
            waiting = []
          }
          calls.set(item.call_id, {
            name: item.name,
            args: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {}),
            row,
            index,
          })
          continue
        }
        if (type === 'message' && item.role === 'assistant') {
          const text = textOf(item)
          if (waiting.length && text) {
            for (const w of waiting) w.decision = { text, toolCall: null, at: row.createdAt, via: 'assistant message' }
            yield* waiting
            waiting = []
          }
          continue
        }
        if (type !== 'function_call_output' || typeof item.call_id !== 'string') continue
        const call = calls.get(item.call_id)
        if (!call) continue
        calls.delete(item.call_id)
        const named = MEMORY_TOOL_NAME.test(call.name)
        const out = outputText(item.output)
        if (out === null) {
          if (named) skip(stats, `item ${row.rowId}`, `${call.name} output is empty`)
          continue
        }
        const { results, bad, structured } = resultsOfToolText(out)
        // A tool not named as a memory tool counts only when its output is a list of items.
        if (!named && !structured) continue
        for (let b = 0; b < bad; b++) skip(stats, `item ${row.rowId}`, `a ${call.name} result item has neither an id nor a text`)
        let query: string | null = null
        try {
          const a: unknown = JSON.parse(call.args)
          if (a && typeof a === 'object')
            query = [(a as Item).query, (a as Item).q, (a as Item).text, (a as Item).search].find((x): x is string => typeof x === 'string') ?? null
        } catch {
          query = call.args || null
        }
        waiting.push({
          key: `openai-agents:${row.sessionId}:${item.call_id}`,
          at: call.row.createdAt ?? row.createdAt ?? 0,
          agentId: null,
          userId: null,
          sessionId: row.sessionId,
          turn: call.index,
          query,
          preset: null,
          results,
          origin: { kind: 'openai-agents', tool: call.name, messageId: String(row.rowId), callId: item.call_id },
          decision: null,
          requireMatch: !named,
        })
      }
      yield* flush()
    },
  }
}
