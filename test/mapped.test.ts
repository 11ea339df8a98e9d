/**
 * "Any SQLite table by mapping" (issue 14 item 7): a generated table with unusual
 * names, unix-ms times, BLOB / JSON / vec0 vectors opens read-only through a
 * column mapping; browse and dense recall work as on a canonical DB (the top-k
 * checked against a cosine computed here); the mapping is saved in the workspace
 * and reused on reopen; bad mappings are BAD_INPUT naming the column; the file's
 * bytes never change.
 */
import fs from 'node:fs'
import Database from 'better-sqlite3'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Mapping, MappingProblem } from '../src/shared/mapping'
import { getPreset } from '../src/shared/presets'
import { RecallscopeError } from '../src/shared/result'
import { runRecall } from '../src/main/recall/engine'
import { App } from '../src/main/api/app'
import { embedHandlers } from '../src/main/api/handlers/embed'
import { openSource } from '../src/main/store/registry'
import { inspectTables, previewFile, suggestForFile } from '../src/main/store/mapped/file'
import { expectCosineTop } from './helpers/assertions'
import { buildMappedFixture, cosine, DIM, type FixtureRow } from './helpers/mappedFixture'
import { fixedEmbedder } from './helpers/testDb'
import { sha256File, tmpDir } from './helpers/tmp'

const TABLE = 'Agent Notes "v2"'
const MAPPING: Mapping = {
  table: TABLE,
  columns: {
    id: 'Note Key',
    content: 'Body Text',
    created: 'whenMS',
    role: 'Spkr',
    session: 'thread',
    user: 'who',
    agent: 'bot',
    salience: 'imp',
  },
  timeUnit: 'unix_ms',
  vector: { column: 'Emb', encoding: 'f32' },
}

let t: ReturnType<typeof tmpDir>
let db: string
let rows: FixtureRow[]
let hash: string

beforeAll(() => {
  t = tmpDir()
  db = path.join(t.dir, 'notes.sqlite')
  rows = buildMappedFixture(db)
  hash = sha256File(db)
})
afterAll(() => {
  // Every test opened the file read-only: its bytes are those written by the fixture.
  expect(sha256File(db)).toBe(hash)
  t.cleanup()
})

/** The error thrown by fn, as a RecallscopeError. */
function thrown(fn: () => unknown): RecallscopeError {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(RecallscopeError)
    return e as RecallscopeError
  }
  throw new Error('expected a throw')
}
const problemsOf = (e: RecallscopeError) => (e.details as { problems: MappingProblem[] }).problems

/** Dense-only recall: ranked by similarity alone. */
const DENSE = {
  ...getPreset('fieldguide').config,
  mode: 'dense' as const,
  weights: { similarity: 1, lexical: 0, recency: 0, salience: 0 },
  floor: null,
  minSimilarity: null,
  topK: 10,
  tokenBudget: null,
}

