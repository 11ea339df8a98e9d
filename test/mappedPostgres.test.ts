/**
 * "Any table by mapping" on Postgres (issue 15): the same mapping format as for SQLite
 * over a table PGlite + pgvector serves on a loopback port. Open, browse, dense recall
 * (pushed down; top-k checked against a cosine computed here), the mapping saved and
 * reused on reopen, a bad mapping naming the column, and only SELECT / SET / SHOW sent.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Mapping, MappingProblem } from '../src/shared/mapping'
import { getPreset } from '../src/shared/presets'
import { RecallscopeError } from '../src/shared/result'
import { runRecall } from '../src/main/recall/engine'
import { openStore } from '../src/main/store/registry'
import { expectCosineTop, expectOnlyReads } from './helpers/assertions'
import { buildMappedFixture, type FixtureRow } from './helpers/mappedFixture'
import { pgText, pgVector, startPgServer, type PgTestServer } from './helpers/pgServer'
import { fixedEmbedder } from './helpers/testDb'
import { tmpDir } from './helpers/tmp'

let srv: PgTestServer
let t: ReturnType<typeof tmpDir>
let rows: FixtureRow[]
const MAPPING: Mapping = {
  table: 'Agent Notes',
  columns: { id: 'Note Key', content: 'Body', created: 'whenMS', session: 'thread', role: 'Spkr', salience: 'imp' },
  timeUnit: 'unix_ms',
  vector: { column: 'Emb', encoding: 'pgvector' },
}
const DENSE = {
  ...getPreset('fieldguide').config,
  mode: 'dense' as const,
  weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
  floor: null,
  minSimilarity: null,
  topK: 10,
  tokenBudget: null,
}

beforeAll(async () => {
  t = tmpDir()
  // The same generated rows as the SQLite mapping tests (values only; the SQLite file is not used).
  rows = buildMappedFixture(path.join(t.dir, 'rows.sqlite'))
  srv = await startPgServer()
  await srv.seed(`CREATE TABLE "Agent Notes" ("Note Key" text PRIMARY KEY, "Body" text, "whenMS" bigint, thread text, "Spkr" text, imp real, "Emb" vector(8), mood text);
    INSERT INTO "Agent Notes" VALUES ${rows
      .map(
        (r, i) =>
          `(${pgText(r.key)}, ${pgText(r.text)}, ${r.createdMs}, ${pgText(r.thread)}, ${pgText(r.speaker)}, ${r.weight}, ${pgVector(r.vec)}, ${pgText(i % 2 ? 'calm' : 'busy')})`,
      )
      .join(', ')};`)
}, 120_000)
afterAll(async () => {
  await srv?.stop()
  t?.cleanup()
})

describe('a Postgres table by mapping', () => {
  it('opens read-only, browses, and the pushed-down dense top-k equals an independent cosine', async () => {
    await srv.clearLog()
    const s = openStore({ path: srv.url, mapping: MAPPING, workspacePath: path.join(t.dir, 'pg.recallscope') })
    try {
      expect(s.layout).toBe('mapped')
      expect(s.capabilities().pushdown).not.toBeNull()
      const page = s.memoriesPage({ limit: 100, sort: 'created_at', dir: 'asc' })
      expect(page.total).toBe(rows.length)
      expect(page.rows.map((m) => [m.id, m.createdAt])).toEqual(rows.map((r) => [r.key, r.createdMs]))
      expect(s.getMemory(rows[3].key)).toMatchObject({ content: rows[3].text, sessionId: rows[3].thread, role: 'assistant', metadata: { mood: 'calm' } })
      expect(s.vectorModels()).toMatchObject([{ model: 'agent-notes:8', dim: 8, count: rows.length }])

      const q = rows[21].vec.map((x, i) => x + (i % 3 ? 0.25 : -0.4))
      const trace = await runRecall(s, 'anything', DENSE, rows[39].createdMs + 1, { embedder: fixedEmbedder(() => q, 'some-8d-model') })
      expect(trace.arms?.dense.ran).toBe(true)
      expectCosineTop(
        trace.results,
        q,
        rows.map((r) => ({ id: r.key, vec: r.vec })),
      )
    } finally {
      s.close()
    }
    // Read-only over the wire: nothing but SELECT / SET / SHOW (and transaction control) reached the server.
    await expectOnlyReads(srv)
  })

  it('the saved mapping is reused when the schema is reopened without one', () => {
    const s = openStore({ path: srv.url, workspacePath: path.join(t.dir, 'pg.recallscope') })
    try {
      expect(s.layout).toBe('mapped')
      expect(s.memoriesPage({ limit: 1 }).total).toBe(rows.length)
    } finally {
      s.close()
    }
    // Another workspace has no mapping: the schema is an unknown layout.
    try {
      openStore({ path: srv.url, workspacePath: path.join(t.dir, 'other.recallscope') }).close()
      expect.unreachable()
    } catch (e) {
      expect((e as RecallscopeError).code).toBe('UNKNOWN_LAYOUT')
    }
  })

  it('a mapping that does not fit is BAD_INPUT naming the column', () => {
    const bad: [Mapping, string, RegExp][] = [
      [{ ...MAPPING, columns: { ...MAPPING.columns, content: 'body' } }, 'body', /content: no column "body"/],
      [{ ...MAPPING, columns: { ...MAPPING.columns, salience: 'Body' } }, 'Body', /salience: column "Body" is text, not a number/],
      [{ ...MAPPING, timeUnit: 'iso' }, 'whenMS', /"whenMS" is int8: a number, not ISO text/],
      [{ ...MAPPING, vector: { column: 'Emb', encoding: 'f32' } }, 'Emb', /encoding f32 does not fit \(use pgvector\)/],
      [{ ...MAPPING, vector: { column: 'mood', encoding: 'pgvector' } }, 'mood', /"mood" is text; recallscope reads pgvector vector/],
    ]
    for (const [m, column, message] of bad) {
      try {
        openStore({ path: srv.url, mapping: m, workspacePath: path.join(t.dir, 'bad.recallscope') }).close()
        expect.unreachable()
      } catch (e) {
        const err = e as RecallscopeError
        expect(err.code).toBe('BAD_INPUT')
        expect(err.message).toMatch(message)
        expect((err.details as { problems: MappingProblem[] }).problems.map((p) => p.column)).toContain(column)
      }
    }
  })
})
