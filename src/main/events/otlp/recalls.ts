/**
 * Which spans are recalls, which are the LLM calls that follow them, and what each
 * says. Conventions read (names checked against the sources cited):
 *
 * Recalls
 *  - OpenTelemetry GenAI retrieval (open-telemetry/semantic-conventions-genai,
 *    its registry/attributes/gen-ai.md): `gen_ai.operation.name` = `retrieval`,
 *    `gen_ai.retrieval.query.text`, `gen_ai.retrieval.documents` = `[{id, score}]`
 *    (gen-ai-retrieval-documents.json; a JSON string or a structured value).
 *  - GenAI memory operations (same registry): `gen_ai.operation.name` = `search_memory`,
 *    `gen_ai.memory.query.text`, `gen_ai.memory.records` = `[{id?, content?, score?, metadata?}]`
 *    (gen-ai-memory-records.json; `content` may be an object: it is read as its JSON).
 *  - OpenInference (Arize-ai/openinference spec/semantic_conventions.md):
 *    `openinference.span.kind` = `RETRIEVER`, `input.value` (the query),
 *    `retrieval.documents.<i>.document.id | .score | .content`.
 *  - OpenLLMetry vector-DB spans (traceloop/openllmetry, Chroma instrumentation): one
 *    `db.query.result` span event per result with `db.query.result.id`,
 *    `db.query.result.score` or `db.query.result.distance`, `db.query.result.document`.
 *    A distance is not a similarity, so it is not shown as the score. Chroma spans record
 *    no query text.
 * Decisions: the next LLM span of the same trace — `gen_ai.operation.name` = `chat`,
 * `text_completion` or `generate_content`, or `openinference.span.kind` = `LLM` — and its
 * output: `gen_ai.output.messages` (`[{role, parts: [{type:'text', content} | {type:'tool_call', name, arguments}]}]`),
 * OpenLLMetry's `gen_ai.completion.0.content` / `gen_ai.completion.0.tool_calls.0.{name,arguments}`,
 * OpenInference `llm.output_messages.0.message.content` /
 * `llm.output_messages.0.message.tool_calls.0.tool_call.function.{name,arguments}`, or `output.value`.
 * Scope: agent = resource `service.name` (else `gen_ai.agent.name`), user = `user.id` /
 * `enduser.id`, session = `session.id` / `gen_ai.conversation.id`.
 */
import type { EventDecision } from '../../../shared/types'
import { parseJsonSafe } from '../../safety/json'
import type { LoggedRecall, LoggedResult } from '../types'
import type { FlatSpan } from './spans'

const MAX_DECISION_CHARS = 4000
const MAX_RESULTS = 1000

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null)
const num = (v: unknown): number | null => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v
  return typeof n === 'number' && Number.isFinite(n) ? n : null
}

/** A JSON-valued attribute: recorded as a JSON string, or structured. */
function jsonAttr(v: unknown): unknown {
  if (typeof v !== 'string') return v
  const p = parseJsonSafe(v)
  return p.ok ? p.value : undefined
}

function opName(s: FlatSpan): string | null {
  return str(s.attrs['gen_ai.operation.name'])
}
function oiKind(s: FlatSpan): string | null {
  const k = str(s.attrs['openinference.span.kind'])
  return k ? k.toUpperCase() : null
}

/** Is this span an LLM call whose output can be a decision? */
export function isLlmSpan(s: FlatSpan): boolean {
  const op = opName(s)
  return op === 'chat' || op === 'text_completion' || op === 'generate_content' || oiKind(s) === 'LLM'
}

/** Is this span a recall (before reading its results)? */
export function isRecallSpan(s: FlatSpan): boolean {
  const op = opName(s)
  return op === 'retrieval' || op === 'search_memory' || oiKind(s) === 'RETRIEVER' || s.events.some((e) => e.name === 'db.query.result')
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : v === null || v === undefined ? null : JSON.stringify(v))

