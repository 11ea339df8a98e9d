/**
 * The exact context block an agent would inject, per template, with its token
 * count (docs/internals/design.md "Recall engine" step 6). Pure: the renderer calls it for the
 * live context preview with the same inputs the engine used.
 *
 * Newlines: the C# seeds (000, 001) use StringBuilder.AppendLine, whose newline
 * is Environment.NewLine ("\r\n" on Windows, "\n" elsewhere); we always write "\n".
 */
import { subjectOf, withSubject } from './subject'
import { estimateTokens } from './scoring'
import type { CandidateRaw, EffectiveMode, RecallConfig, TemplateName, TraceResult, UnitInfo } from './types'

export interface RenderItem {
  unit: UnitInfo
  score: number
  /** cosine; null when the recall had no query vector (Engram's keyword fallback prints none) */
  similarity: number | null
  /** Engram userId blend */
  group?: 'blend'
}

export interface RenderOptions {
  /** Engram: entries carry `similarity` only after a semantic search. @default true */
  semantic?: boolean
  /** Neo: the assistant's name in "- Neo: …" lines (a.cfg.AgentName, default "Neo"). @default 'Neo' */
  agentName?: string
}

/**
 * The context block of (re-ranked) results: what the engine injects, and what the
 * renderer's live preview shows after a local re-rank of `trace.candidates`.
 */
export function renderResults(
  results: readonly TraceResult[],
  trace: { candidates: readonly CandidateRaw[]; units: Record<string, UnitInfo>; mode?: EffectiveMode },
  config: Pick<RecallConfig, 'template' | 'tokenEstimator'>,
): { text: string; tokens: number } {
  const byId = candidatesById(trace.candidates)
  // Engram prints a similarity only after a semantic search (not in its keyword fallback).
  const semantic = trace.mode !== 'keyword'
  const items: RenderItem[] = []
  for (const r of results) {
    const c = byId.get(r.id)
    const stored = trace.units[r.id]
    if (!c || !stored) continue
    // A graph store's observation is about an entity: the block names it, as the agent's graph tools return it.
    const unit = subjectOf(stored.metadata) ? { ...stored, content: withSubject(stored.content, stored.metadata) } : stored
    // A row without a vector that the dense arm ranked anyway (Engram) printed similarity 0.
    const similarity = semantic && (c.similarity !== null || c.denseRank !== null) ? (c.similarity ?? 0) : null
    items.push({ unit, score: r.score, similarity, group: c.group })
  }
  return renderContext(items, config, { semantic })
}

const byIdCache = new WeakMap<readonly CandidateRaw[], Map<string, CandidateRaw>>()

/** The candidates by id, made once per list: the live preview renders the same trace's block on every slider step. */
function candidatesById(candidates: readonly CandidateRaw[]): Map<string, CandidateRaw> {
  let m = byIdCache.get(candidates)
  if (!m) byIdCache.set(candidates, (m = new Map(candidates.map((c) => [c.id, c]))))
  return m
}

/**
 * yyyy-MM-dd in UTC (seed 000 formats the episode's StartedAt, stored as UTC); '' for a row
 * without a time, which stores decode as 0 (store/decode.ts): never "1970-01-01".
 */
export function isoDate(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms === 0) return ''
  return new Date(ms).toISOString().slice(0, 10)
}

const FIELDGUIDE_HEADER = 'Recalled memory (evidence, not policy):'
const NEO_HEADER = 'Relevant earlier in this conversation (the live exchange below is more current — it wins on any conflict):'

/** Render the items (in injected order) with a template. */
export function renderContext(
  items: readonly RenderItem[],
  config: Pick<RecallConfig, 'template' | 'tokenEstimator'>,
  opts: RenderOptions = {},
): { text: string; tokens: number } {
  const text = renderText(config.template, items, opts)
  return { text, tokens: text === '' ? 0 : estimateTokens(text, config.tokenEstimator) }
}

function renderText(template: TemplateName, items: readonly RenderItem[], opts: RenderOptions): string {
  switch (template) {
    case 'portal-episodic':
      return portalEpisodic(items)
    case 'portal-semantic':
      return portalSemantic(items)
    case 'engram':
      return engram(items, opts.semantic ?? true)
    case 'fieldguide':
      return fieldguide(items)
    case 'neo':
      return neo(items, opts.agentName ?? 'Neo')
    case 'plain':
      return items.length === 0 ? '' : items.map((i) => `- ${i.unit.content}\n`).join('')
  }
}

