/**
 * The demo DB every first run opens: generated once (deterministic), reused after.
 */
import fs from 'node:fs'
import path from 'node:path'
import { generateDemo } from './demo/generate'

/** Make sure the demo DB exists at `p`; regenerate on request. Returns the path. */
export function ensureDemo(p: string, opts: { regenerate?: boolean; beforeReplace?: () => void; memories?: number } = {}): string {
  if (fs.existsSync(p) && !opts.regenerate) return p
  fs.mkdirSync(path.dirname(p), { recursive: true })
  opts.beforeReplace?.()
  generateDemo({ out: p, force: true, memories: opts.memories })
  return p
}
