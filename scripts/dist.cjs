#!/usr/bin/env node
/**
 * `npm run dist [-- electron-builder args]`: the installers (electron-builder.yml; AppImage + deb on
 * Linux, dmg on macOS, nsis on Windows, each built on its own OS) in dist/.
 *
 *   1. electron-vite build (out/);
 *   2. electron-builder, which runs @electron/rebuild on the production dependencies so the packaged
 *      better-sqlite3 is built for Electron's ABI;
 *   3. put back this checkout's Node-ABI better-sqlite3 addon.
 *
 * Step 3 exists because electron-builder rebuilds node_modules/better-sqlite3 IN PLACE (this repo has one
 * package.json, no separate app/ folder): afterwards the addon only loads under Electron, and `npm test`,
 * the CLI and browser mode (plain Node) fail to open any DB. The addon file is saved before and restored
 * after, whatever electron-builder did, so a dist run never breaks the working tree.
 */
'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.resolve(__dirname, '..')
const ADDON_DIR = path.join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release')
const ADDON = path.join(ADDON_DIR, 'better_sqlite3.node')

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' })
  return r.status ?? 1
}

function main(argv) {
  const saved = fs.existsSync(ADDON) ? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-dist-')), 'better_sqlite3.node') : null
  if (saved) fs.copyFileSync(ADDON, saved)
  let code = run('npm', ['run', 'build'])
  try {
    if (code === 0) code = run(process.execPath, [require.resolve('electron-builder/cli.js', { paths: [ROOT] }), '--publish', 'never', ...argv])
  } finally {
    if (saved) {
      fs.mkdirSync(ADDON_DIR, { recursive: true })
      fs.copyFileSync(saved, ADDON)
      fs.rmSync(path.dirname(saved), { recursive: true, force: true })
      process.stderr.write('recallscope: restored the Node-ABI better-sqlite3 addon electron-builder rebuilt for Electron\n')
    }
  }
  return code
}

if (require.main === module) process.exitCode = main(process.argv.slice(2))
