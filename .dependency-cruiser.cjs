/**
 * Architecture rules as code (docs/internals/style.md, "One interface, many stores" and
 * "Core vs shell"). `npm run arch` checks src/, bench/, scripts/ and test/ against them; a violation
 * prints the rule's name, the offending import (from → to) and the rule's
 * `comment`, which says why the boundary exists.
 *
 * What dependency-cruiser cannot see (SQL text outside src/main/store/) is
 * checked by test/architecture.test.ts.
 */

/** The shell files: the only main-process code that may touch Electron. */
const ELECTRON_SHELL = ['^src/main/index[.]ts$', '^src/main/window[.]ts$', '^src/main/security[.]ts$', '^src/main/ipc[.]ts$', '^src/preload/']

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Import cycles make module initialisation order matter (a value read before its module finished loading is undefined), ' +
        'stop the bundler from splitting code, and tie modules that should be testable alone. Type-only cycles count too: ' +
        'they are the same design knot. Move the shared piece into a third module that both import.',
      from: { path: '^(src|bench|scripts|test)/' },
      to: { circular: true },
    },
    {
      name: 'db-driver-only-in-store',
      severity: 'error',
      comment:
        'Database drivers (better-sqlite3, pg, sqlite-vec) are used only under src/main/store/: one layer owns every connection, ' +
        'so every query goes through the store interface with its read-only/write-mode guard, time limit and truncation ' +
        "(Datasette's Database). A driver import elsewhere is a second, unguarded way into the agent's DB. " +
        'Ask the store for what you need (add a method to its interface) instead. Tests (*.test.ts) are exempt: checking ' +
        'that the store left a DB untouched, or building a fixture, needs a connection independent of the store under test.',
      from: { path: '^src/', pathNot: ['^src/main/store/', '[.]test[.]tsx?$'] },
      to: { path: '(^|/)node_modules/(@types/)?(better-sqlite3|pg|sqlite-vec)/' },
    },
    {
      name: 'electron-only-in-shell',
      severity: 'error',
      comment:
        'Only the Electron shell (src/main/index.ts, window.ts, security.ts, ipc.ts and src/preload/) may import electron. ' +
        'Everything else (store, recall engine, eval, the CLI, the loopback HTTP server) must run under plain Node: ' +
        'the CLI, browser mode and the tests run without an Electron binary. Pass what the core needs in as a parameter.',
      from: { path: '^src/', pathNot: ELECTRON_SHELL },
      to: { path: '(^|/)node_modules/electron/' },
    },
    {
      name: 'renderer-not-to-main-or-preload',
      severity: 'error',
      comment:
        'The renderer is a sandboxed web page: it reaches main only through the contract (src/shared) via ' +
        'src/renderer/src/lib/api.ts (preload bridge in Electron, loopback HTTP in browser mode). Importing main or preload ' +
        'code would bundle Node-only modules into the page, or bypass the validated IPC boundary. ' +
        'Put shared types and pure logic in src/shared instead.',
      from: { path: '^src/renderer/' },
      to: { path: '^src/(main|preload)/' },
    },
    {
      name: 'build-targets-apart',
      severity: 'error',
      comment:
        'main and preload import each other, and the renderer, only through src/shared: scripts/build.cjs rebuilds a ' +
        'target only when its own folder, src/shared or the build config changed, so an import across targets would ' +
        'leave a stale build in out/.',
      from: { path: '^src/(main|preload)/', pathNot: '[.]test[.]tsx?$' },
      to: { path: '^src/(main|preload|renderer)/', pathNot: '^src/$1/' },
    },
    {
      name: 'shared-is-platform-free',
      severity: 'error',
      comment:
        'src/shared runs on both sides (main under Node, the renderer in the browser; the scoring math is the same code in the ' +
        'engine and in the live preview), so it may use neither Node built-ins nor DOM/React packages, and never main, ' +
        'preload or renderer code (that would also make a cycle between the layers). Keep platform code in main or renderer ' +
        'and pass the result in.',
      from: { path: '^src/shared/' },
      to: {
        dependencyTypes: ['core'],
      },
    },
    {
      name: 'shared-is-platform-free',
      severity: 'error',
      comment:
        'src/shared runs on both sides (main under Node, the renderer in the browser; the scoring math is the same code in the ' +
        'engine and in the live preview), so it may use neither Node built-ins nor DOM/React packages, and never main, ' +
        'preload or renderer code (that would also make a cycle between the layers). Keep platform code in main or renderer ' +
        'and pass the result in.',
      from: { path: '^src/shared/' },
      to: {
        path: [
          '^src/(main|preload|renderer)/',
          '(^|/)node_modules/(@types/)?(react|react-dom|recharts|electron|jsdom)/',
          '(^|/)node_modules/@tanstack/react-',
          '(^|/)node_modules/@testing-library/',
        ],
      },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that cannot be resolved is a typo or a dependency missing from package.json; the rules above cannot ' + 'check what they cannot see.',
      from: { path: '^(src|bench|scripts|test)/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'vitest-only-in-tests',
      severity: 'error',
      comment:
        'A module that imports vitest crashes when anything but vitest loads it: a test helper that imported it took every ' +
        'bench down (npm run bench) on main for a whole wave. Only test files and the test-only modules (test/helpers/assertions.ts, test/helpers/eventChecks.ts, test/conformance/spec.ts, test/conformance/eventSpec.ts, ' +
        'test/e2e/harness.ts, test/e2e/globalSetup.ts, src/renderer/src/test/setup.ts, src/renderer/src/test/withFakeBridge.ts, test/helpers/fileCpu.ts, test/e2e/fileCpu.ts) may; .oxlintrc.json has the same rule (no-restricted-imports) for the editor.',
      from: {
        pathNot: [
          '[.]test[.]tsx?$',
          '^test/helpers/assertions[.]ts$',
          '^test/helpers/eventChecks[.]ts$',
          '^test/conformance/spec[.]ts$',
          '^test/conformance/eventSpec[.]ts$',
          '^test/e2e/harness[.]ts$',
          '^test/e2e/globalSetup[.]ts$',
          '^src/renderer/src/test/setup[.]ts$',
          '^src/renderer/src/test/withFakeBridge[.]ts$',
          '^test/helpers/fileCpu[.]ts$',
          '^test/e2e/fileCpu[.]ts$',
        ],
      },
      to: { path: '(^|/)node_modules/(vitest|@vitest/[^/]+)/' },
    },
    {
      name: 'app-not-to-tests-or-benches',
      severity: 'error',
      comment:
        'The app (src/, minus its *.test.ts files) ships; test/ and bench/ do not. An import from them would bundle test ' +
        'fixtures into the app, or break the packaged build where they are absent. Move what both need into src/.',
      from: { path: '^src/', pathNot: ['[.]test[.]tsx?$', '^src/renderer/src/test/'] },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    // Type-only imports are dependencies too (a cycle through types is still a cycle; a type from better-sqlite3
    // outside the store means a connection handle travels where it should not).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.node.json' },
    // Resolve `import … from './x'` to x.ts / x.tsx / x.d.ts the way the bundler does.
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.d.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    // Stop at the package boundary: what a dependency imports is not ours to check.
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)out/', '[.]css$'] },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
}
