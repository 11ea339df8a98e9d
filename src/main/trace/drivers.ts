/**
 * Which memory drove a recall: the injected memories ranked by their share of
 * the composite and by leave-one-out influence — re-rank the same candidates as
 * if that memory did not exist and see how much the injected list moves (rank-
 * biased overlap, so a change at the top counts most), what takes its slot, and
 * how much composite the context loses.
 *
 * "Did not exist" is taken literally: the memory leaves every arm, the ranks
 * below it move up one, and lexical scores are re-normalised when it was the
 * best lexical match. It is not `scope.excludeIds` (seed 004's dedupe spends a
 * topK slot on the excluded row).
 */
import { rbo } from '../../shared/overlap'
import { isOrderMode, rerank } from '../../shared/scoring'
import type { DriverRow, TraceDrivers } from '../../shared/trace'
import type { CandidateRaw, EffectiveMode, RecallConfig, RecallTrace } from '../../shared/types'
import { FEATURE_NAMES } from '../../shared/types'
import type { MemorySource } from '../store/source'
import type { PrepareOptions } from './event'
import { eventEvidence } from './evidence'
import { replayEventFull } from './replay'

/** RBO persistence: the first ~10 ranks carry most of the weight (Webber et al. 2010). */
const RBO_P = 0.9

/** The candidates as if `id` did not exist (ranks closed up within its group, lexical re-normalised). */
export function withoutCandidate(cands: readonly CandidateRaw[], id: string): CandidateRaw[] {
  const gone = cands.find((c) => c.id === id)
  if (!gone) return [...cands]
  const rest = cands.filter((c) => c.id !== id)
  const same = (c: CandidateRaw) => (c.group ?? null) === (gone.group ?? null)
  const close = (r: number | null, g: number | null) => (r !== null && g !== null && r > g ? r - 1 : r)
  // lexical = −bm25 / max(−bm25) (engine.ts): the max moves when the best match leaves.
  let maxNeg = 0
  for (const c of cands) if (c.bm25 !== null && -c.bm25 > maxNeg) maxNeg = -c.bm25
  let maxNeg2 = 0
  for (const c of rest) if (c.bm25 !== null && -c.bm25 > maxNeg2) maxNeg2 = -c.bm25
  return rest.map((c) => {
    const n: CandidateRaw = { ...c }
    if (same(c)) {
      n.denseRank = close(c.denseRank, gone.denseRank)
      n.lexicalRank = close(c.lexicalRank, gone.lexicalRank)
      n.recencyRank = close(c.recencyRank, gone.recencyRank)
      if (c.orderKey !== undefined && gone.orderKey !== undefined && c.orderKey > gone.orderKey) n.orderKey = c.orderKey - 1
    }
    if (maxNeg2 !== maxNeg && c.bm25 !== null) n.lexical = maxNeg2 > 0 ? -c.bm25 / maxNeg2 : 0
    if (n.sameContentAs) n.sameContentAs = n.sameContentAs.filter((x) => x !== id)
    return n
  })
}

/** Drivers of one recall (pure: the trace's candidates and config). */
export function computeDrivers(trace: Pick<RecallTrace, 'candidates' | 'config' | 'mode' | 'results' | 'units'>, eventId = ''): TraceDrivers {
  const mode: EffectiveMode = trace.mode ?? 'dense'
  const cfg: RecallConfig = trace.config
  const before = trace.results.map((r) => r.id)
  const beforeTokens = trace.results.reduce((s, r) => s + r.tokens, 0)
  const total = trace.results.reduce((s, r) => s + r.score, 0)
  const rows: DriverRow[] = trace.results.map((r) => {
    const rr = rerank(withoutCandidate(trace.candidates, r.id), cfg, mode)
    const after = rr.results.map((x) => x.id)
    const beforeSet = new Set(before)
    const entrant = rr.results.find((x) => !beforeSet.has(x.id)) ?? null
    const afterTotal = rr.results.reduce((s, x) => s + x.score, 0)
    const featureShares = { similarity: 0, lexical: 0, recency: 0, salience: 0 }
    for (const k of FEATURE_NAMES) featureShares[k] = r.score !== 0 ? r.contributions[k] / r.score : 0
    return {
      id: r.id,
      rank: r.rank,
      score: r.score,
      share: total !== 0 ? r.score / total : 0,
      contributions: r.contributions,
      featureShares,
      loo: {
        after,
        rbo: rbo(before, after, RBO_P),
        topAfter: after[0] ?? null,
        topChanged: (after[0] ?? null) !== (before[0] ?? null),
        replacement: entrant ? { id: entrant.id, score: entrant.score } : null,
        scoreLoss: total - afterTotal,
        tokenDelta: beforeTokens - rr.injectedTokens,
        entered: after.filter((id) => !beforeSet.has(id)),
        left: before.filter((id) => id !== r.id && !after.includes(id)),
      },
      unit: trace.units[r.id] ?? null,
    }
  })
  const byShare = [...rows].sort((a, b) => b.share - a.share || a.rank - b.rank).map((r) => r.id)
  const byInfluence = [...rows].sort((a, b) => a.loo.rbo - b.loo.rbo || b.loo.scoreLoss - a.loo.scoreLoss || a.rank - b.rank).map((r) => r.id)
  const orderMode = isOrderMode(mode)
  const notes: string[] = []
  if (orderMode) notes.push(`results follow the ${mode} order, not the composite: shares describe scores the ranking did not use`)
  if (cfg.normalize === 'minmax') notes.push('features are min-max normalised over the pool: leaving one out re-normalises the others')
  let mattersMost: TraceDrivers['mattersMost'] = null
  if (rows.length > 0) {
    const top = rows.find((r) => r.id === byInfluence[0])!
    const bits = [`without it the injected list keeps ${(top.loo.rbo * 100).toFixed(0)}% rank-biased overlap`]
    if (top.loo.topChanged) bits.push(`the top result becomes ${top.loo.topAfter ?? 'nothing'}`)
    bits.push(
      top.loo.replacement
        ? `${top.loo.replacement.id} takes its slot (score ${top.loo.replacement.score.toFixed(3)} vs ${top.score.toFixed(3)})`
        : 'nothing takes its slot',
    )
    bits.push(`it carries ${(top.share * 100).toFixed(0)}% of the injected composite${byShare[0] === top.id ? ' (the largest share)' : ''}`)
    mattersMost = { id: top.id, why: bits.join('; ') }
  }
  return { eventId, identical: true, notes, total, rows, byShare, byInfluence, mattersMost, orderMode }
}

/** Drivers of a logged event, computed on its event-time replay (the log keeps scores, not features). */
export async function eventDrivers(store: MemorySource, eventId: string, opts: PrepareOptions = {}): Promise<TraceDrivers> {
  const { replay, run } = await replayEventFull(store, eventId, { ...opts, mode: 'logged' })
  const d = computeDrivers(replay.trace, eventId)
  d.identical = replay.identical
  d.evidence = await eventEvidence(store, run, replay.trace, opts)
  if (!replay.identical)
    d.notes.unshift(
      `the replay differs from the log (${Object.entries(replay.counts)
        .filter(([k, n]) => k !== 'same' && n > 0)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')}): drivers describe the replay, see trace.replay for why`,
    )
  return d
}
