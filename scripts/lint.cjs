#!/usr/bin/env node
/**
 * `npm run lint`: oxlint (.oxlintrc.json: eslint:recommended, typescript-eslint's type-aware rules through
 * tsgolint, the house rules) and then ESLint (eslint.config.mjs: the React hooks and React Compiler rules on the
 * renderer). Both always run, so one run shows every problem; the exit code is 1 if either found one.
 * docs/internals/testing.md ("Lint") says why the rules are split this way.
 *
 *   node scripts/lint.cjs [args…]     args go to both tools, e.g. `npm run lint -- --fix`
 */
'use strict'

const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.resolve(__dirname, '..')

/** A package's bin script (run by this node: no shell, same on Windows). */
function binOf(pkg, bin) {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), bin)
}

/** name → the tool's command line. */
const TOOLS = [
  ['oxlint', [binOf('oxlint', 'bin/oxlint'), '--max-warnings', '0']],
  ['eslint', [binOf('eslint', 'bin/eslint.js'), '.', '--max-warnings', '0', '--cache', '--cache-strategy', 'content', '--cache-location', '.cache/eslint/']],
]

function main(args) {
  const failed = []
  for (const [name, argv] of TOOLS) {
    const r = spawnSync(process.execPath, [...argv, ...args], { cwd: ROOT, stdio: 'inherit' })
    if (r.status !== 0) failed.push(`${name} (exit ${r.status ?? r.signal})`)
  }
  if (failed.length) process.stderr.write(`lint: FAILED: ${failed.join(', ')}\n`)
  return failed.length ? 1 : 0
}

process.exitCode = main(process.argv.slice(2))
