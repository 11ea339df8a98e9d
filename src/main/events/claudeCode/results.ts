/**
 * What an MCP memory tool returned, as `LoggedResult`s, from any of the forms a Claude
 * Code transcript keeps it in: the `tool_result` block's content (a string, or
 * `[{type:'text', text}]`), the line's `toolUseResult` (the same items, a string, or an
 * object: the tool's `structuredContent`, or `{content, structuredContent}`), and
 * `mcpMeta.structuredContent`. Structured forms win over text.
 *
 * Two servers' result shapes are known:
 *  - `@modelcontextprotocol/server-memory` (search_nodes / open_nodes / read_graph):
 *    `{entities: [{name, entityType, observations: string[]}], relations: […]}` as
 *    structuredContent and as pretty-printed JSON text (dist/index.js, 2026.8.31). Each
 *    observation is one memory (store/frameworks/mcpMemory), so each becomes one result
 *    whose id is that memory's id; an entity without observations is one result with the
 *    entity name as id (no memory has it: it is listed as unmatched).
 *  - mcp-memory-service (memory_search / retrieve_memory / recall_memory): the FastMCP
 *    server's structured `{memories: [{content, content_hash, similarity_score | relevance_score, …}]}`,
 *    or the classic server's text blocks (`Content: …` / `N. …`, `Hash: <content_hash>`,
 *    `Relevance Score: 0.87`), doobidoo/mcp-memory-service server/handlers/memory.py.
 */
import type { LoggedResult } from '../types'
import { observationId } from '../../store/frameworks/mcpMemory/ids'
import { parseJsonSafe } from '../../safety/json'

/** The memory tools read, by the tool name after `mcp__<server>__`. */
const GRAPH_TOOLS = ['search_nodes', 'open_nodes', 'read_graph'] as const
const SERVICE_TOOLS = ['memory_search', 'retrieve_memory', 'recall_memory'] as const

export type MemoryTool = { family: 'graph' | 'service'; tool: string }

/** Is this tool name a memory recall we read? `mcp__<server>__<tool>` (the server part may hold colons). */
export function memoryTool(name: string): MemoryTool | null {
  const m = /^mcp__.+__([A-Za-z0-9_-]+)$/.exec(name)
  const tool = m ? m[1] : name
  if ((GRAPH_TOOLS as readonly string[]).includes(tool)) return m ? { family: 'graph', tool } : null
  if ((SERVICE_TOOLS as readonly string[]).includes(tool)) return { family: 'service', tool }
  return null
}

/** The query a memory tool was called with (open_nodes: the names; read_graph: none). */
export function toolQuery(input: unknown): string | null {
  const i = input && typeof input === 'object' ? (input as Record<string, unknown>) : {}
  if (typeof i.query === 'string') return i.query
  if (Array.isArray(i.names)) return i.names.filter((n) => typeof n === 'string').join(', ')
  return null
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** The text of tool-result content: a string, or the `text` of its text items joined. */
export function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return null
  const texts = content
    .map((c) => (typeof c === 'string' ? c : isObj(c) && c.type === 'text' && typeof c.text === 'string' ? c.text : null))
    .filter((t) => t !== null)
  return texts.length ? texts.join('\n') : null
}

/** The structured payload, if any form carries one. */
function structured(toolUseResult: unknown, mcpMeta: unknown): Record<string, unknown> | null {
  if (isObj(toolUseResult)) {
    if (isObj(toolUseResult.structuredContent)) return toolUseResult.structuredContent
    if (!('content' in toolUseResult) || 'entities' in toolUseResult || 'memories' in toolUseResult) return toolUseResult
  }
  if (isObj(mcpMeta) && isObj(mcpMeta.structuredContent)) return mcpMeta.structuredContent
  return null
}

function jsonObject(text: string | null): Record<string, unknown> | null {
  if (!text) return null
  const t = text.trim()
  if (!t.startsWith('{')) return null
  const p = parseJsonSafe(t)
  return p.ok && isObj(p.value) ? p.value : null
}

/** The results of one answer, and its items that were neither an id nor a text (skipped, counted). */
export interface ToolResults {
  results: LoggedResult[]
  bad: number
}