/** The results of a span, and its items that were neither an id nor a text (skipped, counted). */
interface SpanResults {
  results: LoggedResult[]
  bad: number
}

/** `[{id, score, content?}]` items → results; null when the value is not such a list. */
function listResults(v: unknown, contentKey: 'content'): SpanResults | null {
  const list = jsonAttr(v)
  if (!Array.isArray(list)) return null
  const out: LoggedResult[] = []
  let bad = 0
  for (const d of list.slice(0, MAX_RESULTS)) {
    const id = isObj(d) ? str(d.id) : null
    const t = isObj(d) ? text(d[contentKey]) : null
    if (id === null && t === null) bad++
    else out.push({ rank: out.length + 1, id, text: t, score: isObj(d) ? num(d.score) : null })
  }
  return { results: out, bad }
}

/** OpenInference's flattened `retrieval.documents.<i>.document.*` attributes, in index order. */
function openInferenceResults(attrs: Record<string, unknown>): SpanResults {
  const byIndex = new Map<number, { id?: unknown; score?: unknown; content?: unknown }>()
  for (const [k, v] of Object.entries(attrs)) {
    const m = /^retrieval\.documents\.(\d+)\.document\.(id|score|content)$/.exec(k)
    if (!m) continue
    const i = Number(m[1])
    if (i >= MAX_RESULTS) continue
    byIndex.set(i, { ...byIndex.get(i), [m[2]]: v })
  }
  const out: LoggedResult[] = []
  let bad = 0
  for (const i of [...byIndex.keys()].sort((a, b) => a - b)) {
    const d = byIndex.get(i)!
    const id = str(d.id)
    const t = typeof d.content === 'string' ? d.content : null
    if (id === null && t === null) bad++
    else out.push({ rank: out.length + 1, id, text: t, score: num(d.score) })
  }
  return { results: out, bad }
}

function eventResults(s: FlatSpan): SpanResults {
  const out: LoggedResult[] = []
  let bad = 0
  for (const e of s.events) {
    if (e.name !== 'db.query.result' || out.length >= MAX_RESULTS) continue
    const id = str(e.attrs['db.query.result.id'])
    const t = typeof e.attrs['db.query.result.document'] === 'string' ? e.attrs['db.query.result.document'] : null
    if (id === null && t === null) bad++
    else out.push({ rank: out.length + 1, id, text: t, score: num(e.attrs['db.query.result.score']) })
  }
  return { results: out, bad }
}

/**
 * The recall a span records, or a reason it cannot be read (counted as skipped), or null
 * when the span is not a recall at all. The decision is filled in later.
 */
export function spanRecall(s: FlatSpan, kind: 'otlp' | 'otlp-live', file: string | null): LoggedRecall | { problem: string } | null {
  if (!isRecallSpan(s)) return null
  const op = opName(s)
  let query: string | null
  let results: SpanResults | null
  const none: SpanResults = { results: [], bad: 0 }
  if (op === 'retrieval') {
    query = str(s.attrs['gen_ai.retrieval.query.text'])
    results = s.attrs['gen_ai.retrieval.documents'] === undefined ? none : listResults(s.attrs['gen_ai.retrieval.documents'], 'content')
    if (results === null) return { problem: `span ${s.spanId}: gen_ai.retrieval.documents is not a JSON list of {id, score}` }
  } else if (op === 'search_memory') {
    query = str(s.attrs['gen_ai.memory.query.text'])
    results = s.attrs['gen_ai.memory.records'] === undefined ? none : listResults(s.attrs['gen_ai.memory.records'], 'content')
    if (results === null) return { problem: `span ${s.spanId}: gen_ai.memory.records is not a JSON list of records` }
  } else if (oiKind(s) === 'RETRIEVER') {
    query = str(s.attrs['input.value'])
    results = openInferenceResults(s.attrs)
  } else {
    query = str(s.attrs['db.query.text']) ?? str(s.attrs['gen_ai.retrieval.query.text'])
    results = eventResults(s)
  }
  const tool = op ?? (oiKind(s) === 'RETRIEVER' ? 'RETRIEVER' : null)
  return {
    key: `otlp:${s.traceId}:${s.spanId}`,
    at: s.start,
    agentId: str(s.resource['service.name']) ?? str(s.attrs['gen_ai.agent.name']),
    userId: str(s.attrs['user.id']) ?? str(s.attrs['enduser.id']),
    sessionId: str(s.attrs['session.id']) ?? str(s.attrs['gen_ai.conversation.id']),
    turn: null,
    query,
    preset: null,
    config: null,
    results: results.results,
    ...(results.bad ? { skippedResults: results.bad } : {}),
    origin: { kind, tool: tool ? `${tool}${s.name ? ` (${s.name})` : ''}` : s.name || null, file, traceId: s.traceId, spanId: s.spanId },
    decision: null,
  }
}

