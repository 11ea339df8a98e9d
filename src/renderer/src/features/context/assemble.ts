/**
 * The full context window an agent would assemble (issue 12), in seed 001's
 * order: [1] system prompt → [2] retrieved knowledge → [3] episode snippets →
 * [4] message history (pruned to the budget) → [5] the current user message.
 * Pure. Token counts come from the engine's own estimator (src/shared/scoring.ts
 * `estimateTokens`, the config's `tokenEstimator`), and the knowledge and
 * episode blocks arrive already rendered by their presets' templates
 * (src/shared/render.ts, through the engine), so nothing here formats memories.
 */
import { estimateTokens } from '../../../../shared/scoring'
import type { RecallConfig } from '../../../../shared/types'

export type BlockKey = 'system' | 'knowledge' | 'episodes' | 'history' | 'current'

/** Seed 001's "LLM context assembly order", with its own names. */
const BLOCK_TITLES: Record<BlockKey, string> = {
  system: 'System prompt',
  knowledge: 'Retrieved knowledge',
  episodes: 'Episode snippets',
  history: 'Message history',
  current: 'Current user message',
}
const ORDER: BlockKey[] = ['system', 'knowledge', 'episodes', 'history', 'current']

export interface WindowBlock {
  key: BlockKey
  title: string
  /** what goes into the window */
  text: string
  tokens: number
  /** what a budget cut (shown greyed): history turns that did not fit, memories the recall's token budget dropped */
  cut: { text: string; tokens: number }[]
  /** why the block is empty or how it was made */
  note: string | null
}

export interface WindowPlan {
  blocks: WindowBlock[]
  window: number
  /** tokens of all blocks */
  used: number
  /** window − used (negative: over) */
  free: number
}

export interface AssembleInput {
  systemPrompt: string
  /** the recall's context block, and its token count as the engine gave it (the Recall screen's number) */
  knowledge: { text: string; tokens: number; cut: { text: string; tokens: number }[]; note: string | null }
  episodes: { text: string; tokens: number; note: string | null }
  /** the session's turns, oldest first */
  history: { role: string | null; content: string }[]
  historyNote: string | null
  current: string
  window: number
  estimator: RecallConfig['tokenEstimator']
}

/** One transcript line: "User: …" / "Assistant: …" (roles as the store has them). */
export function historyLine(m: { role: string | null; content: string }): string {
  const role = m.role ? m.role[0].toUpperCase() + m.role.slice(1) : 'Message'
  return `${role}: ${m.content}`
}

/**
 * Lay the blocks out. Only the message history is pruned (seed 001: "current session messages
 * (pruned to budget)"): it gets what the other four leave of the window, newest turns first,
 * and the older turns that do not fit are cut. The other blocks are never cut here; when they
 * alone exceed the window, `free` goes negative and the view says so.
 */
export function assembleWindow(i: AssembleInput): WindowPlan {
  const tok = (s: string) => (s === '' ? 0 : estimateTokens(s, i.estimator))
  const system = i.systemPrompt
  const current = i.current
  const fixed = tok(system) + i.knowledge.tokens + i.episodes.tokens + tok(current)
  const room = Math.max(0, i.window - fixed)
  // Newest first: keep the longest run of recent turns whose joined text fits the room.
  const lines = i.history.map(historyLine)
  let keepFrom = lines.length
  while (keepFrom > 0 && tok(lines.slice(keepFrom - 1).join('\n')) <= room) keepFrom--
  const kept = lines.slice(keepFrom).join('\n')
  const blocks: Record<BlockKey, WindowBlock> = {
    system: {
      key: 'system',
      title: BLOCK_TITLES.system,
      text: system,
      tokens: tok(system),
      cut: [],
      note: system === '' ? 'Paste the agent’s system prompt to count it.' : null,
    },
    knowledge: {
      key: 'knowledge',
      title: BLOCK_TITLES.knowledge,
      text: i.knowledge.text,
      tokens: i.knowledge.tokens,
      cut: i.knowledge.cut,
      note: i.knowledge.note,
    },
    episodes: { key: 'episodes', title: BLOCK_TITLES.episodes, text: i.episodes.text, tokens: i.episodes.tokens, cut: [], note: i.episodes.note },
    history: {
      key: 'history',
      title: BLOCK_TITLES.history,
      text: kept,
      tokens: tok(kept),
      cut: lines.slice(0, keepFrom).map((text) => ({ text, tokens: tok(text) })),
      note: i.historyNote,
    },
    current: { key: 'current', title: BLOCK_TITLES.current, text: current, tokens: tok(current), cut: [], note: null },
  }
  const list = ORDER.map((k) => blocks[k])
  const used = list.reduce((s, b) => s + b.tokens, 0)
  return { blocks: list, window: i.window, used, free: i.window - used }
}
