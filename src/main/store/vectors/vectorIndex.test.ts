/**
 * The vector index stays exact while an agent keeps writing: appends, INSERT OR
 * REPLACE, deletions, malformed replacements, workspace backfill merged under the
 * agent's vectors, and every load path (chunked BLOB read through the bulk
 * connection, row by row) giving the same index. The reference for each state is
 * computed here from the rows the test wrote (unit vector = v / ‖v‖, rounded to
 * float32), and cross-checked against a fresh store's full load.
 *
 * Everything runs twice: with the matrix in memory, and compact (int8 copy in
 * memory, float32 rows on disk: VectorIndex.compactBytes = 1 makes every index
 * compact), which must hold exactly the same rows.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tmpDir } from '../../../../test/helpers/tmp'
import { encodeVector } from '../decode'
import { openSource } from '../registry'
import { dotKernelAvailable } from './dotKernel'
import { snapshotPath } from './snapshot'
import { HELD_AGENT, HELD_WORKSPACE, VectorIndex } from './vectorIndex'
import { topKRows } from './topKRows'
import { CanonicalWriter } from '../sqlite/canonicalWriter'

const DIM = 8
const MODEL = 'm8'

/** A deterministic non-unit vector (LCG), different for every seed. */
function raw(seed: number, dim = DIM): number[] {
  let s = (seed * 2654435761) >>> 0 || 1
  return Array.from({ length: dim }, () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return (s / 4294967296) * 4 - 2
  })
}

/** What the index must hold for a stored vector: v / ‖v‖ in float32. */
function unit(v: number[]): number[] {
  const f = Float32Array.from(v)
  let s = 0
  for (const x of f) s += x * x
  const n = Math.sqrt(s)
  return Array.from(f, (x) => Math.fround(x / n))
}

let t: ReturnType<typeof tmpDir>
let db: string
/** id → raw vector the agent DB holds right now (the test's own bookkeeping) */
let truth: Map<string, number[]>

function build(ids: number[], opts: { unique?: boolean } = {}): void {
  const w = new CanonicalWriter(db, { force: true })
  for (const i of ids) {
    w.memory({
      id: `m${i}`,
      agent_id: 'a',
      user_id: 'u',
      session_id: 's',
      role: 'user',
      kind: 'episodic',
      tier: 'working',
      content: `memory ${i}`,
      summary: null,
      salience: 0.5,
      created_at: 1000 + i,
      last_used_at: null,
      use_count: 0,
      turn: i,
      source: null,
      metadata: null,
    })
    w.embedding('memory', `m${i}`, MODEL, raw(i))
    truth.set(`m${i}`, raw(i))
  }
  w.finish()
  if (opts.unique === false) {
    // An agent that wrote its own embeddings table without a key: same columns, duplicates allowed.
    const d = new Database(db)
    d.exec(`CREATE TABLE e2 (owner_type TEXT, owner_id TEXT, model TEXT, dim INTEGER, vector BLOB);
            INSERT INTO e2 SELECT * FROM embeddings ORDER BY rowid; DROP TABLE embeddings; ALTER TABLE e2 RENAME TO embeddings;`)
    d.close()
  }
}

/** The agent writing through its own connection. */
function agent(fn: (d: Database.Database) => void): void {
  const d = new Database(db)
  try {
    fn(d)
  } finally {
    d.close()
  }
}

const putRow = (d: Database.Database, id: string, v: number[] | Buffer | string, verb = 'INSERT OR REPLACE') =>
  d
    .prepare(`${verb} INTO embeddings (owner_type, owner_id, model, dim, vector) VALUES ('memory', ?, ?, ?, ?)`)
    .run(id, MODEL, DIM, Array.isArray(v) ? encodeVector(v) : v)

/** The index must hold exactly `truth`, each row as its unit vector. */
function expectTruth(idx: VectorIndex): void {
  expect([...idx.ids.slice(0, idx.count)].sort()).toEqual([...truth.keys()].sort())
  for (const [id, v] of truth) expect(Array.from(idx.get(id)!), id).toEqual(unit(v))
}

