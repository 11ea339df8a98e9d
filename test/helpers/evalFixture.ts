/**
 * Test helper (eval tests only): a small demo DB with eval cases made from its
 * own memories, by code. A graded case asks for words of one memory (grade 3)
 * and counts two of its session neighbours as useful (grade 1); some cases are
 * off-topic (expect-empty) and some unjudged.
 */
import path from 'node:path'
import { generateDemo, DEMO_END } from '../../src/main/demo/generate'
import { mulberry32 } from '../../src/shared/random'
import { openSource } from '../../src/main/store/registry'
import type { SqliteSource } from '../../src/main/store/sqlite/source'
import { saveCase } from '../../src/main/eval/cases'

export const FIXTURE_NOW = DEMO_END + 60_000

export function demoWithCases(dir: string, opts: { memories?: number; cases?: number; seed?: number } = {}): { db: string; store: SqliteSource } {
  const db = path.join(dir, 'demo.db')
  generateDemo({ out: db, memories: opts.memories ?? 1500, events: false, cases: false, seed: opts.seed ?? 7 })
  const store = openSource({ path: db })
  const rnd = mulberry32(opts.seed ?? 11)
  const rows = store.db
    .prepare(`SELECT id, agent_id AS agentId, session_id AS sessionId, content FROM memories WHERE tier != 'archived' ORDER BY rowid`)
    .all() as {
    id: string
    agentId: string
    sessionId: string
    content: string
  }[]
  const bySession = new Map<string, string[]>()
  for (const r of rows) bySession.set(r.sessionId, [...(bySession.get(r.sessionId) ?? []), r.id])
  const n = opts.cases ?? 60
  for (let i = 0; i < n; i++) {
    const kind = i % 10 === 9 ? 'empty' : i % 20 === 8 ? 'unjudged' : 'graded'
    if (kind === 'empty') {
      saveCase(
        store.workspace,
        {
          id: `t-${i}`,
          query: `zebra quasar lattice ${i} marmalade`,
          scope: { agentId: rows[0].agentId },
          now: FIXTURE_NOW,
          expectEmpty: true,
          tags: ['off-topic'],
        },
        0,
      )
      continue
    }
    const m = rows[Math.floor(rnd() * rows.length)]
    const words = m.content.split(/\s+/).filter((w) => w.length > 3)
    const start = Math.floor(rnd() * Math.max(1, words.length - 5))
    const query = words.slice(start, start + 5).join(' ') || m.content.slice(0, 40)
    const neighbours = (bySession.get(m.sessionId) ?? []).filter((id) => id !== m.id).slice(0, 2)
    saveCase(
      store.workspace,
      {
        id: `t-${i}`,
        query,
        scope: { agentId: m.agentId },
        now: FIXTURE_NOW,
        relevant: kind === 'graded' ? [{ id: m.id, grade: 3 }, ...neighbours.map((id) => ({ id, grade: 1 }))] : [],
        tags: [kind],
      },
      0,
    )
  }
  return { db, store }
}
