/**
 * A LanceDB table recallscope has no reader for (its text column has a name of the app's own), opened
 * through a column mapping, as the Library's mapping dialog and `--map` do: the folder opens as
 * "unknown layout, mappable"; the dialog's channels list its tables and columns, suggest a mapping
 * and preview rows; the mapped store holds the rows, their scope and vectors (dense top-k against a
 * cosine computed here); a reopen without the mapping uses the saved one; nothing in the folder changes.
 * Tables written by the real @lancedb/lancedb client.
 */
import path from 'node:path'
import * as lancedb from '@lancedb/lancedb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Mapping } from '../../src/shared/mapping'
import { mergeConfig } from '../../src/shared/config'
import { getPreset } from '../../src/shared/presets'
import { runRecall } from '../../src/main/recall/engine'
import { inspectTables, previewFile, suggestForFile } from '../../src/main/store/mapped/file'
import { openSource } from '../../src/main/store/registry'
import { hashTree } from '../helpers/frameworks/hashTree'
import { cosine } from '../helpers/mappedFixture'
import { tmpDir } from '../helpers/tmp'

const Q = [0, 0, 1, 0]
const ROWS = [
  { key: 'n-1', note_body: 'The ferry to the island leaves at 7', owner: 'ana', ts: 1_717_236_000, embedding: [0.1, 0.2, 0.95, 0] },
  { key: 'n-2', note_body: 'Pick up the rental car keys at the desk', owner: 'ana', ts: 1_717_322_400, embedding: [0.9, 0.1, 0.1, 0.3] },
  { key: 'n-3', note_body: 'Dinner booked for Friday', owner: 'ben', ts: 1_717_408_800, embedding: [0.3, 0.3, 0.6, 0.6] },
]
const MAPPING: Mapping = {
  table: 'notes',
  columns: { id: 'key', content: 'note_body', user: 'owner', created: 'ts' },
  timeUnit: 'unix_s',
  vector: { column: 'embedding', encoding: 'f32' },
}

let t: ReturnType<typeof tmpDir>
let dir: string

beforeAll(async () => {
  t = tmpDir()
  dir = path.join(t.dir, 'app.lancedb')
  const db = await lancedb.connect(dir)
  await db.createTable('notes', ROWS)
}, 120_000)
afterAll(() => t.cleanup())

describe('LanceDB table by column mapping', () => {
  it('opens as unknown layout, mappable; the dialog lists, suggests and previews; the folder is unchanged', () => {
    const before = hashTree(dir)
    const ws = path.join(t.dir, 'a.ws')
    let err: unknown
    try {
      openSource({ path: dir, workspacePath: ws }).close()
    } catch (e) {
      err = e
    }
    expect(err).toMatchObject({ code: 'UNKNOWN_LAYOUT', details: { mappable: true } })
    expect((err as Error).message).toMatch(/map its columns/)

    const info = inspectTables({ path: dir, workspacePath: ws })
    const notes = info.tables.find((x) => x.name === 'notes')!
    expect(notes.rows).toBe(3)
    expect(Object.fromEntries(notes.columns.map((c) => [c.name, c.type]))).toEqual({
      key: 'TEXT',
      note_body: 'TEXT',
      owner: 'TEXT',
      ts: 'REAL',
      embedding: 'BLOB',
    })
    expect(notes.columns.find((c) => c.name === 'embedding')!.constantLength).toBe(4 * 4)

    const suggested = suggestForFile({ path: dir, workspacePath: ws }, 'notes')
    expect(suggested.vector).toMatchObject({ column: 'embedding', encoding: 'f32' })

    const preview = previewFile({ path: dir, workspacePath: ws }, MAPPING)
    expect(preview.rows.map((r) => r.content)).toEqual(ROWS.map((r) => r.note_body))
    expect(hashTree(dir)).toEqual(before)
  }, 60_000)

  it('opens mapped: rows, scope, times, vectors; dense top-k by cosine; reopens with the saved mapping; folder unchanged', async () => {
    const before = hashTree(dir)
    const ws = path.join(t.dir, 'b.ws')
    const store = openSource({ path: dir, workspacePath: ws, mapping: MAPPING })
    try {
      const f = store.facts()
      expect(f.layout).toBe('mapped')
      expect(f.counts.memories).toBe(3)
      const n1 = store.getMemory('n-1')!
      expect(n1.content).toBe(ROWS[0].note_body)
      expect(n1.userId).toBe('ana')
      expect(n1.createdAt).toBe(ROWS[0].ts * 1000)
      expect(f.models).toHaveLength(1)
      expect(f.models[0]).toMatchObject({ dim: 4, count: 3 })

      const cfg = mergeConfig(getPreset('langgraph-store').config, { model: f.models[0].model })
      cfg.scope = { tiers: ['long_term'] } // mapped rows have no kind: the preset's kinds filter would leave none
      const trace = await runRecall(store, 'ferry', cfg, Date.UTC(2025, 0, 1), { queryVector: Q })
      const expected = [...ROWS].sort((a, b) => cosine(b.embedding, Q) - cosine(a.embedding, Q))
      expect(trace.results.map((x) => x.id)).toEqual(expected.map((x) => x.key))
      trace.results.forEach((x, i) => expect(x.features.similarity).toBeCloseTo(cosine(expected[i].embedding, Q), 5))
    } finally {
      store.close()
    }
    const again = openSource({ path: dir, workspacePath: ws })
    try {
      expect(again.facts().layout).toBe('mapped')
      expect(again.facts().counts.memories).toBe(3)
    } finally {
      again.close()
    }
    expect(hashTree(dir)).toEqual(before)
  }, 60_000)

  it('a mapping naming a missing column is a BAD_INPUT naming it', () => {
    const bad: Mapping = { ...MAPPING, columns: { ...MAPPING.columns, content: 'no_such_column' } }
    expect(() => openSource({ path: dir, workspacePath: path.join(t.dir, 'c.ws'), mapping: bad })).toThrow(/no_such_column/)
  }, 60_000)
})
