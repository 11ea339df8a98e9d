/** Labels and small helpers shared by the trace panels. */
import type { CauseCode, KnobName, ReplayStatus, WhyStatus } from '../../../../shared/trace'
import type { Features, RecallConfig } from '../../../../shared/types'

export const STATUS_LABEL: Record<ReplayStatus, string> = {
  same: 'same',
  rescored: 'rescored',
  reordered: 'reordered',
  missing: 'missing',
  extra: 'extra',
}

export const STATUS_HINT: Record<ReplayStatus, string> = {
  same: 'same place, same score as logged',
  rescored: 'same place, different score',
  reordered: 'its order relative to the other logged memories changed',
  missing: 'logged, not recalled by the replay',
  extra: 'recalled by the replay, not logged',
}

export const CAUSE_LABEL: Record<CauseCode, string> = {
  deleted: 'deleted',
  'created-after': 'created later',
  'out-of-scope': 'out of scope',
  'last-used-changed': 'last used changed',
  'recency-input-changed': 'recency input changed',
  'time-passed': 'time passed',
  'config-differs': 'config differs',
  'embedder-differs': 'embedder',
  'vector-changed': 'vector changed',
  'salience-changed': 'salience changed',
  'lexical-changed': 'lexical changed',
  'content-changed': 'content edited',
  relative: 'relative scores',
  displaced: 'displaced',
  gate: 'gate',
  unexplained: 'ambiguous',
}

export const WHY_LABEL: Record<WhyStatus, string> = {
  injected: 'injected',
  dropped: 'dropped by a gate',
  'outside-pool': 'outside the candidate pool',
  'not-candidate': 'never gathered',
  'out-of-scope': 'out of scope',
  excluded: 'live transcript (dedupe)',
  'not-yet-created': 'did not exist yet',
  'not-found': 'not found',
}

export const KNOB_LABEL: Record<KnobName, string> = {
  'weights.similarity': 'similarity weight',
  'weights.lexical': 'lexical weight',
  'weights.recency': 'recency weight',
  'weights.salience': 'salience weight',
  'recency.halfLifeHours': 'half-life (h)',
  floor: 'floor',
  minSimilarity: 'min similarity',
  topK: 'topK',
  tokenBudget: 'token budget',
  candidatePool: 'candidate pool',
}

export const FEATURE_KEYS: readonly (keyof Features)[] = ['similarity', 'lexical', 'recency', 'salience']
export const FEATURE_COLOR: Record<keyof Features, string> = {
  similarity: 'var(--f-sim)',
  lexical: 'var(--f-lex)',
  recency: 'var(--f-rec)',
  salience: 'var(--f-sal)',
}

/** A knob value as a person writes it. */
export function knobValue(v: number | null): string {
  if (v === null) return 'off'
  return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(4)))
}

/** The CLI / config edit that applies a change. */
export function setFlag(knob: KnobName, to: number): string {
  return `--set ${knob}=${knobValue(to)}`
}

export function oneLine(s: string, n: number): string {
  const t = s.replace(/\s+/g, ' ').trim()
  return t.length > n ? `${t.slice(0, n - 1)}…` : t
}

/** One gate of a config as a chip: its name and setting (only gates that can drop something). */
export interface GateChip {
  gate: 'minSimilarity' | 'floor' | 'topK' | 'budget' | 'dedupe'
  text: string
}

/**
 * Every gate the config has on, in the engine's order (minSimilarity, then floor / topK as
 * `gateOrder` says, then the token budget, then dedupe against the live transcript).
 */
export function activeGates(c: RecallConfig): GateChip[] {
  const out: GateChip[] = []
  if (c.minSimilarity !== null) out.push({ gate: 'minSimilarity', text: `minSimilarity ${c.minSimilarity}` })
  const floor: GateChip | null = c.floor !== null ? { gate: 'floor', text: `floor ${c.floor}` } : null
  const topK: GateChip = { gate: 'topK', text: `topK ${c.topK}` }
  if (c.gateOrder === 'topk-then-floor') out.push(topK, ...(floor ? [floor] : []))
  else out.push(...(floor ? [floor] : []), topK)
  if (c.tokenBudget !== null) out.push({ gate: 'budget', text: `budget ${c.tokenBudget} tok` })
  if (c.scope.excludeIds?.length) out.push({ gate: 'dedupe', text: `dedupe ${c.scope.excludeIds.length} ids` })
  return out
}
