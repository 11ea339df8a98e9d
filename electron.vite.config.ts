/**
 * electron-vite build: out/main (Node, CJS: the app's main process and the
 * CLI), out/preload (sandboxed preload, CJS, self-contained), out/renderer
 * (React, minified, one chunk per heavy view). `electron-vite build` needs no
 * Electron binary, so `npm run build` works on machines where Electron could
 * not be downloaded; browser mode serves the same out/renderer.
 */
import { resolve } from 'node:path'
import { defineConfig } from 'electron-vite'
import react from '@vitejs/plugin-react'

const root = import.meta.dirname

export default defineConfig({
  main: {
    build: {
      // better-sqlite3 (native), zod, ollama… stay require()s of node_modules:
      // the native addon cannot be bundled, and the Electron-ABI build is picked
      // at run time through `nativeBinding`. Only `dependencies` are
      // externalized, so whatever main or the CLI requires at run time must be
      // listed there (renderer-only libraries are devDependencies).
      externalizeDeps: true,
      outDir: resolve(root, 'out/main'),
      // The CLI (bin/recallscope.cjs) runs this output under the user's Node
      // (package.json engines: >=20), not only under Electron's newer one.
      target: 'node20',
      rolldownOptions: {
        input: {
          index: resolve(root, 'src/main/index.ts'),
          // Exports main(argv); bin/recallscope.cjs requires it (built on first run).
          cli: resolve(root, 'src/main/cli/index.ts'),
          // The Postgres pool's worker thread (store/postgres/bridge.ts loads out/main/pgWorker.js).
          pgWorker: resolve(root, 'src/main/store/postgres/pgWorker.ts'),
          // The embedding map's PCA / UMAP worker thread (map/runMapTask.ts loads out/main/mapWorker.js).
          mapWorker: resolve(root, 'src/main/map/mapWorker.ts'),
          // The job worker: evals, tunes and why-nots off the main thread (jobs/offThread.ts loads out/main/jobWorker.js).
          jobWorker: resolve(root, 'src/main/jobs/jobWorker.ts'),
          // The store host: each open store, and every channel that touches it (host/storeHost.ts loads out/main/hostWorker.js).
          hostWorker: resolve(root, 'src/main/host/hostWorker.ts'),
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
})
