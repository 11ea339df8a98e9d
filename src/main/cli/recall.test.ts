import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getPreset } from '../../shared/presets'
import type { RecallTrace } from '../../shared/types'
import { sha256File, tmpDir } from '../../../test/helpers/tmp'
import { main } from './index'
import { writeDemoDb } from '../../../test/helpers/demoDb'

let t: ReturnType<typeof tmpDir>
let db: string
const NOW = '2026-10-20T12:00:00Z'

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

beforeAll(() => {
  t = tmpDir()
  db = writeDemoDb(path.join(t.dir, 'demo.db'), { memories: 800 }).path
})
afterAll(() => t.cleanup())

describe('recallscope recall', () => {
  it('--json prints the trace with the docs/internals/design.md shape', async () => {
    const before = sha256File(db)
    const r = await run('recall', '--db', db, '--query', 'deploy to staging', '--agent', 'agent-coder', '--now', NOW, '--json')
    expect(r.code).toBe(0)
    const trace = JSON.parse(r.out) as RecallTrace
    expect(trace.preset).toBe('fieldguide')
    expect(trace.now).toBe(Date.parse(NOW))
    expect(trace.embedder).toEqual({ name: 'hashing', model: 'hashing-256', available: true }) // the demo DB holds hashing vectors
    expect(trace.config.scope.agentId).toBe('agent-coder')
    for (const k of ['query', 'config', 'degraded', 'results', 'dropped', 'context', 'contextTokens']) expect(trace).toHaveProperty(k)
    expect(sha256File(db)).toBe(before)
  })

  it('--set edits any field by dotted path; --now takes ms too', async () => {
    const r = await run(
      'recall',
      '--db',
      db,
      '--query',
      'deploy',
      '--set',
      'topK=2',
      '--set',
      'weights.salience=0',
      '--set',
      'floor=null',
      '--now',
      String(Date.parse(NOW)),
      '--json',
    )
    const trace = JSON.parse(r.out) as RecallTrace
    expect(trace.config.topK).toBe(2)
    expect(trace.config.weights.salience).toBe(0)
    expect(trace.config.floor).toBeNull()
    expect(trace.results).toHaveLength(2)
    expect(trace.now).toBe(Date.parse(NOW))
  })

  it('a partial --config fills missing fields from --preset', async () => {
    const file = path.join(t.dir, 'partial.json')
    fs.writeFileSync(file, JSON.stringify({ topK: 3, scope: { tiers: ['working'] } }))
    const r = await run('recall', '--db', db, '--query', 'refund', '--preset', 'portal-semantic', '--config', file, '--now', NOW, '--json')
    const trace = JSON.parse(r.out) as RecallTrace
    expect(trace.preset).toBe('portal-semantic')
    expect(trace.config).toEqual({
      ...getPreset('portal-semantic').config,
      topK: 3,
      scope: { ...getPreset('portal-semantic').config.scope, tiers: ['working'] },
    })
  })

  it('--query-vector replaces the embedder', async () => {
    const v = JSON.stringify(Array.from({ length: 256 }, (_, i) => (i === 3 ? 1 : 0)))
    const r = await run('recall', '--db', db, '--query', 'x', '--query-vector', v, '--now', NOW, '--json')
    expect(r.code).toBe(0)
    expect((JSON.parse(r.out) as RecallTrace).embedder.name).toBe('vector')
  })

  it('lists presets with a bare --preset, shows one as JSON with a name', async () => {
    const list = await run('recall', '--preset')
    expect(list.code).toBe(0)
    for (const p of ['portal-episodic', 'portal-semantic', 'engram', 'fieldguide', 'neo']) expect(list.out).toContain(p)
    const one = await run('recall', '--preset', 'neo')
    expect(JSON.parse(one.out)).toEqual(getPreset('neo').config)
  })

  it('prints a readable breakdown without --json', async () => {
    const r = await run('recall', '--db', db, '--query', 'deploy to staging', '--now', NOW, '--set', 'floor=0')
    expect(r.code).toBe(0)
    expect(r.out).toMatch(/preset fieldguide · mode dense/)
    expect(r.out).toMatch(/--- context \(fieldguide, \d+ tokens\) ---/)
  })

  it('an empty recall says which gate dropped everything, by how much, and the --set that fixes it', async () => {
    const j = await run('recall', '--db', db, '--query', 'deploy to staging', '--now', NOW, '--set', 'floor=0.99', '--json')
    const t = JSON.parse(j.out) as RecallTrace
    expect(t.results).toEqual([])
    expect(t.dropped.length).toBeGreaterThan(0)
    // Independent: the best composite among the dropped candidates, and how far below 0.99 it is.
    const best = Math.max(...t.dropped.map((d) => d.score))
    expect(t.empty!.gate).toBe('floor')
    expect(t.empty!.best).toBeCloseTo(best, 12)
    const human = await run('recall', '--db', db, '--query', 'deploy to staging', '--now', NOW, '--set', 'floor=0.99')
    expect(human.out).toContain(`why empty: All ${t.dropped.length} candidates were dropped`)
    expect(human.out).toContain(`best score is ${best.toFixed(3)}, ${(0.99 - best).toFixed(3)} below floor 0.990`)
    // The suggested --set really injects what it says.
    const to = Math.floor(best * 100 + 1e-9) / 100
    expect(human.out).toContain(`try: floor → ${to.toFixed(2)} (--set floor=${to})`)
    const fixed = JSON.parse(
      (await run('recall', '--db', db, '--query', 'deploy to staging', '--now', NOW, '--set', `floor=${to}`, '--json')).out,
    ) as RecallTrace
    expect(fixed.results.length).toBe(t.empty!.suggestion!.wouldInject)
    expect(fixed.results.length).toBeGreaterThan(0)
    expect(fixed.empty).toBeNull()
  })

  it('bad input exits 2 with a typed error: unknown preset, bad --set path, missing session for neo, bad --now', async () => {
    for (const args of [
      ['--preset', 'nope'],
      ['--set', 'topK=banana'],
      ['--preset', 'neo'],
      ['--now', 'yesterday-ish'],
      ['--set', 'noequals'],
    ]) {
      const r = await run('recall', '--db', db, '--query', 'q', ...args, '--json')
      expect(r.code).toBe(2)
      expect(JSON.parse(r.out).error.code).toBe('BAD_INPUT')
    }
    expect((await run('recall', '--db', path.join(t.dir, 'missing.db'), '--query', 'q')).code).toBe(2) // issue 10: missing file = bad input
  })
})
