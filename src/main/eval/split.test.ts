import { describe, expect, it } from 'vitest'
import { groupField, kFolds, splitCases } from './split'

// 5 conversations of 10, 20, 30, 40, 50 cases (150 in all); each case also carries its own split field.
const cases = [10, 20, 30, 40, 50].flatMap((n, g) =>
  Array.from({ length: n }, (_, i) => ({
    id: `c${g}-${i}`,
    scope: { agentId: `conv-${g}`, sessionId: `s-${g}-${i % 3}` },
    split: i % 2 ? ('test' as const) : ('train' as const),
  })),
)

describe('honest splits', () => {
  it('groups by conversation (agentId) before session, and holds out whole conversations, ≥ 30 % of the cases', () => {
    expect(groupField(cases)).toEqual({ field: 'agentId', label: 'conversation' })
    const s = splitCases(cases)
    expect(s.info.rule).toBe('group')
    expect(s.info.by).toBe('conversation (scope.agentId)')
    // No conversation on both sides.
    for (const g of [0, 1, 2, 3, 4]) expect(new Set(cases.filter((c) => c.scope.agentId === `conv-${g}`).map((c) => s.side.get(c.id))).size).toBe(1)
    const held = cases.filter((c) => s.side.get(c.id) === 'test').length
    expect(held).toBe(s.info.test)
    expect(held).toBeGreaterThanOrEqual(Math.round(0.3 * 150))
    expect(s.info.train + s.info.test).toBe(150)
    expect(s.info.trainGroups.length).toBeGreaterThan(0)
    // Deterministic for a seed.
    expect(splitCases(cases).info).toEqual(s.info)
  })

  it("falls back to each case's own field when nothing groups the cases, and says so", () => {
    const flat = cases.map((c) => ({ ...c, scope: {} }))
    const s = splitCases(flat)
    expect(s.info.rule).toBe('case')
    expect(s.info.test).toBe(flat.filter((c) => c.split === 'test').length)
    expect(() => splitCases(flat, { rule: 'group' })).toThrow(/no agentId/)
  })

  it('k folds cover every case once, whole conversations, balanced by size', () => {
    const f = kFolds(cases, 2)
    const all = f.folds.flatMap((x) => [...x.ids])
    expect(all.sort()).toEqual(cases.map((c) => c.id).sort())
    // Largest-first to the lightest fold: {50, 20, 10} and {40, 30} → 80 / 70.
    expect(f.folds.map((x) => x.ids.size).sort()).toEqual([70, 80])
    expect(() => kFolds(cases, 6)).toThrow(/6 folds need at least 6 conversations/)
  })
})