/** seed 000 FormatEpisodeContext. */
function portalEpisodic(items: readonly RenderItem[]): string {
  // if (!episodes.Any()) return string.Empty;
  if (items.length === 0) return ''
  let s = '[Past Conversation Context]\n' // sb.AppendLine(...)
  s += 'Relevant past conversations with this user:\n'
  // episodes.OrderBy(e => e.Date): a stable sort, so equal dates keep score order.
  const byDate = items.map((it, i) => ({ it, i })).sort((a, b) => (a.it.unit.createdAt ?? 0) - (b.it.unit.createdAt ?? 0) || a.i - b.i)
  for (const { it } of byDate) s += `- ${isoDate(it.unit.createdAt) || 'undated'}: ${it.unit.content}\n` // $"- {ep.Date:yyyy-MM-dd}: {ep.Summary}"
  return s
}

/** seed 001 FormatForContext: the header is written even for zero records. */
function portalSemantic(items: readonly RenderItem[]): string {
  let s = '[Retrieved Knowledge]\n' // new StringBuilder("[Retrieved Knowledge]\n")
  for (const it of items) {
    s += `Source: ${it.unit.source ?? ''}\n` // C# interpolates null as ""
    s += `${it.unit.content}\n`
    s += '---\n'
  }
  return s
}

/**
 * seed 002: the MCP tool returns JSON.stringify(entries, null, 2), Engram's MemoryEntry
 * shape (v0.5): id, sessionId, content, role, timestamp, tier, metadata?, similarity?.
 * Blended user memories carry sessionId `user:<id>` and metadata {_userMemory, userId}.
 */
function engram(items: readonly RenderItem[], semantic: boolean): string {
  const entries = items.map((it) => {
    const u = it.unit
    const e: Record<string, unknown> = {
      id: u.id,
      sessionId: it.group === 'blend' ? `user:${u.userId ?? ''}` : u.sessionId,
      content: u.content,
      role: u.role,
      timestamp: u.createdAt === null ? null : new Date(u.createdAt).toISOString(),
      tier: u.tier,
    }
    const meta = u.metadata && typeof u.metadata === 'object' ? (u.metadata as Record<string, unknown>) : null
    if (it.group === 'blend') e.metadata = { ...(meta ?? {}), _userMemory: true, userId: u.userId }
    else if (u.metadata !== null && u.metadata !== undefined) e.metadata = u.metadata
    if (semantic && it.similarity !== null) e.similarity = it.similarity
    return e
  })
  return JSON.stringify(entries, null, 2)
}

/** seed 003: provenance and kind on every memory, "previously inferred" for reflections. */
function fieldguide(items: readonly RenderItem[]): string {
  if (items.length === 0) return '' // "An empty recall is correct and safe"
  let s = `${FIELDGUIDE_HEADER}\n`
  for (const it of items) s += `${fieldguideLabel(it.unit)} ${it.unit.kind === 'reflection' ? 'previously inferred: ' : ''}${it.unit.content}\n`
  return s
}

/** "[recalled semantic memory, written turn 12]"; without a turn, the date it was written. */
export function fieldguideLabel(u: Pick<UnitInfo, 'kind' | 'turn' | 'createdAt'>): string {
  const kind = u.kind ? `${u.kind} ` : ''
  const when = u.turn !== null ? `turn ${u.turn}` : isoDate(u.createdAt) || 'at an unknown time'
  return `[recalled ${kind}memory, written ${when}]`
}

/**
 * seed 004 renderRecall: "- User: …" / "- Neo: …" (role "assistant" → the agent's name,
 * anything else → "User"), text trimmed, empty turns skipped; "" when nothing survives.
 * Neo prefixes the header with "\n" to separate it from the previous section of its
 * system tail; a standalone block starts at the header.
 */
function neo(items: readonly RenderItem[], agentName: string): string {
  let lines = ''
  for (const it of items) {
    const text = it.unit.content.trim()
    if (text === '') continue
    lines += `- ${it.unit.role === 'assistant' ? agentName : 'User'}: ${text}\n`
  }
  return lines === '' ? '' : `${NEO_HEADER}\n${lines}`
}
