/**
 * `--map mapping.json` on the commands that take `--db`: info prints the mapping used,
 * recall ranks the mapped table's vectors, a bad mapping file is exit 2 naming the
 * column, and a query embedder of another length says why the dense arm is off.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Mapping } from '../../shared/mapping'
import type { DbFacts, RecallTrace } from '../../shared/types'
import { buildMappedFixture, cosine, type FixtureRow } from '../../../test/helpers/mappedFixture'
import { sha256File, tmpDir } from '../../../test/helpers/tmp'
import { main } from './index'

let t: ReturnType<typeof tmpDir>
let db: string
let rows: FixtureRow[]
let mapFile: string
const MAPPING: Mapping = {
  table: 'json_vecs',
  columns: { id: 'rid', content: 'text', created: 'created_at' },
  timeUnit: 'unix_ms',
  vector: { column: 'embedding', encoding: 'json' },
}

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await main(args, { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) })
  return { code, out, err }
}

beforeAll(() => {
  t = tmpDir()
  db = path.join(t.dir, 'notes.sqlite')
  rows = buildMappedFixture(db)
  mapFile = path.join(t.dir, 'mapping.json')
  fs.writeFileSync(mapFile, JSON.stringify(MAPPING))
})
afterAll(() => t.cleanup())

describe('--map', () => {
  it('info opens the table by the mapping and prints it; recall ranks by cosine; the file is unchanged', async () => {
    const before = sha256File(db)
    const info = await run('info', '--db', db, '--map', mapFile, '--json')
    expect(info.code).toBe(0)
    const f = JSON.parse(info.out) as DbFacts & { mapping: Mapping }
    expect(f.layout).toBe('mapped')
    expect(f.mapping).toEqual(MAPPING)
    expect(f.counts.memories).toBe(rows.length)
    expect(f.models).toMatchObject([{ model: 'json-vecs:8', dim: 8, count: rows.length }])
    const human = await run('info', '--db', db)
    // Saved by the first open: reused without --map, and shown.
    expect(human.out).toMatch(/mapping: \{"table":"json_vecs"/)

    const q = rows[17].vec
    const r = await run(
      'recall',
      '--db',
      db,
      '--map',
      mapFile,
      '--query',
      'x',
      '--query-vector',
      JSON.stringify(q),
      '--set',
      'mode=dense',
      '--set',
      'floor=null',
      '--set',
      'minSimilarity=null',
      '--set',
      'topK=5',
      '--set',
      'weights.lexical=0',
      '--set',
      'weights.recency=0',
      '--set',
      'weights.salience=0',
      '--json',
    )
    expect(r.code).toBe(0)
    const trace = JSON.parse(r.out) as RecallTrace
    const expected = rows
      .map((x, i) => ({ id: String(i + 1), sim: cosine(q, x.vec) }))
      .sort((a, b) => b.sim - a.sim)
      .slice(0, 5)
    expect(trace.results.map((x) => x.id)).toEqual(expected.map((x) => x.id))
    expect(sha256File(db)).toBe(before)
  })

  it('a query embedder of another length: the dense arm is off, and the reason names both lengths', async () => {
    const r = await run('recall', '--db', db, '--map', mapFile, '--query', 'x', '--query-vector', JSON.stringify([1, 0, 0]), '--set', 'mode=dense')
    expect(r.code).toBe(0)
    expect(r.out).toMatch(/DEGRADED: query embedder gives 3-d, stored vectors are 8-d \(json-vecs:8\): dense arm off/)
  })

  it('a mapping that does not fit is exit 2 naming the column; a malformed file names the field', async () => {
    const bad = path.join(t.dir, 'bad.json')
    fs.writeFileSync(bad, JSON.stringify({ ...MAPPING, columns: { ...MAPPING.columns, content: 'txt' } }))
    const r = await run('info', '--db', db, '--map', bad)
    expect(r.code).toBe(2)
    expect(r.err).toMatch(/content: no column "txt" in table "json_vecs"/)
    fs.writeFileSync(bad, JSON.stringify({ table: 'json_vecs', columns: {} }))
    const s = await run('recall', '--db', db, '--map', bad, '--query', 'x')
    expect(s.code).toBe(2)
    expect(s.err).toMatch(/--map: columns\.content/)
  })
})
