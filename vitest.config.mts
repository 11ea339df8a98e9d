import os from 'node:os'
import { defineConfig } from 'vitest/config'
import react from '@vitejs/plugin-react'

/**
 * Test tiers (docs/internals/testing.md has the commands and measured times):
 *   unit         pure modules beside their code (src/main, src/shared, src/preload), node, without isolation
 *   dom          renderer components in jsdom, without isolation
 *   integration  test/*.test.ts, test/frameworks, test/conformance, test/trust3: stores, importers, the HTTP bridge, real files;
 *                without isolation
 *   pg           the Postgres tests (PGlite in a child process, each from a cached dump: test/helpers/pgServerWorker.mjs)
 *   shell        the built app, the CLI as a process, start scripts, packaging, `npm run bench -- --smoke`
 *   e2e          real Chromium against browser mode (needs `npm run build`)
 *   slow         the SLOW files of unit and integration (measured), so test:fast stays fast
 *   latency      the LATENCY files: run before every other project, one file at a time
 *   e2e-latency  the e2e file asserting a latency (live OTLP < 1 s): after those, alone, before the rest
 * `npm run test:fast` = unit + dom + integration (without SLOW and LATENCY); `npm test` runs every project.
 */

/** Postgres tests: their own tier (each starts PGlite). */
const PG = [
  'test/postgres.test.ts',
  'test/postgresTrust.test.ts',
  'test/mappedPostgres.test.ts',
  'test/mappedPostgresDialog.test.ts',
  'test/conformance/postgres.test.ts',
]

/**
 * Unit and integration files too heavy for the day-to-day tier (5–25 s of CPU each, the rest of unit and integration
 * 0–6 s; docs/internals/testing.md "Per-file CPU"): they run in the `slow` project, part of `npm test` but not of
 * test:fast.
 */
const SLOW = [
  'src/main/store/vectors/scanPool.test.ts',
  'src/main/trace/knobs.test.ts',
  'src/main/eval/tuneLocomo.test.ts',
  'src/main/eval/tune.test.ts',
  'src/main/eval/tuneScopeLocomo.test.ts',
  // UMAP layouts of 1,200-point sets against brute-force references (~13 s of CPU)
  'src/main/map/umapLayout.test.ts',
  // 10,000 fuzzed calls over every channel; 80 map jobs on 1,500 memories
  'test/contractFuzz.test.ts',
  'test/trust3/cpuPool.test.ts',
]

/**
 * Files that assert the main thread's latency while a worker computes or a store call hangs (app.info within
 * 200 ms, polled every 50 ms): with other files running beside them on 2 cores the latency measured is the
 * machine's, not the app's. Their project runs before all the others (GROUP_ORDER), one file at a time.
 */
const LATENCY = ['test/storeHost.test.ts', 'test/offThread.test.ts']

/** The e2e file asserting a latency (a live OTLP post shown within 1 s): the same rule, its own project. */
const E2E_LATENCY = ['test/e2e/liveOtlp.test.ts']

/**
 * The run's order (sequence.groupOrder: vitest runs each group after the one before ends, its files at most the
 * group's maxWorkers at a time): first the dom files in one worker and the latency files, one file at a time, then
 * the e2e latency file alone, then every other project together. First rather than last: `npm test`
 * (scripts/test.cjs) starts the static checks beside vitest, so while this group holds one core the checks use the
 * other. Run last, the latency files left that core idle (~45 s of wall time on 2 cores, the checks long done). The
 * checks are niced (they lose a contended core to the test), so the latency measured is still the app's. dom shares
 * the first group because one worker suits it (jsdom, React and the renderer's modules loaded once: 26 → 15 s of
 * CPU, docs/internals/testing.md) and vitest requires one maxWorkers per group; it never runs beside a latency file.
 */
const GROUP_ORDER = { firstAlone: 1, e2eLatency: 2, rest: 3 }

/**
 * Test files at a time: twice the cores. vitest's default (cores - 1) is ONE file at a time on 2 cores, and most
 * of the slow files (e2e, shell, pg, the worker and CLI tests) spend their time waiting on a child process, a
 * worker thread or Chromium; measured on 2 cores in docs/internals/testing.md. `--maxWorkers N` or
 * VITEST_MAX_WORKERS=N overrides it.
 */
const MAX_WORKERS = Math.max(2, os.availableParallelism()) * 2

/**
 * The node projects: worker threads started from source load scripts built once per run (test/helpers/testWorkers.ts)
 * instead of compiling through tsx on every start.
 */
const node = {
  environment: 'node' as const,
  sequence: { groupOrder: GROUP_ORDER.rest },
  testTimeout: 60_000,
  hookTimeout: 120_000,
  globalSetup: ['test/helpers/testWorkers.ts'],
  // RECALLSCOPE_TEST_CPU_LOG=FILE: each file appends its CPU time to FILE (docs/internals/testing.md, "Per-file CPU")
  setupFiles: process.env.RECALLSCOPE_TEST_CPU_LOG ? ['test/helpers/fileCpu.ts'] : [],
}

