import os from 'node:os'
import { defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
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
 *   latency      storeHost.test.ts, which asserts latencies: first, beside only the dom files (their worker niced)
 *   latency-alone offThread.test.ts, which asserts latencies with both cores busy: next, alone
 *   e2e-latency  the e2e file asserting a latency (live OTLP < 1 s): after those, alone, before the rest
 * `npm run test:fast` = unit + dom + integration (without SLOW and the latency files); `npm test` runs every project.
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
 * machine's, not the app's. They run before all the others (GROUP_ORDER), one file at a time: `latency` beside
 * nothing but the niced dom worker, `latency-alone` (a tune and why-nots in workers: both cores) beside nothing.
 */
const LATENCY = ['test/storeHost.test.ts']
const LATENCY_ALONE = ['test/offThread.test.ts']

/** The e2e file asserting a latency (a live OTLP post shown within 1 s): the same rule, its own project. */
const E2E_LATENCY = ['test/e2e/liveOtlp.test.ts']

/**
 * The run's order (sequence.groupOrder: vitest runs each group after the one before ends, its files at most the
 * group's maxWorkers at a time): first `latency` and the dom files side by side (two workers: storeHost.test.ts in
 * one, started first by LatencyFirst below, the dom files one after another in the other), then `latency-alone`,
 * then the e2e latency file alone, then every other project together. First rather than last: `npm test`
 * (scripts/test.cjs) starts the static checks beside vitest, so while these groups hold one core the checks use the
 * other. Run last, the latency files left that core idle (~45 s of wall time on 2 cores, the checks long done). The
 * checks are niced (they lose a contended core to the test), and so is the dom worker (test/helpers/niceWorker.ts),
 * so the latency measured is still the app's. dom shares the first group because one worker suits it (jsdom, React
 * and the renderer's modules loaded once: 26 → 15 s of CPU, docs/internals/testing.md) and storeHost.test.ts waits
 * on its deadlines for much of its ~20 s, which left a core idle when dom ran before it, alone
 * (docs/internals/testing.md "stop 34: the run's order").
 */
const GROUP_ORDER = { latencyBesideDom: 1, latencyAlone: 2, e2eLatency: 3, rest: 4 }

/**
 * vitest's order (BaseSequencer: by groupOrder, then by project name, …) with the latency projects' files first in
 * their group: in the first group the dom files (project `dom` sorts before `latency`) would otherwise take both
 * workers and storeHost.test.ts start only when they were done.
 */
class LatencyFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const latency = (f: TestSpecification) => (f.project.name.startsWith('latency') ? 0 : 1)
    // Array.prototype.sort is stable: the base order is kept within each part
    return (await super.sort(files)).sort((a, b) => a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder || latency(a) - latency(b))
  }
}

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
    sequence: { sequencer: LatencyFirst },
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
          // beside storeHost.test.ts, before the rest (GROUP_ORDER): two workers in that group, one for each
          maxWorkers: 2,
          sequence: { groupOrder: GROUP_ORDER.latencyBesideDom },
          // No fresh worker per file: each worker loads a module once and the files it runs share it (React, Testing
          // Library, jsdom, our components), so a dom test must not depend on module state another file left behind.
          // Passes in shuffled order (--sequence.shuffle); 50 → 21 s CPU (docs/internals/testing.md). unit does the same.
          // No file may vi.mock a module (a worker keeps the first module graph it built): the tests fake the preload
          // bridge (src/renderer/src/test/fakeBridge.ts) and count renders from React's commits (src/renderer/src/test/reactCommits.ts).
          isolate: false,
          include: ['src/renderer/**/*.test.{ts,tsx}'],
          // RECALLSCOPE_TEST_CPU_LOG=FILE: per-file CPU, as the node projects (docs/internals/testing.md, "Per-file CPU")
          // niceWorker: the dom worker runs beside a latency file and must lose a contended core to it, as the niced checks do
          setupFiles: ['test/helpers/niceWorker.ts', 'src/renderer/src/test/setup.ts', ...node.setupFiles],
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
          exclude: [...PG, ...SLOW, ...LATENCY, ...LATENCY_ALONE],
        },
      },
      { test: { name: 'latency', ...node, include: LATENCY, maxWorkers: 2, sequence: { groupOrder: GROUP_ORDER.latencyBesideDom } } },
      { test: { name: 'latency-alone', ...node, include: LATENCY_ALONE, maxWorkers: 1, sequence: { groupOrder: GROUP_ORDER.latencyAlone } } },
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