describe('any SQLite table by mapping', () => {
  it('without a mapping, the file is UNKNOWN_LAYOUT; its tables are listed with types, counts and vector shapes', () => {
    const e = thrown(() => openSource({ path: db }))
    expect(e.code).toBe('UNKNOWN_LAYOUT')
    const info = inspectTables({ path: db })
    expect(info.layout).toBeNull()
    expect(info.saved).toBeNull()
    const notes = info.tables.find((x) => x.name === TABLE)!
    expect(notes.rows).toBe(rows.length)
    expect(notes.columns.find((c) => c.name === 'Emb')).toMatchObject({ seen: ['blob'], constantLength: DIM * 4 })
    expect(info.tables.find((x) => x.name === 'note_vec')).toMatchObject({ kind: 'vec0', shadow: false })
    // vec0's own storage tables are listed as shadows, not offered.
    expect(info.tables.filter((x) => x.name.startsWith('note_vec_')).every((x) => x.shadow)).toBe(true)
    // Nothing was created beside the file by looking.
    expect(fs.existsSync(`${db}.recallscope`)).toBe(false)
  })

  it('suggests content / created / unit / vector from names and sampled values', () => {
    expect(suggestForFile({ path: db }, 'json_vecs')).toEqual({
      table: 'json_vecs',
      columns: { content: 'text', created: 'created_at' },
      timeUnit: 'unix_ms',
      vector: { column: 'embedding', encoding: 'json' },
    })
    const s = suggestForFile({ path: db }, TABLE)
    // No telling names: the longest text column is the content; the constant 32-byte BLOB is the vector.
    expect(s.columns.content).toBe('Body Text')
    expect(s.vector).toEqual({ column: 'Emb', encoding: 'f32' })
    expect(thrown(() => suggestForFile({ path: db }, 'nope')).code).toBe('NOT_FOUND')
  })

  it('previews 20 rows through the mapping, with per-field problems', () => {
    const p = previewFile({ path: db }, MAPPING)
    expect(p.problems).toEqual([])
    expect(p.rows).toHaveLength(20)
    expect(p.vector).toEqual({ dim: DIM, model: 'agent-notes-v2:8' })
    const r0 = p.rows[0]
    expect(r0).toMatchObject({ id: rows[0].key, content: rows[0].text, createdAt: rows[0].createdMs, role: 'user', sessionId: 't0', dim: DIM })
    // 'Assistant' is lower-cased to a known role: no error; a kind column of free text would be flagged.
    expect(p.rows[1].role).toBe('assistant')
    const asKind = previewFile({ path: db }, { ...MAPPING, columns: { ...MAPPING.columns, kind: 'mood' } })
    expect(asKind.rows[0].errors.kind).toMatch(/"busy" is not one of episodic/)
    // Seconds where the values are ms: every time falls far beyond 2200.
    const wrongUnit = previewFile({ path: db }, { ...MAPPING, timeUnit: 'unix_s' })
    expect(wrongUnit.problems.map((x) => [x.field, x.column])).toEqual([['created', 'whenMS']])
    expect(wrongUnit.rows[0].errors.created).toMatch(/outside 1970–2200/)
  })

  it('opens read-only; browse shows every row with its times; dense top-k equals an independent cosine', async () => {
    const s = openSource({ path: db, mapping: MAPPING })
    try {
      expect(s.layout).toBe('mapped')
      expect(s.readOnly).toBe(true)
      expect(s.detectedBecause).toMatch(/Body Text → content/)
      const page = s.memoriesPage({ limit: 100, sort: 'created_at', dir: 'asc' })
      expect(page.total).toBe(rows.length)
      expect(page.rows.map((m) => [m.id, m.createdAt])).toEqual(rows.map((x) => [x.key, x.createdMs]))
      const m5 = s.getMemory(rows[5].key)!
      expect(m5).toMatchObject({
        content: rows[5].text,
        sessionId: rows[5].thread,
        userId: rows[5].who,
        agentId: 'helper-bot',
        salience: rows[5].weight,
        role: 'assistant',
      })
      // Unmapped columns land in metadata.
      expect(m5.metadata).toMatchObject({ mood: 'calm' })
      expect(s.vectorModels()).toMatchObject([{ model: 'agent-notes-v2:8', dim: DIM, count: rows.length, malformed: 0 }])

      const q = rows[11].vec.map((x, i) => x + (i % 2 ? 0.3 : -0.2))
      const trace = await runRecall(s, 'anything', DENSE, rows[39].createdMs + 1, { embedder: fixedEmbedder(() => q, 'some-8d-model') })
      expect(trace.arms?.dense.ran).toBe(true)
      expectCosineTop(
        trace.results,
        q,
        rows.map((x) => ({ id: x.key, vec: x.vec })),
      )
    } finally {
      s.close()
    }
  })

  it('the mapping is saved in the workspace and reused when the file is reopened without one', () => {
    const s = openSource({ path: db })
    try {
      expect(s.layout).toBe('mapped')
      expect(s.workspace.getMapping()).toEqual(MAPPING)
      expect(s.memoriesPage({ limit: 1 }).total).toBe(rows.length)
    } finally {
      s.close()
    }
    expect(inspectTables({ path: db }).saved).toEqual(MAPPING)
  })

  it('JSON text vectors and a sqlite-vec vec0 table beside the notes give the same dense ranking', async () => {
    const q = rows[3].vec
    const expected = rows
      .map((x) => ({ id: x.key, sim: cosine(q, x.vec) }))
      .sort((a, b) => b.sim - a.sim)
      .slice(0, 10)
    const ws = path.join(t.dir, 'other.recallscope')
    const json: Mapping = {
      table: 'json_vecs',
      columns: { content: 'text', created: 'created_at' },
      timeUnit: 'unix_ms',
      vector: { column: 'embedding', encoding: 'json', model: 'my-8d' },
    }
    const vec0: Mapping = { ...MAPPING, vector: { column: 'embedding', encoding: 'vec0', table: 'note_vec' } }
    for (const [m, ids] of [
      [json, expected.map((x) => String(Number(x.id.slice(2)) + 1))],
      [vec0, expected.map((x) => x.id)],
    ] as const) {
      const s = openSource({ path: db, mapping: m, workspacePath: ws })
      try {
        const trace = await runRecall(s, 'x', DENSE, rows[39].createdMs + 1, { embedder: fixedEmbedder(() => q, m.vector?.model ?? 'other') })
        expect(trace.arms?.dense.ran).toBe(true)
        expect(trace.results.map((r) => r.id)).toEqual(ids)
      } finally {
        s.close()
      }
    }
  })

  it('the embedder status warns before any recall when the query embedder gives another length than the stored vectors', async () => {
    const app = new App({ mode: 'browser', dataDir: path.join(t.dir, 'home') })
    try {
      app.open(db, { workspacePath: path.join(t.dir, 'status.recallscope'), mapping: MAPPING })
      const status = embedHandlers(app)['embed.status']
      // hashing gives 256-d vectors; the table's are 8-d and record no model.
      const off = await status({ embedder: 'hashing', probeDim: false, timeoutMs: 3000 })
      expect(off.health.dim).toBe(256)
      expect(off.warnings).toEqual(['Query embedder gives 256-d, stored vectors are 8-d (agent-notes-v2:8): dense arm off.'])
      // An embedder of the stored length is compared with them: no warning, the vectors are counted.
      const small = path.join(t.dir, 'small256.sqlite')
      const w = new Database(small)
      w.exec(`CREATE TABLE facts (text TEXT, v BLOB)`)
      for (let i = 0; i < 3; i++) w.prepare(`INSERT INTO facts VALUES (?, ?)`).run(`fact ${i}`, Buffer.from(new Float32Array(256).fill(i + 1).buffer))
      w.close()
      app.open(small, { mapping: { table: 'facts', columns: { content: 'text' }, vector: { column: 'v', encoding: 'f32' } } })
      const fits = await status({ embedder: 'hashing', probeDim: false, timeoutMs: 3000 })
      expect(fits.warnings).toEqual([])
      expect(fits.storedVectors).toBe(3)
      expect(fits.storedDim).toBe(256)
    } finally {
      app.close()
    }
  })

  it('bad mappings are BAD_INPUT naming the field and column; nothing opens', () => {
    const cases: [Mapping, string, string, RegExp][] = [
      [{ ...MAPPING, columns: { ...MAPPING.columns, content: 'Body' } }, 'content', 'Body', /no column "Body"/],
      [{ ...MAPPING, table: 'nope' }, 'table', 'nope', /no table "nope"/],
      [{ ...MAPPING, columns: { ...MAPPING.columns, content: 'Emb' } }, 'content', 'Emb', /holds BLOBs, not text/],
      [{ ...MAPPING, vector: { column: 'bad blob', encoding: 'f32' } }, 'vector', 'bad blob', /10 bytes is not a multiple of 4/],
      [{ ...MAPPING, vector: { column: 'mixed', encoding: 'f32' } }, 'vector', 'mixed', /different lengths \(8-d × \d+, 6-d × \d+/],
      [{ ...MAPPING, vector: { column: 'Body Text', encoding: 'f32' } }, 'vector', 'Body Text', /holds text, not float32 BLOBs/],
      [{ ...MAPPING, vector: { column: 'Emb', encoding: 'json' } }, 'vector', 'Emb', /BLOBs, not JSON/],
      [{ ...MAPPING, vector: { column: 'Emb', encoding: 'vec0' } }, 'vector', 'Emb', /not a sqlite-vec vec0 table/],
      [{ ...MAPPING, timeUnit: 'iso' }, 'created', 'whenMS', /cannot be read as iso/],
      [{ ...MAPPING, columns: { ...MAPPING.columns, salience: 'Body Text' } }, 'salience', 'Body Text', /holds no numbers/],
      [{ ...MAPPING, columns: { ...MAPPING.columns, id: 'bot' } }, 'id', 'bot', /not unique/],
    ]
    const ws = path.join(t.dir, 'bad.recallscope')
    for (const [m, field, column, message] of cases) {
      const e = thrown(() => openSource({ path: db, mapping: m, workspacePath: ws }))
      expect(e.code).toBe('BAD_INPUT')
      expect(e.message).toMatch(message)
      expect(problemsOf(e).map((p) => [p.field, p.column])).toContainEqual([field, column])
    }
    // A failed open saves nothing.
    expect(fs.existsSync(ws) ? inspectTables({ path: db, workspacePath: ws }).saved : null).toBeNull()
  })
})
