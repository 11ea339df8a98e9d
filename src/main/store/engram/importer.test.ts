import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngramFixture, validVectorIds, type EngramFixture, type EngramVersion } from '../../../../test/helpers/engramFixture'
import { sha256File, tmpDir } from '../../../../test/helpers/tmp'
import { HASHING_MODEL } from '../../embed/hashing'
import { openSource } from '../registry'
import type { MemorySource } from '../source'
import { importEngram } from './importer'

const VERSIONS: EngramVersion[] = ['v0.2', 'v0.5', 'v1.0']
let t: ReturnType<typeof tmpDir>
const fixtures = new Map<EngramVersion, EngramFixture>()

beforeAll(() => {
  t = tmpDir()
  for (const v of VERSIONS) fixtures.set(v, createEngramFixture(path.join(t.dir, `engram-${v}.db`), v))
})
afterAll(() => t.cleanup())

const strip = (m: unknown) => {
  if (m === null || typeof m !== 'object') return m
  const { _engram, _import, ...rest } = m as Record<string, unknown>
  void _engram
  void _import
  return rest
}

describe.each(VERSIONS)("Engram's three layouts: import of %s", (version) => {
  it('writes every memory, derives sessions, converts JSON vectors and reports malformed rows', async () => {
    const f = fixtures.get(version)!
    const out = path.join(t.dir, `import-${version}.db`)
    const before = sha256File(f.path)
    const r = await importEngram({ input: f.path, output: out })
    expect(sha256File(f.path)).toBe(before)
    expect(r.layout).toBe(f.layout)
    expect(r.written.memories).toBe(f.rows.length)
    expect(r.written.sessions).toBe(f.sessions.length)
    expect(r.written.embeddings).toBe(validVectorIds(f).length)
    expect(r.models).toEqual([{ model: 'nomic-embed-text', ownerType: 'memory', dim: f.dim, count: validVectorIds(f).length }])
    const reasons = new Map(r.reasons.map((x) => [`${x.action}:${x.reason}`, x.count]))
    expect(reasons.get('skipped:embedding is not a JSON array of numbers')).toBe(f.planted.badJsonEmbedding.length + f.planted.stringEntry.length)
    expect(reasons.get('skipped:embedding has NaN/null/infinite values')).toBe(f.planted.nullEntry.length)
    expect(reasons.get('skipped:vector of the wrong dimension')).toBe(f.planted.wrongDimension.length)
    expect(reasons.get('repaired:metadata is not valid JSON (kept as text under _import.invalidMetadata)')).toBe(f.planted.badMetadata.length)
    expect(reasons.get('repaired:unknown role (kept, role cleared)')).toBe(f.planted.unknownRole.length)
    const wrongDim = r.issues.filter((i) => i.reason === 'vector of the wrong dimension').map((i) => i.id)
    expect(wrongDim.sort()).toEqual([...f.planted.wrongDimension].sort())
    expect(r.skipped).toBe(f.planted.badJsonEmbedding.length + f.planted.stringEntry.length + f.planted.nullEntry.length + f.planted.wrongDimension.length)
    expect(r.notes.some((n) => n.startsWith(`${f.planted.nullEmbedding.length} memories have no stored embedding`))).toBe(true)
    expect(r.notes.some((n) => n.includes('graph tables not imported'))).toBe(f.graph.nodes > 0)

    // The canonical DB holds the same vectors the direct view loads (float32, same direction).
    const direct = openSource({ path: f.path, workspacePath: path.join(t.dir, `direct-${version}.ws`) })
    const imported = openSource({ path: out })
    try {
      expect(imported.facts().layout).toBe('canonical')
      const a = direct.vectors('nomic-embed-text')
      const b = imported.vectors('nomic-embed-text')
      expect([...b.ids].sort()).toEqual([...a.ids].sort())
      for (const id of a.ids) {
        const va = a.get(id)!
        const vb = b.get(id)!
        for (let i = 0; i < va.length; i++) expect(vb[i]).toBeCloseTo(va[i], 6)
      }
    } finally {
      direct.close()
      imported.close()
    }
  })

  it('the imported rows equal what the adapter shows when the file is opened directly', async () => {
    const f = fixtures.get(version)!
    const out = path.join(t.dir, `same-${version}.db`)
    await importEngram({ input: f.path, output: out })
    const direct = openSource({ path: f.path, workspacePath: path.join(t.dir, `same-direct-${version}.ws`) })
    const imported = openSource({ path: out })
    try {
      const ids = f.rows.map((r) => r.id)
      const a = direct.getMemories(ids)
      const b = imported.getMemories(ids)
      expect(b.size).toBe(ids.length)
      for (const id of ids) {
        const x = a.get(id)!
        const y = b.get(id)!
        const { metadata: mx, ...restX } = x
        const { metadata: my, ...restY } = y
        expect(restY).toEqual(restX)
        const raw = f.rows.find((r) => r.id === id)!
        if (f.planted.badMetadata.includes(id)) {
          expect(mx).toBeNull()
          // Not lost: the unparseable text is kept verbatim.
          expect((my as { _import: { invalidMetadata: string } })._import.invalidMetadata).toBe(raw.metadata)
        } else expect(strip(my)).toEqual(mx)
      }
      // What the canonical columns cannot hold survives under _engram.
      if (version !== 'v0.2') {
        const summary = b.get('m-12')!
        expect(summary.tier).toBe('long_term')
        expect((summary.metadata as { _engram: { consolidatedFrom: string[] } })._engram.consolidatedFrom).toEqual(['m-00', 'm-01', 'm-03'])
      }
      if (version === 'v1.0') {
        const superseded = f.rows.find((r) => r.v1?.status === 'superseded')!
        expect((b.get(superseded.id)!.metadata as { _engram: { status: string; contradicts: string } })._engram).toMatchObject({
          status: 'superseded',
          contradicts: superseded.v1!.contradicts,
        })
        const fact = f.rows.find((r) => r.v1?.memoryType === 'fact')!
        expect((b.get(fact.id)!.metadata as { _engram: { memoryType: string } })._engram.memoryType).toBe('fact')
      }
      const sessionsOf = (st: MemorySource) => st.sessionsPage({ limit: 100 }).rows.map((s) => [s.id, s.startedAt, s.endedAt, s.memoryCount])
      expect(sessionsOf(imported)).toEqual(sessionsOf(direct))
    } finally {
      direct.close()
      imported.close()
    }
  })
})