/** Same ids, vectors and tie keys as a full load in a fresh store. */
function expectSameAsFresh(idx: VectorIndex, opts: ConstructorParameters<typeof Object>[0] = {}): void {
  const fresh = openSource({ path: db, workspacePath: path.join(t.dir, 'fresh.ws'), ...(opts as object) })
  try {
    const f = fresh.vectors(MODEL)
    expect(f.count).toBe(idx.count)
    for (const id of f.ids.slice(0, f.count)) {
      const a = idx.rowOf.get(id)!
      const b = f.rowOf.get(id)!
      expect(Array.from(idx.get(id)!), id).toEqual(Array.from(f.get(id)!))
      expect(idx.keys[a], id).toBe(f.keys[b])
    }
    expect(idx.malformed).toEqual(f.malformed)
  } finally {
    fresh.close()
  }
}

beforeEach(() => {
  t = tmpDir()
  db = path.join(t.dir, 'agent.db')
  truth = new Map()
})
afterEach(() => t.cleanup())

const DEFAULT_COMPACT_BYTES = VectorIndex.compactBytes
const MODES = [{ mode: 'in memory', compactBytes: DEFAULT_COMPACT_BYTES }, ...(dotKernelAvailable() ? [{ mode: 'compact', compactBytes: 1 }] : [])]

