/**
 * The results a memory tool returned, from its output however it printed them
 * (shared by the in-store readers and the log readers): JSON, else a Python
 * literal, else plain text lines. Items are read by the fields memory tools
 * use: id (`id`, `memory_id`, `content_hash`, LangGraph `namespace` + `key`),
 * text (`content`, `text`, `memory`, `value.content`, `document`…), score
 * (`score`, `similarity`, `relevance_score`, `rrf_score`).
 */
import { parsePyLiteral } from './pyLiteral'
import type { LoggedResult } from './types'

/** Parse a tool output text: JSON, else a Python literal; null when neither. */
function parseToolText(text: string): unknown {
  const t = text.trim()
  if (t === '') return null
  try {
    return JSON.parse(t)
  } catch {
    try {
      return parsePyLiteral(t)
    } catch {
      return null
    }
  }
}

const LIST_KEYS = ['results', 'memories', 'items', 'documents', 'records', 'data', 'matches'] as const

/** The list of items in a parsed output: the value itself, or its `results` / `memories` / … array. */
function itemsOf(v: unknown): unknown[] | null {
  if (Array.isArray(v)) return v as unknown[]
  if (v && typeof v === 'object') for (const k of LIST_KEYS) if (Array.isArray((v as Record<string, unknown>)[k])) return (v as Record<string, unknown[]>)[k]
  return null
}

const str = (x: unknown): string | null => (typeof x === 'string' && x !== '' ? x : null)

/** LangGraph's memory id of a store item: `<namespace joined by '.'>/<key>` (store/frameworks/langgraph/adapter.ts). */
function langgraphItemId(namespace: unknown, key: unknown): string | null {
  if (!Array.isArray(namespace) || typeof key !== 'string') return null
  return `${namespace.map(String).join('.')}/${key}`
}

/** One item → a logged result (null when it has neither an id nor a text). */
export function resultOfItem(it: unknown, rank: number): LoggedResult | null {
  if (typeof it === 'string') return it.trim() ? { rank, id: null, text: it, score: null } : null
  if (!it || typeof it !== 'object' || Array.isArray(it)) return null
  const o = it as Record<string, unknown>
  const value = o.value && typeof o.value === 'object' ? (o.value as Record<string, unknown>) : null
  const nested = value?.content && typeof value.content === 'object' ? (value.content as Record<string, unknown>) : null
  const id = langgraphItemId(o.namespace, o.key) ?? str(o.id) ?? str(o.memory_id) ?? str(o.content_hash) ?? (typeof o.id === 'number' ? String(o.id) : null)
  const text =
    str(o.content) ??
    str(o.text) ??
    str(o.memory) ??
    str(value?.content) ??
    str(nested?.content) ??
    str(value?.text) ??
    str(value?.memory) ??
    str(o.document) ??
    str(o.page_content) ??
    (typeof o.value === 'string' ? o.value : null) ??
    str(o.message)
  if (id === null && text === null) return null
  // Letta nests its hybrid-search score: relevance.rrf_score.
  const rel = o.relevance && typeof o.relevance === 'object' ? (o.relevance as Record<string, unknown>).rrf_score : undefined
  const score = [o.score, o.similarity, o.relevance_score, o.rrf_score, rel].find((x): x is number => typeof x === 'number' && Number.isFinite(x)) ?? null
  return { rank, id, text, score }
}

/**
 * The results of a tool output text. A list (or an object holding one) of items;
 * else, for plain text, one result per non-empty line (list bullets dropped).
 * `bad` counts the items that were neither an id nor a text.
 */
export function resultsOfToolText(text: string): { results: LoggedResult[]; bad: number; structured: boolean } {
  const parsed = parseToolText(text)
  const items = itemsOf(parsed)
  if (items) {
    const results: LoggedResult[] = []
    let bad = 0
    items.forEach((it, i) => {
      const r = resultOfItem(it, i + 1)
      if (r) results.push(r)
      else bad++
    })
    return { results, bad, structured: true }
  }
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, '').trim())
    .filter((l) => l !== '')
  return { results: lines.map((l, i) => ({ rank: i + 1, id: null, text: l, score: null })), bad: 0, structured: false }
}
