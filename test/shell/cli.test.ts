/**
 * bin/recallscope.cjs runs the compiled CLI (out/main/cli.js), never tsx;
 * builds out/ itself right after an install; never prints a URL that answers
 * 500; and the renderer build is split so the eval/trace/chart code is not in
 * the entry chunk.
 *
 * Each test works on a copy of the project in a temp folder ("tree") whose
 * node_modules holds links to the real packages minus the ones a test takes
 * away (tsx, electron-vite), so the repo's own out/ is never rebuilt under
 * other tests' feet.
 */
import fs from 'node:fs'
import path from 'node:path'
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appRoot } from '../../src/main/paths'
import { sha256File, tmpDir } from '../helpers/tmp'

const root = appRoot()
const version = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version

interface Tree {
  dir: string
  home: string
  cleanup: () => void
}

/** A copy of what `npm install` gives a user (no out/), with some packages not installed. */
function makeTree(without: string[]): Tree {
  const t = tmpDir('recallscope-tree-')
  for (const f of [
    'bin',
    'scripts',
    'src',
    'package.json',
    'electron.vite.config.ts',
    'tsconfig.json',
    'tsconfig.base.json',
    'tsconfig.node.json',
    'tsconfig.web.json',
  ])
    fs.cpSync(path.join(root, f), path.join(t.dir, f), { recursive: true })
  const nm = path.join(t.dir, 'node_modules')
  fs.mkdirSync(nm)
  const real = fs.realpathSync(path.join(root, 'node_modules'))
  for (const e of fs.readdirSync(real)) {
    if (without.includes(e)) continue
    if (e.startsWith('@')) {
      // A scope folder of our own, so a scoped package can be left out too.
      fs.mkdirSync(path.join(nm, e))
      for (const s of fs.readdirSync(path.join(real, e))) if (!without.includes(`${e}/${s}`)) fs.symlinkSync(path.join(real, e, s), path.join(nm, e, s))
    } else fs.symlinkSync(path.join(real, e), path.join(nm, e))
  }
  const home = path.join(t.dir, 'home')
  fs.mkdirSync(home)
  return { dir: t.dir, home, cleanup: t.cleanup }
}

function runBin(tree: Tree, args: string[], extraNodeArgs: string[] = []): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [...extraNodeArgs, path.join(tree.dir, 'bin', 'recallscope.cjs'), ...args], {
    cwd: tree.dir,
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, RECALLSCOPE_HOME: tree.home },
  })
}

/** Start `serve --json`; resolves with its first stdout line (or null if it exited first) and the child. */
function startServe(tree: Tree, args: string[]): Promise<{ line: string | null; stderr: string; code: number | null; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [path.join(tree.dir, 'bin', 'recallscope.cjs'), 'serve', '--json', ...args], {
    cwd: tree.dir,
    env: { ...process.env, RECALLSCOPE_HOME: tree.home },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ line: null, stderr: `${stderr}\n(no output in 120 s)`, code: null, stop }), 120_000)
    child.stdout.on('data', (d) => {
      stdout += d
      const nl = stdout.indexOf('\n')
      if (nl >= 0) {
        clearTimeout(timer)
        resolve({ line: stdout.slice(0, nl), stderr, code: null, stop })
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      resolve({ line: stdout.split('\n')[0] || null, stderr, code, stop })
    })
  })
}

const stderrLines = (s: string) => s.split('\n').filter((l) => l.trim() !== '')

/**
 * The first describe's tree, built by its tests and kept to the end of the file: a later test that needs some
 * build of these sources copies its out/ instead of running electron-vite once more (~3.5 s of CPU a build).
 */
let installed: Tree | null = null
afterAll(() => installed?.cleanup())

