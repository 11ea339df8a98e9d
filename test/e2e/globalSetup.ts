/**
 * e2e globalSetup, once per run: the demo DBs the e2e files serve, generated into a temp folder (the generator
 * is deterministic, so a copy is the same DB a file would have generated itself); each file copies the one it
 * needs (harness.ts demoCopy), keeping its own bytes to hash. Saves a generation per file. Removed after the run.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { TestProject } from 'vitest/node'
import { generateDemo } from '../../src/main/demo/generate'
import { DEMO_SIZES, demoFileName } from './demoSizes'

export default function setup(project: TestProject): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-e2e-fixtures-'))
  for (const n of DEMO_SIZES) generateDemo({ out: path.join(dir, demoFileName(n)), ...(n === 'default' ? {} : { memories: n }) })
  project.provide('e2eDemoDir', dir)
  return () => fs.rmSync(dir, { recursive: true, force: true })
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder holding the prebuilt demo DBs (globalSetup.ts). */
    e2eDemoDir: string
  }
}
