/**
 * Scope diagnosis before a tune: how many judged-relevant memories can the
 * start config's unit and scope filters reach at all? A tuner only moves the
 * scoring knobs, so a start scope that hides most relevant memories (a
 * session-unit preset over memory-level judgments, a kinds filter that leaves
 * out the judged turns) scores 0 on every trial, and baselines computed under
 * the same scope hide why. This module names the filter, says how many
 * memories it excludes and builds the widened config. docs/guide/evaluation.md
 * "Scope diagnosis: before the search".
 */
import type { ScopeDiagnosis, ScopeExclusion } from '../../shared/eval'
import { mergeConfig, type PartialRecallConfig } from '../../shared/config'
import type { EvalCaseRow } from '../../shared/eval'
import type { Memory, RecallConfig } from '../../shared/types'
import type { MemorySource } from '../store/source'

/** Below this share of reachable judged-relevant memories, the scope is the problem (a minority). */
const REACH_MINORITY = 0.5

type Filter = ScopeExclusion['filter']

/** The filters of `config` that exclude memory `m` (empty = reachable). Session ids as judgments are reachable by a session unit. */
function excludingFilters(m: Memory, config: RecallConfig): Filter[] {
  const s = config.scope
  const out: Filter[] = []
  if (config.unit === 'session') out.push('unit')
  if (s.tiers && m.tier !== null && !s.tiers.includes(m.tier)) out.push('tiers')
  if (s.kinds && !(m.kind !== null && s.kinds.includes(m.kind))) out.push('kinds')
  if (s.roles && !(m.role !== null && s.roles.includes(m.role))) out.push('roles')
  if (s.after !== undefined && m.createdAt < s.after) out.push('after')
  if (s.before !== undefined && m.createdAt > s.before) out.push('before')
  return out
}

const describeValue = (f: Filter, config: RecallConfig): string => {
  const s = config.scope
  switch (f) {
    case 'unit':
      return 'unit=session'
    case 'tiers':
      return `tiers=[${(s.tiers ?? []).join(', ')}]`
    case 'kinds':
      return `kinds=[${(s.kinds ?? []).join(', ')}]`
    case 'roles':
      return `roles=[${(s.roles ?? []).join(', ')}]`
    case 'after':
      return `after=${new Date(s.after!).toISOString()}`
    case 'before':
      return `before=${new Date(s.before!).toISOString()}`
  }
}

/** What the excluded judged memories need from each filter. */
interface Needs {
  tiers: Set<string>
  kinds: Set<string>
  roles: Set<string>
  /** some excluded memory has no kind / role (a list cannot name it: the filter is lifted) */
  nullKind: boolean
  nullRole: boolean
  minCreated: number
  maxCreated: number
}

const emptyNeeds = (): Needs => ({
  tiers: new Set(),
  kinds: new Set(),
  roles: new Set(),
  nullKind: false,
  nullRole: false,
  minCreated: Infinity,
  maxCreated: -Infinity,
})

function noteNeeds(n: Needs, m: Memory, ex: readonly Filter[]): void {
  if (ex.includes('tiers') && m.tier) n.tiers.add(m.tier)
  if (ex.includes('kinds')) {
    if (m.kind === null) n.nullKind = true
    else n.kinds.add(m.kind)
  }
  if (ex.includes('roles')) {
    if (m.role === null) n.nullRole = true
    else n.roles.add(m.role)
  }
  if (ex.includes('after')) n.minCreated = Math.min(n.minCreated, m.createdAt)
  if (ex.includes('before')) n.maxCreated = Math.max(n.maxCreated, m.createdAt)
}

/**
 * The widening as a partial config (what the Tune screen's "Widen to …" merges
 * into the user's overrides): unit back to memory, each list filter extended by
 * the values the judged memories carry, time bounds moved to include them.
 * Null when a list would have to admit a missing kind or role (no list names
 * "none"): then only the tuner's own widened config can lift it.
 */
function widenPatchOf(config: RecallConfig, filters: readonly Filter[], n: Needs): PartialRecallConfig | null {
  if ((filters.includes('kinds') && n.nullKind) || (filters.includes('roles') && n.nullRole)) return null
  const s = config.scope
  const scope: NonNullable<PartialRecallConfig['scope']> = {}
  const union = (a: readonly string[] | undefined, b: Set<string>) => [...new Set([...(a ?? []), ...b])]
  if (filters.includes('tiers')) scope.tiers = union(s.tiers, n.tiers)
  if (filters.includes('kinds')) scope.kinds = union(s.kinds, n.kinds)
  if (filters.includes('roles')) scope.roles = union(s.roles, n.roles)
  if (filters.includes('after')) scope.after = n.minCreated
  if (filters.includes('before')) scope.before = n.maxCreated
  const patch: PartialRecallConfig = {}
  if (filters.includes('unit')) {
    patch.unit = 'memory'
    // a session-replay mode needs a session; ranking memories needs a ranking mode
    if (config.mode === 'session') patch.mode = 'dense'
  }
  if (Object.keys(scope).length) patch.scope = scope
  return patch
}