/**
 * Both e2e projects: real Chromium (one per worker, test/e2e/harness.ts) against `recallscope serve`.
 * Without isolation: a worker runs file after file and imports Playwright's client, the harness and the fixture
 * code once, and keeps its Chromium (docs/internals/testing.md has the CPU measured).
 * Each file still has its own `serve` process, temp home and DB copy, and each test its own browser context.
 */
const e2e = {
  environment: 'node' as const,
  sequence: { groupOrder: GROUP_ORDER.rest },
  isolate: false,
  testTimeout: 120_000,
  hookTimeout: 180_000,
  // expect.poll waits up to 5 s (vitest's default is 1 s), as Playwright's own waits are generous: files run
  // in parallel beside the checks. A test that claims a latency asserts it itself (liveOtlp: < 1 s).
  expect: { poll: { timeout: 5000 } },
  // Files run in parallel (each has its own server, temp home and DB copy; each test its own browser context).
  fileParallelism: true,
  // RECALLSCOPE_TEST_CPU_LOG=FILE: per-file CPU, the worker's Chromium included (docs/internals/testing.md, "Where the e2e CPU goes")
  setupFiles: process.env.RECALLSCOPE_TEST_CPU_LOG ? ['test/e2e/fileCpu.ts'] : [],
}

export default defineConfig({
  test: {
    maxWorkers: MAX_WORKERS,
    // Transformed modules on disk (node_modules/.experimental-vitest-cache), keyed on each file's content and the
    // project's vite config: every project has its own vite server, and the node projects share that config, so a
    // module that unit, integration, slow, pg and shell all import is transformed once per run instead of once per
    // project (vitest's main process 25.8 → 14.6 s of CPU from an empty cache, 8.1 s warm; docs/internals/testing.md
    // "stop 33: the run's own overhead"). `npx vitest --clearCache` empties it; vitest empties it itself when the
    // lockfile changes, so an `npm install` during a run breaks that run.
    experimental: { fsModuleCache: true },
    projects: [
      {
        test: {
          name: 'unit',
          ...node,
          // One module registry per worker (each worker imports a module once and the files it runs share it), with no
          // exceptions: passes with its files shuffled (--sequence.shuffle.files; docs/internals/testing.md "Isolation").
          isolate: false,
          include: ['src/main/**/*.test.ts', 'src/shared/**/*.test.ts', 'src/preload/**/*.test.ts'],
          exclude: SLOW,
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'dom',
          environment: 'jsdom',
          // one worker, before the rest, with the latency files (GROUP_ORDER)
          maxWorkers: 1,
          sequence: { groupOrder: GROUP_ORDER.firstAlone },
          // No fresh worker per file: each worker loads a module once and the files it runs share it (React, Testing
          // Library, jsdom, our components), so a dom test must not depend on module state another file left behind.
          // Passes in shuffled order (--sequence.shuffle); 50 → 21 s CPU (docs/internals/testing.md). unit does the same.
          // No file may vi.mock a module (a worker keeps the first module graph it built): the tests fake the preload
          // bridge (src/renderer/src/test/fakeBridge.ts) and count renders from React's commits (src/renderer/src/test/reactCommits.ts).
          isolate: false,
          include: ['src/renderer/**/*.test.{ts,tsx}'],
          // RECALLSCOPE_TEST_CPU_LOG=FILE: per-file CPU, as the node projects (docs/internals/testing.md, "Per-file CPU")
          setupFiles: ['src/renderer/src/test/setup.ts', ...node.setupFiles],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          ...node,
          // One module registry per worker, as unit: passes with its files shuffled (docs/internals/testing.md).
          isolate: false,
          include: ['test/*.test.ts', 'test/events/**/*.test.ts', 'test/frameworks/**/*.test.ts', 'test/conformance/**/*.test.ts', 'test/trust3/**/*.test.ts'],
          exclude: [...PG, ...SLOW, ...LATENCY],
        },
      },
      { test: { name: 'latency', ...node, include: LATENCY, maxWorkers: 1, sequence: { groupOrder: GROUP_ORDER.firstAlone } } },
      // One module registry per worker, as unit (pure computation, no module state between files): passes shuffled.
      { test: { name: 'slow', ...node, isolate: false, include: SLOW } },
      { test: { name: 'pg', ...node, include: PG } },
      { test: { name: 'shell', ...node, include: ['test/shell/**/*.test.ts'] } },
      {
        test: {
          name: 'e2e',
          ...e2e,
          include: ['test/e2e/**/*.test.ts'],
          exclude: E2E_LATENCY,
          // the demo DBs the files copy, generated once per run (harness.ts demoCopy)
          globalSetup: ['test/e2e/globalSetup.ts'],
        },
      },
      {
        test: {
          name: 'e2e-latency',
          ...e2e,
          include: E2E_LATENCY,
          // alone, after the latency files and before the rest: the latency it asserts is the app's, not the machine's under load
          maxWorkers: 1,
          sequence: { groupOrder: GROUP_ORDER.e2eLatency },
          // no globalSetup: its one file makes its own small DB
        },
      },
    ],
  },
})
