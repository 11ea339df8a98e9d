/**
 * Is a memory (or session) in a recall's scope at `now`, and if not, which
 * filter keeps it out and what edit would let it in. The SQL filter the engine
 * uses (recall/scope.ts scopeFilter / blendFilter) has the final word; this
 * module names the failing fields.
 */

import type { ScopeFailure } from '../../shared/trace'
import type { Memory, RecallConfig, Session } from '../../shared/types'
import { blendFilter, scopeFilter } from '../recall/scope'
import type { MemorySource } from '../store/source'

export interface ScopeCheck {
  inScope: boolean
  failures: ScopeFailure[]
  /** in scope through Engram's userId blend (cross-session user facts) */
  viaBlend: boolean
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? 'none' : new Date(ms).toISOString().replace('.000Z', 'Z'))
const list = (xs: readonly string[]) => `[${xs.join(', ')}]`

/** Each scope filter the memory fails, in the engine's order (time travel first). */
function memoryScopeFailures(m: Memory, scope: RecallConfig['scope'], now: number): ScopeFailure[] {
  const out: ScopeFailure[] = []
  if (m.createdAt > now)
    out.push({
      field: 'now',
      value: `created ${iso(m.createdAt)}`,
      expected: `created by ${iso(now)}`,
      fix: `recall at or after ${iso(m.createdAt)} (it did not exist yet)`,
    })
  const eq = (field: 'agentId' | 'userId' | 'sessionId' | 'tenantId', v: string | null) => {
    const want = scope[field]
    if (want !== undefined && v !== want)
      out.push({
        field: `scope.${field}`,
        value: v ?? 'none',
        expected: want,
        fix: v === null ? `remove scope.${field}` : `remove scope.${field} (or set it to ${v})`,
      })
  }
  eq('agentId', m.agentId)
  eq('userId', m.userId)
  eq('sessionId', m.sessionId)
  eq('tenantId', m.tenantId)
  const inList = (field: 'tiers' | 'kinds' | 'roles', v: string | null) => {
    const want = scope[field]
    if (!want) return
    // queries.ts: '(none)' in a list matches NULL.
    const ok = v === null ? want.includes('(none)') : want.includes(v)
    if (!ok) out.push({ field: `scope.${field}`, value: v ?? 'none', expected: list(want), fix: `add ${v === null ? "'(none)'" : `'${v}'`} to scope.${field}` })
  }
  inList('tiers', m.tier)
  inList('kinds', m.kind)
  inList('roles', m.role)
  if (scope.after !== undefined && m.createdAt < scope.after)
    out.push({
      field: 'scope.after',
      value: `created ${iso(m.createdAt)}`,
      expected: `≥ ${iso(scope.after)}`,
      fix: `set scope.after ≤ ${m.createdAt} or remove it`,
    })
  if (scope.before !== undefined && m.createdAt > scope.before)
    out.push({
      field: 'scope.before',
      value: `created ${iso(m.createdAt)}`,
      expected: `≤ ${iso(scope.before)}`,
      fix: `set scope.before ≥ ${m.createdAt} or remove it`,
    })
  return out
}

/** The memory's scope status under a config at `now`, confirmed in SQL. */
export function checkMemoryScope(store: MemorySource, m: Memory, config: RecallConfig, now: number): ScopeCheck {
  const failures = memoryScopeFailures(m, config.scope, now)
  const inPrimary = store.idsWhere({ ...scopeFilter(config.scope, now), ids: [m.id] }, 1).length === 1
  if (inPrimary) return { inScope: true, failures: [], viaBlend: false }
  const bf = blendFilter(config.scope, now)
  if (bf && store.idsWhere({ ...bf, ids: [m.id] }, 1).length === 1) return { inScope: true, failures: [], viaBlend: true }
  if (failures.length === 0)
    // The SQL filter excludes it but no field explains it: say so rather than guess.
    failures.push({ field: 'scope', value: m.id, expected: JSON.stringify(config.scope), fix: 'the scope filter excludes it (check the scope fields)' })
  return { inScope: false, failures, viaBlend: false }
}

/** Session-unit recall (seed 000): is the session among those ranked at `now`? */
export function checkSessionScope(store: MemorySource, s: Session, config: RecallConfig, now: number): ScopeCheck {
  const ranked = store.sessionsForRecall({ ...config.scope, sessionId: s.id }, now)
  if (ranked.length === 1) return { inScope: true, failures: [], viaBlend: false }
  const sc = config.scope
  const failures: ScopeFailure[] = []
  const eq = (field: 'agentId' | 'userId' | 'tenantId', v: string | null) => {
    const want = sc[field]
    if (want !== undefined && v !== want) failures.push({ field: `scope.${field}`, value: v ?? 'none', expected: want, fix: `remove scope.${field}` })
  }
  eq('agentId', s.agentId)
  eq('userId', s.userId)
  eq('tenantId', s.tenantId)
  if (sc.sessionId !== undefined && sc.sessionId !== s.id)
    failures.push({ field: 'scope.sessionId', value: s.id, expected: sc.sessionId, fix: 'remove scope.sessionId' })
  if (s.isArchived && !sc.tiers.includes('archived'))
    failures.push({ field: 'scope.tiers', value: 'archived session', expected: list(sc.tiers), fix: "add 'archived' to scope.tiers" })
  const end = s.endedAt ?? s.startedAt
  // seed 000: a session's summary (and its vector) exists once it has ended.
  if (end !== null && end > now)
    failures.push({
      field: 'now',
      value: `ended ${iso(end)}`,
      expected: `ended by ${iso(now)}`,
      fix: 'recall after the session ended (its summary did not exist yet)',
    })
  if (sc.after !== undefined && (s.startedAt ?? 0) < sc.after)
    failures.push({ field: 'scope.after', value: `started ${iso(s.startedAt)}`, expected: `≥ ${iso(sc.after)}`, fix: 'lower scope.after' })
  if (sc.before !== undefined && (s.startedAt ?? 0) > sc.before)
    failures.push({ field: 'scope.before', value: `started ${iso(s.startedAt)}`, expected: `≤ ${iso(sc.before)}`, fix: 'raise scope.before' })
  if (failures.length === 0) failures.push({ field: 'scope', value: s.id, expected: JSON.stringify(sc), fix: 'the scope filter excludes it' })
  return { inScope: false, failures, viaBlend: false }
}