/** `config` widened: the patch merged, or (when no patch can say it) the blocking list filters removed. */
function widenConfig(config: RecallConfig, filters: readonly Filter[], n: Needs, patch: PartialRecallConfig | null): RecallConfig {
  if (patch) return mergeConfig(config, patch)
  const scope = { ...config.scope }
  if (filters.includes('kinds')) delete scope.kinds
  if (filters.includes('roles')) delete scope.roles
  const rest = widenPatchOf(
    { ...config, scope },
    filters.filter((f) => f !== 'kinds' && f !== 'roles'),
    n,
  )
  return mergeConfig({ ...config, scope }, rest ?? undefined)
}

/** One plain sentence: what reaches, which filter excludes how many, what widening does. */
function describeDiagnosis(d: Omit<ScopeDiagnosis, 'message'>): string {
  if (d.relevant === 0) return 'No judged-relevant memories in the cases: nothing to check the scope against.'
  const head = `The start scope reaches ${d.reachable} of ${d.relevant} judged-relevant memories`
  if (!d.minority) return `${head}.`
  const by = d.excludedBy.map((e) => `${e.value} excludes ${e.excludes}`).join(', ')
  return `${head}: ${by}. Widen to ${d.widenLabel} so the search and the baselines can reach them.`
}

/**
 * Count the judged-relevant (case, memory) pairs the start config can reach
 * and, when they are a minority, which filters exclude them and the widened
 * config. Relevant ids the store does not hold are counted as `missing`, not
 * blamed on a filter. Reads only the judged memories (one batched lookup).
 */
export function diagnoseScope(store: MemorySource, cases: readonly EvalCaseRow[], config: RecallConfig): ScopeDiagnosis {
  const pairs = cases.filter((c) => !c.expectEmpty).flatMap((c) => c.relevant.filter((r) => r.grade > 0).map((r) => r.id))
  const ids = [...new Set(pairs)]
  const memories = ids.length ? store.getMemories(ids) : new Map<string, Memory>()
  const sessionIds = config.unit === 'session' ? new Set(store.getSessions(ids.filter((i) => !memories.has(i))).keys()) : new Set<string>()
  let reachable = 0
  let missing = 0
  const byFilter = new Map<Filter, number>()
  const needs = emptyNeeds()
  for (const id of pairs) {
    const m = memories.get(id)
    if (!m) {
      if (sessionIds.has(id)) reachable++
      else missing++
      continue
    }
    const ex = excludingFilters(m, config)
    if (ex.length === 0) reachable++
    for (const f of ex) byFilter.set(f, (byFilter.get(f) ?? 0) + 1)
    noteNeeds(needs, m, ex)
  }
  const relevant = pairs.length - missing
  const minority = relevant > 0 && reachable < REACH_MINORITY * relevant
  const excludedBy: ScopeExclusion[] = [...byFilter.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([filter, excludes]) => ({ filter, value: describeValue(filter, config), excludes }))
  const filters = excludedBy.map((e) => e.filter)
  const widenPatch = minority ? widenPatchOf(config, filters, needs) : null
  const widened = minority ? widenConfig(config, filters, needs, widenPatch) : null
  const widenLabel = minority ? widenLabelOf(widened!, filters) : null
  const d = { relevant, reachable, missing, minority, excludedBy, widened, widenPatch, widenLabel }
  return { ...d, message: describeDiagnosis(d) }
}

/** "unit=memory, kinds=[semantic, episodic]": what the widened config changes, for the notice and its button. */
function widenLabelOf(to: RecallConfig, filters: readonly Filter[]): string {
  const parts: string[] = []
  const list = (name: 'tiers' | 'kinds' | 'roles') => (to.scope[name] ? `${name}=[${to.scope[name].join(', ')}]` : `${name}: any`)
  if (filters.includes('unit')) parts.push('unit=memory')
  if (filters.includes('tiers')) parts.push(list('tiers'))
  if (filters.includes('kinds')) parts.push(list('kinds'))
  if (filters.includes('roles')) parts.push(list('roles'))
  if (filters.includes('after') || filters.includes('before')) parts.push('a time range that includes them')
  return parts.join(', ')
}
