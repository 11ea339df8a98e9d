/**
 * Is out/ up to date with the sources, and building it when it is not.
 * Shared by `npm start` (scripts/start.cjs) and the CLI (bin/recallscope.cjs),
 * so both decide the same way. Plain CommonJS with no dependencies: it runs
 * before anything is built.
 */
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const S = require('./electronSupport.cjs')

/**
 * The build's three targets (electron.vite.config.ts): what each writes (the files this check looks at) and the
 * source folders it reads. They import one another only through src/shared (the arch rules in
 * .dependency-cruiser.cjs), so a target whose own sources did not change since it was built need not be built
 * again: editing main code rebuilds main alone (~1.5 s of CPU instead of ~3.5 s for all three).
 */
const TARGETS = {
  main: { outputs: ['out/main/index.js', 'out/main/cli.js'], inputs: ['src/main', 'src/shared'] },
  preload: { outputs: ['out/preload/index.js'], inputs: ['src/preload', 'src/shared'] },
  renderer: { outputs: ['out/renderer/index.html'], inputs: ['src/renderer', 'src/shared'] },
}
/** What every target reads besides its folders: a change here rebuilds all three. */
const COMMON_INPUTS = ['electron.vite.config.ts', 'package.json']
/** What `electron-vite build` writes and the app, browser mode and the CLI load. */
const OUTPUTS = Object.values(TARGETS).flatMap((t) => t.outputs)
/** What the build reads: a change in any of these makes some target stale. */
const INPUTS = ['src', ...COMMON_INPUTS]

/** How long a new lock holder waits before checking that a simultaneous takeover did not replace its lock. */
const TAKEOVER_SETTLE_MS = 150
/** A build lock older than this is left over from a killed build. */
const LOCK_STALE_MS = 5 * 60_000
const LOCK_WAIT_MS = 3 * 60_000

/** Newest mtime under a folder (files only), 0 if absent. */
function newestMtime(p) {
  let st
  try {
    st = fs.statSync(p)
  } catch {
    return 0
  }
  if (!st.isDirectory()) return st.mtimeMs
  let max = 0
  for (const e of fs.readdirSync(p, { withFileTypes: true })) max = Math.max(max, newestMtime(path.join(p, e.name)))
  return max
}

/**
 * Must `electron-vite build` run, and for which targets? A target is stale when one of its outputs is missing
 * or one of its inputs (its source folders, the build config, package.json) is newer than its oldest output.
 * `reason` names the first missing output (in OUTPUTS order) if any, else says the sources changed.
 * @returns {{stale: boolean, reason: string|null, missing: boolean, targets: string[]}}
 */
function isBuildStale(p = S.paths()) {
  const newest = new Map()
  const newestOf = (i) => {
    if (!newest.has(i)) newest.set(i, newestMtime(path.join(p.root, i)))
    return newest.get(i)
  }
  let firstMissing = null
  const targets = []
  for (const [name, t] of Object.entries(TARGETS)) {
    const outputs = t.outputs.map((o) => path.join(p.root, o))
    const missing = outputs.find((o) => !fs.existsSync(o))
    if (missing) {
      firstMissing ??= missing
      targets.push(name)
      continue
    }
    const oldestOut = Math.min(...outputs.map((o) => fs.statSync(o).mtimeMs))
    if (Math.max(...[...t.inputs, ...COMMON_INPUTS].map(newestOf)) > oldestOut) targets.push(name)
  }
  if (firstMissing) return { stale: true, reason: `${path.relative(p.root, firstMissing)} is missing`, missing: true, targets }
  if (targets.length) return { stale: true, reason: 'sources changed since the last build', missing: false, targets }
  return { stale: false, reason: null, missing: false, targets }
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** Is the process that took the lock still running? Unknown (no pid yet) counts as yes. */
function holderAlive(lock) {
  let pid
  try {
    pid = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8'))
  } catch {
    return true // just created, pid not written yet
  }
  if (!Number.isInteger(pid) || pid <= 0) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return e.code === 'EPERM'
  }
}

