#!/usr/bin/env node
/**
 * `npm start [-- FILE]`: the Electron app when this machine can run it, else
 * browser mode (the same renderer and handlers over loopback HTTP), saying why
 * in one line. No FILE opens the demo DB, generated on first run.
 *
 *   RECALLSCOPE_BROWSER=1 npm start     always browser mode
 *
 * The decision is a pure function of facts (decideMode), so tests can check
 * every branch without an Electron binary.
 */
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const S = require('./electronSupport.cjs')
const B = require('./build.cjs')

const USAGE = 'usage: npm start [-- FILE]   (FILE: an agent memory DB; none opens the demo DB; RECALLSCOPE_BROWSER=1 forces browser mode)'

/** If Electron dies this soon with an error, it could not start here: fall back to browser mode. */
const EARLY_EXIT_MS = 15_000

/**
 * @param {string[]} argv what follows `npm start --`
 * @returns {{file: string|null, browser: boolean, help: boolean, error: string|null}}
 */
function parseStartArgs(argv) {
  const out = { file: null, browser: false, help: false, error: null }
  for (const a of argv) {
    if (a === '--help' || a === '-h') out.help = true
    else if (a === '--browser') out.browser = true
    else if (a.startsWith('-')) out.error = `unknown option ${a}`
    else if (out.file) out.error = `one file at a time (got ${out.file} and ${a})`
    else out.file = a
  }
  return out
}

/**
 * What this machine offers. Reads prestart's record for the reasons of
 * failures, but checks the binaries itself, so `node scripts/start.cjs` run
 * without prestart still decides right.
 */
function gatherFacts(o = {}) {
  const p = o.paths || S.paths()
  const env = o.env || process.env
  const platform = o.platform || process.platform
  const status = S.readJson(p.status) || {}
  const info = S.electronInfo(p)
  const facts = {
    forceBrowser: env.RECALLSCOPE_BROWSER === '1' || !!o.browserFlag,
    electron: { ok: false, missing: true, version: info ? info.version : null, reason: null, bin: null },
    abi: { ok: false, reason: null },
    display: { ok: true, reason: null },
    root: platform === 'linux' && typeof process.getuid === 'function' && (o.uid !== undefined ? o.uid : process.getuid()) === 0,
  }
  if (facts.forceBrowser) return facts
  const bin = S.electronBinary(p, env)
  if (!bin) {
    facts.electron.reason = (status.electron && status.electron.reason) || 'the Electron binary is not installed: npx install-electron'
  } else {
    const probe = (o.probe || S.probeElectron)(bin, env)
    facts.electron = { ok: probe.ok, missing: false, version: facts.electron.version, reason: probe.ok ? null : probe.reason, bin }
  }
  const abi = S.abiBuildState(p)
  facts.abi = { ok: abi.ok, reason: abi.ok ? null : abi.reason }
  if (platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) facts.display = { ok: false, reason: 'neither DISPLAY nor WAYLAND_DISPLAY is set' }
  return facts
}

/**
 * Electron or browser mode, and the one line that says why when it is not
 * Electron.
 * @returns {{mode: 'electron'|'browser', message: string|null}}
 */
function decideMode(f) {
  const fallback = (why) => ({ mode: 'browser', message: `recallscope: ${why}; starting browser mode instead.` })
  if (f.forceBrowser) return { mode: 'browser', message: 'recallscope: RECALLSCOPE_BROWSER=1, starting browser mode.' }
  if (!f.electron.ok && f.electron.missing) return fallback(`Electron could not be downloaded on this machine (${f.electron.reason})`)
  if (!f.electron.ok) return fallback(`Electron ${f.electron.version || ''} is installed but cannot start (${f.electron.reason})`.replace('  ', ' '))
  if (!f.abi.ok)
    return fallback(
      `better-sqlite3 could not be built for Electron ${f.electron.version || ''} (${f.abi.reason}; retry: npm run rebuild:electron-abi)`.replace('  ', ' '),
    )
  if (!f.display.ok) return fallback(`there is no display to open a window on (${f.display.reason})`)
  if (f.root) return fallback('Chromium refuses to run as root unless its sandbox is switched off, and recallscope keeps it on')
  return { mode: 'electron', message: null }
}

/** How browser mode is started: the CLI's serve command (it prints the URL). */
function browserCommand(file, p = S.paths()) {
  return { cmd: process.execPath, args: [p.cli, 'serve', ...(file ? ['--db', file] : ['--demo'])] }
}