/** Results of a server-memory graph answer; null when the payload has no `entities` array. */
function graphResults(payload: Record<string, unknown> | null): ToolResults | null {
  if (!payload || !Array.isArray(payload.entities)) return null
  const out: LoggedResult[] = []
  let bad = 0
  for (const e of payload.entities) {
    if (!isObj(e) || typeof e.name !== 'string') {
      bad++
      continue
    }
    const obs = Array.isArray(e.observations) ? e.observations.filter((o): o is string => typeof o === 'string') : []
    if (obs.length === 0) out.push({ rank: out.length + 1, id: e.name, text: null, score: null })
    for (const o of obs) out.push({ rank: out.length + 1, id: observationId(e.name, o), text: o, score: null })
  }
  return { results: out, bad }
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null)

/** Results of a structured mcp-memory-service answer; null when it has no memory list. */
function serviceStructured(payload: Record<string, unknown> | null): ToolResults | null {
  const list = payload ? (Array.isArray(payload.memories) ? payload.memories : Array.isArray(payload.results) ? payload.results : null) : null
  if (!list) return null
  const out: LoggedResult[] = []
  let bad = 0
  for (const raw of list as unknown[]) {
    // search results sometimes wrap the memory: {memory: {...}, relevance_score}
    const m: unknown = isObj(raw) && isObj(raw.memory) ? { ...raw.memory, relevance_score: raw.relevance_score } : raw
    const id = isObj(m) && typeof m.content_hash === 'string' && m.content_hash ? m.content_hash : null
    const text = isObj(m) && typeof m.content === 'string' ? m.content : null
    if (!isObj(m) || (id === null && text === null)) {
      bad++
      continue
    }
    out.push({ rank: out.length + 1, id, text, score: num(m.similarity_score) ?? num(m.relevance_score) ?? num(m.score) })
  }
  return { results: out, bad }
}

/** Results from the classic server's text: blocks ending in `Hash: <hex>`, with `Content:` or `N. ` text and an optional `Relevance Score:`. */
function serviceText(text: string): LoggedResult[] {
  const out: LoggedResult[] = []
  let content: string[] | null = null
  let hash: string | null = null
  let score: number | null = null
  const flush = () => {
    if (hash !== null || (content && content.length)) {
      if (hash !== null) out.push({ rank: out.length + 1, id: hash, text: content ? content.join('\n').trim() || null : null, score })
    }
    content = null
    hash = null
    score = null
  }
  for (const line of text.split('\n')) {
    let m: RegExpExecArray | null
    if (/^\s*(Memory \d+:|=== Memory \d+ ===|---)\s*$/.test(line)) flush()
    else if ((m = /^\s*Content: ?(.*)$/.exec(line))) {
      if (hash !== null) flush()
      content = [m[1]]
    } else if ((m = /^(\d+)\. (.*)$/.exec(line)) && (hash !== null || content === null)) {
      flush()
      content = [m[2]]
    } else if ((m = /^\s*Hash: ?([0-9A-Fa-f]{6,})\s*$/.exec(line))) {
      hash = m[1]
    } else if ((m = /^\s*Relevance Score: ?(-?[\d.]+)/.exec(line))) {
      const s = Number(m[1])
      score = Number.isFinite(s) ? s : null
    } else if (hash === null && content !== null && !/^\s*(Timestamp|Created|Tags):/.test(line)) content.push(line)
  }
  flush()
  return out
}

/**
 * The results of one memory tool call. `null` when nothing in the result could be read
 * as that tool's answer (the caller counts it as skipped); no results for a readable empty
 * answer; `bad`: items that were neither an id nor a text (the caller counts each).
 */
export function readToolResults(tool: MemoryTool, forms: { content: unknown; toolUseResult?: unknown; mcpMeta?: unknown }): ToolResults | null {
  const s = structured(forms.toolUseResult, forms.mcpMeta)
  const text = contentText(forms.content) ?? contentText(forms.toolUseResult)
  if (tool.family === 'graph') return graphResults(s) ?? graphResults(jsonObject(text))
  const fromJson = serviceStructured(s) ?? serviceStructured(jsonObject(text))
  if (fromJson) return fromJson
  if (text === null) return null
  const fromText = serviceText(text)
  if (fromText.length) return { results: fromText, bad: 0 }
  // "No matching memories found", "No memories found for query: '…'": a readable empty answer.
  return /^\s*no (matching )?memories found/i.test(text) ? { results: [], bad: 0 } : null
}
