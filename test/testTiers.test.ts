/**
 * Every test file in the repository runs in `npm test`: each `*.test.ts(x)` belongs to exactly one
 * vitest project (docs/internals/testing.md). A folder no project's `include` names is never run, and
 * nothing says so: test/trust3/ and test/events/ each went unrun that way after the split into tiers.
 * The list of files is git's, the files vitest would run are `vitest list`'s own.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { tmpDir } from './helpers/tmp'

const ROOT = path.resolve(__dirname, '..')

describe('test tiers', () => {
  it('every test file in the repository is in exactly one vitest project', () => {
    const t = tmpDir()
    try {
      const out = path.join(t.dir, 'list.json')
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/vitest/vitest.mjs'), 'list', '--filesOnly', `--json=${out}`], {
        cwd: ROOT,
        stdio: 'ignore',
        env: { ...process.env, VITEST: undefined, VITEST_MODE: undefined, VITEST_POOL_ID: undefined, VITEST_WORKER_ID: undefined },
      })
      const listed = (JSON.parse(fs.readFileSync(out, 'utf8')) as { file: string; projectName: string }[]).map((f) => path.relative(ROOT, f.file))
      const inRepo = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.test.ts', '*.test.tsx'], { cwd: ROOT, encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
      const counts = new Map<string, number>()
      for (const f of listed) counts.set(f, (counts.get(f) ?? 0) + 1)
      expect(
        inRepo.filter((f) => !counts.has(f)),
        'test files no vitest project runs',
      ).toEqual([])
      expect(
        [...counts].filter(([, n]) => n > 1).map(([f]) => f),
        'test files run by two projects',
      ).toEqual([])
    } finally {
      t.cleanup()
    }
  })
})
