/**
 * The installer config (electron-builder.yml, `npm run dist`) checked without network or an Electron
 * binary: electron-builder's own loader and schema accept it, it names the four installer formats, what
 * it packs is what the build writes, and better-sqlite3 is where electron-builder's rebuild finds it.
 * Also: package.json's `engines` states what the dependencies really need (no EBADENGINE on that Node).
 */
import fs from 'node:fs'
import path from 'node:path'
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config'
import type { Configuration } from 'app-builder-lib'
import semver from 'semver'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(__dirname, '../..')
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  main: string
  engines: { node: string }
  scripts: Record<string, string>
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}
/** What validateConfiguration logs to when it is on; off here. */
const quietLogger = { isEnabled: false, add: () => undefined } as unknown as Parameters<typeof validateConfiguration>[1]

/** The lowest version a ">=x.y.z" / ">= x.y.z" range allows, as [major, minor, patch]. */
function lowerBound(range: string): number[] {
  const m = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(range.trim())
  if (!m) throw new Error(`not a plain lower bound: ${range}`)
  return m.slice(1).map(Number)
}
const atLeast = (a: number[], b: number[]) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

describe('electron-builder config (npm run dist)', () => {
  it('loads through electron-builder and passes its schema; a broken copy does not', async () => {
    const config = await getConfig(ROOT, null, null)
    await expect(validateConfiguration(config, quietLogger)).resolves.toBeUndefined()
    // The validator is live: an unknown key in a platform block is refused.
    const broken = { ...config, linux: { ...config.linux, notAnOption: true } } as Configuration
    await expect(validateConfiguration(broken, quietLogger)).rejects.toThrow(/Invalid configuration object[\s\S]*configuration\.linux/)
  })

  it('builds AppImage + deb, dmg and nsis, publishes nothing', async () => {
    const c = await getConfig(ROOT, null, null)
    const targets = (t: unknown) => (Array.isArray(t) ? t : [t]).map((x) => (typeof x === 'string' ? x : (x as { target: string }).target))
    expect(targets(c.linux?.target).sort()).toEqual(['AppImage', 'deb'])
    expect(targets(c.mac?.target)).toEqual(['dmg'])
    expect(targets(c.win?.target)).toEqual(['nsis'])
    expect(c.publish).toBeNull()
    expect(pkg.scripts.dist).toBe('node scripts/dist.cjs')
    // It builds, runs electron-builder without publishing, and puts the Node-ABI addon back afterwards.
    const dist = fs.readFileSync(path.join(ROOT, 'scripts/dist.cjs'), 'utf8')
    expect(dist).toContain("run('npm', ['run', 'build'])")
    expect(dist).toContain("'--publish', 'never'")
    expect(dist).toMatch(/finally \{[\s\S]*copyFileSync\(saved, ADDON\)/)
  })

  it('packs what the build writes: main, preload, renderer and the workers are under out/', async () => {
    const c = await getConfig(ROOT, null, null)
    // getConfig merges electron-builder's defaults in: patterns come as strings or as { filter } sets.
    const patterns = (c.files as (string | { filter?: string | string[] })[]).flatMap((f) => (typeof f === 'string' ? [f] : [f.filter ?? []].flat()))
    expect(patterns).toEqual(expect.arrayContaining(['out/**/*', 'package.json']))
    expect(pkg.main).toBe('./out/main/index.js')
    // npm test builds before the shell tests; these are the files the packaged app opens first.
    for (const f of [
      'out/main/index.js',
      'out/preload/index.js',
      'out/renderer/index.html',
      'out/main/jobWorker.js',
      'out/main/pgWorker.js',
      'out/main/mapWorker.js',
    ])
      expect(fs.existsSync(path.join(ROOT, f)), `${f} (run npm run build)`).toBe(true)
  })

  it('rebuilds better-sqlite3 for Electron with the standard tool: a production dependency, npmRebuild on', async () => {
    const c = await getConfig(ROOT, null, null)
    expect(c.npmRebuild).toBe(true)
    // electron-builder stages and rebuilds `dependencies` only; a devDependency would ship without its addon.
    expect(pkg.dependencies['better-sqlite3']).toBeDefined()
    expect(pkg.devDependencies['better-sqlite3']).toBeUndefined()
    expect(pkg.devDependencies['electron-builder']).toBeDefined()
  })
})

describe('engines', () => {
  it('asks for at least the Node the installed electron and electron-builder tooling declare', () => {
    const ours = lowerBound(pkg.engines.node)
    for (const dep of ['electron', '@electron/get', '@electron/rebuild']) {
      const theirs = (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', dep, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
      expect(atLeast(ours, lowerBound(theirs)), `${dep} needs ${theirs}, package.json says ${pkg.engines.node}`).toBeGreaterThanOrEqual(0)
    }
  })

  it('names a Node every locked package accepts, so `npm install` on it prints no EBADENGINE', () => {
    // npm warns for each installed package whose engines.node the running Node does not satisfy: check the
    // lowest Node package.json allows against every package the lock file installs (transitive ones too).
    const lowest = lowerBound(pkg.engines.node).join('.')
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { engines?: { node?: string } | string[] }>
    }
    const refused = Object.entries(lock.packages)
      .filter(([where]) => where !== '')
      .flatMap(([where, p]) => {
        const range = p.engines && !Array.isArray(p.engines) ? p.engines.node : undefined
        return range && !semver.satisfies(lowest, range) ? [`${where} needs ${range}`] : []
      })
    expect(refused, `on Node ${lowest}`).toEqual([])
    // and the check itself refuses a Node a locked package does not accept (posthog-node: ^20.20.0 || >=22.22.0)
    expect(semver.satisfies('22.13.0', '^20.20.0 || >=22.22.0')).toBe(false)
  })
})
