/**
 * Shared by prestart.cjs and start.cjs: where Electron and the Electron-ABI
 * build of better-sqlite3 live, whether they are usable, and how that build is
 * made. Plain CommonJS with no dependencies, so it runs before anything is
 * built and under any Node that npm runs.
 *
 * Why a second better-sqlite3 binary: one .node file serves one ABI. Tests and
 * the CLI run under Node (ABI 115 on Node 20); the app runs under Electron
 * (ABI 150 for Electron 45). Rebuilding node_modules/better-sqlite3 in place
 * for Electron breaks `npm test`, and rebuilding it back breaks `npm start`.
 * So the Electron build lives beside it, in .cache/electron-abi/, and main
 * passes it to better-sqlite3 as `nativeBinding`.
 */
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')

const ROOT = path.resolve(__dirname, '..')

/** Every path the shell scripts use, under one project root. */
function paths(root = ROOT) {
  const cache = path.join(root, '.cache')
  const abiDir = path.join(cache, 'electron-abi')
  return {
    root,
    cache,
    /** What prestart found out, for start to report. */
    status: path.join(cache, 'prestart.json'),
    abiDir,
    /** The Electron-ABI better-sqlite3 addon (src/main/index.ts looks here too). */
    abiBinary: path.join(abiDir, 'better_sqlite3.node'),
    abiStamp: path.join(abiDir, 'stamp.json'),
    abiLog: path.join(abiDir, 'last-build.log'),
    abiWork: path.join(abiDir, 'work'),
    electronDir: path.join(root, 'node_modules', 'electron'),
    betterSqlite3Dir: path.join(root, 'node_modules', 'better-sqlite3'),
    electronVite: path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'),
    cli: path.join(root, 'bin', 'recallscope.cjs'),
  }
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return null
  }
}

