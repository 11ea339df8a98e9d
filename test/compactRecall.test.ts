/**
 * A compact vector index (int8 copy in memory, float32 rows on disk: the app's
 * mode for a million-vector DB) recalls exactly what the in-memory matrix does:
 * the dense arm's hits (ids, order, similarities bit for bit) on every path — the
 * whole-DB scan, a small listed scope read back row by row, a large listed scope
 * searched through the int8 copy, Engram's missing-vector rule — whole recalls,
 * and why-not's dense rank. The reference ranking is also computed here from the
 * vectors the test wrote (float32 unit rows, float64 dot products), and the data
 * is built to be hard: exact duplicates (ties broken by rowid), rows without a
 * vector, a query equal to a stored row.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest'
import { getPreset } from '../src/shared/presets'
import { runRecall } from '../src/main/recall/engine'
import { denseArm, normalizeQuery } from '../src/main/recall/dense'
import { encodeVector } from '../src/main/store/decode'
import { openSource } from '../src/main/store/registry'
import type { SqliteSource } from '../src/main/store/sqlite/source'
import { dotKernelAvailable } from '../src/main/store/vectors/dotKernel'
import { HELD_AGENT, VectorIndex } from '../src/main/store/vectors/vectorIndex'
import { ChunkReaderFailed, startChunkReaders } from '../src/main/store/vectors/chunkReader'
import { snapshotSettings } from '../src/main/store/vectors/snapshot'
import { loadCounts, refreshVectorIndex, type VectorSource } from '../src/main/store/vectors/load'
import type { Int8Index } from '../src/main/store/vectors/int8Scan'
import { buildDb, MODEL, T0, type MemSpec } from './helpers/testDb'
import { tmpDir } from './helpers/tmp'

const N = 7000
const DEFAULT_COMPACT_BYTES = VectorIndex.compactBytes
const DIM = 48
const NOW = T0 + 10 * N * 60_000

/** A compact index's two code planes for rows [0, count) (room past the count may hold a rejected row's leftovers). */
function planeBytes(q: Int8Index, count = q.n): Buffer {
  const { hi, lo } = q.planes()
  return Buffer.concat([hi.subarray(0, (count * 3 * q.width) / 4), lo.subarray(0, (count * q.width) / 4)])
}

/**
 * Rewrite a compact snapshot (snapshot.ts) into the layout written before the 6-bit planes: the int8 codes
 * (count × stride, each c = 4·hi + lo − 128 read back from the planes by their layout, sixBit.ts), no 6-bit
 * numbers, no width in the header.
 */
function toOldFormat(file: string): void {
  const b = fs.readFileSync(file)
  const headLen = b.readUInt32LE(8)
  const h = JSON.parse(b.toString('utf8', 12, 12 + headLen))
  const a8 = (n: number) => Math.ceil(n / 8) * 8
  const { count: n, dim } = h
  const { stride, width: w } = h.int8
  let pos = a8(12 + headLen)
  const idsAt = pos
  pos = a8(pos + h.ids)
  if (h.rows !== 'external' && h.rows !== 'source') pos = a8(pos + n * dim * 4)
  pos = a8(a8(a8(pos + n * 4) + n * 8) + n)
  const hiAt = pos
  const loAt = a8(hiAt + (n * 3 * w) / 4)
  const scalesAt = a8(loAt + (n * w) / 4)
  const e6At = a8(a8(a8(scalesAt + n * 4) + n * 8) + n * 8)
  const exactAt = a8(a8(e6At + n * 8) + n * 8)
  const codes = Buffer.alloc(a8(n * stride))
  for (let r = 0; r < n; r++)
    for (let i = 0; i < dim; i++) {
      const hb = (j: number) => b[hiAt + (r * 3 * w) / 4 + j]
      const hi =
        i < (3 * w) / 4
          ? hb(i) & 63
          : (() => {
              const j = i - (3 * w) / 4
              return (hb(j) >> 6) | ((hb(j + w / 4) >> 6) << 2) | ((hb(j + w / 2) >> 6) << 4)
            })()
      const lo = (b[loAt + (r * w) / 4 + (i >> 2)] >> (2 * (i & 3))) & 3
      codes.writeInt8(4 * hi + lo - 128, r * stride + i)
    }
  h.int8 = { stride }
  const head = Buffer.from(JSON.stringify(h))
  const pre = Buffer.alloc(a8(12 + head.length))
  pre.write('RSVEC003', 0, 'latin1')
  pre.writeUInt32LE(head.length, 8)
  head.copy(pre, 12)
  const exact = h.rows === 'source' ? b.subarray(exactAt, a8(exactAt + n * 8)) : Buffer.alloc(0)
  fs.writeFileSync(file, Buffer.concat([pre, b.subarray(idsAt, hiAt), codes, b.subarray(scalesAt, e6At), exact, b.subarray(b.length - 16)]))
}

function lcg(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296) * 2 - 1
}

let t: ReturnType<typeof tmpDir>
let dbPath: string
/** id → the raw vector the agent DB holds (the test's own record) */
const stored = new Map<string, number[]>()
const order: string[] = []
let mem: SqliteSource
let cmp: SqliteSource

