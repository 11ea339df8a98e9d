/**
 * Matching logged recall results to the open store's memories (docs/internals/design.md
 * "Event sources"): exact id first (the id the store's adapter gives the
 * memory: Letta passage id, LangGraph `<prefix>/<key>`, MCP entity name,
 * mcp-memory-service content hash, span document ids), else exact text, else
 * normalised text (quotes dropped, whitespace collapsed, case folded). Every
 * result says how it matched; a result that matches nothing is listed in
 * `unmatched`, never dropped.
 *
 * Cost is bounded: ids go through `getMemories` (batched), and the texts of a
 * whole batch of events through at most two `memoryIdsByText` scans.
 */
import type { EventOrigin, MatchCounts, MatchedBy, RecallEvent, UnmatchedResult } from '../../shared/types'
import type { MemorySource } from '../store/source'
import { normalizeMatchText, TEXT_LOOKUP_MAX } from '../store/textMatch'
import type { LoggedRecall, LoggedResult } from './types'

/**
 * The framework preset an event of a source replays with when its log names none
 * (src/shared/presets.ts): the framework's own recall where recallscope has one.
 * Letta, Claude Code and OTLP events have none: the default preset, and the
 * replay's notes say so.
 */
const FRAMEWORK_PRESET: Partial<Record<EventOrigin['kind'], string>> = {
  langgraph: 'langgraph-store',
  'openai-agents': 'openai-agents',
}

function frameworkPresetOf(kind: EventOrigin['kind']): string | null {
  return FRAMEWORK_PRESET[kind] ?? null
}

/** Longest logged text kept on an unmatched result (display only). */
const UNMATCHED_TEXT_MAX = 300

export function emptyMatchCounts(): MatchCounts {
  return { id: 0, text: 0, normalized: 0, unmatched: 0 }
}

/**
 * Turn logged recalls into recall events of the open store; a recall whose log
 * names no preset gets its framework's (frameworkPresetOf).
 */
export function matchRecalls(store: MemorySource, recalls: LoggedRecall[], counts: MatchCounts = emptyMatchCounts()): RecallEvent[] {
  // 1. ids: one batched lookup of every logged id.
  const ids = new Set<string>()
  for (const r of recalls) for (const x of r.results) if (x.id) ids.add(x.id)
  const known = new Set<string>()
  const idList = [...ids]
  for (let i = 0; i < idList.length; i += 5000) for (const id of store.getMemories(idList.slice(i, i + 5000)).keys()) known.add(id)

  // 2. texts of the results no id matched: exact, then normalised (one scan each).
  const texts = new Set<string>()
  for (const r of recalls) for (const x of r.results) if (!(x.id && known.has(x.id)) && x.text) texts.add(x.text)
  const byText = new Map<string, string>()
  const byNorm = new Map<string, string>()
  const all = [...texts]
  for (let i = 0; i < all.length; i += TEXT_LOOKUP_MAX) {
    const chunk = all.slice(i, i + TEXT_LOOKUP_MAX)
    const exact = store.memoryIdsByText({ texts: chunk, normalized: [] }).exact
    for (const [t, found] of exact) byText.set(t, found[0])
    const rest = chunk.filter((t) => !byText.has(t))
    if (rest.length === 0) continue
    const norms = store.memoryIdsByText({ texts: [], normalized: rest.map(normalizeMatchText) }).normalized
    for (const [n, found] of norms) byNorm.set(n, found[0])
  }

  const resolve = (x: LoggedResult): { id: string; by: MatchedBy } | null => {
    if (x.id && known.has(x.id)) return { id: x.id, by: 'id' }
    if (!x.text) return null
    const t = byText.get(x.text)
    if (t !== undefined) return { id: t, by: 'text' }
    const n = byNorm.get(normalizeMatchText(x.text))
    return n !== undefined ? { id: n, by: 'normalized' } : null
  }

  const out: RecallEvent[] = []
  for (const r of recalls) {
    const results: RecallEvent['results'] = []
    const unmatched: UnmatchedResult[] = []
    const seen = new Set<string>()
    for (const x of [...r.results].sort((a, b) => a.rank - b.rank)) {
      const m = resolve(x)
      // Two logged results resolving to one memory: the first keeps it, the second is listed (nothing is lost).
      if (m && !seen.has(m.id)) {
        seen.add(m.id)
        counts[m.by]++
        results.push({ id: m.id, score: x.score ?? Number.NaN, matchedBy: m.by })
      } else {
        counts.unmatched++
        unmatched.push({
          rank: x.rank,
          loggedId: x.id,
          text: x.text === null ? null : x.text.length > UNMATCHED_TEXT_MAX ? `${x.text.slice(0, UNMATCHED_TEXT_MAX - 1)}…` : x.text,
          score: x.score,
        })
      }
    }
    if (r.requireMatch && results.length === 0) {
      counts.unmatched -= unmatched.length
      continue
    }
    out.push({
      id: r.key,
      at: r.at,
      agentId: r.agentId,
      userId: r.userId,
      sessionId: r.sessionId,
      turn: r.turn,
      query: r.query,
      cue: r.cue ?? null,
      preset: r.preset ?? frameworkPresetOf(r.origin.kind),
      config: r.config ?? null,
      results,
      origin: r.origin,
      unmatched,
      decision: r.decision,
    })
  }
  return out
}