describe('Engram import options', () => {
  it('--model names the stored vectors and --embed hashing adds offline vectors for every memory', async () => {
    const f = fixtures.get('v0.5')!
    const out = path.join(t.dir, 'opts.db')
    const r = await importEngram({ input: f.path, output: out, model: 'mxbai-embed-large', embed: 'hashing' })
    const byModel = new Map(r.models.map((m) => [m.model, m]))
    expect(byModel.get('mxbai-embed-large')!.count).toBe(validVectorIds(f).length)
    expect(byModel.get(HASHING_MODEL)).toEqual({ model: HASHING_MODEL, ownerType: 'memory', dim: 256, count: f.rows.length })
    const db = new Database(out, { readonly: true })
    const models = db.prepare(`SELECT DISTINCT model FROM embeddings ORDER BY 1`).pluck().all()
    db.close()
    expect(models).toEqual([HASHING_MODEL, 'mxbai-embed-large'].sort())
  })

  it('rejects files that are not Engram with a typed error and writes nothing', async () => {
    const other = path.join(t.dir, 'other.db')
    const d = new Database(other)
    d.exec(`CREATE TABLE notes (id TEXT, body TEXT)`)
    d.close()
    const out = path.join(t.dir, 'never.db')
    await expect(importEngram({ input: other, output: out })).rejects.toMatchObject({ code: 'UNKNOWN_LAYOUT' })
    const text = path.join(t.dir, 'text.db')
    fs.writeFileSync(text, 'hello')
    await expect(importEngram({ input: text, output: out })).rejects.toMatchObject({ code: 'NOT_SQLITE' })
    await expect(importEngram({ input: path.join(t.dir, 'missing.db'), output: out })).rejects.toMatchObject({ code: 'NOT_FOUND' })
    expect(fs.readdirSync(t.dir).filter((x) => x.startsWith('never.db'))).toEqual([])
  })

  it('an Engram file with no rows is an error, not an empty DB', async () => {
    const empty = path.join(t.dir, 'empty-engram.db')
    const d = new Database(empty)
    d.exec(`CREATE TABLE memories (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, content TEXT NOT NULL, role TEXT, timestamp INTEGER NOT NULL,
      metadata TEXT, content_hash TEXT NOT NULL, embedding TEXT)`)
    d.close()
    const out = path.join(t.dir, 'empty-out.db')
    await expect(importEngram({ input: empty, output: out })).rejects.toMatchObject({ code: 'BAD_INPUT' })
    expect(fs.readdirSync(t.dir).filter((x) => x.startsWith('empty-out.db'))).toEqual([])
  })

  it('a memory id present in both tables is kept once (the session memory) and the duplicate reported', async () => {
    const f = createEngramFixture(path.join(t.dir, 'dupe.db'), 'v0.5')
    const d = new Database(f.path)
    d.prepare(`INSERT INTO user_memories (id, user_id, content, role, timestamp, content_hash) VALUES ('m-00', 'ana', 'clash', 'system', 1, 'h')`).run()
    d.close()
    const r = await importEngram({ input: f.path, output: path.join(t.dir, 'dupe-out.db') })
    expect(r.written.memories).toBe(f.rows.length)
    expect(r.issues.filter((i) => i.reason === 'duplicate id (first kept)')).toEqual([
      { action: 'skipped', reason: 'duplicate id (first kept)', table: 'user_memories', id: 'm-00' },
    ])
  })
})
