/**
 * `npm start`'s scripts: the Electron-vs-browser decision and its one line,
 * the argument handling, the build staleness check, the launch commands, and
 * the Electron-ABI better-sqlite3 build (prestart), all with fake facts or
 * fake tools: no Electron binary and no network needed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { appRoot } from '../../src/main/paths'
import { sha256File, tmpDir } from '../helpers/tmp'

const require = createRequire(import.meta.url)
const root = appRoot()

type Paths = Record<
  'root' | 'cache' | 'status' | 'abiDir' | 'abiBinary' | 'abiStamp' | 'abiLog' | 'abiWork' | 'electronDir' | 'betterSqlite3Dir' | 'electronVite' | 'cli',
  string
>
interface RunResult {
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
  timedOut: boolean
  error?: string
}
type Run = (
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number; slowNotice?: () => void },
) => Promise<RunResult>
interface Facts {
  forceBrowser: boolean
  electron: { ok: boolean; missing: boolean; version: string | null; reason: string | null; bin: string | null }
  abi: { ok: boolean; reason: string | null }
  display: { ok: boolean; reason: string | null }
  root: boolean
}

const start = require('../../scripts/start.cjs') as {
  parseStartArgs(argv: string[]): { file: string | null; browser: boolean; help: boolean; error: string | null }
  gatherFacts(o: {
    paths?: Paths
    env?: Record<string, string | undefined>
    platform?: string
    uid?: number
    probe?: (bin: string) => { ok: boolean; version?: string; reason?: string }
    browserFlag?: boolean
  }): Facts
  decideMode(f: Facts): { mode: 'electron' | 'browser'; message: string | null }
  isBuildStale(p: Paths): { stale: boolean; reason: string | null; targets: string[] }
  browserCommand(file: string | null, p?: Paths): { cmd: string; args: string[] }
  electronCommand(
    bin: string,
    file: string | null,
    p?: Paths,
    env?: Record<string, string | undefined>,
  ): { cmd: string; args: string[]; env: Record<string, string | undefined> }
}
const S = require('../../scripts/electronSupport.cjs') as {
  paths(root?: string): Paths
  cleanBuildEnv(env: Record<string, string | undefined>): Record<string, string | undefined>
  hasAbiSymbol(file: string, abi: string | number): boolean
  firstErrorLine(text: string): string
  electronBinary(p: Paths, env?: Record<string, string | undefined>): string | null
  abiBuildState(p: Paths): { ok: boolean; reason?: string }
  ensureAbiBuild(o: {
    electronBin: string
    force?: boolean
    paths: Paths
    run: Run
    now?: number
    env?: Record<string, string | undefined>
    notice?: (l: string) => void
  }): Promise<{ ok: boolean; reason?: string; skipped?: boolean; method?: string }>
  RETRY_FAILED_AFTER_MS: number
}
const prestartMod = require('../../scripts/prestart.cjs') as {
  ensureElectron(p: Paths, run: Run): Promise<{ ok: boolean; reason?: string; bin?: string }>
  prestart(argv: string[], p: Paths): Promise<{ forcedBrowser: boolean; electron: unknown; abi: unknown }>
}

const okFacts = (): Facts => ({
  forceBrowser: false,
  electron: { ok: true, missing: false, version: '45.5.0', reason: null, bin: '/x/electron' },
  abi: { ok: true, reason: null },
  display: { ok: true, reason: null },
  root: false,
})

describe('decideMode', () => {
  it('runs Electron when everything is there, with nothing to say', () => {
    expect(start.decideMode(okFacts())).toEqual({ mode: 'electron', message: null })
  })

  it('falls back to browser mode in one line that names the reason', () => {
    const cases: [string, (f: Facts) => void, RegExp][] = [
      [
        'no binary',
        (f) => (f.electron = { ok: false, missing: true, version: '45.5.0', reason: 'fetch failed', bin: null }),
        /^recallscope: Electron could not be downloaded on this machine \(fetch failed\); starting browser mode instead\.$/,
      ],
      [
        'binary does not start',
        (f) => (f.electron = { ok: false, missing: false, version: '45.5.0', reason: 'libnss3.so: cannot open shared object file', bin: '/x' }),
        /^recallscope: Electron 45\.5\.0 is installed but cannot start \(libnss3\.so: cannot open shared object file\); starting browser mode instead\.$/,
      ],
      [
        'no ABI build',
        (f) => (f.abi = { ok: false, reason: 'prebuild-install: getaddrinfo ENOTFOUND github.com' }),
        /^recallscope: better-sqlite3 could not be built for Electron 45\.5\.0 \(prebuild-install: getaddrinfo ENOTFOUND github\.com; retry: npm run rebuild:electron-abi\); starting browser mode instead\.$/,
      ],
      [
        'no display',
        (f) => (f.display = { ok: false, reason: 'neither DISPLAY nor WAYLAND_DISPLAY is set' }),
        /^recallscope: there is no display to open a window on \(neither DISPLAY nor WAYLAND_DISPLAY is set\); starting browser mode instead\.$/,
      ],
      ['root', (f) => (f.root = true), /^recallscope: Chromium refuses to run as root .*; starting browser mode instead\.$/],
    ]
    for (const [what, mutate, re] of cases) {
      const f = okFacts()
      mutate(f)
      const d = start.decideMode(f)
      expect(d.mode, what).toBe('browser')
      expect(d.message, what).toMatch(re)
      expect(d.message!.split('\n'), what).toHaveLength(1)
    }
  })

  it('reports the first missing piece: a missing Electron before the ABI build it needs', () => {
    const f = okFacts()
    f.electron = { ok: false, missing: true, version: '45.5.0', reason: 'fetch failed', bin: null }
    f.abi = { ok: false, reason: 'needs a runnable Electron' }
    expect(start.decideMode(f).message).toMatch(/could not be downloaded/)
  })

  it('RECALLSCOPE_BROWSER=1 wins over a working Electron', () => {
    const f = okFacts()
    f.forceBrowser = true
    expect(start.decideMode(f)).toEqual({ mode: 'browser', message: 'recallscope: RECALLSCOPE_BROWSER=1, starting browser mode.' })
  })
})

describe('gatherFacts', () => {
  let t: ReturnType<typeof tmpDir>
  let p: Paths
  beforeEach(() => {
    t = tmpDir()
    p = S.paths(t.dir)
    fs.mkdirSync(p.electronDir, { recursive: true })
    fs.writeFileSync(path.join(p.electronDir, 'package.json'), JSON.stringify({ name: 'electron', version: '45.5.0' }))
    fs.writeFileSync(path.join(p.electronDir, 'abi_version'), '150')
    fs.mkdirSync(p.betterSqlite3Dir, { recursive: true })
    fs.writeFileSync(path.join(p.betterSqlite3Dir, 'package.json'), JSON.stringify({ name: 'better-sqlite3', version: '12.11.1' }))
  })
  afterEach(() => t.cleanup())

  const installBinary = () => {
    fs.writeFileSync(path.join(p.electronDir, 'path.txt'), 'electron')
    fs.mkdirSync(path.join(p.electronDir, 'dist'), { recursive: true })
    fs.writeFileSync(path.join(p.electronDir, 'dist', 'electron'), '')
    return path.join(p.electronDir, 'dist', 'electron')
  }
  const installAbiBuild = () => {
    fs.mkdirSync(p.abiDir, { recursive: true })
    fs.writeFileSync(p.abiBinary, Buffer.concat([Buffer.from('\x7fELF...'), Buffer.from('node_register_module_v150\0')]))
    fs.writeFileSync(p.abiStamp, JSON.stringify({ ok: true, electronVersion: '45.5.0', abi: '150', betterSqlite3Version: '12.11.1', at: 1 }))
  }
  const probeOk = () => ({ ok: true, version: '45.5.0' })

  it("takes prestart's reason when the binary never arrived", () => {
    fs.mkdirSync(p.cache, { recursive: true })
    fs.writeFileSync(p.status, JSON.stringify({ electron: { ok: false, reason: 'fetch failed' } }))
    const f = start.gatherFacts({ paths: p, env: { DISPLAY: ':0' }, platform: 'linux', uid: 1000, probe: probeOk })
    expect(f.electron).toMatchObject({ ok: false, missing: true, reason: 'fetch failed' })
    expect(start.decideMode(f).message).toBe('recallscope: Electron could not be downloaded on this machine (fetch failed); starting browser mode instead.')
  })

  it('knows the binary is missing even without a prestart record', () => {
    const f = start.gatherFacts({ paths: p, env: { DISPLAY: ':0' }, platform: 'linux', uid: 1000, probe: probeOk })
    expect(f.electron.ok).toBe(false)
    expect(f.electron.reason).toMatch(/not installed/)
  })

  it('chooses Electron when binary, probe, ABI build and display are all fine', () => {
    const bin = installBinary()
    installAbiBuild()
    const f = start.gatherFacts({ paths: p, env: { DISPLAY: ':0' }, platform: 'linux', uid: 1000, probe: probeOk })
    expect(f.electron).toMatchObject({ ok: true, bin })
    expect(start.decideMode(f).mode).toBe('electron')
    // …and not without a display, nor as root.
    expect(start.decideMode(start.gatherFacts({ paths: p, env: {}, platform: 'linux', uid: 1000, probe: probeOk })).mode).toBe('browser')
    expect(start.decideMode(start.gatherFacts({ paths: p, env: { DISPLAY: ':0' }, platform: 'linux', uid: 0, probe: probeOk })).mode).toBe('browser')
    // A display is a Linux question only.
    expect(start.decideMode(start.gatherFacts({ paths: p, env: {}, platform: 'darwin', uid: 501, probe: probeOk })).mode).toBe('electron')
  })

  it('an ABI build for another Electron version does not count', () => {
    installBinary()
    installAbiBuild()
    fs.writeFileSync(path.join(p.electronDir, 'package.json'), JSON.stringify({ name: 'electron', version: '46.0.0' }))
    const f = start.gatherFacts({ paths: p, env: { DISPLAY: ':0' }, platform: 'linux', uid: 1000, probe: probeOk })
    expect(f.abi.ok).toBe(false)
    expect(f.abi.reason).toMatch(/45\.5\.0.*46\.0\.0/)
  })

  it('an ABI build whose file lost its Electron symbol does not count', () => {
    installBinary()
    installAbiBuild()
    fs.copyFileSync(path.join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'), p.abiBinary)
    expect(S.abiBuildState(p).ok).toBe(false)
  })

  it('RECALLSCOPE_BROWSER=1 and --browser skip the Electron checks', () => {
    const probe = vi.fn(probeOk)
    installBinary()
    expect(start.gatherFacts({ paths: p, env: { RECALLSCOPE_BROWSER: '1' }, probe }).forceBrowser).toBe(true)
    expect(start.gatherFacts({ paths: p, env: {}, browserFlag: true, probe }).forceBrowser).toBe(true)
    expect(probe).not.toHaveBeenCalled()
  })
})

describe('arguments, build staleness, launch commands', () => {
  it('parses `npm start -- FILE`', () => {
    expect(start.parseStartArgs([])).toEqual({ file: null, browser: false, help: false, error: null })
    expect(start.parseStartArgs(['agent.db'])).toMatchObject({ file: 'agent.db', error: null })
    expect(start.parseStartArgs(['--browser', 'a.db'])).toMatchObject({ file: 'a.db', browser: true })
    expect(start.parseStartArgs(['a.db', 'b.db']).error).toMatch(/one file/)
    expect(start.parseStartArgs(['--port', '1']).error).toMatch(/unknown option --port/)
    expect(start.parseStartArgs(['-h']).help).toBe(true)
  })

  it('browser mode runs the CLI serve command on the file, or on the demo', () => {
    const p = S.paths()
    expect(start.browserCommand('/d/agent.db', p)).toEqual({
      cmd: process.execPath,
      args: [path.join(root, 'bin', 'recallscope.cjs'), 'serve', '--db', '/d/agent.db'],
    })
    expect(start.browserCommand(null, p).args.slice(1)).toEqual(['serve', '--demo'])
  })

  it('Electron runs on the project folder (package.json main = out/main/index.js) with the ABI addon', () => {
    const p = S.paths()
    const c = start.electronCommand('/x/electron', '/d/agent.db', p, { PATH: '/bin', ELECTRON_RUN_AS_NODE: '1' })
    expect(c.cmd).toBe('/x/electron')
    expect(c.args).toEqual([root, '/d/agent.db'])
    expect(c.env.RECALLSCOPE_NATIVE_BINDING).toBe(path.join(root, '.cache', 'electron-abi', 'better_sqlite3.node'))
    // Left set, it would make Electron a plain Node and no window would open.
    expect('ELECTRON_RUN_AS_NODE' in c.env).toBe(false)
    expect(c.env.PATH).toBe('/bin')
  })

  it('rebuilds when an output is missing or a source is newer than the oldest output of a target that reads it', () => {
    const t = tmpDir()
    const p = S.paths(t.dir)
    const outs = ['out/main/index.js', 'out/main/cli.js', 'out/preload/index.js', 'out/renderer/index.html'].map((f) => path.join(t.dir, f))
    const src = path.join(t.dir, 'src', 'main', 'x.ts')
    fs.mkdirSync(path.dirname(src), { recursive: true })
    fs.writeFileSync(src, '')
    fs.utimesSync(src, 1000, 1000)
    expect(start.isBuildStale(p)).toMatchObject({ stale: true, reason: 'out/main/index.js is missing', targets: ['main', 'preload', 'renderer'] })
    for (const o of outs) {
      fs.mkdirSync(path.dirname(o), { recursive: true })
      fs.writeFileSync(o, '')
      fs.utimesSync(o, 2000, 2000)
    }
    expect(start.isBuildStale(p).stale).toBe(false)
    fs.utimesSync(src, 3000, 3000)
    expect(start.isBuildStale(p).stale).toBe(true)
    for (const o of outs) fs.utimesSync(o, 4000, 4000)
    expect(start.isBuildStale(p).stale).toBe(false)
    fs.utimesSync(outs[1], 2500, 2500) // one output of main older than main's source: main alone is rebuilt
    expect(start.isBuildStale(p)).toMatchObject({ stale: true, targets: ['main'] })
    for (const o of outs) fs.utimesSync(o, 4000, 4000)
    // Each target is judged by what it reads: the preload, older than a main source, is not rebuilt for it…
    fs.utimesSync(src, 3000, 3000)
    fs.utimesSync(outs[2], 2500, 2500)
    expect(start.isBuildStale(p)).toMatchObject({ stale: false, targets: [] })
    // …but all three read src/shared, and a renderer source makes the renderer stale.
    const shared = path.join(t.dir, 'src', 'shared', 'y.ts')
    fs.mkdirSync(path.dirname(shared), { recursive: true })
    fs.writeFileSync(shared, '')
    fs.utimesSync(shared, 4500, 4500)
    expect(start.isBuildStale(p)).toMatchObject({ stale: true, targets: ['main', 'preload', 'renderer'] })
    fs.utimesSync(shared, 1000, 1000)
    const view = path.join(t.dir, 'src', 'renderer', 'src', 'z.tsx')
    fs.mkdirSync(path.dirname(view), { recursive: true })
    fs.writeFileSync(view, '')
    fs.utimesSync(view, 4500, 4500)
    expect(start.isBuildStale(p)).toMatchObject({ stale: true, targets: ['renderer'] })
    for (const o of outs) fs.utimesSync(o, 5000, 5000)
    // The build config counts as a source, under its current name.
    const config = path.join(t.dir, 'electron.vite.config.ts')
    fs.writeFileSync(config, '')
    fs.utimesSync(config, 6000, 6000)
    expect(start.isBuildStale(p)).toMatchObject({ stale: true, reason: 'sources changed since the last build', targets: ['main', 'preload', 'renderer'] })
    t.cleanup()
  })
})

describe('Electron-ABI better-sqlite3 build', () => {
  const nodeBuild = path.join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')
  let t: ReturnType<typeof tmpDir>
  let p: Paths
  beforeEach(() => {
    t = tmpDir()
    // A project root of our own, with the real better-sqlite3 sources.
    p = { ...S.paths(t.dir), betterSqlite3Dir: path.join(root, 'node_modules', 'better-sqlite3') }
    fs.mkdirSync(p.electronDir, { recursive: true })
    fs.writeFileSync(path.join(p.electronDir, 'package.json'), JSON.stringify({ name: 'electron', version: '45.5.0' }))
    fs.writeFileSync(path.join(p.electronDir, 'abi_version'), '150')
  })
  afterEach(() => t.cleanup())

  const fail = (stderr: string): RunResult => ({ code: 1, signal: null, stdout: '', stderr, timedOut: false })
  const okRun = (stdout = ''): RunResult => ({ code: 0, signal: null, stdout, stderr: '', timedOut: false })
  const built = () => path.join(p.abiWork, 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')
  const putBuilt = (content: Buffer) => {
    fs.mkdirSync(path.dirname(built()), { recursive: true })
    fs.writeFileSync(built(), content)
  }
  const electronAddon = () => Buffer.concat([Buffer.from('\x7fELF fake addon '), Buffer.from('node_register_module_v150\0')])
  const tool = (args: string[]) => (args[0]?.includes('prebuild-install') ? 'prebuild' : args[0]?.endsWith('node-gyp.js') ? 'gyp' : 'verify')
  const baseEnv = () => ({
    PATH: process.env.PATH,
    npm_config_node_gyp: '/fake/node-gyp.js',
    npm_config_nodedir: '/usr',
    NPM_CONFIG_NODEDIR: '/usr',
    npm_config_target: '20.20.2',
    npm_config_https_proxy: 'http://proxy:3128',
  })

  it('offline: both attempts fail fast, the reason names both, nothing is installed', async () => {
    const gyp = path.join(t.dir, 'node-gyp.js')
    fs.writeFileSync(gyp, '')
    const nodeHash = sha256File(nodeBuild)
    const nodeMtime = fs.statSync(nodeBuild).mtimeMs
    const calls: string[] = []
    const run: Run = async (_cmd, args) => {
      calls.push(tool(args))
      return tool(args) === 'prebuild'
        ? fail('prebuild-install info begin\nprebuild-install warn install getaddrinfo ENOTFOUND github.com\n')
        : fail('gyp info it worked\ngyp ERR! stack Error: This is most likely not a problem with node-gyp or the package itself and\ngyp ERR! not ok\n')
    }
    const r = await S.ensureAbiBuild({ electronBin: '/x/electron', paths: p, run, env: { ...baseEnv(), npm_config_node_gyp: gyp }, now: 1_000 })
    expect(r.ok).toBe(false)
    expect(r.reason).toMatch(/prebuild-install: getaddrinfo ENOTFOUND github\.com/)
    expect(r.reason).toMatch(/node-gyp: This is most likely not a problem/)
    // No verification of a build that does not exist.
    expect(calls).toEqual(['prebuild', 'gyp'])
    expect(fs.existsSync(p.abiBinary)).toBe(false)
    expect(fs.existsSync(p.abiWork)).toBe(false)
    expect(JSON.parse(fs.readFileSync(p.abiStamp, 'utf8'))).toMatchObject({ ok: false, electronVersion: '45.5.0', abi: '150', betterSqlite3Version: '12.11.1' })
    // The Node build the tests use is untouched.
    expect(sha256File(nodeBuild)).toBe(nodeHash)
    expect(fs.statSync(nodeBuild).mtimeMs).toBe(nodeMtime)

    // A failure is not retried on every start (an hour), unless forced.
    const again = vi.fn(run)
    expect(await S.ensureAbiBuild({ electronBin: '/x/electron', paths: p, run: again, env: baseEnv(), now: 1_000 + 60_000 })).toMatchObject({
      ok: false,
      skipped: true,
    })
    expect(again).not.toHaveBeenCalled()
    await S.ensureAbiBuild({ electronBin: '/x/electron', paths: p, run: again, env: baseEnv(), now: 1_000 + S.RETRY_FAILED_AFTER_MS + 1 })
    expect(again).toHaveBeenCalled()
    again.mockClear()
    await S.ensureAbiBuild({ electronBin: '/x/electron', paths: p, run: again, env: baseEnv(), now: 1_000, force: true })
    expect(again).toHaveBeenCalled()
  })

  it("rejects a node-gyp 'success' that compiled against Node's headers (the nodedir trap)", async () => {
    const gyp = path.join(t.dir, 'node-gyp.js')
    fs.writeFileSync(gyp, '')
    const run: Run = async (_cmd, args) => {
      if (tool(args) === 'prebuild') return fail('prebuild-install warn install getaddrinfo ENOTFOUND github.com')
      if (args[0] === gyp) {
        putBuilt(fs.readFileSync(nodeBuild)) // what nodedir=/usr would produce: a Node-ABI addon
        return okRun()
      }
      throw new Error('must not verify an addon of the wrong ABI')
    }
    const r = await S.ensureAbiBuild({ electronBin: '/x/electron', paths: p, run, env: { ...baseEnv(), npm_config_node_gyp: gyp } })
    expect(r.ok).toBe(false)
    expect(r.reason).toMatch(/not for Electron's ABI 150/)
    expect(fs.existsSync(p.abiBinary)).toBe(false)
  })

  it('installs a build only after it loads under Electron, then reuses it', async () => {
    const envs: Record<string, string | undefined>[] = []
    let verifyEnv: Record<string, string | undefined> = {}
    const run: Run = async (cmd, args, opts) => {
      envs.push(opts.env ?? {})
      if (tool(args) === 'prebuild') {
        expect(opts.cwd).toBe(path.join(p.abiWork, 'better-sqlite3'))
        expect(args).toEqual(expect.arrayContaining(['--runtime', 'electron', '--target', '45.5.0']))
        // The copied package has the sources, not the Node build.
        expect(fs.existsSync(path.join(opts.cwd!, 'binding.gyp'))).toBe(true)
        expect(fs.existsSync(path.join(opts.cwd!, 'build'))).toBe(false)
        putBuilt(electronAddon())
        return okRun()
      }
      expect(cmd).toBe('/x/electron')
      verifyEnv = opts.env ?? {}
      return okRun('ok 150 3.50.0')
    }
    const r = await S.ensureAbiBuild({ electronBin: '/x/electron', paths: p, run, env: baseEnv() })
    expect(r).toEqual({ ok: true, method: 'prebuild-install' })
    expect(fs.readFileSync(p.abiBinary)).toEqual(electronAddon())
    expect(verifyEnv).toMatchObject({ ELECTRON_RUN_AS_NODE: '1', RS_BINDING: built() })
    // npm's config never reaches the build tools (node-gyp lets it override flags); proxies do.
    for (const e of envs) {
      expect(Object.keys(e).filter((k) => /nodedir|^npm_config_target$/i.test(k))).toEqual([])
      expect(e.npm_config_https_proxy).toBe('http://proxy:3128')
    }
    expect(S.abiBuildState(p).ok).toBe(true)
    const again = vi.fn(run)
    expect(await S.ensureAbiBuild({ electronBin: '/x/electron', paths: p, run: again, env: baseEnv() })).toEqual({ ok: true, skipped: true })
    expect(again).not.toHaveBeenCalled()
  })

  it('does not install a build that fails to load under Electron', async () => {
    const run: Run = async (_cmd, args) => {
      if (tool(args) === 'prebuild') {
        putBuilt(electronAddon())
        return okRun()
      }
      return fail("Error: The module '/x/better_sqlite3.node'\nwas compiled against a different Node.js version")
    }
    const r = await S.ensureAbiBuild({ electronBin: '/x/electron', paths: p, run, env: baseEnv() })
    expect(r.ok).toBe(false)
    expect(r.reason).toMatch(/does not load under Electron 45\.5\.0/)
    expect(fs.existsSync(p.abiBinary)).toBe(false)
  })
})

describe('prestart', () => {
  let t: ReturnType<typeof tmpDir>
  let p: Paths
  beforeEach(() => {
    t = tmpDir()
    p = S.paths(t.dir)
    fs.mkdirSync(p.electronDir, { recursive: true })
    fs.writeFileSync(path.join(p.electronDir, 'package.json'), JSON.stringify({ name: 'electron', version: '45.5.0' }))
  })
  afterEach(() => {
    vi.unstubAllEnvs()
    t.cleanup()
  })

  it('runs install-electron and reports its failure as one short reason', async () => {
    const run = vi.fn<Run>(async () => ({
      code: 1,
      signal: null,
      stdout: '',
      stderr: 'TypeError: fetch failed\n    at node:internal/deps/undici/undici:14976:13\n    at async FetchDownloader.download (file:///x.js:46:30)\n',
      timedOut: false,
    }))
    const r = await prestartMod.ensureElectron(p, run)
    expect(r).toEqual({ ok: false, reason: 'fetch failed' })
    expect(run.mock.calls[0][1]).toEqual([path.join(p.electronDir, 'install.js')])
    expect(run.mock.calls[0][2].timeoutMs).toBeGreaterThan(0)
  })

  it('does not download anything when browser mode is forced', async () => {
    vi.stubEnv('RECALLSCOPE_BROWSER', '1')
    const s = await prestartMod.prestart([], p)
    expect(s).toMatchObject({ forcedBrowser: true, electron: null, abi: null })
  })
})

describe('support helpers', () => {
  it('strips every npm config but proxies from the build environment', () => {
    const env = S.cleanBuildEnv({
      PATH: '/bin',
      HOME: '/root',
      npm_config_nodedir: '/usr',
      NPM_CONFIG_NODEDIR: '/usr',
      npm_config_runtime: 'node',
      npm_config_dist_url: 'x',
      npm_package_config_node_gyp_nodedir: '/usr',
      npm_config_proxy: 'http://p',
      ELECTRON_RUN_AS_NODE: '1',
    })
    expect(env).toEqual({ PATH: '/bin', HOME: '/root', npm_config_proxy: 'http://p' })
  })

  it("tells an addon's ABI from its exported symbol", () => {
    const nodeBuild = path.join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')
    expect(S.hasAbiSymbol(nodeBuild, process.versions.modules)).toBe(true)
    expect(S.hasAbiSymbol(nodeBuild, 150)).toBe(false)
    // v15 must not match inside v150 (or v115).
    expect(S.hasAbiSymbol(nodeBuild, 15)).toBe(false)
    expect(S.hasAbiSymbol('/nonexistent', 150)).toBe(false)
  })

  it('keeps the first meaningful line of tool output', () => {
    expect(S.firstErrorLine('TypeError: fetch failed\n    at x (y:1:2)')).toBe('fetch failed')
    expect(S.firstErrorLine('prebuild-install info begin\nprebuild-install warn install getaddrinfo ENOTFOUND github.com')).toBe(
      'getaddrinfo ENOTFOUND github.com',
    )
    expect(S.firstErrorLine('')).toBe('')
  })

  it('finds the Electron binary the way the electron package does, without requiring it', () => {
    const t = tmpDir()
    const p = S.paths(t.dir)
    expect(S.electronBinary(p, {})).toBe(null)
    fs.mkdirSync(path.join(p.electronDir, 'dist'), { recursive: true })
    fs.writeFileSync(path.join(p.electronDir, 'path.txt'), 'electron')
    expect(S.electronBinary(p, {})).toBe(null) // path.txt without the file
    fs.writeFileSync(path.join(p.electronDir, 'dist', 'electron'), '')
    expect(S.electronBinary(p, {})).toBe(path.join(p.electronDir, 'dist', 'electron'))
    const other = path.join(t.dir, 'elsewhere')
    fs.mkdirSync(other)
    fs.writeFileSync(path.join(other, 'electron'), '')
    expect(S.electronBinary(p, { ELECTRON_OVERRIDE_DIST_PATH: other })).toBe(path.join(other, 'electron'))
    t.cleanup()
  })
})
