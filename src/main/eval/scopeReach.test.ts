/**
 * The scope check before a tune, on a generated demo DB with cases judged by
 * code: counts come from the test's own reading of the judged rows, not from
 * the module. Widening must make every judged memory reachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mergeConfig } from '../../shared/config'
import type { EvalCaseRow } from '../../shared/eval'
import { getPreset } from '../../shared/presets'
import type { Memory, RecallConfig } from '../../shared/types'
import { demoWithCases } from '../../../test/helpers/evalFixture'
import { tmpDir } from '../../../test/helpers/tmp'
import type { SqliteSource } from '../store/sqlite/source'
import { diagnoseScope } from './scopeReach'

describe('diagnoseScope', () => {
  let t: ReturnType<typeof tmpDir>
  let store: SqliteSource
  let cases: EvalCaseRow[]
  let judged: Memory[]

  beforeAll(() => {
    t = tmpDir()
    store = demoWithCases(t.dir, { memories: 600, cases: 40 }).store
    cases = store.workspace.loadCases()
    const ids = cases.filter((c) => !c.expectEmpty).flatMap((c) => c.relevant.filter((r) => r.grade > 0).map((r) => r.id))
    const rows = store.getMemories([...new Set(ids)])
    judged = ids.map((id) => rows.get(id)!).filter(Boolean)
  })
  afterAll(() => {
    store?.close()
    t?.cleanup()
  })

  const base = getPreset('fieldguide').config
  const reachAfterWiden = (cfg: RecallConfig) => {
    const d = diagnoseScope(store, cases, cfg)
    expect(d.widened).not.toBeNull()
    return diagnoseScope(store, cases, d.widened!)
  }

  it('the default scope reaches the judged memories and suggests nothing', () => {
    const d = diagnoseScope(store, cases, base)
    const expected = judged.filter((m) => m.tier === 'working' || m.tier === 'long_term').length
    expect(judged.length).toBeGreaterThan(20)
    expect(d.relevant).toBe(judged.length)
    expect(d.reachable).toBe(expected)
    expect(d.minority).toBe(false)
    expect(d.widened).toBeNull()
    expect(d.widenPatch).toBeNull()
  })

  it('a session unit reaches no memory-level judgment: names unit=session and widens to unit=memory', () => {
    const d = diagnoseScope(store, cases, getPreset('portal-episodic').config)
    expect(d).toMatchObject({ reachable: 0, minority: true, relevant: judged.length })
    expect(d.excludedBy[0]).toEqual({ filter: 'unit', value: 'unit=session', excludes: judged.length })
    expect(d.widenPatch).toEqual({ unit: 'memory' })
    expect(d.message).toMatch(/reaches 0 of \d+ judged-relevant memories: unit=session excludes \d+\. Widen to unit=memory/)
    expect(reachAfterWiden(getPreset('portal-episodic').config).minority).toBe(false)
  })

  it('a kinds filter that leaves the judged kinds out: counts what it excludes and lists the kinds to add', () => {
    const kinds = new Map<string, number>()
    for (const m of judged) kinds.set(m.kind ?? '', (kinds.get(m.kind ?? '') ?? 0) + 1)
    // the rarest judged kind alone: a minority by construction
    const [rare, rareCount] = [...kinds.entries()].filter(([k]) => k).sort((a, b) => a[1] - b[1])[0]
    expect(rareCount).toBeLessThan(judged.length / 2)
    const cfg = mergeConfig(base, { scope: { kinds: [rare] } })
    const d = diagnoseScope(store, cases, cfg)
    const tiersOk = (m: Memory) => m.tier === 'working' || m.tier === 'long_term'
    expect(d.reachable).toBe(judged.filter((m) => m.kind === rare && tiersOk(m)).length)
    expect(d.excludedBy.find((e) => e.filter === 'kinds')).toEqual({
      filter: 'kinds',
      value: `kinds=[${rare}]`,
      excludes: judged.filter((m) => m.kind !== rare).length,
    })
    expect(d.widenPatch?.scope?.kinds?.[0]).toBe(rare)
    expect(new Set(d.widenPatch!.scope!.kinds)).toEqual(new Set<string>([rare, ...judged.filter((m) => m.kind !== rare && m.kind).map((m) => m.kind!)]))
    expect(reachAfterWiden(cfg).minority).toBe(false)
  })

  it('relevant ids the store does not hold are counted as missing, not blamed on a filter', () => {
    const ghost = cases.map((c) => ({ ...c, relevant: [...c.relevant, { id: 'no-such-memory', grade: 3 }] }))
    const d = diagnoseScope(store, ghost, base)
    expect(d.missing).toBe(ghost.filter((c) => !c.expectEmpty).length)
    expect(d.relevant).toBe(judged.length)
  })
})
