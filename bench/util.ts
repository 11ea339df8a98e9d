import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { generateDemo } from '../src/main/demo/generate'
import { CanonicalWriter, type CanonicalMemoryRow } from '../src/main/store/sqlite/canonicalWriter'
import { CACHE } from './scale'

export { CACHE }

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

/** The p-quantile (0 < p ≤ 1) by the nearest-rank method: the smallest value with at least p of them at or below it. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]
}

export function fmtMs(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : ms < 100 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(0)} ms`
}

/** A unit vector with Gaussian coordinates (an isotropic direction), written at `out[off…]`: deterministic from `rng`. */
export function gaussianUnit(rng: () => number, dim: number, out: Float32Array, off = 0): void {
  let s = 0
  for (let i = 0; i < dim; i += 2) {
    // Box–Muller: two normals per two uniforms (isotropic directions, unlike uniform coordinates).
    const u = Math.max(rng(), 1e-12)
    const v = rng()
    const r = Math.sqrt(-2 * Math.log(u))
    const a = r * Math.cos(2 * Math.PI * v)
    const b = r * Math.sin(2 * Math.PI * v)
    out[off + i] = a
    if (i + 1 < dim) out[off + i + 1] = b
    s += a * a + (i + 1 < dim ? b * b : 0)
  }
  const inv = 1 / Math.sqrt(s)
  for (let i = 0; i < dim; i++) out[off + i] *= inv
}

/** "load average 1.02 0.80 0.75 on 2 cores": printed beside timings, which a busy machine inflates. */
export function loadLine(): string {
  return `load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} on ${os.cpus().length} cores`
}

/** Memory m<i> of a synthetic bench DB (millionapp, lexicalapp): one agent, 100 users, sessions of 50, a second apart from t0. */
export function benchMemory(i: number, content: string, t0: number): CanonicalMemoryRow {
  return {
    id: `m${i}`,
    agent_id: 'agent',
    user_id: `u${i % 100}`,
    session_id: `s${Math.floor(i / 50)}`,
    role: 'user',
    kind: 'episodic',
    tier: 'working',
    content,
    summary: null,
    salience: 0.5,
    created_at: t0 + i * 1000,
    last_used_at: null,
    use_count: 0,
    turn: i % 50,
    source: null,
    metadata: null,
  }
}

/**
 * Write a synthetic bench DB once (millionapp, lexicalapp): `fill` writes its rows into a temporary
 * file, moved to `file` when complete, so an interrupted run leaves no half-written DB to reuse.
 * WAL, as a live agent's store: the JS BM25 index is built in the background only there (a rollback
 * journal keeps FTS5: the build's long read lock would block the agent's commits).
 */
export function writeBenchDb(file: string, what: string, fill: (w: CanonicalWriter) => void): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const t0 = performance.now()
  process.stdout.write(`writing ${what} (once)… `)
  const w = new CanonicalWriter(`${file}.tmp`, { force: true })
  try {
    fill(w)
    w.finish({ wal: true })
  } catch (e) {
    w.abort()
    throw e
  }
  fs.renameSync(`${file}.tmp`, file)
  console.log(`${((performance.now() - t0) / 1000).toFixed(0)} s`)
}
