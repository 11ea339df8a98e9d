/**
 * electron-vite build: out/main (Node, CJS: the app's main process and the
 * CLI), out/preload (sandboxed preload, CJS, self-contained), out/renderer
 * (React, minified, one chunk per heavy view). `electron-vite build` needs no
 * Electron binary, so `npm run build` works on machines where Electron could
 * not be downloaded; browser mode serves the same out/renderer.
 */
import { resolve } from 'node:path'
import { defineConfig, type UserConfig } from 'electron-vite'
import react from '@vitejs/plugin-react'
import { WORKER_ENTRIES } from './src/main/workerEntries'

const root = import.meta.dirname

const targets: Required<UserConfig> = {
  main: {
    build: {
      // better-sqlite3 (native), ollama… stay require()s of node_modules:
      // the native addon cannot be bundled, and the Electron-ABI build is picked
      // at run time through `nativeBinding`. Only `dependencies` are
      // externalized, so whatever main or the CLI requires at run time must be
      // listed there (renderer-only libraries are devDependencies).
      // zod is bundled instead: require('zod') loads 95 files (1 MB, every
      // locale) and cost ~90 ms of CPU in each thread that starts (the CLI, and
      // serve's main thread and both store host workers); bundled and
      // tree-shaken it adds ~170 kB to the shared chunk (docs/internals/performance.md).
      externalizeDeps: { exclude: ['zod'] },
      outDir: resolve(root, 'out/main'),
      // The CLI (bin/recallscope.cjs) runs this output under the user's Node
      // (package.json engines: >=20), not only under Electron's newer one.
      target: 'node20',
      rolldownOptions: {
        input: {
          index: resolve(root, 'src/main/index.ts'),
          // Exports main(argv); bin/recallscope.cjs requires it (built on first run).
          cli: resolve(root, 'src/main/cli/index.ts'),
          // The worker threads (out/main/<name>.js, where workerScript finds them): src/main/workerEntries.ts.
          ...Object.fromEntries(Object.entries(WORKER_ENTRIES).map(([name, entry]) => [name, resolve(root, 'src/main', entry)])),
        },
        output: { format: 'cjs' },
      },
    },
  },
  preload: {
    build: {
      // A sandboxed preload can require only 'electron' (and a few polyfilled
      // built-ins): it must be one CommonJS file with nothing else external.
      // It imports only types from src/shared, so no validator gets bundled.
      externalizeDeps: false,
      outDir: resolve(root, 'out/preload'),
      rolldownOptions: {
        input: { index: resolve(root, 'src/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].js' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'src/renderer'),
    // Relative asset URLs work for both file:// (Electron) and http://127.0.0.1 (browser mode).
    base: './',
    plugins: [react()],
    build: {
      outDir: resolve(root, 'out/renderer'),
      // electron-vite leaves the renderer unminified by default; it is loaded
      // over loopback HTTP in browser mode, so size matters there.
      minify: true,
      rolldownOptions: { input: resolve(root, 'src/renderer/index.html') },
    },
  },
}

/**
 * RECALLSCOPE_BUILD_TARGETS=main,renderer builds only those targets (scripts/build.cjs asks for the ones whose
 * sources changed since they were built); unset or empty, all three. Each target empties only its own out/ folder.
 */
const only = (process.env.RECALLSCOPE_BUILD_TARGETS ?? '').split(',')
const want = <K extends keyof UserConfig>(name: K): UserConfig[K] => (only.includes(name) || !only.some((n) => n in targets) ? targets[name] : undefined)

export default defineConfig({ main: want('main'), preload: want('preload'), renderer: want('renderer') })