describe('bin/recallscope.cjs on a fresh install (tsx not installed)', () => {
  let tree: Tree
  beforeAll(() => {
    tree = installed = makeTree(['tsx'])
  })

  it('builds out/ first with one line on stderr, then runs the compiled CLI', () => {
    // tsx is really out of reach from the tree (the bin's and out/'s resolution paths).
    const req = createRequire(path.join(tree.dir, 'bin', 'recallscope.cjs'))
    expect(() => req.resolve('tsx/cjs/api')).toThrow()
    expect(fs.existsSync(path.join(tree.dir, 'out'))).toBe(false)

    const first = runBin(tree, ['--version'])
    expect(first.status, first.stderr).toBe(0)
    expect(first.stdout.trim()).toBe(version)
    expect(stderrLines(first.stderr)).toHaveLength(1)
    expect(first.stderr).toMatch(/^recallscope: building the app first \(out\/\S+ is missing; electron-vite build/)
    for (const o of ['out/main/cli.js', 'out/main/index.js', 'out/preload/index.js', 'out/renderer/index.html'])
      expect(fs.existsSync(path.join(tree.dir, o)), o).toBe(true)

    // Up to date now: no build, nothing on stderr; and what ran is out/main/cli.js, no TypeScript.
    const loaded = path.join(tree.dir, 'loaded.json')
    const hook = path.join(tree.dir, 'record-loaded.cjs')
    fs.writeFileSync(
      hook,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(loaded)}, JSON.stringify(Object.keys(require.cache))))\n`,
    )
    const again = runBin(tree, ['--help'], ['--require', hook])
    expect(again.status, again.stderr).toBe(0)
    expect(again.stderr).toBe('')
    expect(again.stdout).toMatch(/Usage: recallscope <command>/)
    const modules = JSON.parse(fs.readFileSync(loaded, 'utf8')) as string[]
    expect(modules).toContain(path.join(tree.dir, 'out', 'main', 'cli.js'))
    expect(modules.filter((m) => /\.tsx?$/.test(m) || /[\\/]tsx[\\/]/.test(m))).toEqual([])
  })

  it('rebuilds when a source is newer than out/', () => {
    const cli = path.join(tree.dir, 'out', 'main', 'cli.js')
    if (!fs.existsSync(cli)) expect(runBin(tree, ['--version']).status).toBe(0)
    // An hour-old build, and a source edited now.
    const hourAgo = Date.now() / 1000 - 3600
    fs.utimesSync(cli, hourAgo, hourAgo)
    const now = Date.now() / 1000
    fs.utimesSync(path.join(tree.dir, 'src', 'main', 'cli', 'info.ts'), now, now)
    const html = path.join(tree.dir, 'out', 'renderer', 'index.html')
    const htmlBuilt = fs.statSync(html).mtimeMs
    const r = runBin(tree, ['--version'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/^recallscope: building the app first \(sources changed since the last build/)
    expect(fs.statSync(cli).mtimeMs).toBeGreaterThan(hourAgo * 1000 + 1000)
    // A main source changed: main alone was built (the renderer reads none of src/main).
    expect(fs.statSync(html).mtimeMs).toBe(htmlBuilt)
    // …and only once.
    expect(runBin(tree, ['--version']).stderr).toBe('')
  })

  it('demo then serve right after install: builds the missing renderer first, and the printed URL serves the app', async () => {
    const db = path.join(tree.dir, 'd.db')
    const demo = runBin(tree, ['demo', '--out', db, '--memories', '200'])
    expect(demo.status, demo.stderr).toBe(0)

    fs.rmSync(path.join(tree.dir, 'out', 'renderer'), { recursive: true, force: true })
    const cli = path.join(tree.dir, 'out', 'main', 'cli.js')
    const cliBuilt = fs.statSync(cli).mtimeMs
    const s = await startServe(tree, ['--db', db])
    try {
      expect(s.line, s.stderr).not.toBeNull()
      expect(s.stderr).toMatch(/^recallscope: building the app first \(out\/renderer\/index\.html is missing/)
      expect(fs.statSync(cli).mtimeMs).toBe(cliBuilt) // the renderer alone was built
      const info = JSON.parse(s.line!) as { ok: boolean; url: string; db: string }
      expect(info).toMatchObject({ ok: true, db })
      const page = await fetch(info.url)
      expect(page.status).toBe(200)
      const html = await page.text()
      const entry = /<script[^>]+src="\.\/(assets\/[^"]+\.js)"/.exec(html)
      expect(entry, html).not.toBeNull()
      const script = await fetch(new URL(entry![1], info.url))
      expect(script.status).toBe(200)
      expect(script.headers.get('content-type')).toMatch(/javascript/)
    } finally {
      await s.stop()
    }
  })

  it('the renderer is split: several JS chunks, the eval/trace/chart code outside the entry chunk', () => {
    if (!fs.existsSync(path.join(tree.dir, 'out', 'renderer', 'index.html'))) expect(runBin(tree, ['--version']).status).toBe(0)
    const rendererDir = path.join(tree.dir, 'out', 'renderer')
    const html = fs.readFileSync(path.join(rendererDir, 'index.html'), 'utf8')
    const entryName = /<script[^>]+src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1]
    const chunks = fs.readdirSync(path.join(rendererDir, 'assets')).filter((f) => f.endsWith('.js'))
    expect(chunks.length).toBeGreaterThan(1)
    const entry = fs.readFileSync(path.join(rendererDir, entryName), 'utf8')
    const others = chunks
      .map((f) => `assets/${f}`)
      .filter((f) => f !== entryName)
      .map((f) => fs.readFileSync(path.join(rendererDir, f), 'utf8'))
    // Literals from the Evaluate view (CompareTab, TuneTab), the Decision-trace view, and recharts.
    const markers = ['Metric deltas vs the baseline', 'Weight simplex', 'Ad-hoc why-not', 'Computing leave-one-out', 'recharts-wrapper']
    for (const m of markers) {
      expect(entry.includes(m), `${m} in the entry chunk`).toBe(false)
      // …and it is in the build at all (else this test would prove nothing).
      expect(
        others.some((c) => c.includes(m)),
        `${m} in a lazy chunk`,
      ).toBe(true)
    }
    // Minified: the entry chunk (react-dom, the shell, the Library) stays well under a megabyte.
    expect(entry.length).toBeLessThan(600_000)
  })
  it('package.json: what out/main requires at run time is a dependency; what the renderer bundles is not', () => {
    if (!fs.existsSync(path.join(tree.dir, 'out', 'main', 'cli.js'))) expect(runBin(tree, ['--version']).status).toBe(0)
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>
      devDependencies: Record<string, string>
    }
    const deps = new Set(Object.keys(pkg.dependencies))
    const pkgName = (spec: string) =>
      spec
        .split('/')
        .slice(0, spec.startsWith('@') ? 2 : 1)
        .join('/')
    const bare = (spec: string) => !spec.startsWith('.') && !spec.startsWith('node:') && !path.isAbsolute(spec)
    const walk = (dir: string, re: RegExp): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name), re) : re.test(e.name) ? [path.join(dir, e.name)] : []))

    const required = new Set<string>()
    for (const f of walk(path.join(tree.dir, 'out', 'main'), /\.js$/))
      for (const m of fs.readFileSync(f, 'utf8').matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g))
        if (bare(m[1]) && m[1] !== 'electron') required.add(pkgName(m[1]))
    expect(required.size).toBeGreaterThan(0)
    expect([...required].filter((r) => !deps.has(r))).toEqual([])

    // Bare imports of the renderer's sources that main/shared never import: bundled into out/renderer.
    const importsOf = (dir: string, re: RegExp) => {
      const out = new Set<string>()
      for (const f of walk(dir, re))
        for (const m of fs.readFileSync(f, 'utf8').matchAll(/^import\s[^;]*?from\s+['"]([^'"]+)['"]/gm)) if (bare(m[1])) out.add(pkgName(m[1]))
      return out
    }
    const serverSide = new Set([...importsOf(path.join(root, 'src', 'main'), /\.ts$/), ...importsOf(path.join(root, 'src', 'shared'), /\.ts$/)])
    const rendererOnly = [...importsOf(path.join(root, 'src', 'renderer', 'src'), /(?<!\.test)\.tsx?$/)].filter((p) => !serverSide.has(p))
    expect(rendererOnly).toEqual(expect.arrayContaining(['react', 'react-dom', 'recharts']))
    expect(rendererOnly.filter((p) => deps.has(p))).toEqual([])
    // The CLI no longer runs through tsx; `npm run bench` still does.
    expect(deps.has('tsx')).toBe(false)
    expect(pkg.devDependencies.tsx).toBeDefined()
  })
})

/**
 * Give `tree` a build of these sources: the fresh-install tree's out/ if it has one (the same sources), else one
 * made here in a tree of its own (when a test runs alone).
 */
function copyBuiltOut(tree: Tree): void {
  const fromInstalled = installed !== null && fs.existsSync(path.join(installed.dir, 'out', 'main', 'cli.js'))
  const built = fromInstalled ? installed! : makeTree(['tsx'])
  try {
    if (!fromInstalled) expect(runBin(built, ['--version']).status).toBe(0)
    fs.cpSync(path.join(built.dir, 'out'), path.join(tree.dir, 'out'), { recursive: true })
  } finally {
    if (!fromInstalled) built.cleanup()
  }
}

describe('bin/recallscope.cjs when out/ cannot be built (electron-vite not installed)', () => {
  let tree: Tree
  beforeAll(() => {
    tree = makeTree(['tsx', 'electron-vite'])
  })
  afterAll(() => tree?.cleanup())

  it('says so in one line and exits 1, running nothing', () => {
    const r = runBin(tree, ['--version'])
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    expect(stderrLines(r.stderr)).toHaveLength(1)
    expect(r.stderr).toMatch(/^recallscope: out\/\S+ is missing and cannot be built: electron-vite is not installed/)
  })

  it('serve without a renderer build refuses without printing a URL (the bin, and the compiled serve itself)', async () => {
    // A main/CLI build but no renderer: e.g. an interrupted build.
    copyBuiltOut(tree)
    fs.rmSync(path.join(tree.dir, 'out', 'renderer'), { recursive: true, force: true })
    expect(runBin(tree, ['--version']).status).toBe(1) // sanity: still unbuildable
    // A real DB, so nothing but the renderer check stands between serve and listening.
    const cli = path.join(tree.dir, 'out', 'main', 'cli.js')
    const runCli = (args: string[], timeout: number) =>
      spawnSync(process.execPath, ['-e', `require(${JSON.stringify(cli)}).main(${JSON.stringify(args)}).then((c) => { process.exitCode = c })`], {
        cwd: tree.dir,
        encoding: 'utf8',
        timeout,
        env: { ...process.env, RECALLSCOPE_HOME: tree.home },
      })
    const db = path.join(tree.dir, 'd.db')
    expect(runCli(['demo', '--out', db, '--memories', '50'], 60_000).status).toBe(0)
    const files = [db, `${db}.recallscope`].filter((f) => fs.existsSync(f))
    const before = files.map(sha256File)

    const viaBin = await startServe(tree, ['--db', db])
    await viaBin.stop()
    expect(viaBin.code).toBe(1)
    expect(viaBin.line).toBeNull()
    expect(viaBin.stderr).toMatch(/out\/renderer\/index\.html is missing and cannot be built/)

    // The compiled serve command checks too, before it listens (tsx, src/ not involved).
    const direct = runCli(['serve', '--db', db], 20_000)
    expect(direct.error).toBeUndefined() // a server listening would time out here
    expect(direct.status).toBe(1)
    expect(direct.stdout).not.toMatch(/http:\/\//)
    expect(direct.stderr).toMatch(/^recallscope serve: the renderer is not built \(.*out\/renderer has no index\.html\)/)
    expect(files.map(sha256File)).toEqual(before) // the DB and its workspace untouched
  })
})

describe('bin/recallscope.cjs when the build fails', () => {
  it('says why in one line and exits 1', () => {
    const tree = makeTree(['tsx'])
    try {
      fs.appendFileSync(path.join(tree.dir, 'src', 'main', 'cli', 'info.ts'), '\nexport const = ;\n')
      const r = runBin(tree, ['--version'])
      expect(r.status).toBe(1)
      expect(r.stdout).toBe('')
      const lines = stderrLines(r.stderr)
      expect(lines).toHaveLength(2) // the "building" notice, then the failure
      expect(lines[1]).toMatch(/^recallscope: out\/\S+ is missing and electron-vite build failed: \S/)
      expect(fs.existsSync(path.join(tree.dir, 'out', 'main', 'cli.js'))).toBe(false)
    } finally {
      tree.cleanup()
    }
  })
})

describe('bin/recallscope.cjs started twice at once', () => {
  it('builds once (the other waits for the build lock), both run; a lock left by a dead build is taken over', async () => {
    const tree = makeTree(['tsx'])
    try {
      // A build that was killed: it left out/ without the renderer, and its lock; its process is gone.
      copyBuiltOut(tree)
      fs.rmSync(path.join(tree.dir, 'out', 'renderer'), { recursive: true, force: true })
      const dead = spawnSync(process.execPath, ['-e', ''])
      const lock = path.join(tree.dir, '.cache', 'build.lock')
      fs.mkdirSync(lock, { recursive: true })
      fs.writeFileSync(path.join(lock, 'pid'), String(dead.pid))

      const run = () =>
        new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
          const c = spawn(process.execPath, [path.join(tree.dir, 'bin', 'recallscope.cjs'), '--version'], {
            cwd: tree.dir,
            env: { ...process.env, RECALLSCOPE_HOME: tree.home },
          })
          let stdout = ''
          let stderr = ''
          c.stdout.on('data', (d) => (stdout += d))
          c.stderr.on('data', (d) => (stderr += d))
          c.on('close', (code) => resolve({ code, stdout, stderr }))
        })
      const t0 = Date.now()
      const [a, b] = await Promise.all([run(), run()])
      expect(Date.now() - t0).toBeLessThan(90_000) // not the 3-minute wait for a live holder
      for (const r of [a, b]) {
        expect(r.code, r.stderr).toBe(0)
        expect(r.stdout.trim()).toBe(version)
      }
      expect([a, b].filter((r) => /building the app first/.test(r.stderr))).toHaveLength(1)
      expect(fs.existsSync(path.join(tree.dir, 'out', 'renderer', 'index.html'))).toBe(true)
      expect(fs.existsSync(lock)).toBe(false)
    } finally {
      tree.cleanup()
    }
  })
})
