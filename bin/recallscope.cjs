#!/usr/bin/env node
/**
 * recallscope CLI. Runs the compiled CLI, out/main/cli.js (electron-vite
 * builds it beside the app's main process). When out/ is missing or older
 * than src/ (the check `npm start` makes, scripts/build.cjs), it builds first
 * and says so in one line on stderr, so the CLI works right after
 * `npm install` and always runs the code in src/. stdout stays the command's
 * own (--json output is never mixed with build chatter).
 */
'use strict'

const path = require('node:path')
const { paths } = require('../scripts/electronSupport.cjs')
const { ensureBuild } = require('../scripts/build.cjs')

function say(line) {
  process.stderr.write(`recallscope: ${line}\n`)
}

const p = paths()
const b = ensureBuild(p, { notice: (why) => say(`building the app first (${why}; electron-vite build, a few seconds)…`) })
if (!b.ok) {
  say(b.reason)
  process.exitCode = 1
} else {
  if (b.stale) say(`running the existing build in out/ (${b.stale}, and electron-vite is not installed to rebuild it)`)
  require(path.join(p.root, 'out', 'main', 'cli.js'))
    .main(process.argv.slice(2))
    .then(
      (code) => {
        process.exitCode = code
      },
      (e) => {
        say(`${(e && e.stack) || e}`)
        process.exitCode = 1
      },
    )
}