function toolCall(name: unknown, args: unknown): EventDecision['toolCall'] {
  const n = str(name)
  if (!n) return null
  const a = typeof args === 'string' ? args : args === undefined || args === null ? '{}' : JSON.stringify(args)
  return { name: n, arguments: a.slice(0, MAX_DECISION_CHARS) }
}

/** What an LLM span answered (text or a tool call); null when it recorded no output. */
export function spanDecision(s: FlatSpan): EventDecision | null {
  const a = s.attrs
  const at = s.end
  const messages = jsonAttr(a['gen_ai.output.messages'])
  if (Array.isArray(messages)) {
    for (const m of messages) {
      for (const p of isObj(m) && Array.isArray(m.parts) ? m.parts : []) {
        if (!isObj(p)) continue
        if (p.type === 'text' && typeof p.content === 'string' && p.content.trim() !== '')
          return { text: p.content.slice(0, MAX_DECISION_CHARS), toolCall: null, at, via: 'chat span' }
        if (p.type === 'tool_call') {
          const tc = toolCall(p.name, p.arguments)
          if (tc) return { text: null, toolCall: tc, at, via: 'chat span tool call' }
        }
      }
    }
  }
  const out =
    str(a['gen_ai.completion.0.content']) ??
    str(a['llm.output_messages.0.message.content']) ??
    (typeof a['gen_ai.completion'] === 'string' ? a['gen_ai.completion'] : null) ??
    str(a['output.value'])
  if (out && out.trim() !== '') return { text: out.slice(0, MAX_DECISION_CHARS), toolCall: null, at, via: oiKind(s) === 'LLM' ? 'LLM span' : 'chat span' }
  const tc =
    toolCall(a['gen_ai.completion.0.tool_calls.0.name'], a['gen_ai.completion.0.tool_calls.0.arguments']) ??
    toolCall(
      a['llm.output_messages.0.message.tool_calls.0.tool_call.function.name'],
      a['llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments'],
    )
  return tc ? { text: null, toolCall: tc, at, via: 'chat span tool call' } : null
}

/** A recall's time window and an LLM span's start, for picking the decision. */
export interface SpanTimes {
  traceId: string
  spanId: string
  start: number
  end: number
}

/**
 * The LLM span that decides after a recall: of the trace's LLM spans starting at or
 * after the recall started, the first that starts once the recall ended (else the first).
 */
export function pickDecisionSpan(recall: SpanTimes, llms: readonly SpanTimes[]): SpanTimes | null {
  let after: SpanTimes | null = null
  let overlapping: SpanTimes | null = null
  for (const l of llms) {
    if (l.spanId === recall.spanId || l.start < recall.start) continue
    if (l.start >= recall.end) {
      if (!after || l.start < after.start) after = l
    } else if (!overlapping || l.start < overlapping.start) overlapping = l
  }
  return after ?? overlapping
}