/** Write JSON through a temp file + rename, so a reader never sees half a file. */
function writeJson(file, value) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`)
  fs.renameSync(tmp, file)
}

/** The installed electron package: version and the ABI its Node reports. */
function electronInfo(p = paths()) {
  const pkg = readJson(path.join(p.electronDir, 'package.json'))
  if (!pkg) return null
  let abi = null
  try {
    abi = fs.readFileSync(path.join(p.electronDir, 'abi_version'), 'utf8').trim()
  } catch {
    /* older electron packages have no abi_version file */
  }
  return { version: String(pkg.version), abi }
}

function betterSqlite3Version(p = paths()) {
  const pkg = readJson(path.join(p.betterSqlite3Dir, 'package.json'))
  return pkg ? String(pkg.version) : null
}

/**
 * The Electron executable if install-electron has put it in place, else null.
 * Mirrors node_modules/electron/index.js without requiring it: requiring that
 * module starts a download when the binary is missing.
 */
function electronBinary(p = paths(), env = process.env) {
  let rel
  try {
    rel = fs.readFileSync(path.join(p.electronDir, 'path.txt'), 'utf8').trim()
  } catch {
    return null
  }
  if (!rel) return null
  const bin = path.join(env.ELECTRON_OVERRIDE_DIST_PATH || path.join(p.electronDir, 'dist'), rel)
  return fs.existsSync(bin) ? bin : null
}

/**
 * Environment for node-gyp and prebuild-install with npm's config stripped.
 * node-gyp lets every `npm_config_*` variable OVERRIDE its command-line flags,
 * and npm exports ~/.npmrc into them: with `nodedir=/usr` there, an
 * "Electron" build silently compiles against Node's headers and reports
 * success. Only proxy and TLS settings are kept, so downloads still work
 * behind a proxy.
 */
function cleanBuildEnv(env = process.env) {
  const keep = new Set(['proxy', 'https_proxy', 'http_proxy', 'noproxy', 'no_proxy', 'cafile', 'ca', 'strict_ssl', 'strict-ssl'])
  const out = {}
  for (const [k, v] of Object.entries(env)) {
    const m = /^npm_config_(.*)$/i.exec(k)
    if (m && !keep.has(m[1].toLowerCase())) continue
    if (/^npm_package_config_node_gyp_/i.test(k)) continue
    if (k === 'ELECTRON_RUN_AS_NODE') continue
    out[k] = v
  }
  return out
}

/**
 * Does this addon register for `abi`? A V8 addon exports
 * `node_register_module_v<ABI>`; a Node-ABI build carries v115 (Node 20),
 * an Electron 45 build v150. A cheap static check that needs no Electron.
 */
function hasAbiSymbol(file, abi) {
  try {
    return fs.readFileSync(file).includes(Buffer.from(`node_register_module_v${abi}\0`))
  } catch {
    return false
  }
}

/** First meaningful line of a tool's error output (no stack frames, no gyp noise). */
function firstErrorLine(text) {
  const lines = String(text || '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
  const pick =
    lines.find((l) => /prebuild-install warn/.test(l)) ||
    lines.find((l) => /^gyp ERR! stack Error:/.test(l)) ||
    lines.find((l) => !/^at\s/.test(l) && !/^gyp (info|ERR! (stack|System|command|cwd|node|not ok))/.test(l)) ||
    ''
  return pick
    .replace(/^prebuild-install warn (install )?/, '')
    .replace(/^gyp ERR! stack Error: /, '')
    .replace(/^(TypeError|Error|FetchError|RequestError|HTTPError): /, '')
    .slice(0, 200)
}

/**
 * Run a command to completion with a timeout; never throws. Output is captured
 * (for the log and the one-line reason), not shown.
 * @returns {Promise<{code: number|null, signal: string|null, stdout: string, stderr: string, timedOut: boolean, error?: string}>}
 */
function runCommand(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    let timedOut = false
    let child
    try {
      child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env || process.env, stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (e) {
      resolve({ code: null, signal: null, stdout, stderr, timedOut, error: String((e && e.message) || e) })
      return
    }
    const notice = opts.slowNotice ? setTimeout(opts.slowNotice, opts.slowAfterMs || 3000) : null
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          timedOut = true
          child.kill('SIGTERM')
          setTimeout(() => child.kill('SIGKILL'), 2000).unref()
        }, opts.timeoutMs)
      : null
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', (e) => {
      if (timer) clearTimeout(timer)
      if (notice) clearTimeout(notice)
      resolve({ code: null, signal: null, stdout, stderr, timedOut, error: String((e && e.message) || e) })
    })
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer)
      if (notice) clearTimeout(notice)
      resolve({ code, signal, stdout, stderr, timedOut })
    })
  })
}

/** Can this Electron binary start at all (shared libraries present, not crashing)? */
function probeElectron(bin, env = process.env) {
  const r = spawnSync(bin, ['-e', 'process.stdout.write(String(process.versions.electron))'], {
    env: { ...cleanBuildEnv(env), ELECTRON_RUN_AS_NODE: '1' },
    encoding: 'utf8',
    timeout: 30_000,
  })
  if (r.status === 0 && /^\d+\.\d+\.\d+/.test(r.stdout || '')) return { ok: true, version: r.stdout.trim() }
  const why = r.error ? r.error.message : firstErrorLine(r.stderr) || `exit code ${r.status}`
  return { ok: false, reason: `the Electron binary does not start: ${why}` }
}

/** Is the recorded Electron-ABI build present and made for these versions? */
function abiBuildState(p = paths()) {
  const info = electronInfo(p)
  const bsq = betterSqlite3Version(p)
  const stamp = readJson(p.abiStamp)
  if (!info || !info.abi) return { ok: false, reason: 'the electron package is not installed' }
  if (!stamp) return { ok: false, reason: 'not built yet' }
  if (stamp.electronVersion !== info.version || stamp.betterSqlite3Version !== bsq || String(stamp.abi) !== String(info.abi)) {
    return {
      ok: false,
      reason: `built for Electron ${stamp.electronVersion} / better-sqlite3 ${stamp.betterSqlite3Version}, now ${info.version} / ${bsq}`,
      stale: true,
    }
  }
  if (!stamp.ok) return { ok: false, reason: stamp.reason || 'the last build failed', failedAt: stamp.at }
  if (!hasAbiSymbol(p.abiBinary, info.abi)) return { ok: false, reason: `${p.abiBinary} is missing or not built for ABI ${info.abi}`, stale: true }
  return { ok: true, binary: p.abiBinary }
}

/** Where npm's node-gyp is: npm tells scripts; else a local one; else the one beside npm. */
function findNodeGyp(root = ROOT, env = process.env) {
  const candidates = [
    env.npm_config_node_gyp,
    (() => {
      try {
        return require.resolve('node-gyp/bin/node-gyp.js', { paths: [root] })
      } catch {
        return undefined
      }
    })(),
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ]
  return candidates.find((c) => c && fs.existsSync(c)) || null
}

/** A failed build is retried after this long (or at once with --rebuild-abi / a version change). */
const RETRY_FAILED_AFTER_MS = 60 * 60 * 1000

/**
 * Make sure .cache/electron-abi/better_sqlite3.node exists, is for this
 * Electron's ABI, and loads under this Electron. Never touches
 * node_modules/better-sqlite3/build (the Node build tests use).
 *
 * Steps: copy the better-sqlite3 package (sources, not its build/) to a work
 * folder; there, prebuild-install for runtime electron; failing that node-gyp
 * against Electron's headers with npm's config stripped; then check the
 * exported ABI symbol and load it under `ELECTRON_RUN_AS_NODE=1 electron`
 * through `nativeBinding` before installing it.
 *
 * @param {object} o
 * @param {string} o.electronBin the Electron executable (verification needs it)
 * @param {boolean} [o.force] rebuild even if a good or recently failed build is recorded
 * @param {ReturnType<typeof paths>} [o.paths]
 * @param {typeof runCommand} [o.run] injected by tests
 * @param {(line: string) => void} [o.notice] a one-time "this takes a while" line
 * @param {number} [o.now]
 * @returns {Promise<{ok: boolean, reason?: string, skipped?: boolean, method?: string}>}
 */
async function ensureAbiBuild(o) {
  const p = o.paths || paths()
  const run = o.run || runCommand
  const now = o.now == null ? Date.now() : o.now
  const info = electronInfo(p)
  const bsq = betterSqlite3Version(p)
  if (!info || !info.abi || !bsq) return { ok: false, reason: 'electron or better-sqlite3 is not installed' }

  const state = abiBuildState(p)
  if (!o.force) {
    if (state.ok) return { ok: true, skipped: true }
    if (!state.stale && state.failedAt && now - state.failedAt < RETRY_FAILED_AFTER_MS) return { ok: false, skipped: true, reason: state.reason }
  }

  const pkgDir = path.join(p.abiWork, 'better-sqlite3')
  const built = path.join(pkgDir, 'build', 'Release', 'better_sqlite3.node')
  const env = cleanBuildEnv(o.env || process.env)
  const log = []
  const attempts = []
  const record = (step, r) => {
    log.push(
      `$ ${step}\nexit ${r.code}${r.signal ? ` (${r.signal})` : ''}${r.timedOut ? ' (timed out)' : ''}${r.error ? ` ${r.error}` : ''}\n${r.stdout}\n${r.stderr}\n`,
    )
  }

  fs.rmSync(p.abiWork, { recursive: true, force: true })
  fs.mkdirSync(p.abiWork, { recursive: true })
  // Sources only: its build/ is the Node-ABI addon and must neither be reused nor touched.
  fs.cpSync(p.betterSqlite3Dir, pkgDir, {
    recursive: true,
    filter: (src) => {
      const rel = path.relative(p.betterSqlite3Dir, src)
      return rel !== 'build' && rel !== 'node_modules' && !rel.startsWith(`build${path.sep}`) && !rel.startsWith(`node_modules${path.sep}`)
    },
  })

  let noticed = false
  const slowNotice = () => {
    if (noticed || !o.notice) return
    noticed = true
    o.notice(`building better-sqlite3 for Electron ${info.version} (first run only, can take a few minutes)…`)
  }

  let method = null
  // 1. A prebuilt binary for runtime electron (GitHub releases of better-sqlite3).
  let prebuild = null
  try {
    prebuild = require.resolve('prebuild-install/bin.js', { paths: [p.betterSqlite3Dir, p.root] })
  } catch {
    attempts.push('prebuild-install: not installed')
  }
  if (prebuild) {
    const args = [prebuild, '--runtime', 'electron', '--target', info.version, '--arch', process.arch, '--platform', process.platform, '--verbose']
    const r = await run(process.execPath, args, { cwd: pkgDir, env, timeoutMs: 180_000, slowNotice })
    record(`prebuild-install ${args.slice(1).join(' ')}`, r)
    if (r.code === 0 && fs.existsSync(built)) method = 'prebuild-install'
    else attempts.push(`prebuild-install: ${r.timedOut ? 'timed out' : firstErrorLine(r.stderr || r.stdout) || r.error || `exit ${r.code}`}`)
  }
  // 2. Compile against Electron's headers.
  if (!method) {
    const gyp = findNodeGyp(p.root, o.env || process.env)
    if (!gyp) attempts.push('node-gyp: not found')
    else {
      fs.rmSync(path.join(pkgDir, 'build'), { recursive: true, force: true })
      const args = [
        gyp,
        'rebuild',
        '--release',
        `--target=${info.version}`,
        `--arch=${process.arch}`,
        '--dist-url=https://electronjs.org/headers',
        '--runtime=electron',
        '--jobs=max',
      ]
      const r = await run(process.execPath, args, { cwd: pkgDir, env, timeoutMs: 30 * 60_000, slowNotice })
      record(`node-gyp ${args.slice(1).join(' ')}`, r)
      if (r.code === 0 && fs.existsSync(built)) method = 'node-gyp'
      else attempts.push(`node-gyp: ${r.timedOut ? 'timed out' : firstErrorLine(r.stderr || r.stdout) || r.error || `exit ${r.code}`}`)
    }
  }

  let reason = null
  let sqliteVersion = null
  if (method && !hasAbiSymbol(built, info.abi)) {
    // The trap this whole file exists for: "success" against Node's headers.
    reason = `${method} produced an addon that is not for Electron's ABI ${info.abi} (built against Node's headers?)`
  } else if (method) {
    // 3. It must load under this very Electron before we trust it.
    const script =
      "const D=require(process.env.RS_BSQ_DIR);const db=new D(':memory:',{nativeBinding:process.env.RS_BINDING});" +
      "const v=db.prepare('select sqlite_version() as v').get().v;db.close();process.stdout.write('ok '+process.versions.modules+' '+v)"
    const r = await run(o.electronBin, ['-e', script], {
      env: { ...env, ELECTRON_RUN_AS_NODE: '1', RS_BSQ_DIR: p.betterSqlite3Dir, RS_BINDING: built },
      timeoutMs: 60_000,
    })
    record('verify under Electron', r)
    const m = /^ok (\d+) (\S+)/.exec(r.stdout || '')
    if (r.code === 0 && m && m[1] === String(info.abi)) sqliteVersion = m[2]
    else reason = `the ${method} build does not load under Electron ${info.version}: ${firstErrorLine(r.stderr) || r.error || `exit ${r.code}`}`
  } else {
    reason = attempts.join('; ')
  }

  const stamp = {
    ok: !reason,
    electronVersion: info.version,
    abi: info.abi,
    betterSqlite3Version: bsq,
    method,
    sqliteVersion,
    at: now,
    reason: reason || undefined,
    attempts,
  }
  if (!reason) {
    const tmp = `${p.abiBinary}.${process.pid}.tmp`
    fs.copyFileSync(built, tmp)
    fs.renameSync(tmp, p.abiBinary)
  }
  writeJson(p.abiStamp, stamp)
  fs.writeFileSync(p.abiLog, log.join('\n'))
  fs.rmSync(p.abiWork, { recursive: true, force: true })
  return reason ? { ok: false, reason } : { ok: true, method }
}

module.exports = {
  ROOT,
  paths,
  readJson,
  writeJson,
  electronInfo,
  betterSqlite3Version,
  electronBinary,
  cleanBuildEnv,
  hasAbiSymbol,
  firstErrorLine,
  runCommand,
  probeElectron,
  abiBuildState,
  findNodeGyp,
  ensureAbiBuild,
  RETRY_FAILED_AFTER_MS,
}