/**
 * How the app is started: Electron on the project folder, so package.json's
 * "main" (out/main/index.js) runs and the app is named recallscope (its
 * userData folder follows the name), with the Electron-ABI addon's path.
 */
function electronCommand(bin, file, p = S.paths(), env = process.env) {
  const childEnv = { ...env, RECALLSCOPE_NATIVE_BINDING: p.abiBinary }
  delete childEnv.ELECTRON_RUN_AS_NODE
  return { cmd: bin, args: [p.root, ...(file ? [file] : [])], env: childEnv }
}

function say(line) {
  process.stderr.write(`${line}\n`)
}

/** Rebuild out/ when src/ changed (scripts/build.cjs decides, as for the CLI). */
function build(p) {
  const r = B.ensureBuild(p)
  if (r.ok) return true
  say(`recallscope: cannot start: ${r.reason}${r.output ? `\n${r.output}` : ''}`)
  return false
}

/** Run a child with the terminal, forwarding termination; resolves with its exit code. */
function runChild(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now()
    const child = spawn(cmd, args, { stdio: 'inherit', env: opts.env || process.env, cwd: opts.cwd })
    const forward = (sig) => () => {
      // Ctrl+C already reached the child through the process group; forward
      // only if it is still running a moment later (a `kill` aimed at us alone).
      const delay = sig === 'SIGINT' ? 500 : 0
      setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill(sig)
      }, delay).unref()
    }
    const handlers = { SIGINT: forward('SIGINT'), SIGTERM: forward('SIGTERM'), SIGHUP: forward('SIGHUP') }
    for (const [sig, h] of Object.entries(handlers)) process.on(sig, h)
    // npm forwards SIGTERM to the `sh -c` it runs us in, which dies without
    // passing it on: if our parent goes away, stop the child rather than
    // leave a server running with no one to stop it.
    const ppid = process.ppid
    const orphanWatch = setInterval(() => {
      if (process.ppid !== ppid) handlers.SIGTERM()
    }, 1000)
    orphanWatch.unref()
    const done = (code) => {
      clearInterval(orphanWatch)
      for (const [sig, h] of Object.entries(handlers)) process.off(sig, h)
      resolve({ code, ms: Date.now() - t0 })
    }
    child.on('error', (e) => {
      say(`recallscope: could not start ${cmd}: ${e.message}`)
      done(1)
    })
    child.on('close', (code, signal) => done(code == null ? (signal ? 1 : 0) : code))
  })
}

async function main(argv = process.argv.slice(2)) {
  const p = S.paths()
  const args = parseStartArgs(argv)
  if (args.help) {
    say(USAGE)
    return 0
  }
  if (args.error) {
    say(`recallscope: ${args.error}\n${USAGE}`)
    return 2
  }
  // npm runs scripts in the package folder; a relative FILE means the caller's folder.
  // A postgres:// URL is passed through as is (its password, if any, never echoed).
  const isUrl = !!args.file && /^postgres(ql)?:\/\//i.test(args.file)
  const file = args.file ? (isUrl ? args.file : path.resolve(process.env.INIT_CWD || process.cwd(), args.file)) : null
  if (file && !isUrl && !fs.existsSync(file)) {
    say(`recallscope: no such file: ${file}`)
    return 2
  }
  const facts = gatherFacts({ paths: p, browserFlag: args.browser })
  const decision = decideMode(facts)
  if (decision.message) say(decision.message)
  if (!build(p)) return 1

  if (decision.mode === 'electron') {
    const c = electronCommand(facts.electron.bin, file, p)
    const r = await runChild(c.cmd, c.args, { env: c.env, cwd: p.root })
    if (r.code === 0 || r.ms > EARLY_EXIT_MS) return r.code
    say(`recallscope: Electron exited at start (code ${r.code}); starting browser mode instead.`)
  }
  const b = browserCommand(file, p)
  return (await runChild(b.cmd, b.args, { cwd: p.root })).code
}

if (require.main === module) {
  main().then(
    (code) => {
      process.exitCode = code
    },
    (e) => {
      say(`recallscope: ${(e && e.stack) || e}`)
      process.exitCode = 1
    },
  )
}

module.exports = { parseStartArgs, gatherFacts, decideMode, isBuildStale: B.isBuildStale, browserCommand, electronCommand, USAGE }
