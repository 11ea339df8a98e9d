/**
 * Test helper (used by the recall tests only): a canonical memory DB built from
 * code, with hand-placed vectors so each test knows every cosine exactly.
 *
 * Vectors live in 4 dimensions; the query is e₁ = [1, 0, 0, 0] and `unitAt(s)`
 * is a unit vector whose cosine with e₁ is s.
 */
import path from 'node:path'
import type { Embedder } from '../../src/main/embed/types'
import { RecallscopeError } from '../../src/shared/result'
import { CanonicalWriter, type CanonicalMemoryRow, type CanonicalSessionRow } from '../../src/main/store/sqlite/canonicalWriter'
import { openSource } from '../../src/main/store/registry'
import type { SqliteSource } from '../../src/main/store/sqlite/source'

export const DAY = 86_400_000
export const T0 = Date.UTC(2026, 5, 1, 12, 0, 0)
export const MODEL = 'test-4'
export const QUERY = [1, 0, 0, 0]

/** A unit vector with cosine `s` against QUERY. */
export function unitAt(s: number, spin = 0): number[] {
  const r = Math.sqrt(Math.max(0, 1 - s * s))
  return spin % 2 === 0 ? [s, r, 0, 0] : [s, 0, r, 0]
}

export interface MemSpec extends Partial<CanonicalMemoryRow> {
  id: string
  content?: string
  /** cosine vs QUERY; omit for no vector */
  sim?: number
  vector?: number[]
}

export interface SessionSpec extends Partial<CanonicalSessionRow> {
  id: string
  sim?: number
}

export function buildDb(dir: string, spec: { memories?: MemSpec[]; sessions?: SessionSpec[]; name?: string }): string {
  const out = path.join(dir, spec.name ?? 'fixture.db')
  const w = new CanonicalWriter(out, { force: true })
  try {
    for (const s of spec.sessions ?? []) {
      w.session({
        agent_id: 'agent-a',
        user_id: 'user-a',
        tenant_id: 'tenant-a',
        started_at: T0,
        ended_at: T0 + 3600_000,
        summary: `summary of ${s.id}`,
        is_archived: 0,
        ...s,
      })
      if (s.sim !== undefined) w.embedding('session', s.id, MODEL, unitAt(s.sim))
    }
    let n = 0
    for (const m of spec.memories ?? []) {
      n++
      const row: CanonicalMemoryRow = {
        agent_id: 'agent-a',
        user_id: 'user-a',
        session_id: 's1',
        role: 'user',
        kind: 'episodic',
        tier: 'working',
        content: `memory ${m.id}`,
        summary: null,
        salience: 0.5,
        created_at: T0 + n * 60_000,
        last_used_at: null,
        use_count: 0,
        turn: n,
        source: null,
        metadata: null,
        ...m,
      }
      delete (row as unknown as Record<string, unknown>).sim
      delete (row as unknown as Record<string, unknown>).vector
      w.memory(row)
      const v = m.vector ?? (m.sim !== undefined ? unitAt(m.sim, n) : null)
      if (v) w.embedding('memory', m.id, MODEL, v)
    }
    return w.finish()
  } catch (e) {
    w.abort()
    throw e
  }
}

export function openDb(p: string): SqliteSource {
  return openSource({ path: p, workspacePath: `${p}.ws` })
}

/** An embedder that maps texts to fixed vectors (QUERY by default) and records what it was asked. */
export function fixedEmbedder(map: (text: string) => number[] = () => QUERY, model = MODEL): Embedder & { seen: string[] } {
  const seen: string[] = []
  return {
    name: 'fixed',
    model,
    enabled: true,
    cacheable: false,
    seen,
    async embed(texts: string[]) {
      seen.push(...texts)
      return texts.map((t) => Float32Array.from(map(t)))
    },
    async health() {
      return { reachable: true, modelAvailable: true, dim: 4, models: [model], error: null, errorCode: null }
    },
  }
}

/** An embedder whose server is down (seed 002 / seed 004 degradation paths). */
export function downEmbedder(model = MODEL): Embedder {
  return {
    name: 'down',
    model,
    enabled: true,
    cacheable: false,
    async embed() {
      throw new RecallscopeError('EMBEDDER_UNAVAILABLE', 'connect ECONNREFUSED 127.0.0.1:11434', { errorCode: 'ECONNREFUSED' })
    },
    async health() {
      return { reachable: false, modelAvailable: false, dim: null, models: [], error: 'down', errorCode: 'ECONNREFUSED' }
    },
  }
}