/** A store whose indexes are compact (true) or in memory (false), on its own workspace. */
function open(compact: boolean, ws: string, extra: Record<string, unknown> = {}): SqliteSource {
  const prev = VectorIndex.compactBytes
  VectorIndex.compactBytes = compact ? 1 : Number.MAX_SAFE_INTEGER
  try {
    const s = openSource({ path: dbPath, workspacePath: path.join(t.dir, ws), ...extra })
    s.vectors(MODEL) // the mode is chosen at load
    return s
  } finally {
    VectorIndex.compactBytes = prev
  }
}

/** Open as `open` does, wait for the snapshot the load writes in the background, close. */
async function snapshotAndClose(compact: boolean, ws: string): Promise<void> {
  const s = open(compact, ws, { vectorCache: { minRows: 1 } })
  expect(await s.whenVectorSnapshotsWritten()).toHaveLength(1)
  s.close()
}

/** The reference: every stored vector as a float32 unit row, dot with the unit query in float64; top k by score, then rowid. */
function bruteTop(q: number[], k: number, keep: (id: string) => boolean = () => true): { id: string; s: number }[] {
  const qn = normalizeQuery(q)!
  const rows: { id: string; s: number; rid: number }[] = []
  order.forEach((id, rid) => {
    const v = stored.get(id)
    if (!v || !keep(id)) return
    const f = Float32Array.from(v)
    let n = 0
    for (const x of f) n += x * x
    const inv = 1 / Math.sqrt(n)
    let s = 0
    for (let i = 0; i < DIM; i++) s += Math.fround(f[i] * inv) * qn[i]
    rows.push({ id, s, rid })
  })
  return rows.sort((a, b) => b.s - a.s || a.rid - b.rid).slice(0, k)
}

const queries = (() => {
  const r = lcg(99)
  const qs = Array.from({ length: 6 }, () => Array.from({ length: DIM }, () => r()))
  return [...qs, () => stored.get('m1234')!] // a query equal to a stored row (it has exact duplicates too)
})()
const query = (i: number) => {
  const q = queries[i]
  return typeof q === 'function' ? q() : q
}

beforeAll(() => {
  t = tmpDir()
  const r = lcg(7)
  const mems: MemSpec[] = []
  let prev: number[] = []
  for (let i = 0; i < N; i++) {
    const id = `m${i}`
    // every 37th an exact duplicate of the one before (a tie only the rowid breaks); every 101st has no vector
    const v = i % 37 === 1 ? prev : Array.from({ length: DIM }, () => r())
    const noVector = i % 101 === 3
    mems.push({
      id,
      vector: noVector ? undefined : v,
      user_id: i % 2 ? 'odd' : 'even',
      session_id: `s${i % 70}`,
      content: `row ${i}`,
      created_at: T0 + i * 60_000,
    })
    if (!noVector) stored.set(id, v)
    order.push(id)
    prev = v
  }
  // m1235 holds the same vector as m1234 (an exact tie at similarity 1 for the last query)
  mems[1235].vector = mems[1234].vector
  stored.set('m1235', mems[1234].vector!)
  dbPath = buildDb(t.dir, { name: 'compact.db', memories: mems })
  mem = open(false, 'mem.ws')
  cmp = open(true, 'cmp.ws')
})
afterAll(() => {
  mem?.close()
  cmp?.close()
  t?.cleanup()
})

