/**
 * e2e globalSetup, once per run:
 * - the demo DBs the e2e files serve, generated into a temp folder (the generator is deterministic, so a
 *   copy is the same DB a file would have generated itself); each file copies the one it needs (harness.ts
 *   demoCopy), keeping its own bytes to hash. Saves a generation per file. Removed after the run.
 * - one Chromium, launched as a server; every file connects to it and opens its own contexts (harness.ts
 *   openBrowser). Closed after the run.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { chromium } from 'playwright-core'
import type { TestProject } from 'vitest/node'
import { generateDemo } from '../../src/main/demo/generate'
import { CHROMIUM_ARGS, findChromium } from '../helpers/chromium'

/** The sizes the e2e files use; `default` is generateDemo's own default size. */
export const DEMO_SIZES = ['default', 600, 2000, 3000] as const

export function demoFileName(memories: (typeof DEMO_SIZES)[number]): string {
  return `demo-${memories}.db`
}

/** The Chromium the e2e tests drive (test/helpers/chromium.ts: the headless shell when installed), or null. */
export const chromiumPath = findChromium

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-e2e-fixtures-'))
  const exe = chromiumPath()
  // Launched while the DBs are generated (its start is mostly waiting on its own processes).
  const server = exe ? chromium.launchServer({ executablePath: exe, headless: true, args: CHROMIUM_ARGS }) : null
  for (const n of DEMO_SIZES) generateDemo({ out: path.join(dir, demoFileName(n)), ...(n === 'default' ? {} : { memories: n }) })
  project.provide('e2eDemoDir', dir)
  // No Chromium: the files skip (their `ready` checks chromiumPath()), and openBrowser says what is missing.
  project.provide('e2eChromiumWs', server ? (await server).wsEndpoint() : null)
  return async () => {
    await (await server)?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder holding the prebuilt demo DBs (globalSetup.ts). */
    e2eDemoDir: string
    /** The shared Chromium's websocket endpoint (playwright-core connect), or null when none is installed. */
    e2eChromiumWs: string | null
  }
}
