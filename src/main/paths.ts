/**
 * Where the app's own files are, whether running from src/ (tsx, vitest) or
 * from the electron-vite bundle in out/.
 */
import fs from 'node:fs'
import path from 'node:path'

let cached: string | null = null

/** The folder holding recallscope's package.json. */
export function appRoot(): string {
  if (cached) return cached
  let dir = __dirname
  for (;;) {
    const pkg = path.join(dir, 'package.json')
    if (fs.existsSync(pkg)) {
      try {
        if ((JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'recallscope') return (cached = dir)
      } catch {
        /* keep walking */
      }
    }
    const up = path.dirname(dir)
    if (up === dir) throw new Error(`Cannot find recallscope's package.json above ${__dirname}`)
    dir = up
  }
}

/** The built renderer (electron-vite output). */
export function rendererDir(): string {
  return path.join(appRoot(), 'out', 'renderer')
}

export function appVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(appRoot(), 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return '0.0.0'
  }
}
