/**
 * The mapping dialog's channels over a Postgres connection (store.tables, store.suggestMapping,
 * store.previewMapping, store.openMapped with `pg`), through the real dispatcher (zod input
 * checks included) against PGlite + pgvector on a loopback port. A schema of no known layout
 * holds two odd tables: vectors as pgvector `vector(8)` and as `real[]`. Expected values come
 * from the generated rows and an independent cosine, never from the code under test.
 */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { App } from '../src/main/api/app'
import { createHandlers } from '../src/main/api/handlers'
import { createDispatcher } from '../src/main/api/register'
import { runRecall } from '../src/main/recall/engine'
import type { Mapping, MappingPreview, MappingProblem, TablesInfo } from '../src/shared/mapping'
import { getPreset } from '../src/shared/presets'
import { expectCosineTop, expectOnlyReads } from './helpers/assertions'
import { buildMappedFixture, DIM, type FixtureRow } from './helpers/mappedFixture'
import { pgText, pgVector, startPgServer, type PgTestServer } from './helpers/pgServer'
import { fixedEmbedder } from './helpers/testDb'
import { tmpDir } from './helpers/tmp'

let srv: PgTestServer
let t: ReturnType<typeof tmpDir>
let rows: FixtureRow[]
let fields: { host: string; port: number; database: string; user: string; sslmode: 'disable'; schema: string }

const DENSE = {
  ...getPreset('fieldguide').config,
  mode: 'dense' as const,
  weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
  floor: null,
  minSimilarity: null,
  topK: 10,
  tokenBudget: null,
}

type Reply<T> = { ok: true; data: T } | { ok: false; error: { code: string; message: string; details?: { problems?: MappingProblem[] } } }

beforeAll(async () => {
  t = tmpDir()
  rows = buildMappedFixture(path.join(t.dir, 'rows.sqlite')) // values only; the SQLite file is not used
  srv = await startPgServer()
  const arr = (v: number[]) => `ARRAY[${v.join(',')}]::real[]`
  await srv.seed(`CREATE SCHEMA odd;
    CREATE TABLE odd."Agent Notes" ("Note Key" text PRIMARY KEY, "Body" text, "whenMS" bigint, thread text, "Spkr" text, imp real, "Emb" vector(${DIM}), mood text);
    INSERT INTO odd."Agent Notes" VALUES ${rows
      .map(
        (r, i) =>
          `(${pgText(r.key)}, ${pgText(r.text)}, ${r.createdMs}, ${pgText(r.thread)}, ${pgText(r.speaker)}, ${r.weight}, ${pgVector(r.vec)}, ${pgText(i % 2 ? 'calm' : 'busy')})`,
      )
      .join(', ')};
    CREATE TABLE odd.arr_notes (note_id text, text text, created_ms bigint, embedding real[]);
    INSERT INTO odd.arr_notes VALUES ${rows.map((r) => `(${pgText(`a-${r.key}`)}, ${pgText(r.text)}, ${r.createdMs}, ${arr(r.vec)})`).join(', ')};`)
  fields = { host: '127.0.0.1', port: Number(new URL(srv.url).port), database: 'postgres', user: 'recallscope_test', sslmode: 'disable', schema: 'odd' }
}, 120_000)
afterAll(async () => {
  await srv?.stop()
  t?.cleanup()
})

