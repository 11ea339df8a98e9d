/**
 * `npm run bench -- --smoke --json FILE`: every bench runs on tiny inputs in a child process, the way a developer
 * runs it. A bench that no longer loads (an import that breaks outside vitest, a moved module) or throws fails
 * here, so benches cannot rot unnoticed again (they did: every bench crashed on main for a whole wave); and every
 * bench must leave records in the results file (docs/internals/performance.md "The results file").
 */
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { listGoals } from '../../bench/goals'
import { BENCHES } from '../../bench/registry'
import { readResults } from '../../bench/results'
import { isBuildFresh } from '../../bench/ui'
import { tmpDir } from '../helpers/tmp'

const ROOT = path.resolve(__dirname, '../..')

describe('npm run bench -- --smoke', () => {
  it('runs every registered bench to the end, none failing', () => {
    const t = tmpDir('recallscope-bench-smoke-')
    try {
      const json = path.join(t.dir, 'results.json')
      const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'bench/index.ts', '--smoke', '--json', json], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, RECALLSCOPE_BENCH_CACHE: t.dir },
        timeout: 280_000,
        maxBuffer: 64 << 20,
      })
      const out = `${r.stdout}\n${r.stderr}`
      expect(r.error, out).toBeUndefined()
      expect(r.status, out).toBe(0)
      expect(r.stdout).toContain('SMOKE MODE')
      // Every bench of the registry started and finished (its closing "(N s; goals: …)" line follows its header).
      const ran = [...r.stdout.matchAll(/^## (\S+) — [^\n]*\n[\s\S]*?^\(\d+\.\d s; goals: [^\n]*\)$/gm)].map((m) => m[1])
      expect(ran).toEqual(BENCHES.map((b) => b.name))
      expect(out).not.toMatch(/FAILED/)

      // The results file: a smoke run of every bench, each with records, or skipped only where it must be (the
      // browser bench without a fresh build: smoke mode does not build).
      const res = readResults(json)
      expect(res.run.smoke).toBe(true)
      expect(res.machine.cores).toBeGreaterThan(0)
      expect(res.benches.map((b) => b.name)).toEqual(BENCHES.map((b) => b.name))
      const skipped = res.benches.filter((b) => b.status !== 'ok').map((b) => `${b.name}: ${b.status} ${b.reason}`)
      expect(skipped).toEqual(isBuildFresh() ? [] : [expect.stringMatching(/^ui: skipped smoke mode without a build/)])
      for (const b of res.benches.filter((x) => x.status === 'ok')) expect(b.figures.length, b.name).toBeGreaterThan(0)
      // Every exactness check holds even on tiny inputs; every goal a bench measures is printed with its word.
      const checks = res.benches.flatMap((b) => b.figures.filter((f) => f.kind === 'check' && f.goal).map((f) => `${b.name}: ${f.name} ${f.status}`))
      expect(checks.filter((c) => !c.endsWith(' met'))).toEqual([])
      const measured = new Set(res.benches.flatMap((b) => b.figures.map((f) => f.goal?.id)))
      const unmeasured = listGoals()
        .filter((g) => !measured.has(g.id))
        .map((g) => g.id)
      // Goals a smoke run cannot reach: the 20,000-point UMAP (smoke lays out 400), the browser bench without a build.
      const unreachable = new Set(['map.umap20k', ...(isBuildFresh() ? [] : ['ui.step'])])
      expect(unmeasured).toEqual(
        listGoals()
          .map((g) => g.id)
          .filter((id) => unreachable.has(id)),
      )
      expect(r.stdout).toMatch(/ (met|MISSED)$/m)
    } finally {
      t.cleanup()
    }
  }, 300_000)
})
