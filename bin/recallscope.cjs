#!/usr/bin/env node
// recallscope CLI: runs the TypeScript sources through tsx, so the CLI is
// always the code in src/ (no build step between an edit and a run).
'use strict'
require('tsx/cjs/api').register()
require('../src/main/cli/index.ts')
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code
  })
