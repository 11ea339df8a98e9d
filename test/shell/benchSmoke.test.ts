/**
 * `npm run bench -- --smoke`: every bench runs on tiny inputs in a child process, the way a developer runs
 * it. A bench that no longer loads (an import that breaks outside vitest, a moved module) or throws fails
 * here, so benches cannot rot unnoticed again (they did: every bench crashed on main for a whole wave).
 */
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BENCHES } from '../../bench/registry'
import { tmpDir } from '../helpers/tmp'

const ROOT = path.resolve(__dirname, '../..')

describe('npm run bench -- --smoke', () => {
  it('runs every registered bench to the end, none failing', () => {
    const t = tmpDir('recallscope-bench-smoke-')
    try {
      const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'bench/index.ts', '--smoke'], {
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
      // Every bench of the registry started and finished (its closing "(N s)" line follows its header).
      const ran = [...r.stdout.matchAll(/^## (\S+) — [^\n]*\n[\s\S]*?^\(\d+\.\d s\)$/gm)].map((m) => m[1])
      expect(ran).toEqual(BENCHES.map((b) => b.name))
      expect(out).not.toMatch(/FAILED/)
    } finally {
      t.cleanup()
    }
  }, 300_000)
})
