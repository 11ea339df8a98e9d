import fs from 'node:fs'
import path from 'node:path'
import { generateDemo } from '../src/main/demo/generate'

export const CACHE = path.resolve(__dirname, '../.bench-cache')

/** A demo DB of n memories, generated once and reused across runs. */
export function demoDb(n: number): string {
  fs.mkdirSync(CACHE, { recursive: true })
  const p = path.join(CACHE, `demo-${n}.db`)
  if (!fs.existsSync(p)) {
    const t0 = performance.now()
    process.stdout.write(`generating ${n.toLocaleString('en-US')}-memory demo DB (once)… `)
    generateDemo({ out: p, memories: n })
    console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s`)
  }
  return p
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

export function fmtMs(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : ms < 100 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(0)} ms`
}
