/** The session-unit gatherer: episodes (sessions) as recall units (docs/internals/design.md "Recall engine"). */
import { effectiveMode, utf8Length } from '../../shared/scoring'
import type { CandidateRaw, Session, UnitInfo } from '../../shared/types'
import { armOff, draftOf, type ArmState, type Draft, type GatherInput, type Gathered } from './draft'
import { engramKeywords } from './scope'
import { unitOfSession } from './units'

/** seed 000: episodes (sessions) ranked by the cosine of their summary vector. */
export function gatherSessions({ store, texts, cfg, now, idx, push, qn, denseReason, depth, units: withUnits }: GatherInput): Gathered {
  const sessions = store.sessionsForRecall(cfg.scope, now)
  const drafts = new Map<string, Draft>()
  const arms = {
    dense: armOff(denseReason),
    lexical: armOff('no lexical index over session summaries'),
    recency: { ran: true, fetched: 0, exhausted: true, reason: null } as ArmState,
    order: armOff('not keyword mode'),
  }
  const td = performance.now()
  let denseCount = 0
  // Push-down stores: the similarity of every candidate session, computed in the database (ties then break by id).
  const pushed =
    push && qn
      ? push.dense.similarities(
          sessions.map((s) => s.id),
          qn,
          push.model,
          'session',
        )
      : null
  if ((idx || pushed) && qn) {
    const scored: { s: Session; row: number; sim: number | null }[] = []
    for (const s of sessions) {
      const row = pushed ? (pushed.has(s.id) ? 0 : undefined) : idx!.rowOf.get(s.id)
      if (row !== undefined) scored.push({ s, row, sim: pushed ? pushed.get(s.id)! : idx!.dot(row, qn) })
      else if (cfg.missingVector === 'zero') scored.push({ s, row: Infinity, sim: null }) // seed 000 requires SummaryEmbedding != null
    }
    scored.sort((a, b) => (b.sim ?? 0) - (a.sim ?? 0) || a.row - b.row || (a.s.id < b.s.id ? -1 : 1))
    const top = scored.slice(0, depth)
    top.forEach((x, i) => {
      const d = draftOf(drafts, x.s.id, undefined)!
      d.similarity = x.sim
      d.denseRank = i + 1
    })
    arms.dense = { ran: true, fetched: top.length, exhausted: scored.length <= depth, reason: null }
    denseCount = top.length
  }
  const denseMs = performance.now() - td
  // seed 000 RecallRecentAsync: the N most recent sessions (sessionsForRecall is newest first).
  const recent = sessions.slice(0, depth)
  recent.forEach((s, i) => (draftOf(drafts, s.id, undefined)!.recencyRank = i + 1))
  arms.recency.fetched = recent.length
  arms.recency.exhausted = sessions.length <= depth
  const mode = effectiveMode(cfg, { dense: arms.dense.ran, lexical: false })
  if (mode === 'keyword') {
    const keywords = engramKeywords(texts.lexical)
    const hits = sessions.filter((s) => keywords.length === 0 || keywords.some((k) => (s.summary ?? '').toLowerCase().includes(k))).slice(0, depth)
    hits.forEach((s, i) => (draftOf(drafts, s.id, undefined)!.orderKey = i + 1))
    arms.order = { ran: true, fetched: hits.length, exhausted: hits.length < depth, reason: null }
  }
  if ((idx || pushed) && qn)
    for (const d of drafts.values()) {
      if (d.denseRank !== null) continue
      if (pushed) {
        d.similarity = pushed.get(d.id) ?? null
        continue
      }
      const row = idx!.rowOf.get(d.id)
      d.similarity = row === undefined ? null : idx!.dot(row, qn)
    }
  const byId = new Map(sessions.map((s) => [s.id, s]))
  const messages = cfg.useSessionSummaries ? null : store.sessionMessages([...drafts.keys()], now)
  const candidates: CandidateRaw[] = []
  const units: Record<string, UnitInfo> = {}
  for (const d of drafts.values()) {
    const s = byId.get(d.id)!
    const started = s.startedAt ?? s.endedAt ?? now
    const lastActive = s.endedAt ?? started
    // UseSessionSummaries = false: the full thread, one "role: content" line per message.
    const text = messages ? (messages.get(s.id) ?? []).map((m) => `${m.role ?? 'unknown'}: ${m.content}`).join('\n') : (s.summary ?? '')
    const c: CandidateRaw = {
      id: s.id,
      similarity: d.similarity,
      lexical: 0,
      bm25: null,
      ageLastUsedMs: Math.max(0, now - lastActive),
      ageCreatedMs: Math.max(0, now - started),
      salience: 0,
      denseRank: d.denseRank,
      lexicalRank: null,
      recencyRank: d.recencyRank,
      textLength: text.length,
      textBytes: utf8Length(text.trim()),
    }
    if (d.orderKey !== undefined) c.orderKey = d.orderKey
    candidates.push(c)
    if (withUnits) units[s.id] = unitOfSession(s, text)
  }
  return { candidates, units, mode, arms, inScope: sessions.length, inScopeCapped: false, denseCount, lexicalCount: 0, denseMs, lexicalMs: 0 }
}