describe.each(MODES)('$mode', ({ compactBytes }) => {
  beforeEach(() => {
    VectorIndex.compactBytes = compactBytes
  })
  afterEach(() => {
    VectorIndex.compactBytes = DEFAULT_COMPACT_BYTES
  })

  describe('staleness check', () => {
    it('does no SQL when nothing was committed, and only two cheap queries when another table changed', () => {
      build([1, 2, 3])
      const s = openSource({ path: db })
      try {
        const idx = s.vectors(MODEL)
        expect(idx.last.path).toBe('full')
        expectTruth(idx)
        s.vectors(MODEL)
        expect(idx.last.path).toBe('unchanged')
        agent((d) => d.prepare(`UPDATE memories SET salience = 0.9 WHERE id = 'm1'`).run())
        s.vectors(MODEL)
        expect(idx.last.path).toBe('stats')
        s.vectors(MODEL)
        expect(idx.last.path).toBe('unchanged')
        expect(idx.fullLoads).toBe(1)
      } finally {
        s.close()
      }
    })
  })

  describe('incremental refresh stays exact', () => {
    it('appends: reads only the new rows', () => {
      build([1, 2, 3])
      const s = openSource({ path: db })
      try {
        const idx = s.vectors(MODEL)
        agent((d) => {
          for (const i of [4, 5]) {
            d.prepare(`INSERT INTO memories (id, content, created_at) VALUES (?, ?, ?)`).run(`m${i}`, `memory ${i}`, 2000 + i)
            putRow(d, `m${i}`, raw(i))
            truth.set(`m${i}`, raw(i))
          }
        })
        s.vectors(MODEL)
        expect(idx.last.path).toBe('append')
        expect(idx.fullLoads).toBe(1)
        expectTruth(idx)
        expectSameAsFresh(idx)
      } finally {
        s.close()
      }
    })

    it('INSERT OR REPLACE (a new rowid): the new vector replaces the old in place, no reload', () => {
      build([1, 2, 3])
      const s = openSource({ path: db })
      try {
        const idx = s.vectors(MODEL)
        agent((d) => putRow(d, 'm2', raw(200)))
        truth.set('m2', raw(200))
        s.vectors(MODEL)
        expect(idx.last.path).toBe('recount')
        expect(idx.fullLoads).toBe(1)
        expectTruth(idx)
        // Its tie key is its new rowid, as a full load would give it.
        expectSameAsFresh(idx)
      } finally {
        s.close()
      }
    })

    it('deletions (alone, or hidden behind an append of as many rows) reload from scratch', () => {
      build([1, 2, 3, 4])
      const s = openSource({ path: db })
      try {
        const idx = s.vectors(MODEL)
        agent((d) => d.prepare(`DELETE FROM embeddings WHERE owner_id = 'm1'`).run())
        truth.delete('m1')
        s.vectors(MODEL)
        expect(idx.last.path).toBe('full')
        expectTruth(idx)
        // Same row count and a higher max rowid: only the accounting can tell a row left.
        agent((d) => {
          d.transaction(() => {
            d.prepare(`DELETE FROM embeddings WHERE owner_id = 'm2'`).run()
            putRow(d, 'm9', raw(9))
          })()
        })
        truth.delete('m2')
        truth.set('m9', raw(9))
        s.vectors(MODEL)
        expect(idx.last.path).toBe('full')
        expect(idx.fullLoads).toBe(3)
        expectTruth(idx)
        expectSameAsFresh(idx)
      } finally {
        s.close()
      }
    })

    it('a vector replaced by a malformed one disappears (and is counted)', () => {
      build([1, 2, 3])
      const s = openSource({ path: db })
      try {
        const idx = s.vectors(MODEL)
        agent((d) => putRow(d, 'm3', encodeVector([1, Number.NaN, 0, 0, 0, 0, 0, 0])))
        truth.delete('m3')
        s.vectors(MODEL)
        expectTruth(idx)
        expect(idx.malformed.nonFiniteVector).toBe(1)
        expectSameAsFresh(idx)
      } finally {
        s.close()
      }
    })

    it('in a table without a unique key, a second row for an id reloads (the newest row wins, as on a full load)', () => {
      build([1, 2, 3], { unique: false })
      const s = openSource({ path: db })
      try {
        const idx = s.vectors(MODEL)
        agent((d) => putRow(d, 'm1', raw(100), 'INSERT'))
        truth.set('m1', raw(100))
        s.vectors(MODEL)
        expect(idx.last.path).toBe('full')
        expectTruth(idx)
      } finally {
        s.close()
      }
    })

    it('blind spot, documented: an in-place UPDATE keeps count and max(rowid); reloadVectors() picks it up', () => {
      build([1, 2, 3])
      const s = openSource({ path: db })
      try {
        const idx = s.vectors(MODEL)
        agent((d) => d.prepare(`UPDATE embeddings SET vector = ? WHERE owner_id = 'm1'`).run(encodeVector(raw(77))))
        s.vectors(MODEL)
        expect(idx.last.path).toBe('stats')
        expect(Array.from(idx.get('m1')!)).toEqual(unit(raw(1)))
        s.reloadVectors()
        truth.set('m1', raw(77))
        expectTruth(s.vectors(MODEL))
      } finally {
        s.close()
      }
    })

    it('ties rank by source rowid, so an incrementally refreshed index orders them as a fresh load does', () => {
      build([1, 2, 3])
      const s = openSource({ path: db })
      try {
        const idx = s.vectors(MODEL)
        // m1 and m3 get the same vector; m1 is rewritten later, so its rowid is now the higher one.
        agent((d) => {
          putRow(d, 'm3', raw(50))
          putRow(d, 'm1', raw(50))
        })
        s.vectors(MODEL)
        const q = Float64Array.from(unit(raw(50)))
        const rank = (x: VectorIndex) => {
          const sims = new Float64Array(x.count)
          for (let r = 0; r < x.count; r++) {
            const v = x.rowVector(r)
            for (let i = 0; i < DIM; i++) sims[r] += v[i] * q[i]
          }
          return topKRows(sims, x.count, 3, undefined, x.keys).map((r) => x.ids[r])
        }
        expect(rank(idx).slice(0, 2)).toEqual(['m3', 'm1'])
        const fresh = openSource({ path: db, workspacePath: path.join(t.dir, 'f.ws') })
        expect(rank(fresh.vectors(MODEL))).toEqual(rank(idx))
        fresh.close()
      } finally {
        s.close()
      }
    })

    it('Engram: an embedding written in place into a NULL column (no new rowid) is picked up', () => {
      const d = new Database(db)
      d.exec(`CREATE TABLE memories (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, content TEXT NOT NULL, role TEXT, timestamp INTEGER NOT NULL,
      metadata TEXT, content_hash TEXT NOT NULL, embedding TEXT, tier TEXT NOT NULL DEFAULT 'working')`)
      for (const i of [1, 2, 3])
        d.prepare(`INSERT INTO memories VALUES (?, 's', ?, 'user', ?, NULL, ?, ?, 'working')`).run(
          `e${i}`,
          `text ${i}`,
          1000 + i,
          `h${i}`,
          i === 2 ? null : JSON.stringify(raw(i)),
        )
      d.close()
      const s = openSource({ path: db })
      try {
        const idx = s.vectors('nomic-embed-text')
        expect(idx.count).toBe(2)
        agent((w) => w.prepare(`UPDATE memories SET embedding = ? WHERE id = 'e2'`).run(JSON.stringify(raw(2))))
        s.vectors('nomic-embed-text')
        expect(idx.count).toBe(3)
        expect(Array.from(idx.get('e2')!)).toEqual(unit(raw(2)))
      } finally {
        s.close()
      }
    })
  })

  describe('load paths', () => {
    function buildMixed(): void {
      build(Array.from({ length: 40 }, (_, i) => i + 1))
      agent((d) => {
        putRow(d, 'm5', JSON.stringify(raw(5))) // JSON text where a BLOB is expected: still a vector
        truth.set('m5', raw(5))
        putRow(d, 'm6', encodeVector(raw(6, DIM - 2))) // wrong length
        truth.delete('m6')
        putRow(d, 'm7', Buffer.from([1, 2, 3, 4, 5, 6])) // not whole float32s
        truth.delete('m7')
        putRow(d, 'm8', encodeVector([0, Number.POSITIVE_INFINITY, 0, 0, 0, 0, 0, 0]))
        truth.delete('m8')
        putRow(d, 'm9', '[1, 2, "x"]') // bad JSON vector
        truth.delete('m9')
      })
    }

    it('chunked BLOB reads through the bulk connection give the same index as row-by-row reads', () => {
      buildMixed()
      const chunked = openSource({ path: db, workspacePath: path.join(t.dir, 'a.ws'), vectorLoad: { bulkMinRows: 1, chunkRows: 7 } })
      const rows = openSource({ path: db, workspacePath: path.join(t.dir, 'b.ws'), vectorLoad: { chunked: false } })
      try {
        const a = chunked.vectors(MODEL)
        const b = rows.vectors(MODEL)
        expectTruth(a)
        expectTruth(b)
        expect(a.malformed).toEqual({ badVectorShape: 2, nonFiniteVector: 1, wrongDimension: 1 })
        expect(b.malformed).toEqual(a.malformed)
        for (const id of truth.keys()) expect(a.keys[a.rowOf.get(id)!]).toBe(b.keys[b.rowOf.get(id)!])
      } finally {
        chunked.close()
        rows.close()
      }
    })

    it('the matrix width is the most common length over all rows, not the first rows sampled', () => {
      const w = new CanonicalWriter(db, { force: true })
      // 300 short vectors first (the sample sees only these), then 400 of the majority length.
      for (let i = 0; i < 700; i++) {
        w.memory({
          id: `m${i}`,
          agent_id: null,
          user_id: null,
          session_id: null,
          role: null,
          kind: null,
          tier: 'working',
          content: `c${i}`,
          summary: null,
          salience: null,
          created_at: i,
          last_used_at: null,
          use_count: null,
          turn: null,
          source: null,
          metadata: null,
        })
        w.embedding('memory', `m${i}`, MODEL, raw(i, i < 300 ? 4 : 6))
      }
      w.finish()
      const s = openSource({ path: db, vectorLoad: { bulkMinRows: 1 } })
      try {
        const idx = s.vectors(MODEL)
        expect(idx.dim).toBe(6)
        expect(idx.count).toBe(400)
        expect(idx.malformed.wrongDimension).toBe(300)
      } finally {
        s.close()
      }
    })
  })

  describe('workspace (backfilled) vectors', () => {
    it('fill only what the agent lacks; an agent vector written later takes over; clearing reloads', () => {
      build([1, 2, 3])
      agent((d) => d.prepare(`INSERT INTO memories (id, content, created_at) VALUES ('m4', 'memory 4', 2004)`).run())
      const s = openSource({ path: db })
      try {
        const idx = s.vectors(MODEL)
        s.workspace.putVectors(
          'memory',
          MODEL,
          [
            { id: 'm3', vector: raw(300) }, // the agent has m3: ignored while it does
            { id: 'm4', vector: raw(400) },
          ],
          'test',
          5,
        )
        s.vectors(MODEL)
        expect(idx.last.path).toBe('append')
        expect(Array.from(idx.get('m3')!)).toEqual(unit(raw(3)))
        expect(Array.from(idx.get('m4')!)).toEqual(unit(raw(400)))
        expect(idx.held[idx.rowOf.get('m3')!]).toBe(HELD_AGENT | HELD_WORKSPACE)
        expect(idx.held[idx.rowOf.get('m4')!]).toBe(HELD_WORKSPACE)
        expect(idx.backfilled).toBe(1)
        // The memory detail lists the workspace vector, marked; m3 shows both, the agent's unmarked.
        const norm = Math.hypot(...Float32Array.from(raw(400)))
        expect(s.vectorInfo('m4')).toEqual([
          { model: MODEL, dim: DIM, norm: expect.closeTo(norm, 5), problem: null, preview: Array.from(Float32Array.from(raw(400))), backfilled: true },
        ])
        expect(s.vectorInfo('m3').map((v) => v.backfilled ?? false)).toEqual([false, true])
        const facts = s.facts().models.find((m) => m.model === MODEL && m.ownerType === 'memory')!
        expect(facts).toMatchObject({ count: 3, backfilled: 2 })

        agent((d) => putRow(d, 'm4', raw(4)))
        s.vectors(MODEL)
        expect(Array.from(idx.get('m4')!)).toEqual(unit(raw(4)))
        expect(idx.backfilled).toBe(0)

        expect(s.workspace.clearVectors(MODEL)).toBe(2)
        s.vectors(MODEL)
        expect(idx.last.path).toBe('full')
        truth.set('m4', raw(4))
        expectTruth(idx)
      } finally {
        s.close()
      }
    })

    it('a model only the workspace has is an index of its own', () => {
      build([1, 2])
      const s = openSource({ path: db })
      try {
        expect(s.vectors('other').count).toBe(0)
        s.workspace.putVectors('memory', 'other', [{ id: 'm1', vector: raw(11, 3) }], 'test', 5)
        const idx = s.vectors('other')
        expect(idx.dim).toBe(3)
        expect(Array.from(idx.get('m1')!)).toEqual(unit(raw(11, 3)))
        expect(s.facts().models.find((m) => m.model === 'other')).toMatchObject({ count: 0, backfilled: 1, dim: 3 })
      } finally {
        s.close()
      }
    })
  })

  describe('snapshot of a big index (vectorCache)', () => {
    const open = () => openSource({ path: db, vectorCache: { minRows: 1 } })
    /** A fresh open ignores the snapshot (the file changed) and loads the truth from SQL. */
    const expectReloadFromSql = () => {
      const s = open()
      try {
        const idx = s.vectors(MODEL)
        expect(idx.last.path).toBe('full')
        expectTruth(idx)
      } finally {
        s.close()
      }
    }

    it('is written in the background after a full load and restores the same index while the file is unchanged', async () => {
      build([1, 2, 3, 4])
      const a = open()
      const idxA = a.vectors(MODEL)
      expect(idxA.last.path).toBe('full')
      const keysA = new Map(idxA.ids.slice(0, idxA.count).map((id) => [id, idxA.keys[idxA.rowOf.get(id)!]]))
      expect(await a.whenVectorSnapshotsWritten()).toEqual([snapshotPath(a.workspacePath, 'memory', MODEL)])
      a.close()
      const b = open()
      try {
        const idx = b.vectors(MODEL)
        expect(idx.last.path).toBe('cached')
        expect(idx.fullLoads).toBe(0)
        expectTruth(idx)
        for (const [id, k] of keysA) expect(idx.keys[idx.rowOf.get(id)!]).toBe(k)
        // Still kept in step afterwards.
        agent((d) => putRow(d, 'm5', raw(5)))
        truth.set('m5', raw(5))
        b.vectors(MODEL)
        expectTruth(idx)
      } finally {
        b.close()
      }
    })

    it('is ignored (and deleted) once the agent file changed, even with the same counts', async () => {
      build([1, 2, 3])
      const a = open()
      a.vectors(MODEL)
      expect(await a.whenVectorSnapshotsWritten()).toHaveLength(1)
      a.close()
      // In place: same row count, same max rowid — exactly what the cheap check cannot see.
      agent((d) => d.prepare(`UPDATE embeddings SET vector = ? WHERE owner_id = 'm2'`).run(encodeVector(raw(222))))
      truth.set('m2', raw(222))
      expectReloadFromSql()
    })

    it('a WAL-mode file: restored although its -wal file went at the last close and came back empty at the next open', async () => {
      build([1, 2, 3, 4])
      agent((d) => d.pragma('journal_mode = WAL'))
      const a = open()
      expect(a.vectors(MODEL).last.path).toBe('full')
      expect(await a.whenVectorSnapshotsWritten()).toHaveLength(1)
      a.close()
      const walGone = !fs.existsSync(`${db}-wal`) || fs.statSync(`${db}-wal`).size === 0
      expect(walGone).toBe(true)
      const b = open()
      try {
        expect(fs.existsSync(`${db}-wal`)).toBe(true) // the open made a new (empty) one
        const idx = b.vectors(MODEL)
        expect(idx.last.path).toBe('cached')
        expect(idx.fullLoads).toBe(0)
        expectTruth(idx)
      } finally {
        b.close()
      }
      // A commit that stays in the WAL (the writer still has it open): same file, different content.
      const w = new Database(db)
      try {
        w.prepare(`UPDATE embeddings SET vector = ? WHERE owner_id = 'm2'`).run(encodeVector(raw(222)))
        truth.set('m2', raw(222))
        expect(fs.statSync(`${db}-wal`).size).toBeGreaterThan(0)
        expectReloadFromSql()
      } finally {
        w.close()
      }
    })

    it('is not written from an index that was refreshed incrementally (it might hide an in-place change)', async () => {
      build([1, 2, 3])
      const a = open()
      a.vectors(MODEL)
      agent((d) => putRow(d, 'm4', raw(4)))
      a.vectors(MODEL)
      expect(await a.whenVectorSnapshotsWritten()).toEqual([]) // the background write started by the load gave up
      expect(a.saveVectorSnapshots()).toEqual([])
      a.close()
      const b = open()
      try {
        expect(b.vectors(MODEL).last.path).toBe('full')
      } finally {
        b.close()
      }
    })

    it('a close stops the background write: no snapshot, no temp file left, and the next open loads from SQL', async () => {
      build(Array.from({ length: 300 }, (_, i) => i + 1))
      const a = open()
      expect(a.vectors(MODEL).last.path).toBe('full')
      const dir = path.dirname(snapshotPath(a.workspacePath, 'memory', MODEL))
      a.close() // before the background write had a turn
      // The write notices at its next step and removes its temp file.
      for (let i = 0; i < 200 && fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.includes('.tmp-')); i++) await new Promise((r) => setTimeout(r, 10))
      const left = fs.existsSync(dir) ? fs.readdirSync(dir) : []
      expect(left.filter((f) => f.includes('.tmp-') || f.endsWith('.bin'))).toEqual([])
      expectReloadFromSql()
    })

    it('a snapshot cut short or damaged at its end is never taken: the index loads from SQL, exact, and the file goes', async () => {
      build([1, 2, 3, 4, 5])
      const a = open()
      a.vectors(MODEL)
      const [file] = await a.whenVectorSnapshotsWritten()
      a.close()
      const good = fs.readFileSync(file)
      const rowsFile = `${file}.rows`
      const rows = fs.existsSync(rowsFile) ? fs.readFileSync(rowsFile) : null
      expect(rows !== null).toBe(compactBytes === 1) // a compact index's float32 rows are in their own file
      const put = (bytes: Buffer | null) => {
        fs.rmSync(file, { force: true })
        if (bytes) fs.writeFileSync(file, bytes)
        if (rows) fs.writeFileSync(rowsFile, rows)
      }
      const zeroTail = Buffer.from(good)
      zeroTail.fill(0, good.length - 16) // the right size, the trailer's blocks never written
      const damaged: [string, Buffer | null][] = [
        ['without its last byte', good.subarray(0, good.length - 1)],
        ['without its trailer', good.subarray(0, good.length - 16)],
        ['cut in half', good.subarray(0, good.length >> 1)],
        ['zeros where the trailer goes', zeroTail],
        ['only as a temp file (the rename never came)', null],
      ]
      for (const [what, bytes] of damaged) {
        put(bytes)
        if (!bytes) fs.writeFileSync(`${file}.tmp-999999-bg`, good)
        const s = open()
        try {
          const idx = s.vectors(MODEL)
          expect(idx.last.path, what).toBe('full')
          expectTruth(idx)
        } finally {
          s.close()
        }
        expect(fs.existsSync(file) && fs.readFileSync(file).equals(good) === false, what).toBe(false)
        fs.rmSync(`${file}.tmp-999999-bg`, { force: true })
      }
      // The same bytes, whole: taken (so the cases above failed for what was cut, nothing else).
      put(good)
      const b = open()
      try {
        expect(b.vectors(MODEL).last.path).toBe('cached')
        expectTruth(b.vectors(MODEL))
      } finally {
        b.close()
      }
    })
  })

  it('each index is in the mode asked for', () => {
    build([1, 2, 3])
    const s = openSource({ path: db })
    try {
      expect(s.vectors(MODEL).compact).toBe(compactBytes === 1)
    } finally {
      s.close()
    }
  })
})

