import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { withoutModuleHooks, workerScript } from './workerScript'

describe('workerScript', () => {
  it('drops module hooks (both spellings) and keeps every other flag', () => {
    const argv = [
      '--require',
      '/x/preflight.cjs',
      '--max-old-space-size=512',
      '--import',
      'file:///x/loader.mjs',
      '-r',
      'a',
      '--loader=b',
      '--experimental-loader',
      'c',
      '--stack-size=900',
      '--enable-source-maps',
    ]
    expect(withoutModuleHooks(argv)).toEqual(['--max-old-space-size=512', '--stack-size=900', '--enable-source-maps'])
    expect(withoutModuleHooks([])).toEqual([])
  })

  it('starts a built script without the module hooks, a source one with the process flags', () => {
    // Inside the repo (git-ignored .cache): a source script finds tsx from where it lies.
    fs.mkdirSync(path.join(__dirname, '../../.cache'), { recursive: true })
    const dir = fs.mkdtempSync(path.join(__dirname, '../../.cache/workerScript-'))
    try {
      fs.writeFileSync(path.join(dir, 'w.js'), '')
      const built = workerScript('w', dir, 'test worker')
      expect(built).toEqual({ code: path.join(dir, 'w.js'), eval: false, execArgv: withoutModuleHooks(process.execArgv) })
      fs.rmSync(path.join(dir, 'w.js'))
      fs.writeFileSync(path.join(dir, 'w.ts'), '')
      const source = workerScript('w', dir, 'test worker')
      expect(source.eval).toBe(true)
      expect(source.execArgv).toBeUndefined()
      fs.rmSync(path.join(dir, 'w.ts'))
      expect(() => workerScript('w', dir, 'test worker')).toThrow(/test worker script is missing/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