describe.skipIf(!dotKernelAvailable())('compact vector index', () => {
  it('is compact, holds the same rows, and keeps no float32 matrix in memory', () => {
    const a = mem.vectors(MODEL)
    const b = cmp.vectors(MODEL)
    expect([a.compact, b.compact]).toEqual([false, true])
    expect(b.count).toBe(a.count)
    expect(b.count).toBe(stored.size)
    expect(b.data.length).toBe(0)
    // int8 codes (dim rounded up to 32) and three numbers a row instead of 4 bytes a value
    expect(b.bytes).toBeLessThan(a.bytes)
    for (const id of ['m0', 'm38', 'm1234', `m${N - 1}`]) expect(Array.from(b.get(id)!)).toEqual(Array.from(a.get(id)!))
  })

  it('dense arm over the whole DB (the scan path): the brute force top 30, and the in-memory numbers bit for bit', () => {
    for (let i = 0; i < queries.length; i++) {
      const q = normalizeQuery(query(i))!
      const a = denseArm(mem, mem.vectors(MODEL), q, {}, 30, false)
      const b = denseArm(cmp, cmp.vectors(MODEL), q, {}, 30, false)
      expect(a.path).toBe('scan')
      expect(b).toEqual(a)
      const ref = bruteTop(query(i), 30)
      expect(b.hits.map((h) => h.id)).toEqual(ref.map((x) => x.id))
      b.hits.forEach((h, j) => expect(h.similarity).toBeCloseTo(ref[j].s, 12))

      // A big scope without the 150 best rows: the first k are all out of scope, so the search widens
      // (over the same int8 scan: one per query), reading the rescored rows back from the DB in batches.
      const skip = bruteTop(query(i), 150).map((x) => x.id)
      const wa = denseArm(mem, mem.vectors(MODEL), q, { excludeIds: skip }, 30, false)
      const idx = cmp.vectors(MODEL)
      const scans = idx.int8!.scans
      const reads = { ...idx.sourceReads }
      const wb = denseArm(cmp, idx, Float64Array.from(q.map((x) => -x)), { excludeIds: skip }, 30, false) // another query first
      expect(idx.int8!.scans - scans).toBe(1)
      const wc = denseArm(cmp, idx, q, { excludeIds: skip }, 30, false)
      expect(idx.int8!.scans - scans).toBe(2)
      expect(idx.sourceReads.single).toBe(reads.single)
      expect(idx.sourceReads.batches).toBeGreaterThan(reads.batches)
      expect(idx.sourceReads.batchedRows - reads.batchedRows).toBeGreaterThanOrEqual(180)
      expect(wb.path).toBe('scan')
      expect(wc).toEqual(wa)
      expect(wc.hits.map((h) => h.id)).toEqual(
        bruteTop(query(i), 180)
          .slice(150)
          .map((x) => x.id),
      )
    }
  })

  it('listed scopes: a small one read back row by row, a large one through the int8 copy, and Engram’s missing-vector rule', () => {
    for (let i = 0; i < queries.length; i++) {
      const q = normalizeQuery(query(i))!
      for (const [filter, missingZero] of [
        [{ sessionId: 's3' }, false],
        [{ userId: 'odd' }, false],
        [{ userId: 'odd' }, true],
      ] as const) {
        const a = denseArm(mem, mem.vectors(MODEL), q, filter, 40, missingZero)
        const b = denseArm(cmp, cmp.vectors(MODEL), q, filter, 40, missingZero)
        expect(a.path).toBe('selective')
        // Everything the arm answers is the same; `scored` (every listed row's similarity, kept for the feature
        // pass) exists only when the arm computed them all, which a large compact scope does not (its top n only).
        const { scored: sa, ...ra } = a
        const { scored: sb, ...rb } = b
        expect(rb).toEqual(ra)
        expect(sa).not.toBeNull()
        if (sb) expect(sb).toEqual(sa)
        else expect(filter).toEqual({ userId: 'odd' })
      }
      const odd = new Set(order.filter((_, k) => k % 2 === 1))
      const ref = bruteTop(query(i), 40, (id) => odd.has(id))
      const b = denseArm(cmp, cmp.vectors(MODEL), q, { userId: 'odd' }, 40, false)
      expect(b.hits.map((h) => h.id)).toEqual(ref.map((x) => x.id))
    }
  })

  it('whole recalls (dense + lexical + recency, every candidate scored) are the same', async () => {
    const cfg = { ...getPreset('fieldguide').config, floor: null }
    for (let i = 0; i < queries.length; i++) {
      const opts = { queryVector: query(i) }
      const a = await runRecall(mem, 'row 12', cfg, NOW, opts)
      const b = await runRecall(cmp, 'row 12', cfg, NOW, opts)
      expect(b.results.length).toBeGreaterThan(0)
      expect(b.results).toEqual(a.results)
      expect(b.dropped).toEqual(a.dropped)
    }
  })

  it('counts rows above a similarity exactly (why-not’s dense rank), over every row and over a listed scope', () => {
    const a = mem.vectors(MODEL)
    const b = cmp.vectors(MODEL)
    const q = normalizeQuery(query(6))!
    const scope = order.filter((_, k) => k % 3 === 0).flatMap((id) => (b.rowOf.has(id) ? [b.rowOf.get(id)!] : []))
    for (const id of ['m1234', 'm1235', 'm77', 'm4000']) {
      const row = b.rowOf.get(id)!
      const sim = b.dot(row, q)
      expect(sim).toBe(a.dot(a.rowOf.get(id)!, q))
      // independent: the reference scores, ties counted when earlier in the DB
      const ref = bruteTop(query(6), N)
      const mine = ref.findIndex((x) => x.id === id)
      expect(b.countAbove(q, sim, row)).toBe(mine)
      expect(b.countAbove(q, sim, row)).toBe(a.countAbove(q, sim, a.rowOf.get(id)!))
      expect(b.countAbove(q, sim, row, scope)).toBe(a.countAbove(q, sim, a.rowOf.get(id)!, scope))
    }
  })

  it('restores from its snapshot without reading the rows into memory, then follows appends and replacements exactly', async () => {
    const ws = 'snap.ws'
    await snapshotAndClose(true, ws)
    const again = open(true, ws, { vectorCache: { minRows: 1 } })
    try {
      const idx = again.vectors(MODEL)
      expect(idx.fullLoads).toBe(0) // restored, not loaded from SQL
      expect(idx.compact).toBe(true)
      const q = normalizeQuery(query(2))!
      expect(denseArm(again, idx, q, {}, 30, false)).toEqual(denseArm(mem, mem.vectors(MODEL), q, {}, 30, false))

      // The agent writes: one new memory with a vector, one vector replaced (a new rowid).
      const nv = Array.from({ length: DIM }, (_, i) => (i === 0 ? 5 : 0.01 * i))
      const d = new Database(dbPath)
      try {
        d.prepare(`INSERT INTO memories (id, content, created_at) VALUES ('new1', 'new', ?)`).run(T0)
        d.prepare(`INSERT OR REPLACE INTO embeddings (owner_type, owner_id, model, dim, vector) VALUES ('memory', ?, ?, ?, ?)`).run(
          'new1',
          MODEL,
          DIM,
          encodeVector(nv),
        )
        d.prepare(`INSERT OR REPLACE INTO embeddings (owner_type, owner_id, model, dim, vector) VALUES ('memory', ?, ?, ?, ?)`).run(
          'm10',
          MODEL,
          DIM,
          encodeVector(nv),
        )
      } finally {
        d.close()
      }
      again.vectors(MODEL)
      expect(['append', 'recount']).toContain(idx.last.path)
      expect(idx.compact).toBe(true)
      const fresh = open(false, 'fresh.ws')
      try {
        const f = fresh.vectors(MODEL)
        expect(Array.from(idx.get('m10')!)).toEqual(Array.from(f.get('m10')!))
        expect(Array.from(idx.get('new1')!)).toEqual(Array.from(f.get('new1')!))
        const qn = normalizeQuery(nv)!
        const hits = denseArm(again, idx, qn, {}, 30, false)
        expect(hits).toEqual(denseArm(fresh, f, qn, {}, 30, false))
        // the same vector, so a tie at 1: new1's row was written first, so it ranks first
        expect(hits.hits.slice(0, 2).map((h) => h.id)).toEqual(['new1', 'm10'])
      } finally {
        fresh.close()
      }
    } finally {
      again.close()
    }
  })

  it('a background snapshot goes to disk as it is written (synced every syncBytes, not in one burst at the end), and restores the same recall', async () => {
    const ws = 'paced.ws'
    const at: number[] = [] // the file's size at each sync
    const real = fs.fdatasync
    const spy = vi.spyOn(fs, 'fdatasync').mockImplementation((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
      at.push(fs.fstatSync(fd).size)
      real(fd, cb)
    })
    snapshotSettings.syncBytes = 4096
    try {
      await snapshotAndClose(true, ws)
    } finally {
      snapshotSettings.syncBytes = 64 << 20
      spy.mockRestore()
    }
    const snapDir = path.join(t.dir, `${ws}-vectors`)
    const size = fs.statSync(
      path.join(
        snapDir,
        fs.readdirSync(snapDir).find((f) => f.endsWith('.bin'))!,
      ),
    ).size
    // Several syncs as the file grew, the last one of the whole file.
    expect(size).toBeGreaterThan(4 * 4096)
    expect(at.length).toBeGreaterThan(3)
    expect(at.every((n, i) => i === 0 || n >= at[i - 1])).toBe(true)
    expect(at[0]).toBeLessThan(size)
    expect(at[at.length - 1]).toBe(size)
    const again = open(true, ws, { vectorCache: { minRows: 1 } })
    try {
      const idx = again.vectors(MODEL)
      expect(idx.fullLoads).toBe(0)
      const q = normalizeQuery(query(3))!
      expect(denseArm(again, idx, q, {}, 30, false)).toEqual(denseArm(mem, mem.vectors(MODEL), q, {}, 30, false))
    } finally {
      again.close()
    }
  })

  it('a snapshot written in one mode restores in the other, with the same recall', async () => {
    const q = normalizeQuery(query(4))!
    const want = denseArm(mem, mem.vectors(MODEL), q, {}, 30, false)
    for (const [from, to] of [
      [false, true],
      [true, false],
    ]) {
      const ws = `cross-${from}.ws`
      await snapshotAndClose(from, ws)
      const s = open(to, ws, { vectorCache: { minRows: 1 } })
      try {
        const idx = s.vectors(MODEL)
        // A compact snapshot stores no rows (they are read back from the DB): memory mode loads them from SQL.
        expect(idx.fullLoads).toBe(from ? 1 : 0)
        expect(idx.compact).toBe(to)
        expect(denseArm(s, idx, q, {}, 30, false)).toEqual(want)
      } finally {
        s.close()
      }
    }
  })

  it('a snapshot written before the 6-bit planes (int8 codes, no 6-bit numbers) opens: its codes split into the planes, the same recall, no load from SQL', async () => {
    const ws = 'old.ws'
    await snapshotAndClose(true, ws)
    const dir = path.join(t.dir, `${ws}-vectors`)
    const [name] = fs.readdirSync(dir).filter((f) => f.endsWith('.bin'))
    toOldFormat(path.join(dir, name))
    const fresh = open(true, 'old-fresh.ws')
    const s = open(true, ws, { vectorCache: { minRows: 1 } })
    try {
      const idx = s.vectors(MODEL)
      expect(idx.fullLoads).toBe(0) // restored from the old snapshot
      const f = fresh.vectors(MODEL)
      // The planes are the fresh load's; h6 the same number; e6 a bound at least the fresh load's exact one.
      expect(planeBytes(idx.int8!, idx.count).equals(planeBytes(f.int8!, f.count))).toBe(true)
      let looser = 0
      for (let r = 0; r < idx.count; r++) {
        expect(idx.int8!.hatNorms6[r]).toBeCloseTo(f.int8!.hatNorms6[r], 14)
        expect(idx.int8!.errs6[r]).toBeGreaterThanOrEqual(f.int8!.errs6[r])
        if (idx.int8!.errs6[r] > f.int8!.errs6[r] * 1.01) looser++
      }
      expect(looser).toBeGreaterThan(0) // bounded, not copied from somewhere
      for (const i of [1, 2, 3]) {
        const q = normalizeQuery(query(i))!
        expect(denseArm(s, idx, q, {}, 30, false)).toEqual(denseArm(mem, mem.vectors(MODEL), q, {}, 30, false))
      }
    } finally {
      s.close()
      fresh.close()
    }
  })

  it('a damaged snapshot (rows file cut short, header garbage, cut before its norms) is dropped and the index loads from SQL, same answer', async () => {
    const q = normalizeQuery(query(3))!
    const want = denseArm(mem, mem.vectors(MODEL), q, {}, 30, false)
    for (const damage of ['rows', 'header', 'norms'] as const) {
      for (const restore of ['sync', 'async'] as const) {
        const ws = `damaged-${damage}-${restore}.ws`
        // 'rows': a snapshot with a rows file (rows not read back from the DB); 'norms': one without
        VectorIndex.rowsFromSource = damage !== 'rows'
        try {
          await snapshotAndClose(true, ws)
        } finally {
          VectorIndex.rowsFromSource = true
        }
        const dir = path.join(t.dir, `${ws}-vectors`)
        const bin = fs.readdirSync(dir).find((f) => f.endsWith('.bin'))!
        expect(fs.existsSync(path.join(dir, `${bin}.rows`))).toBe(damage === 'rows')
        if (damage === 'rows') fs.truncateSync(path.join(dir, `${bin}.rows`), 1000)
        else if (damage === 'header') fs.writeFileSync(path.join(dir, bin), 'RSVEC003 not a header')
        else {
          // the exact norms are the last section before the trailer: cut into them (trailer moved up)
          const file = path.join(dir, bin)
          const b = fs.readFileSync(file)
          fs.writeFileSync(file, Buffer.concat([b.subarray(0, b.length - 16 - 8), b.subarray(b.length - 16)]))
        }
        const prev = VectorIndex.compactBytes
        VectorIndex.compactBytes = 1
        const s = openSource({ path: dbPath, workspacePath: path.join(t.dir, ws), vectorCache: { minRows: 1 } })
        try {
          if (restore === 'async') await s.restoreVectors()
          const idx = s.vectors(MODEL)
          expect(idx.fullLoads, `${damage}/${restore}`).toBe(1)
          expect(idx.compact).toBe(true)
          expect(denseArm(s, idx, q, {}, 30, false)).toEqual(want)
        } finally {
          VectorIndex.compactBytes = prev
          s.close()
        }
      }
    }
  })

  it('restores without holding the thread (restoreVectors): the same index, registered only once complete', async () => {
    const q = normalizeQuery(query(5))!
    const want = denseArm(mem, mem.vectors(MODEL), q, {}, 30, false)
    for (const compact of [true, false]) {
      const ws = `async-${compact}.ws`
      await snapshotAndClose(compact, ws)
      const prev = VectorIndex.compactBytes
      VectorIndex.compactBytes = compact ? 1 : Number.MAX_SAFE_INTEGER
      const s = openSource({ path: dbPath, workspacePath: path.join(t.dir, ws), vectorCache: { minRows: 1 } })
      try {
        let turns = 0
        const ticking = setInterval(() => turns++, 0)
        const restoring = s.restoreVectors()
        await restoring
        clearInterval(ticking)
        VectorIndex.compactBytes = prev
        expect(turns).toBeGreaterThan(0) // the event loop ran while it restored
        // With the snapshot's header gone, only an index restored above avoids a load from SQL here.
        const dir = path.join(t.dir, `${ws}-vectors`)
        for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.bin'))) fs.rmSync(path.join(dir, f))
        const idx = s.vectors(MODEL)
        expect(idx.fullLoads).toBe(0)
        expect(idx.compact).toBe(compact)
        expect(denseArm(s, idx, q, {}, 30, false)).toEqual(want)
      } finally {
        VectorIndex.compactBytes = prev
        s.close()
      }
    }
  })

  it('reads its rows back from the DB: no rows file while open or in its snapshot; a vector rewritten in place reloads the index', async () => {
    const dir = path.join(t.dir, 'source.ws-vectors')
    await snapshotAndClose(true, 'source.ws')
    expect(fs.readdirSync(dir).filter((f) => !f.endsWith('.bin'))).toEqual([])
    const copy = path.join(t.dir, 'inplace.db')
    fs.copyFileSync(dbPath, copy)
    const prev = VectorIndex.compactBytes
    VectorIndex.compactBytes = 1
    const s = openSource({ path: copy, workspacePath: path.join(t.dir, 'inplace.ws') })
    try {
      const idx = s.vectors(MODEL)
      expect(idx.compact).toBe(true)
      expect(idx.rowsInSource).toBe(true)
      expect(fs.existsSync(path.join(t.dir, 'inplace.ws-vectors')) ? fs.readdirSync(path.join(t.dir, 'inplace.ws-vectors')) : []).toEqual([])
      // Rewrite m20's vector in place (same rowid): count and max(rowid) do not move, so no refresh sees it…
      const r = lcg(5)
      const nv = Array.from({ length: DIM }, () => r())
      const d = new Database(copy)
      try {
        d.prepare(`UPDATE embeddings SET vector = ? WHERE owner_id = 'm20' AND model = ?`).run(encodeVector(nv), MODEL)
      } finally {
        d.close()
      }
      // …but the search that rescores m20 (a query equal to its old vector) reads it back and finds another norm.
      const qn = normalizeQuery(stored.get('m20')!)!
      expect(idx.stale).toBe(false)
      denseArm(s, idx, qn, {}, 30, false)
      expect(idx.stale).toBe(true)
      const again = s.vectors(MODEL)
      expect(again.fullLoads).toBe(2)
      expect(again.stale).toBe(false)
      // after the reload: what a fresh in-memory load of the changed file gives
      VectorIndex.compactBytes = Number.MAX_SAFE_INTEGER
      const fresh = openSource({ path: copy, workspacePath: path.join(t.dir, 'inplace-fresh.ws') })
      try {
        const f = fresh.vectors(MODEL)
        expect(f.compact).toBe(false)
        for (const q of [qn, normalizeQuery(nv)!]) expect(denseArm(s, again, q, {}, 30, false)).toEqual(denseArm(fresh, f, q, {}, 30, false))
        expect(denseArm(s, again, normalizeQuery(nv)!, {}, 30, false).hits[0].id).toBe('m20')
        expect(again.stale).toBe(false)
      } finally {
        fresh.close()
      }
    } finally {
      VectorIndex.compactBytes = prev
      s.close()
    }
  })

  /**
   * The fields of a loaded index that must not depend on how its rows were read. Where a chunk holds an odd
   * row, its rows go one by one to the rows file instead of being read back from the DB (`byRows`): which
   * rows those are depends on the chunking, so there the unit rows are compared instead of the norms kept.
   */
  function expectSameIndex(a: VectorIndex, b: VectorIndex, byRows = false): void {
    expect(a.compact && b.compact).toBe(true)
    expect(a.ids).toEqual(b.ids)
    expect(a.count).toBe(b.count)
    expect(Array.from(a.keys.subarray(0, a.count))).toEqual(Array.from(b.keys.subarray(0, b.count)))
    if (!byRows) expect(Array.from(a.exactNorms.subarray(0, a.count))).toEqual(Array.from(b.exactNorms.subarray(0, b.count)))
    else for (let r = 0; r < a.count; r += 3) expect(Array.from(a.rowVector(r))).toEqual(Array.from(b.rowVector(r)))
    // the rows' codes (room past the count may hold a rejected row's leftovers)
    const codes = (x: VectorIndex) => planeBytes(x.int8!, x.count)
    expect(codes(a).equals(codes(b))).toBe(true)
    expect(a.sync[0]).toEqual(b.sync[0])
    expect(a.malformed).toEqual(b.malformed)
  }

  /** Load `file` on `readers` reader threads (chunks of ~`chunkRows`): the index and the dense arm of `inThread`'s load. */
  function expectThreadedLoad(file: string, readers: number, chunkRows: number, inThread: SqliteSource, byRows: boolean): void {
    const ws = path.join(t.dir, `thr-${path.basename(file)}-${readers}-${chunkRows}.ws`)
    const threaded = openSource({ path: file, workspacePath: ws, vectorLoad: { bulkMinRows: 1, chunkRows, readers } })
    try {
      const n = loadCounts.threaded
      const a = threaded.vectors(MODEL)
      expect(loadCounts).toEqual({ threaded: n + 1, readers })
      const b = inThread.vectors(MODEL)
      expectSameIndex(a, b, byRows)
      for (const i of [0, 6]) {
        const q = normalizeQuery(query(i))!
        expect(denseArm(threaded, a, q, {}, 30, false)).toEqual(denseArm(inThread, b, q, {}, 30, false))
      }
    } finally {
      threaded.close()
    }
  }

  it('a big first load reads its chunks on 1, 2 or 3 reader threads: the same index and recall as the in-thread read', async () => {
    const prev = VectorIndex.compactBytes
    VectorIndex.compactBytes = 1
    const inThread = openSource({ path: dbPath, workspacePath: path.join(t.dir, 'nothr.ws'), vectorLoad: { bulkMinRows: 1, chunkRows: 97, threaded: false } })
    try {
      const before = loadCounts.threaded
      const b = inThread.vectors(MODEL)
      expect(loadCounts.threaded).toBe(before)
      expect(b.count).toBeGreaterThanOrEqual(stored.size)
      for (const readers of [1, 2, 3]) expectThreadedLoad(dbPath, readers, 97, inThread, false)
    } finally {
      VectorIndex.compactBytes = prev
      inThread.close()
    }
  })

  it('reader threads over sparse, uneven `_rid`s (other models, sessions, gaps, odd rows): every chunk in `_rid` order, the in-thread index', () => {
    const file = path.join(t.dir, 'sparse.db')
    fs.copyFileSync(dbPath, file)
    const d = new Database(file)
    const r = lcg(5)
    const vec = () => encodeVector(Array.from({ length: DIM }, () => r()))
    try {
      // a gap of 2,000 `_rid`s, a stretch where only every fifth row is this model's, rows of another model,
      // of sessions, of another width and not whole float32s, then more of this model's rows after all of them
      d.prepare(`DELETE FROM embeddings WHERE rowid BETWEEN 1001 AND 3000`).run()
      const put = d.prepare(`INSERT INTO embeddings (owner_type, owner_id, model, dim, vector) VALUES (?, ?, ?, ?, ?)`)
      d.transaction(() => {
        for (let i = 0; i < 3000; i++) {
          if (i % 5 === 0) put.run('memory', `x${i}`, MODEL, DIM, vec())
          else put.run(i % 2 ? 'session' : 'memory', `y${i}`, i % 2 ? MODEL : 'other-model', DIM, vec())
        }
        put.run('memory', 'w1', MODEL, DIM - 1, encodeVector(Array.from({ length: DIM - 1 }, () => r())))
        put.run('memory', 'w2', MODEL, DIM, Buffer.from([1, 2, 3]))
        for (let i = 0; i < 500; i++) put.run('memory', `z${i}`, MODEL, DIM, vec())
      })()
    } finally {
      d.close()
    }
    // the test's own list: this model's memory rows with a whole-width BLOB, in rowid order
    const ref = new Database(file, { readonly: true })
    const want = ref
      .prepare(`SELECT owner_id FROM embeddings WHERE owner_type = 'memory' AND model = ? AND length(vector) = ? ORDER BY rowid`)
      .pluck()
      .all(MODEL, DIM * 4) as string[]
    ref.close()
    const prev = VectorIndex.compactBytes
    VectorIndex.compactBytes = 1
    const inThread = openSource({ path: file, workspacePath: path.join(t.dir, 'sp0.ws'), vectorLoad: { bulkMinRows: 1, chunkRows: 50, threaded: false } })
    try {
      const b = inThread.vectors(MODEL)
      expect(b.ids.slice(0, b.count)).toEqual(want)
      for (const [readers, chunkRows] of [
        [2, 50],
        [3, 7],
        [2, 1024],
      ])
        expectThreadedLoad(file, readers, chunkRows, inThread, true)
    } finally {
      VectorIndex.compactBytes = prev
      inThread.close()
    }
  })

  it('a commit while the readers start (the version moves): they start again; a source that never settles loads in-thread, the same index', () => {
    const prev = VectorIndex.compactBytes
    VectorIndex.compactBytes = 1
    const db = new Database(dbPath, { readonly: true })
    try {
      const load = (moves: number): { idx: VectorIndex; threaded: number; versions: number } => {
        let versions = 0
        const src: VectorSource = {
          bit: HELD_AGENT,
          db,
          embeddings: `SELECT rowid AS _rid, owner_type, owner_id, model, dim, vector FROM embeddings`,
          defaultModel: null,
          // moves on each of the first `moves` reads after the plan's: as if another process committed meanwhile
          version: () => String(Math.min(versions++, moves + 1)),
          unique: true,
          readerFile: { path: dbPath, timeoutMs: 1000 },
        }
        const idx = new VectorIndex('memory', MODEL)
        const n = loadCounts.threaded
        refreshVectorIndex(idx, [src], { bulkMinRows: 1, chunkRows: 300, readers: 2 })
        return { idx, threaded: loadCounts.threaded - n, versions }
      }
      const still = load(0)
      const once = load(1)
      const never = load(1000)
      const inThread = new VectorIndex('memory', MODEL)
      refreshVectorIndex(
        inThread,
        [
          {
            bit: HELD_AGENT,
            db,
            embeddings: `SELECT rowid AS _rid, owner_type, owner_id, model, dim, vector FROM embeddings`,
            defaultModel: null,
            version: () => '0',
            unique: true,
          },
        ],
        {
          bulkMinRows: 1,
          chunkRows: 300,
        },
      )
      expect(still.threaded).toBe(1)
      expect(once.threaded).toBe(1)
      expect(never.threaded).toBe(0) // three starts, then the in-thread read
      expect(once.versions).toBeGreaterThan(still.versions)
      for (const x of [once, never]) {
        expect(x.idx.ids).toEqual(still.idx.ids)
        expect(planeBytes(x.idx.int8!).equals(planeBytes(still.idx.int8!))).toBe(true)
      }
      expect(still.idx.ids).toEqual(inThread.ids)
      expect(planeBytes(inThread.int8!).equals(planeBytes(still.idx.int8!))).toBe(true)
    } finally {
      VectorIndex.compactBytes = prev
      db.close()
    }
  })

  it('a reader that cannot open its file, or cannot start, fails cleanly (the load then reads in-thread)', async () => {
    const plan = { pinSql: 'SELECT 1', chunkSql: 'SELECT 1', params: {}, lo: 1, width: 1, chunks: 1, readers: 2 }
    const bad = startChunkReaders({ path: path.join(t.dir, 'missing.db'), timeoutMs: 100 }, plan)
    try {
      expect(() => bad.ready()).toThrow(ChunkReaderFailed)
    } finally {
      bad.close()
    }
    // Readers still opening when the load gives up (one failed first) are told to stop, not terminated: a thread
    // terminated while its failing open throws aborted the whole process (a clean clone's run). Many readers, many
    // times, each load given up at the first failure; then the readers all end on their own. (A race: with the
    // threads terminated, 150 rounds beside two busy loops aborted the test process two runs out of two; idle, 20
    // rounds rarely do. Told to stop, 150 rounds under the same load pass.)
    const before = process.getActiveResourcesInfo().filter((x) => x === 'MessagePort').length
    for (let round = 0; round < 20; round++) {
      const many = startChunkReaders({ path: path.join(t.dir, `missing-${round}.db`), timeoutMs: 100 }, { ...plan, readers: 6, chunks: 6 })
      try {
        expect(() => many.ready()).toThrow(ChunkReaderFailed)
      } finally {
        many.close()
      }
    }
    await new Promise((r) => setTimeout(r, 300))
    expect(process.getActiveResourcesInfo().filter((x) => x === 'MessagePort').length).toBeLessThanOrEqual(before)
    // a Node flag a worker thread does not take (the process was started with it): no thread, no crash
    process.execArgv.push('--perf-basic-prof')
    try {
      expect(() => startChunkReaders({ path: dbPath, timeoutMs: 100 }, plan)).toThrow(ChunkReaderFailed)
    } finally {
      process.execArgv.pop()
    }
  })

  it('agent rows read back from the DB and backfilled workspace rows in the file: the snapshot holds the rows, and restores the same recall', async () => {
    const ws = path.join(t.dir, 'mixed.ws')
    const r = lcg(21)
    const backfill = ['m3', 'm104', 'm205'].map((id) => ({ id, vector: Array.from({ length: DIM }, () => r()) }))
    expect(backfill.every((b) => !stored.has(b.id))).toBe(true) // memories without an agent vector
    const prev = VectorIndex.compactBytes
    VectorIndex.compactBytes = 1
    try {
      const a = openSource({ path: dbPath, workspacePath: ws, vectorCache: { minRows: 1 } })
      a.workspace.putVectors('memory', MODEL, backfill, 'test', 5)
      const idx = a.vectors(MODEL)
      expect(idx.backfilled).toBe(3)
      expect(idx.rowsFromSourceNow).toBe('some')
      const q = normalizeQuery(backfill[1].vector)!
      const want = denseArm(a, idx, q, {}, 30, false)
      expect(want.hits[0].id).toBe('m104')
      expect(await a.whenVectorSnapshotsWritten()).toHaveLength(1)
      a.close()
      const b = openSource({ path: dbPath, workspacePath: ws, vectorCache: { minRows: 1 } })
      try {
        const again = b.vectors(MODEL)
        expect(again.fullLoads).toBe(0)
        expect(again.compact).toBe(true)
        expect(denseArm(b, again, q, {}, 30, false)).toEqual(want)
        VectorIndex.compactBytes = Number.MAX_SAFE_INTEGER
        const m = openSource({ path: dbPath, workspacePath: ws, vectorCache: false })
        try {
          expect(denseArm(m, m.vectors(MODEL), q, {}, 30, false)).toEqual(want)
        } finally {
          m.close()
        }
      } finally {
        b.close()
      }
    } finally {
      VectorIndex.compactBytes = prev
    }
  })

  it('keeps its rows file only while open; a snapshot takes the file over by a rename; a killed process’s file is swept', async () => {
    // the rows-file path: rows not read back from the DB (a source without rowid lookups, Postgres)
    VectorIndex.rowsFromSource = false
    onTestFinished(() => {
      VectorIndex.rowsFromSource = true
    })
    const dir = path.join(t.dir, 'spill.ws-vectors')
    const spills = () => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^rows-\d+-[0-9a-f]+\.f32$/.test(f)) : [])
    const s = open(true, 'spill.ws')
    s.vectors(MODEL).compactTop(normalizeQuery(query(0))!, 5) // a search writes out the rows gathered so far
    expect(spills()).toEqual([expect.stringMatching(new RegExp(`^rows-${process.pid}-`))])
    s.close()
    // removed in the background (unlinking GBs takes a while): gone within moments
    for (let i = 0; i < 200 && spills().length > 0; i++) await new Promise((r) => setTimeout(r, 10))
    expect(spills()).toEqual([])

    // With a snapshot: the rows file is renamed into it (its size is exactly the rows), nothing else is left.
    await snapshotAndClose(true, 'spill.ws')
    const kept = fs.readdirSync(dir)
    const rows = kept.filter((f) => f.endsWith('.bin.rows'))
    expect(rows).toHaveLength(1)
    expect(fs.statSync(path.join(dir, rows[0])).size).toBe(mem.vectors(MODEL).count * DIM * 4)
    expect(spills()).toEqual([])

    // A process killed while spilling leaves its file; the next one that spills there removes it.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
    const stale = path.join(dir, `rows-${dead.stdout}-0123456789ab.f32`)
    fs.writeFileSync(stale, 'x')
    VectorIndex.compactBytes = 1
    try {
      const idx = new VectorIndex('memory', 'x', path.join(t.dir, 'spill.ws'))
      idx.put(
        'a',
        Float32Array.from({ length: DIM }, (_, i) => i + 1),
      )
      expect(idx.compact).toBe(true)
      expect(fs.existsSync(stale)).toBe(false)
      idx.reset()
    } finally {
      VectorIndex.compactBytes = DEFAULT_COMPACT_BYTES
    }
  })
})
