import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JobProgress } from '../../../shared/api'
import type { CasesPage, EvalRun, EvalRunSummary, RunComparison, ScopeDiagnosis, TuneReport } from '../../../shared/eval'
import { sha256File, tmpDir } from '../../../../test/helpers/tmp'
import { demoWithCases, FIXTURE_NOW } from '../../../../test/helpers/evalFixture'
import { App } from '../app'
import type { Dispatch } from '../register'
import { openTestApp } from '../../../../test/helpers/testApp'

let t: ReturnType<typeof tmpDir>
let app: App
let call: Dispatch
let db: string

async function ok<T>(channel: string, input: unknown): Promise<T> {
  const r = await call(channel, input)
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`)
  return r.data as T
}

async function waitJob(jobId: string): Promise<JobProgress> {
  for (let i = 0; i < 600; i++) {
    const p = await ok<JobProgress>('jobs.get', { jobId })
    if (p.state !== 'running') return p
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error('job did not finish')
}

beforeAll(() => {
  t = tmpDir()
  const f = demoWithCases(t.dir, { memories: 800, cases: 40 })
  db = f.db
  f.store.close()
  ;({ app, call } = openTestApp(db, path.join(t.dir, 'data')))
})
afterAll(() => {
  app.close()
  t.cleanup()
})

describe('eval channels', () => {
  it('eval.run is a job with progress; its result is the saved run; runs.get / compare read it back', async () => {
    const before = sha256File(db)
    const events: JobProgress[] = []
    const off = app.jobs.onProgress((p) => events.push(p))
    const start = await ok<JobProgress>('eval.run', { preset: 'fieldguide', k: 5, now: FIXTURE_NOW, name: 'first' })
    expect(start.state).toBe('running')
    const done = await waitJob(start.jobId)
    off()
    expect(done.state).toBe('done')
    const summary = done.result as EvalRunSummary
    expect(summary).toMatchObject({ name: 'first', k: 5, source: 'ui', counts: { cases: 40 } })
    expect(events.some((e) => e.jobId === start.jobId && e.state === 'done')).toBe(true)
    const second = (await waitJob((await ok<JobProgress>('eval.run', { preset: 'fieldguide', config: { floor: 0.5 }, k: 5, now: FIXTURE_NOW })).jobId))
      .result as EvalRunSummary
    const runs = await ok<EvalRunSummary[]>('runs.list', {})
    expect(runs.map((r) => r.id)).toEqual([second.id, summary.id])
    const full = await ok<EvalRun>('runs.get', { id: summary.id })
    expect(full.perCase).toHaveLength(40)
    const cmp = await ok<RunComparison>('runs.compare', { ids: [summary.id, second.id], metric: 'recall@5' })
    expect(cmp.vsBaseline[0].cases).toBeGreaterThan(0)
    // A higher floor can only drop memories: recall never wins.
    expect(cmp.vsBaseline[0].wins).toBe(0)
    expect(sha256File(db)).toBe(before)
  })

  it('eval.scope says the demo cases are reachable from the default scope, and names unit=session for portal-episodic', async () => {
    const ok1 = await ok<ScopeDiagnosis>('eval.scope', {})
    expect(ok1.minority).toBe(false)
    expect(ok1.relevant).toBeGreaterThan(0)
    const ep = await ok<ScopeDiagnosis>('eval.scope', { preset: 'portal-episodic' })
    expect(ep).toMatchObject({ reachable: 0, minority: true, widenPatch: { unit: 'memory' } })
    expect(ep.excludedBy.map((e) => e.value)).toEqual(['unit=session'])
    const bad = await call('eval.scope', { preset: 'no-such-preset' })
    expect(!bad.ok && bad.error.code).toBe('BAD_INPUT')
  })

  it('eval.tune reports train vs test; jobs.cancel stops a long one with the best so far', async () => {
    const done = await waitJob((await ok<JobProgress>('eval.tune', { metric: 'ndcg@5', trials: 80, now: FIXTURE_NOW })).jobId)
    expect(done.state).toBe('done')
    const rep = done.result as TuneReport
    expect(rep.trials).toBe(80)
    expect(rep.split.test).toBeGreaterThan(0)
    // Saved in the workspace: listed, reopened whole, deleted.
    const saved = rep as TuneReport & { id: string }
    const list = await ok<{ id: string; metric: string; recommended: string }[]>('tune.list', {})
    expect(list.map((x) => x.id)).toEqual([saved.id])
    expect(list[0]).toMatchObject({ metric: 'ndcg@5', recommended: rep.recommended.name })
    expect(await ok('tune.get', { id: saved.id })).toEqual(JSON.parse(JSON.stringify(rep)))
    expect(await ok('tune.delete', { ids: [saved.id] })).toEqual({ deleted: 1 })
    const gone = await call('tune.get', { id: saved.id })
    expect(!gone.ok && gone.error.code).toBe('NOT_FOUND')
    const long = await ok<JobProgress>('eval.tune', { metric: 'mrr', trials: 100_000, now: FIXTURE_NOW })
    await new Promise((r) => setTimeout(r, 150))
    expect(await ok('jobs.cancel', { jobId: long.jobId })).toEqual({ cancelled: true })
    const end = await waitJob(long.jobId)
    expect(end.state).toBe('cancelled')
    expect((await ok<JobProgress[]>('jobs.list', {})).every((j) => !('result' in j))).toBe(true)
    expect(await ok('jobs.cancel', { jobId: long.jobId })).toEqual({ cancelled: false })
    const missing = await call('jobs.get', { jobId: 'job-nope' })
    expect(!missing.ok && missing.error.code).toBe('NOT_FOUND')
  })

  it('cases: save, list, import (text and path), export to a path with a conflict guard', async () => {
    const saved = await ok<{ id: string }>('cases.save', { case: { query: 'hello there', relevant: [{ id: 'x', grade: 2 }] } })
    const page = await ok<CasesPage>('cases.list', { search: 'hello there' })
    expect(page.rows.map((r) => r.id)).toEqual([saved.id])
    const jsonl = `${JSON.stringify({ id: 'imp-1', query: 'imported one' })}\n`
    expect(await ok('cases.import', { format: 'jsonl', text: jsonl })).toMatchObject({ added: 1 })
    const file = path.join(t.dir, 'cases.jsonl')
    fs.writeFileSync(file, jsonl)
    const ex = path.join(t.dir, 'export.jsonl')
    // By path only for files the user picked (native dialog / command line), issue 10.
    app.grants.grant(file, 'file dialog', 'read')
    app.grants.grant(ex, 'file dialog', 'write')
    expect(await ok('cases.import', { format: 'jsonl', path: file })).toMatchObject({ updated: 1 })
    const e1 = await ok<{ count: number; path: string }>('cases.export', { path: ex })
    expect(e1.count).toBe(42)
    expect(fs.readFileSync(ex, 'utf8').trim().split('\n')).toHaveLength(42)
    const again = await call('cases.export', { path: ex })
    expect(!again.ok && again.error.code).toBe('CONFLICT')
    expect(await ok('cases.delete', { ids: [saved.id, 'imp-1'] })).toEqual({ deleted: 2 })
  })

  it('bad input is a typed error, never a crash', async () => {
    for (const [ch, input] of [
      ['cases.save', { case: { query: '' } }],
      ['cases.save', { case: { query: 'q', relevant: [{ id: 'a', grade: 0 }] } }],
      ['cases.import', { format: 'jsonl' }],
      ['cases.import', { format: 'csv', text: '' }],
      ['eval.run', { k: 0 }],
      ['eval.run', { preset: 'nope' }],
      ['eval.tune', { trials: -1 }],
      ['runs.compare', { ids: ['only-one'] }],
    ] as const) {
      const r = await call(ch, input)
      expect(r.ok, `${ch} ${JSON.stringify(input)}`).toBe(false)
      if (!r.ok) expect(r.error.code).toBe('BAD_INPUT')
    }
    const r = await call('runs.get', { id: 'nope' })
    expect(!r.ok && r.error.code).toBe('NOT_FOUND')
    // A tune with an unknown metric fails as a job with BAD_INPUT.
    const j = await waitJob((await ok<JobProgress>('eval.tune', { metric: 'bogus@3', trials: 5, now: FIXTURE_NOW })).jobId)
    expect(j.state).toBe('failed')
    expect(j.error?.code).toBe('BAD_INPUT')
  })
})