function appIn(name: string) {
  const app = new App({ mode: 'browser', dataDir: path.join(t.dir, name) })
  const d = createDispatcher(createHandlers(app))
  const call = <T>(channel: string, input: unknown) => d(channel, input) as Promise<Reply<T>>
  const data = async <T>(channel: string, input: unknown): Promise<T> => {
    const r = await call<T>(channel, input)
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`)
    return r.data
  }
  return { app, call, data }
}

describe('the mapping dialog over a Postgres connection', () => {
  it('lists the schema tables from information_schema, suggests a mapping, previews 20 rows', async () => {
    const { app, data, call } = appIn('home-a')
    try {
      // The schema is no layout recallscope knows: Connect says so, and the dialog is the way in.
      expect(await call('pg.connect', { conn: fields })).toMatchObject({ ok: false, error: { code: 'UNKNOWN_LAYOUT' } })
      const accepted = await srv.accepted()
      const info = await data<TablesInfo>('store.tables', { pg: { conn: fields } })
      expect(info.layout).toBeNull()
      expect(info.saved).toBeNull()
      expect(info.path).not.toContain('secret')
      expect(info.tables.map((x) => [x.name, x.kind, x.rows]).sort()).toEqual([
        ['Agent Notes', 'table', rows.length],
        ['arr_notes', 'table', rows.length],
      ])
      const notes = info.tables.find((x) => x.name === 'Agent Notes')!
      expect(notes.columns.map((c) => c.name)).toEqual(['Note Key', 'Body', 'whenMS', 'thread', 'Spkr', 'imp', 'Emb', 'mood'])
      expect(notes.columns.find((c) => c.name === 'Emb')).toMatchObject({ type: 'vector', constantLength: DIM })
      expect(info.tables.find((x) => x.name === 'arr_notes')!.columns.find((c) => c.name === 'embedding')).toMatchObject({
        type: '_float4',
        constantLength: DIM,
      })

      // Suggestions by name: id, content, thread → session, Spkr is not a known name; the vector as pgvector.
      const sNotes = await data<Mapping>('store.suggestMapping', { pg: { conn: fields }, table: 'agent notes' })
      expect(sNotes).toEqual({ table: 'Agent Notes', columns: { content: 'Body', session: 'thread' }, vector: { column: 'Emb', encoding: 'pgvector' } })
      const sArr = await data<Mapping>('store.suggestMapping', { pg: { conn: fields }, table: 'arr_notes' })
      expect(sArr).toEqual({
        table: 'arr_notes',
        columns: { id: 'note_id', content: 'text', created: 'created_ms' },
        timeUnit: 'unix_ms',
        vector: { column: 'embedding', encoding: 'pgvector' },
      })
      expect(await call('store.suggestMapping', { pg: { conn: fields }, table: 'nope' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })

      const m: Mapping = { ...sNotes, columns: { ...sNotes.columns, id: 'Note Key', created: 'whenMS', role: 'Spkr', salience: 'imp' }, timeUnit: 'unix_ms' }
      const p = await data<MappingPreview>('store.previewMapping', { pg: { conn: fields }, mapping: m })
      expect(p.problems).toEqual([])
      expect(p.vector).toEqual({ dim: DIM, model: 'agent-notes:8' })
      expect(p.rows).toHaveLength(20)
      expect(p.rows.map((r) => [r.id, r.content, r.createdAt, r.sessionId, r.role, r.dim])).toEqual(
        rows.slice(0, 20).map((r) => [r.key, r.text, r.createdMs, r.thread, r.speaker.toLowerCase(), DIM]),
      )
      p.rows.forEach((r, i) => expect(r.salience).toBeCloseTo(rows[i].weight, 5))
      expect(p.rows.every((r) => Object.keys(r.errors).length === 0)).toBe(true)
      // The dialog's questions share one session: one connection for the table list, the suggestions and the preview.
      expect((await srv.accepted()) - accepted).toBe(1)
      // A connection without a schema reads the mapping's own `schema`, as opening does.
      const { schema: _odd, ...noSchema } = fields
      const p2 = await data<MappingPreview>('store.previewMapping', { pg: { conn: noSchema }, mapping: { ...m, schema: 'odd' } })
      expect(p2.rows.map((r) => r.id)).toEqual(rows.slice(0, 20).map((r) => r.key))
    } finally {
      app.close()
    }
  })

  it('a mapping that does not fit: problems naming the column in the preview, BAD_INPUT naming it on open', async () => {
    const { app, data, call } = appIn('home-b')
    const base: Mapping = { table: 'arr_notes', columns: { id: 'note_id', content: 'text', created: 'created_ms' }, timeUnit: 'unix_ms' }
    const cases: [Mapping, string, RegExp][] = [
      [{ ...base, columns: { ...base.columns, content: 'body' } }, 'body', /content: no column "body"/],
      [{ ...base, timeUnit: 'iso' }, 'created_ms', /"created_ms" is int8: a number, not ISO text/],
      // ms read as seconds land past 2200: a sampled problem, as for SQLite
      [{ ...base, timeUnit: 'unix_s' }, 'created_ms', /created: 40 of 40 sampled values of "created_ms" fall outside 1970–2200/],
      [{ ...base, columns: { ...base.columns, id: 'text' }, vector: { column: 'embedding', encoding: 'f32' } }, 'embedding', /encoding f32 does not fit/],
      [{ ...base, vector: { column: 'text', encoding: 'pgvector' } }, 'text', /"text" is text; recallscope reads pgvector vector/],
    ]
    try {
      for (const [m, column, message] of cases) {
        const p = await data<MappingPreview>('store.previewMapping', { pg: { conn: fields }, mapping: m })
        expect(p.problems.map((x) => x.column)).toContain(column)
        expect(p.problems.map((x) => x.message).join('; ')).toMatch(message)
        const r = await call('store.openMapped', { pg: { conn: fields }, mapping: m })
        expect(r.ok).toBe(false)
        if (r.ok) continue
        expect(r.error.code).toBe('BAD_INPUT')
        expect(r.error.message).toMatch(message)
      }
      expect(app.current).toBeNull() // nothing opened
      // In browser mode the page never hands main a password; the error does not echo it.
      const pw = await call('store.tables', { pg: { conn: { ...fields, password: 'typed-in-page' } } })
      expect(pw).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } })
      expect(JSON.stringify(pw)).not.toContain('typed-in-page')
      expect(await call('store.tables', { pg: { savedId: 'nope' } })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
      expect(await call('store.tables', { path: '/x.db', pg: { conn: fields } })).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } })
      expect(await call('store.openMapped', { pg: { savedId: 'x' }, mapping: base, saveAs: 'n' })).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } })
    } finally {
      app.close()
    }
  })

  it('opens each table by mapping (pgvector and real[]), read-only; dense top-k equals an independent cosine; reopens with the saved mapping', async () => {
    const { app, data } = appIn('home-c')
    const q = rows[17].vec.map((x, i) => x + (i % 2 ? 0.3 : -0.2))
    const now = rows[rows.length - 1].createdMs + 1
    const cases: [Mapping, (r: FixtureRow) => string][] = [
      [
        {
          table: 'Agent Notes',
          columns: { id: 'Note Key', content: 'Body', created: 'whenMS' },
          timeUnit: 'unix_ms',
          vector: { column: 'Emb', encoding: 'pgvector' },
        },
        (r) => r.key,
      ],
      [
        {
          table: 'arr_notes',
          columns: { id: 'note_id', content: 'text', created: 'created_ms' },
          timeUnit: 'unix_ms',
          vector: { column: 'embedding', encoding: 'pgvector' },
        },
        (r) => `a-${r.key}`,
      ],
    ]
    try {
      await srv.clearLog()
      for (const [m, idOf] of cases) {
        const info = await data<{ layout: string; memories: number; readOnly: boolean; path: string }>('store.openMapped', {
          pg: { conn: fields },
          mapping: m,
          ...(m.table === 'arr_notes' ? { saveAs: 'odd schema' } : {}),
        })
        expect(info).toMatchObject({ layout: 'mapped', memories: rows.length, readOnly: true })
        const s = app.requireStore()
        expect(s.capabilities().pushdown).not.toBeNull()
        const trace = await runRecall(s, 'anything', DENSE, now, { embedder: fixedEmbedder(() => q, 'some-8d-model') })
        expectCosineTop(
          trace.results,
          q,
          rows.map((r) => ({ id: idOf(r), vec: r.vec })),
        )
      }
      // Nothing but reads reached the server.
      await expectOnlyReads(srv)

      // The connection was saved (no password); Connect on it reopens the last mapping, and the dialog starts from it.
      const saved = await data<{ id: string; name: string; url: string }[]>('pg.saved', {})
      expect(saved.map((c) => c.name)).toEqual(['odd schema'])
      app.close()
      const reopened = await data<{ layout: string; memories: number }>('pg.connect', { savedId: saved[0].id })
      expect(reopened).toMatchObject({ layout: 'mapped', memories: rows.length })
      expect(app.requireStore().getMemory(`a-${rows[5].key}`)).toMatchObject({ content: rows[5].text, createdAt: rows[5].createdMs })
      const info = await data<TablesInfo>('store.tables', { pg: { savedId: saved[0].id } })
      expect(info.saved).toEqual(cases[1][0])
    } finally {
      app.close()
    }
  })
})