/**
 * Hold .cache/build.lock while fn runs, so two CLIs started together do not
 * both run electron-vite (which empties out/ while the other reads it).
 * A lock whose process is gone, or older than LOCK_STALE_MS, is taken over.
 * Returns null when another build held the lock too long.
 */
function withBuildLock(p, fn) {
  const lock = path.join(p.cache, 'build.lock')
  fs.mkdirSync(p.cache, { recursive: true })
  const until = Date.now() + LOCK_WAIT_MS
  for (;;) {
    try {
      fs.mkdirSync(lock)
      try {
        fs.writeFileSync(path.join(lock, 'pid'), String(process.pid))
      } catch (e) {
        // Another process judged the previous (dead) holder's lock stale and removed it just after we
        // created ours: we lost that race, so try again rather than fail the build.
        if (e.code === 'ENOENT') continue
        throw e
      }
      // Two processes can judge a dead holder's lock stale at the same moment: one removes it and takes
      // the lock, then the other's removal (decided on the old pid) takes ours. Whoever's pid is in the
      // lock a moment later holds it; the other waits like anyone else.
      sleepSync(TAKEOVER_SETTLE_MS)
      let mine = false
      try {
        mine = fs.readFileSync(path.join(lock, 'pid'), 'utf8') === String(process.pid)
      } catch {
        mine = false
      }
      if (mine) break
      continue
    } catch (e) {
      if (e.code !== 'EEXIST') throw e
      let age
      try {
        age = Date.now() - fs.statSync(lock).mtimeMs
      } catch {
        continue // released between the two calls
      }
      if (age > LOCK_STALE_MS || !holderAlive(lock)) fs.rmSync(lock, { recursive: true, force: true })
      else if (Date.now() > until) return null
      else sleepSync(200)
    }
  }
  try {
    return fn()
  } finally {
    fs.rmSync(lock, { recursive: true, force: true })
  }
}

/**
 * Build out/ if it is stale: the stale targets only (isBuildStale). `notice(reason)`
 * is called once, just before a build starts, for the caller's one line. Never throws.
 *
 * When outputs exist but are older than the sources and electron-vite is not
 * installed (an install without dev dependencies), the existing build is used:
 * `stale` says so.
 *
 * @param {ReturnType<typeof S.paths>} [p]
 * @param {{notice?: (reason: string) => void}} [o]
 * @returns {{ok: true, built: boolean, stale?: string} | {ok: false, reason: string, output?: string}}
 */
function ensureBuild(p = S.paths(), o = {}) {
  const first = isBuildStale(p)
  if (!first.stale) return { ok: true, built: false }
  if (!fs.existsSync(p.electronVite)) {
    if (!first.missing) return { ok: true, built: false, stale: first.reason }
    return { ok: false, reason: `${first.reason} and cannot be built: electron-vite is not installed (run npm install, with dev dependencies)` }
  }
  try {
    const r = withBuildLock(p, () => {
      // Another process may have built it while we waited for the lock.
      const s = isBuildStale(p)
      if (!s.stale) return { ok: true, built: false }
      if (o.notice) o.notice(s.reason)
      // Only the stale targets (electron.vite.config.ts reads the list; each target empties only its own out/ folder).
      const b = spawnSync(process.execPath, [p.electronVite, 'build'], {
        cwd: p.root,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, RECALLSCOPE_BUILD_TARGETS: s.targets.join(',') },
      })
      if (b.status === 0) return { ok: true, built: true }
      const output = `${b.stdout || ''}${b.stderr || ''}`
      const why = b.error ? b.error.message : S.firstErrorLine(b.stderr) || S.firstErrorLine(b.stdout) || `exit code ${b.status}`
      return { ok: false, reason: `${s.reason} and electron-vite build failed: ${why}`, output }
    })
    return r || { ok: false, reason: `another build has held ${path.join(p.cache, 'build.lock')} for over ${LOCK_WAIT_MS / 60_000} minutes` }
  } catch (e) {
    return { ok: false, reason: `cannot build: ${(e && e.message) || e}` }
  }
}

module.exports = { TARGETS, OUTPUTS, INPUTS, newestMtime, isBuildStale, ensureBuild }
