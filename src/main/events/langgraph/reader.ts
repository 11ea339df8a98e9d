/**
 * Recall events from a LangGraph checkpointer's threads (decoded by
 * store/frameworks/langgraph/records.ts): langmem's `search_memory` tool (and
 * any tool whose name says it searches / recalls / retrieves memory) called by
 * an AIMessage (`tool_calls: [{id, name, args: {query, …}}]`) and answered by
 * the ToolMessage with that `tool_call_id`, whose content is the JSON list
 * `[{namespace, key, value, created_at, updated_at, score}]`. Each item's id is
 * the store's memory id `<namespace joined by '.'>/<key>`; the decision is the
 * next AI message of the thread (its text, else its first tool call).
 * `manage_memory` writes memories: its calls are not recalls.
 */
import type { EventDecision } from '../../../shared/types'
import type { DecodedMessage } from '../../store/frameworks/langgraph/decode'
import type { LangGraphThreadRow } from '../../store/agentRecords'
import { resultsOfToolText } from '../toolOutput'
import { skip, type EventReader, type LoggedRecall, type ReadStats } from '../types'

/** Tool names that read memory (langmem `search_memory`, and the like). */
const MEMORY_SEARCH_TOOL =
  /(search|recall|retriev|query|find|lookup)[_-]?(memor|knowledge)|memor(y|ies)[_-]?(search|recall|retriev|query|lookup)|^search_memory$/i

interface Call {
  id: string
  name: string
  args: Record<string, unknown>
}

function callsOf(m: DecodedMessage): Call[] {
  const out: Call[] = []
  for (const c of m.toolCalls ?? []) {
    if (!c || typeof c !== 'object') continue
    const o = c as Record<string, unknown>
    // LangChain: {id, name, args}; OpenAI-style: {id, function: {name, arguments}}.
    const f = o.function && typeof o.function === 'object' ? (o.function as Record<string, unknown>) : null
    const name = typeof o.name === 'string' ? o.name : typeof f?.name === 'string' ? f.name : null
    if (typeof o.id !== 'string' || !name) continue
    let args: unknown = o.args ?? f?.arguments ?? {}
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args)
      } catch {
        args = {}
      }
    }
    out.push({ id: o.id, name, args: args && typeof args === 'object' ? (args as Record<string, unknown>) : {} })
  }
  return out
}

function decisionOf(m: DecodedMessage, at: number | null): EventDecision | null {
  const calls = callsOf(m)
  if (m.content.trim() && !(calls.length && m.content.startsWith('['))) return { text: m.content, toolCall: null, at, via: 'assistant message' }
  const c = calls[0]
  return c ? { text: null, toolCall: { name: c.name, arguments: JSON.stringify(c.args) }, at, via: 'tool call' } : null
}

export function langgraphReader(rows: () => Iterable<LangGraphThreadRow>, label: string): EventReader {
  return {
    kind: 'langgraph',
    label,
    *read(stats: ReadStats) {
      for (const t of rows()) {
        const pending = new Map<string, { call: Call; at: number | null; index: number }>()
        const waiting: LoggedRecall[] = []
        for (let i = 0; i < t.messages.length; i++) {
          const m = t.messages[i]
          const at = t.firstSeen[i]
          if (m.role === 'assistant') {
            if (waiting.length) {
              const d = decisionOf(m, at)
              if (d) for (const w of waiting.splice(0)) yield { ...w, decision: d }
            }
            for (const c of callsOf(m)) if (MEMORY_SEARCH_TOOL.test(c.name)) pending.set(c.id, { call: c, at, index: i })
            continue
          }
          if (m.role !== 'tool' || !m.toolCallId) continue
          const p = pending.get(m.toolCallId)
          if (!p) continue
          pending.delete(m.toolCallId)
          const where = `thread ${t.threadId} message ${i}`
          if (/^\s*(error|Error:)/.test(m.content)) {
            skip(stats, where, `the ${p.call.name} call failed: ${m.content.slice(0, 120)}`)
            continue
          }
          const { results, bad, structured } = resultsOfToolText(m.content)
          if (!structured) {
            skip(stats, where, `the ${p.call.name} result is not a JSON list of items`)
            continue
          }
          for (let b = 0; b < bad; b++) skip(stats, where, 'a result item has neither namespace/key nor text')
          const first = results.find((r) => r.id)?.id ?? null
          const ns = first ? first.slice(0, first.lastIndexOf('/')) : null
          const query = [p.call.args.query, p.call.args.q, p.call.args.text].find((x): x is string => typeof x === 'string') ?? null
          waiting.push({
            key: `langgraph:${t.threadId}:${p.call.id}`,
            at: p.at ?? t.ts ?? 0,
            // The store's agent is the namespace's first segment, its user the whole namespace (adapter.ts).
            agentId: ns ? ns.split('.')[0] : null,
            userId: ns,
            sessionId: t.threadId,
            turn: p.index,
            query,
            preset: null,
            results,
            origin: { kind: 'langgraph', tool: p.call.name, messageId: m.id, callId: p.call.id },
            decision: null,
          })
        }
        yield* waiting
      }
    },
  }
}
