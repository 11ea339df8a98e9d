#!/usr/bin/env node
/**
 * `npm start`'s first half (npm runs it as "prestart"): get what the Electron
 * app needs, or find out why it cannot be had, and record that in
 * .cache/prestart.json for start.cjs to report in one line.
 *
 *   1. the Electron binary: `install-electron` (the electron package has no
 *      postinstall, so a plain `npm install` never downloads it);
 *   2. better-sqlite3 built for Electron's ABI, beside the Node build
 *      (see electronSupport.cjs).
 *
 * It never fails `npm start`: whatever goes wrong, it exits 0 and start.cjs
 * falls back to browser mode. Quiet unless a step takes long.
 *
 *   node scripts/prestart.cjs [--rebuild-abi]
 */
'use strict'

const path = require('node:path')
const S = require('./electronSupport.cjs')

/** @default 10 minutes: the Electron zip is ~100 MB; a stalled network must not hang `npm start` forever. */
const ELECTRON_INSTALL_TIMEOUT_MS = Number(process.env.RECALLSCOPE_ELECTRON_TIMEOUT_MS) || 10 * 60_000

function say(line) {
  process.stderr.write(`recallscope: ${line}\n`)
}

/**
 * Electron binary present and starting, downloading it first if needed.
 * @returns {Promise<{ok: boolean, bin?: string, version?: string, reason?: string, downloaded?: boolean}>}
 */
async function ensureElectron(p = S.paths(), run = S.runCommand) {
  const info = S.electronInfo(p)
  if (!info) return { ok: false, reason: 'the electron package is not installed (run npm install)' }
  let bin = S.electronBinary(p)
  let downloaded = false
  if (!bin) {
    const installer = path.join(p.electronDir, 'install.js')
    const r = await run(process.execPath, [installer], {
      cwd: p.root,
      env: process.env,
      timeoutMs: ELECTRON_INSTALL_TIMEOUT_MS,
      slowNotice: () => say(`downloading Electron ${info.version} (first run only)…`),
    })
    bin = S.electronBinary(p)
    if (!bin) {
      const why = r.timedOut
        ? `timed out after ${Math.round(ELECTRON_INSTALL_TIMEOUT_MS / 1000)} s`
        : S.firstErrorLine(r.stderr || r.stdout) || r.error || `install-electron exited ${r.code}`
      return { ok: false, reason: why }
    }
    downloaded = true
  }
  const probe = S.probeElectron(bin)
  if (!probe.ok) return { ok: false, bin, reason: probe.reason }
  return { ok: true, bin, version: probe.version, downloaded }
}

async function prestart(argv = process.argv.slice(2), p = S.paths()) {
  const status = { at: Date.now(), forcedBrowser: false, electron: null, abi: null }
  if (process.env.RECALLSCOPE_BROWSER === '1') {
    // Browser mode needs neither Electron nor its ABI build: don't download 100 MB for nothing.
    status.forcedBrowser = true
    return status
  }
  status.electron = await ensureElectron(p)
  if (!status.electron.ok) {
    // Without a runnable Electron the addon could not be verified (nor used).
    status.abi = { ok: false, skipped: true, reason: 'needs a runnable Electron' }
    return status
  }
  status.abi = await S.ensureAbiBuild({ electronBin: status.electron.bin, force: argv.includes('--rebuild-abi'), paths: p, notice: say })
  return status
}

if (require.main === module) {
  prestart()
    .catch((e) => ({ at: Date.now(), error: String((e && e.stack) || e) }))
    .then((status) => {
      try {
        S.writeJson(S.paths().status, status)
      } catch (e) {
        say(`could not record prestart status: ${e.message}`)
      }
      if (process.argv.includes('--rebuild-abi') && status.abi) {
        say(
          status.abi.ok
            ? `Electron-ABI better-sqlite3 ready (${status.abi.method || 'cached'})`
            : `Electron-ABI better-sqlite3 not built: ${status.abi.reason}`,
        )
      }
      // Never fail `npm start`: start.cjs reads the status and falls back.
      process.exitCode = 0
    })
}

module.exports = { prestart, ensureElectron }
