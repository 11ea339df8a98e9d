/**
 * The state both recall gatherers (memory and session units) share: a candidate under construction
 * (Draft), the arms' bookkeeping and what a gather returns to the engine (docs/internals/design.md
 * "Recall engine").
 */
import type { ArmInfo, CandidateRaw, EffectiveMode, RecallConfig, UnitInfo } from '../../shared/types'
import type { DensePushdown, MemorySource } from '../store/source'
import type { VectorIndex } from '../store/vectors/vectorIndex'
import type { PassReads } from './passReads'

export type ArmState = ArmInfo

/** An arm that did not run, and why. */
export const armOff = (reason: string | null = null): ArmState => ({ ran: false, fetched: 0, exhausted: false, reason })

export interface Gathered {
  candidates: CandidateRaw[]
  units: Record<string, UnitInfo>
  mode: EffectiveMode
  arms: { dense: ArmState; lexical: ArmState; recency: ArmState; order: ArmState }
  inScope: number
  inScopeCapped: boolean
  denseCount: number
  lexicalCount: number
  denseMs: number
  lexicalMs: number
}

/** A candidate under construction. */
export interface Draft {
  id: string
  group?: 'blend'
  similarity: number | null
  denseRank: number | null
  bm25: number | null
  lexicalRank: number | null
  recencyRank: number | null
  orderKey?: number
  /** the lexical pass answered for this row (its bm25 set, or it has no match) */
  bm25Settled: boolean
}

/** A group's dense hits. */
export function denseDraftsOf(drafts: Map<string, Draft>, group: 'blend' | undefined): Draft[] {
  const out: Draft[] = []
  for (const d of drafts.values()) if (d.denseRank !== null && d.group === group) out.push(d)
  return out
}

/** The draft of `id` in `group`, created on first sight; null when the id belongs to the other group. */
export function draftOf(map: Map<string, Draft>, id: string, group: 'blend' | undefined): Draft | null {
  let d = map.get(id)
  if (d) return d.group === group ? d : null // an id in both groups stays in the primary one
  d = { id, group, similarity: null, denseRank: null, bm25: null, lexicalRank: null, recencyRank: null, bm25Settled: false }
  map.set(id, d)
  return d
}

/** What both gatherers (memory and session units) work from. */
export interface GatherInput {
  store: MemorySource
  /** the gather's reads of `store` (shared by the recalls of one batch) */
  reads: PassReads
  texts: { dense: string; lexical: string }
  cfg: RecallConfig
  now: number
  idx: VectorIndex | null
  /** the model whose dense search runs inside the store (push-down), or null */
  push: PushedModel | null
  qn: Float64Array | null
  denseReason: string | null
  depth: number
  /** build the units' display records (a trace shows them; an eval gather does not keep them) */
  units: boolean
}

/** A model whose dense arm runs in the store, with the store's push-down. */
export interface PushedModel {
  model: string
  dense: DensePushdown
}
