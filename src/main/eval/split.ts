/**
 * Honest train/test splits for tuning. A question about a conversation shares
 * its memories (and often its wording) with every other question about it, so
 * splitting by question leaks: the tuner learns the conversation, not the
 * config. When cases carry a scope field that names a conversation (agentId,
 * as the LoCoMo importer writes), a session or a user, whole groups go to one
 * side; otherwise each case's own train/test field is used. The report says
 * which rule ran. K-fold cuts the same groups into k folds.
 */
import { RecallscopeError } from '../../shared/result'
import type { TuneSplitInfo } from '../../shared/eval'
import type { EvalCaseRow } from '../../shared/eval'

/** Scope fields that name a group, coarsest first, with the word the report uses. */
const GROUP_FIELDS = [
  ['agentId', 'conversation'],
  ['sessionId', 'session'],
  ['userId', 'user'],
  ['tenantId', 'tenant'],
] as const

export type SplitRule = 'auto' | 'group' | 'case'

export interface SplitOptions {
  /** 'auto' (default): by group when cases carry one with ≥ 2 distinct values, else the cases' own field */
  rule?: SplitRule
  /** share of cases (by whole groups) held out. @default 0.3 */
  testFraction?: number
  seed?: number
}

export interface CaseSplit {
  info: TuneSplitInfo
  /** case id → side */
  side: Map<string, 'train' | 'test'>
}

/** FNV-1a of a string mixed with a seed: a stable, seedable order of groups. */
function hash(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/** The scope field cases are grouped by, or null when none has ≥ 2 distinct values over every case. */
export function groupField(
  cases: readonly Pick<EvalCaseRow, 'scope'>[],
): { field: (typeof GROUP_FIELDS)[number][0]; label: (typeof GROUP_FIELDS)[number][1] } | null {
  for (const [field, label] of GROUP_FIELDS) {
    const vals = new Set<string>()
    let all = true
    for (const c of cases) {
      const v = c.scope[field]
      if (typeof v !== 'string' || v === '') {
        all = false
        break
      }
      vals.add(v)
    }
    if (all && vals.size >= 2) return { field, label }
  }
  return null
}

/** Groups in a seeded order (the same seed, the same order on every machine). */
function orderedGroups(cases: readonly Pick<EvalCaseRow, 'id' | 'scope'>[], field: string, seed: number): { name: string; ids: string[] }[] {
  const by = new Map<string, string[]>()
  for (const c of cases) {
    const g = (c.scope as Record<string, string>)[field]
    let l = by.get(g)
    if (!l) by.set(g, (l = []))
    l.push(c.id)
  }
  return [...by.entries()].map(([name, ids]) => ({ name, ids })).sort((a, b) => hash(a.name, seed) - hash(b.name, seed) || (a.name < b.name ? -1 : 1))
}

/**
 * Split cases for one tune: whole groups held out until at least `testFraction`
 * of the cases are (never every group: one always trains).
 */
export function splitCases(cases: readonly Pick<EvalCaseRow, 'id' | 'scope' | 'split'>[], opts: SplitOptions = {}): CaseSplit {
  const rule = opts.rule ?? 'auto'
  const frac = opts.testFraction ?? 0.3
  if (!(frac > 0 && frac < 1)) throw new RecallscopeError('BAD_INPUT', `testFraction must be between 0 and 1 (got ${frac})`)
  const side = new Map<string, 'train' | 'test'>()
  const g = rule === 'case' ? null : groupField(cases)
  if (rule === 'group' && !g)
    throw new RecallscopeError('BAD_INPUT', 'split by group: the cases carry no agentId / sessionId / userId / tenantId with at least two values')
  if (!g) {
    for (const c of cases) side.set(c.id, c.split)
    const test = cases.filter((c) => c.split === 'test').length
    return { side, info: { rule: 'case', by: null, train: cases.length - test, test, trainGroups: [], testGroups: [] } }
  }
  const groups = orderedGroups(cases, g.field, opts.seed ?? 1)
  const want = Math.max(1, Math.round(frac * cases.length))
  let held = 0
  const testGroups: string[] = []
  const trainGroups: string[] = []
  for (let i = 0; i < groups.length; i++) {
    const gr = groups[i]
    const last = i === groups.length - 1
    if (held < want && !(last && trainGroups.length === 0)) {
      testGroups.push(gr.name)
      held += gr.ids.length
      for (const id of gr.ids) side.set(id, 'test')
    } else {
      trainGroups.push(gr.name)
      for (const id of gr.ids) side.set(id, 'train')
    }
  }
  return {
    side,
    info: {
      rule: 'group',
      by: `${g.label} (scope.${g.field})`,
      train: cases.length - held,
      test: held,
      trainGroups: trainGroups.sort(),
      testGroups: testGroups.sort(),
    },
  }
}

/** K folds of whole groups (or of cases, when they carry no group), balanced by case count. */
export function kFolds(
  cases: readonly Pick<EvalCaseRow, 'id' | 'scope'>[],
  k: number,
  seed = 1,
): { by: string | null; folds: { groups: string[]; ids: Set<string> }[] } {
  if (!Number.isInteger(k) || k < 2) throw new RecallscopeError('BAD_INPUT', `folds must be an integer ≥ 2 (got ${k})`)
  const g = groupField(cases)
  const groups = g
    ? orderedGroups(cases, g.field, seed)
    : cases.map((c) => ({ name: c.id, ids: [c.id] })).sort((a, b) => hash(a.name, seed) - hash(b.name, seed))
  if (groups.length < k) throw new RecallscopeError('BAD_INPUT', `${k} folds need at least ${k} ${g ? `${g.label}s` : 'cases'} (there are ${groups.length})`)
  const folds = Array.from({ length: k }, () => ({ groups: [] as string[], ids: new Set<string>() }))
  // Largest groups first, each to the lightest fold: folds of similar size.
  for (const gr of [...groups].sort((a, b) => b.ids.length - a.ids.length)) {
    const f = folds.reduce((a, b) => (b.ids.size < a.ids.size ? b : a))
    f.groups.push(gr.name)
    for (const id of gr.ids) f.ids.add(id)
  }
  return { by: g ? `${g.label} (scope.${g.field})` : null, folds }
}
