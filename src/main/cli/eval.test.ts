import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EvalJson, TuneReport } from '../../shared/eval'
import { validateConfig } from '../../shared/presets'
import { sha256File, tmpDir } from '../../../test/helpers/tmp'
import { demoWithCases, FIXTURE_NOW } from '../../../test/helpers/evalFixture'
import { openSource } from '../store/registry'

import { main } from './index'

let t: ReturnType<typeof tmpDir>
let db: string

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

beforeAll(() => {
  t = tmpDir()
  const f = demoWithCases(t.dir, { memories: 800, cases: 40 })
  db = f.db
  f.store.close()
})
afterAll(() => t.cleanup())

describe('recallscope eval', () => {
  it('--json prints the docs/internals/design.md shape with k substituted into the keys', async () => {
    const before = sha256File(db)
    const r = await run('eval', '--db', db, '--k', '5', '--now', String(FIXTURE_NOW), '--json')
    expect(r.code).toBe(0)
    const o = JSON.parse(r.out) as EvalJson
    expect(o.k).toBe(5)
    expect(o.cases).toBe(40)
    expect(o.config.weights).toEqual({ similarity: 0.6, lexical: 0, recency: 0.25, salience: 0.15 }) // fieldguide by default
    for (const key of ['recall@5', 'precision@5', 'ndcg@5', 'mrr', 'hit@5', 'abstention']) expect(o.metrics).toHaveProperty(key)
    expect(o.perCase).toHaveLength(40)
    expect(Object.keys(o.perCase[0]).sort()).toEqual(['id', 'metrics', 'retrieved'])
    expect(sha256File(db)).toBe(before)
  })

  it('k above the config topK is said (K_ABOVE_TOPK) in --json and the text report; no warning at k = topK', async () => {
    // fieldguide injects at most 5 (its topK): recall@10 can only count those 5.
    const at10 = JSON.parse((await run('eval', '--db', db, '--k', '10', '--now', String(FIXTURE_NOW), '--json')).out) as EvalJson
    expect(at10.config.topK).toBe(5)
    expect(at10.warnings).toEqual([expect.objectContaining({ code: 'K_ABOVE_TOPK', k: 10, topK: 5 })])
    // the cap is real: no case injected more than topK
    expect(Math.max(...at10.perCase.map((c) => c.retrieved.length))).toBeLessThanOrEqual(5)
    const text = await run('eval', '--db', db, '--k', '10', '--now', String(FIXTURE_NOW))
    expect(text.out).toMatch(/WARNING K_ABOVE_TOPK: k 10 is above the config's topK 5/)
    const at5 = JSON.parse((await run('eval', '--db', db, '--k', '5', '--now', String(FIXTURE_NOW), '--json')).out) as EvalJson
    expect(at5.warnings).toEqual([])
    const raised = JSON.parse((await run('eval', '--db', db, '--k', '10', '--set', 'topK=10', '--now', String(FIXTURE_NOW), '--json')).out) as EvalJson
    expect(raised.warnings).toEqual([])
  })

  it('--fail-under exits 3 when a gate fails and 0 when it passes, at the gate’s own k', async () => {
    const base = JSON.parse((await run('eval', '--db', db, '--k', '10', '--json')).out) as EvalJson
    const v = base.metrics['ndcg@10']!
    expect(v).toBeGreaterThan(0)
    const fail = await run('eval', '--db', db, '--k', '10', '--fail-under', `ndcg@10=${v + 0.001}`)
    expect(fail.code).toBe(3)
    expect(fail.err).toMatch(/FAIL ndcg@10/)
    expect((await run('eval', '--db', db, '--k', '10', '--fail-under', `ndcg@10=${v - 0.001}`)).code).toBe(0)
    // A gate at another k than --k is computed from the stored lists at that k.
    const at3 = JSON.parse((await run('eval', '--db', db, '--k', '3', '--json')).out) as EvalJson
    const g = JSON.parse((await run('eval', '--db', db, '--k', '10', '--fail-under', `recall@3=${at3.metrics['recall@3']! + 0.001}`, '--json')).out) as EvalJson
    expect(g.gates![0]).toMatchObject({ metric: 'recall@3', passed: false })
    expect(g.gates![0].value).toBeCloseTo(at3.metrics['recall@3']!, 12)
  })

  it('bad gates and splits are usage errors (exit 2)', async () => {
    for (const args of [
      ['--fail-under', 'ndcg@10'],
      ['--fail-under', 'tokens=3'],
      ['--fail-under', 'wat@3=0.1'],
      ['--fail-under', 'mrr=abc'],
      ['--split', 'dev'],
    ]) {
      const r = await run('eval', '--db', db, ...args, '--json')
      expect(r.code, args.join(' ')).toBe(2)
      expect(JSON.parse(r.out).error.code).toBe('BAD_INPUT')
    }
  })

  it('--save stores a run in the workspace; --split evaluates one half', async () => {
    const r = await run('eval', '--db', db, '--split', 'test', '--save', '--name', 'ci', '--json')
    const o = JSON.parse(r.out) as EvalJson
    expect(o.split).toBe('test')
    expect(o.cases).toBeLessThan(40)
    const s = openSource({ path: db })
    try {
      expect(s.workspace.listRuns().find((x) => x.id === o.runId)).toMatchObject({ name: 'ci', split: 'test', source: 'cli' })
    } finally {
      s.close()
    }
  })
})

describe('recallscope tune', () => {
  it('from a session-unit preset it says unit=session hides the judged memories and searches the widened scope (--keep-scope: as given)', async () => {
    const text = await run('tune', '--db', db, '--preset', 'portal-episodic', '--budget', '30', '--no-save', '--now', String(FIXTURE_NOW))
    expect(text.code).toBe(0)
    expect(text.out).toMatch(/scope: The start scope reaches 0 of \d+ judged-relevant memories: unit=session excludes \d+\. Widen to unit=memory/)
    expect(text.out).toMatch(/searched on the widened scope \(unit=memory\)/)
    const rep = JSON.parse(
      (await run('tune', '--db', db, '--preset', 'portal-episodic', '--budget', '30', '--no-save', '--now', String(FIXTURE_NOW), '--json')).out,
    ) as TuneReport
    expect(rep.scope).toMatchObject({ reachable: 0, minority: true, applied: true })
    expect(rep.base.config.unit).toBe('memory')
    // the start baseline keeps the preset's unit; the BM25 baseline reaches the memories
    expect(rep.baselines.find((b) => b.name === 'start')!.config.unit).toBe('session')
    expect(rep.baselines.find((b) => b.name === 'lexical-bm25')!.config.unit).toBe('memory')
    const kept = JSON.parse(
      (await run('tune', '--db', db, '--preset', 'portal-episodic', '--budget', '30', '--no-save', '--keep-scope', '--now', String(FIXTURE_NOW), '--json')).out,
    ) as TuneReport
    expect(kept.scope).toMatchObject({ minority: true, applied: false })
    expect(kept.base.config.unit).toBe('session')
    expect(kept.baselines.find((b) => b.name === 'lexical-bm25')!.config.unit).toBe('memory')
  })

  it('--json reports train and test; --out writes a config an agent can load; --force guards overwrite', async () => {
    const out = path.join(t.dir, 'best.json')
    const r = await run('tune', '--db', db, '--metric', 'ndcg@5', '--budget', '60', '--out', out, '--json')
    expect(r.code).toBe(0)
    const rep = JSON.parse(r.out) as TuneReport
    expect(rep.trials).toBe(60)
    expect(rep.best.train).toBeGreaterThanOrEqual(rep.base.train!)
    expect(rep.best.test).not.toBeNull()
    const written = JSON.parse(fs.readFileSync(out, 'utf8'))
    // --out writes the recommended config (the tuned one unless a baseline did at least as well held out).
    expect(written).toEqual(rep.recommended.config)
    expect(validateConfig(written)).toEqual(written)
    // The baseline table is in the JSON: start, five presets, lexical-only, dense-only.
    expect(rep.baselines.map((b) => b.kind)).toEqual(['start', 'preset', 'preset', 'preset', 'preset', 'preset', 'lexical', 'dense'])
    // --json prints the report as saved in the workspace (reopenable by id, same JSON).
    const saved = (rep as TuneReport & { id: string }).id
    expect(saved).toMatch(/^tune-/)
    const ws = openSource({ path: db })
    try {
      expect(JSON.parse(JSON.stringify(ws.workspace.getTuneReport(saved)))).toEqual(rep)
      expect(ws.workspace.listTuneReports().map((x) => x.id)).toContain(saved)
    } finally {
      ws.close()
    }
    expect((await run('tune', '--db', db, '--budget', '5', '--out', out)).code).toBe(2)
    const human = await run('tune', '--db', db, '--budget', '20', '--fix', 'fusion,floor,mode', '--out', out, '--force', '--no-save')
    expect(human.code).toBe(0)
    expect(human.out).toMatch(/tuned config +\S+ +\S+/)
    expect(human.out).toMatch(/held fixed: .*fusion.*floor/)
    expect(human.out).toMatch(/Lexical only \(BM25\) +\S+ +\S+/)
    expect((await run('tune', '--db', db, '--fix', 'everything')).code).toBe(2)
    expect((await run('tune', '--db', db, '--split', 'sideways')).code).toBe(2)
  })

  it('--folds K cross-validates the tune over whole conversations and reports each fold', async () => {
    const r = await run('tune', '--db', db, '--budget', '30', '--folds', '2', '--json', '--no-save')
    expect(r.code).toBe(0)
    const rep = JSON.parse(r.out) as TuneReport
    expect(rep.split.rule).toBe('group')
    const f = rep.folds!
    expect(f.perFold).toHaveLength(2)
    // Every case held out exactly once; no conversation in both folds.
    expect(f.perFold[0].cases + f.perFold[1].cases).toBe(rep.split.train + rep.split.test)
    expect(f.perFold[0].groups.filter((g) => f.perFold[1].groups.includes(g))).toEqual([])
    const mean = (xs: (number | null)[]) => xs.reduce<number>((a, b) => a + (b ?? 0), 0) / xs.length
    expect(f.meanTuned).toBeCloseTo(mean(f.perFold.map((x) => x.tuned)), 12)
    expect(f.meanBestBaseline).toBeCloseTo(mean(f.perFold.map((x) => x.bestBaseline.value)), 12)
  })
})
