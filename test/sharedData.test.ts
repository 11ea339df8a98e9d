/**
 * The one rule for tests that need ../shared/data (test/helpers/sharedData.ts): missing on CI is a
 * failure, missing elsewhere a skip with a message naming the path, present is the path.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { onCi, requireSharedData, SHARED_ROOT } from './helpers/sharedData'

const MISSING = 'data/not-there/never.json'

describe('requireSharedData', () => {
  it('throws on CI when the file is missing, naming the path and the test', () => {
    expect(() => requireSharedData(MISSING, 'some test', { CI: 'true' })).toThrow(`some test: ${path.join(SHARED_ROOT, MISSING)} is missing and CI is set`)
    expect(() => requireSharedData(MISSING, 'some test', { CI: '1' })).toThrow(/CI is set/)
  })

  it('warns and returns null off CI (CI unset, empty, 0 or false)', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      for (const env of [{}, { CI: '' }, { CI: '0' }, { CI: 'false' }]) expect(requireSharedData(MISSING, 'some test', env)).toBeNull()
      expect(warn).toHaveBeenCalledTimes(4)
      expect(String(warn.mock.calls[0][0])).toContain(`some test: SKIPPED, ${path.join(SHARED_ROOT, MISSING)} is missing`)
    } finally {
      warn.mockRestore()
    }
  })

  it('returns the path of a file that exists, on CI or not', () => {
    // package.json of this repo, reached through ../shared's parent, exists wherever the repo is checked out
    // next to a shared folder or not: build the relative path from SHARED_ROOT to it.
    const rel = path.relative(SHARED_ROOT, path.resolve(__dirname, '../package.json'))
    expect(fs.existsSync(path.join(SHARED_ROOT, rel))).toBe(true)
    expect(requireSharedData(rel, 'some test', { CI: 'true' })).toBe(path.join(SHARED_ROOT, rel))
    expect(onCi({ CI: 'true' })).toBe(true)
    expect(onCi({})).toBe(false)
  })
})
