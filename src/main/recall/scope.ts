/**
 * A recall's scope as memory filters (pure): the primary group at `now` and
 * Engram's user blend, and seed 002's keywords.
 *
 * Time travel: a recall at `now` sees only rows created at or before `now`
 * (they are left out of every arm, not gated, so nothing from the future can
 * leak into a trace); a last_used_at later than `now` is unknown at that moment
 * and counts as never used.
 */
import type { RecallScope } from '../../shared/types'
import type { MemoryFilter } from '../store/source'

/** The scope of the primary group as a MemoryFilter at `now`. */
export function scopeFilter(scope: RecallScope, now: number): MemoryFilter {
  return {
    agentId: scope.agentId,
    userId: scope.userId,
    sessionId: scope.sessionId,
    tenantId: scope.tenantId,
    tiers: scope.tiers,
    kinds: scope.kinds,
    roles: scope.roles,
    after: scope.after,
    before: scope.before === undefined ? now : Math.min(scope.before, now),
  }
}

/**
 * Engram's userId blend: that user's cross-session memories (user_id set,
 * session_id NULL). Engram's blendUserMemories calls recallUser(userId, query,
 * ceil(limit/2)) without the caller's tiers, role or dates, so neither do we:
 * working + long_term, same agent when the scope names one.
 */
export function blendFilter(scope: RecallScope, now: number): MemoryFilter | null {
  if (!scope.blendUserId) return null
  return { agentId: scope.agentId, userId: scope.blendUserId, noSession: true, tiers: ['working', 'long_term'], before: now }
}

/** seed 002 keywords: `query.toLowerCase().split(/\s+/).filter(k => k.length > 2)`. */
export function engramKeywords(query: string): string[] {
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter((k) => k.length > 2)
}