describe('topKRows', () => {
  it('is the first k of a full sort (score desc, then key, then row): random scores with many ties, with and without a filter', () => {
    let seed = 97
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    for (let trial = 0; trial < 60; trial++) {
      const n = 1 + Math.floor(rnd() * 3000)
      // few distinct values: many ties, decided by keys (also tied) and then rows
      const levels = 1 + Math.floor(rnd() * 40)
      const scores = Float64Array.from({ length: n }, () => Math.floor(rnd() * levels) / levels - 0.5)
      const keys = Float64Array.from({ length: n }, () => Math.floor(rnd() * n * 0.5))
      const k = Math.floor(rnd() * 300)
      const mod = 1 + Math.floor(rnd() * 3)
      const accept = trial % 2 ? (r: number) => r % mod === 0 : undefined
      const want = Array.from({ length: n }, (_, r) => r)
        .filter((r) => !accept || accept(r))
        .sort((a, b) => scores[b] - scores[a] || keys[a] - keys[b] || a - b)
        .slice(0, k)
      expect(topKRows(scores, n, k, accept, keys)).toEqual(want)
      const noKeys = Array.from({ length: n }, (_, r) => r)
        .filter((r) => !accept || accept(r))
        .sort((a, b) => scores[b] - scores[a] || a - b)
        .slice(0, k)
      expect(topKRows(scores, n, k, accept)).toEqual(noKeys)
    }
  })
})
