/**
 * A workspace-side snapshot of a loaded vector index, so reopening an unchanged
 * agent DB does not re-read a GB of BLOBs through SQL (1M × 256: ~5 s → ~1 s).
 *
 * Strict by design, because recall must stay exact:
 *  - a snapshot is written only from an index whose agent part is exactly a full
 *    load of the file as it is now (no incremental refresh since, no commit since:
 *    PRAGMA data_version unchanged): in the background right after the load
 *    (writeSnapshotAsync; a close only stops it), or when asked (writeSnapshot);
 *  - it is written to a temp file, synced, then renamed into place, and a reader
 *    accepts it only with every section's size and the trailer right: a write cut
 *    short (a crash, a full disk) is never taken for a snapshot;
 *  - it is used only when the agent DB file (and its WAL) has the very size,
 *    mtime and inode it had then; anything else deletes it and loads from SQL;
 *  - after a restore the normal staleness check runs at once (the workspace's
 *    own backfilled rows are topped up as usual).
 * It is a cache: deleting it loses nothing. One file per (owner type, model) in
 * `<workspace>-vectors/`.
 *
 * Layout: "RSVEC003", u32 header length, header JSON, then 8-byte aligned
 * sections: data (count × dim float32), norms (f32), keys (f64), held (u8);
 * for a compact index (vectorIndex.ts) also its int8 copy: the 6-bit and 2-bit
 * planes of its codes (count × 3W/4 and count × W/4, int8Scan.ts and sixBit.ts),
 * scales (f32), errors and norms of the int8 approximations, then of the 6-bit
 * ones (f64 each), so a restore reads 0.8 GB instead of quantising 2.9 GB again.
 * A snapshot written before the planes (its header's int8 has no width) holds the
 * int8 codes (count × stride) and no 6-bit numbers: its codes are split into the
 * planes as they are read (Int8Index.setCodes, the 6-bit error then bounded from
 * the int8 one). A compact index
 * hands its float32 rows file over as `<snapshot>.rows` (a rename: closing does
 * not copy GBs), and the header says so (`rows: 'external'`, no data section).
 * A compact index whose rows are read back from the agent DB (vectorIndex.ts,
 * `rowSource`) stores no float32 rows at all (`rows: 'source'`), only each row's
 * float64 norm after the int8 sections: the snapshot is valid only for the very
 * file those rows are read from. A compact restore reads rows from whichever
 * place holds them when needed. Last, the trailer: "RSVECEND", the row count and the width (u32 each).
 */
import { assertNotOpenDb } from '../../safety/fileIdentity'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { readAllSync, writeAllSync } from './rowFile'
import { registerTemp } from '../../safety/tempFiles'
import type { Int8Index } from './int8Scan'
import type { SourceState, VectorIndex } from './vectorIndex'
import { openRegularFile } from '../safeFiles'

const MAGIC = 'RSVEC003'
const TRAILER = 'RSVECEND'
/** the trailer: TRAILER, then the row count and width (u32 each) */
const TRAILER_BYTES = 16

/** Identity of the agent DB file as it is now: size, mtime and inode of the file and its WAL. */
export function fileSignature(dbPath: string): string {
  const one = (p: string, emptyIsAbsent: boolean) => {
    try {
      const st = fs.statSync(p, { bigint: true })
      return emptyIsAbsent && st.size === 0n ? '-' : `${st.size}:${st.mtimeNs}:${st.ino}`
    } catch {
      return '-'
    }
  }
  // An empty WAL holds no frames: the same content as none. SQLite removes the -wal file when the last
  // connection closes and the next open creates a new one (new inode and time), so counting an empty
  // one would make every reopen of a WAL-mode DB miss its snapshot and load from SQL again.
  return `${one(dbPath, false)}|${one(`${dbPath}-wal`, true)}`
}

export function snapshotPath(workspacePath: string, ownerType: string, model: string): string {
  const h = crypto.createHash('sha1').update(`${ownerType}\u0000${model}`).digest('hex').slice(0, 16)
  return path.join(`${workspacePath}-vectors`, `${ownerType}-${h}.bin`)
}

interface Header {
  ownerType: string
  model: string
  signature: string
  dim: number
  count: number
  ids: number
  /** byte lengths of the ids section's JSON arrays, ID_CHUNK ids each (absent: one array) */
  idChunks?: number[]
  malformed: VectorIndex['malformed']
  lengths: [number, number][]
  dimRows: number
  sync: { total: number; maxRid: number | null; rows: number; rejected: string[] }[]
  /**
   * present when the int8 sections follow held: the int8 codes' row length, and the planes' width (absent: an
   * older snapshot, int8 codes and no 6-bit numbers)
   */
  int8?: { stride: number; width?: number }
  /**
   * 'external': the float32 rows are in `<snapshot>.rows`, not in a data section; 'source': nowhere
   * here (read back from the agent DB), an exact-norms section (f64) after the int8 sections instead
   */
  rows?: 'external' | 'source'
}

/** Where an external snapshot keeps its float32 rows. */
const rowsFileOf = (file: string) => `${file}.rows`

/** Remove a snapshot and its rows file. */
function removeSnapshot(file: string): void {
  fs.rmSync(file, { force: true })
  fs.rmSync(rowsFileOf(file), { force: true })
}

const align8 = (n: number) => Math.ceil(n / 8) * 8
/** Rows of a compact index move through a buffer of this size. */
const CHUNK_BYTES = 8 << 20

/** One step of writing a snapshot: bytes to append (then pad to 8 when `pad`), or a point where an async writer lets other work run. */
type WriteStep = { b: Uint8Array; pad: boolean } | 'pause'

/** A big section in pieces of this size, a pause between two: an async writer stops within one piece when it is cancelled. */
const PIECE_BYTES = 16 << 20

function* pieces(b: Uint8Array): Generator<WriteStep, void, void> {
  for (let off = 0; off < b.byteLength; off += PIECE_BYTES) {
    yield { b: b.subarray(off, Math.min(b.byteLength, off + PIECE_BYTES)), pad: false }
    yield 'pause'
  }
  yield { b: new Uint8Array(0), pad: true }
}

/** Where a snapshot's float32 rows go: a data section, `<snapshot>.rows`, or nowhere (read back from the source). */
type RowsMode = 'inline' | 'external' | 'source'

/**
 * How a compact index's rows are snapshotted: nowhere when all are read back from the source; handed
 * over as a file when all are in it; copied into the snapshot when they are in both (an agent's rows
 * in the DB, backfilled workspace rows in the file).
 */
const compactRowsMode = (idx: VectorIndex): RowsMode => ({ all: 'source', some: 'inline', none: 'external' } as const)[idx.rowsFromSourceNow]

/**
 * The snapshot of `idx`'s first `n` rows as a sequence of writes (the layout in the module comment),
 * `rows` saying where the float32 rows are. Ends with the trailer.
 */
function* snapshotSteps(idx: VectorIndex, n: number, signature: string, rows: RowsMode): Generator<WriteStep, void, void> {
  // The ids as JSON arrays of ID_CHUNK each: an async restore parses one between pauses.
  const idParts: Buffer[] = []
  for (let i = 0; i < n; i += ID_CHUNK) {
    idParts.push(Buffer.from(JSON.stringify(idx.ids.slice(i, Math.min(n, i + ID_CHUNK)))))
    yield 'pause'
  }
  const idsJson = Buffer.concat(idParts)
  const header: Header = {
    ownerType: idx.ownerType,
    model: idx.model,
    signature,
    dim: idx.dim,
    count: n,
    ids: idsJson.length,
    idChunks: idParts.map((b) => b.length),
    malformed: { ...idx.malformed },
    lengths: [...idx.lengths],
    dimRows: idx.dimRows,
    sync: idx.sync.map((s) => ({ total: s.total, maxRid: s.maxRid, rows: s.rows, rejected: [...s.rejected] })),
    ...(idx.int8 ? { int8: { stride: idx.int8.stride, width: idx.int8.width } } : {}),
    ...(rows === 'inline' ? {} : { rows }),
  }
  const head = Buffer.from(JSON.stringify(header))
  const pre = Buffer.alloc(12)
  pre.write(MAGIC, 0, 'latin1')
  pre.writeUInt32LE(head.length, 8)
  yield { b: Buffer.concat([pre, head]), pad: true }
  yield* pieces(idsJson)
  if (rows !== 'inline') {
    // no data section: the rows are in their own file, or in the source
  } else if (idx.compact) {
    // The float32 rows are on disk (with a base file under them): copy them across a chunk at a time.
    const rows = Math.max(1, Math.floor(CHUNK_BYTES / (idx.dim * 4)))
    const buf = new Float32Array(rows * idx.dim)
    for (let r = 0; r < n; r += rows) {
      const m = Math.min(rows, n - r)
      idx.readRows(r, m, buf)
      yield { b: new Uint8Array(buf.buffer, 0, m * idx.dim * 4), pad: false }
      yield 'pause'
    }
    yield { b: new Uint8Array(0), pad: true }
  } else yield* pieces(new Uint8Array(idx.data.buffer, idx.data.byteOffset, n * idx.dim * 4))
  yield* pieces(new Uint8Array(idx.norms.buffer, idx.norms.byteOffset, n * 4))
  yield* pieces(new Uint8Array(idx.keys.buffer, idx.keys.byteOffset, n * 8))
  yield* pieces(new Uint8Array(idx.held.buffer, idx.held.byteOffset, n))
  const q = idx.int8
  if (q) {
    q.n = n
    const { hi, lo } = q.planes()
    yield* pieces(hi)
    yield* pieces(lo)
    yield* pieces(new Uint8Array(q.scales.buffer, 0, n * 4))
    for (const a of [q.errs, q.hatNorms, q.errs6, q.hatNorms6]) yield* pieces(new Uint8Array(a.buffer, 0, n * 8))
  }
  if (rows === 'source') yield* pieces(new Uint8Array(idx.exactNorms.buffer, 0, n * 8))
  yield { b: trailer(n, idx.dim), pad: false }
}

/** An older snapshot's int8 codes (n × stride from `at`) into the index's planes, a chunk at a time. */
function* oldCodes(fd: number, at: number, q: Int8Index, n: number): Generator<RestoreStep, void, void> {
  const chunk = Math.max(1, Math.floor(CHUNK_BYTES / q.stride))
  const buf = new Int8Array(chunk * q.stride)
  for (let r = 0; r < n; r += chunk) {
    const m = Math.min(chunk, n - r)
    yield { fd, dst: new Uint8Array(buf.buffer, 0, m * q.stride), at: at + r * q.stride }
    for (let j = 0; j < m; j++) q.setCodes(r + j, buf, j * q.stride)
    yield 'pause'
  }
}

/** The last bytes of a complete snapshot: a reader finding anything else there (a write cut short) rejects the file. */
function trailer(n: number, dim: number): Buffer {
  const t = Buffer.alloc(TRAILER_BYTES)
  t.write(TRAILER, 0, 'latin1')
  t.writeUInt32LE(n >>> 0, 8)
  t.writeUInt32LE(dim >>> 0, 12)
  return t
}

/** Write `idx` (count rows) to `file` atomically. Returns false (and writes nothing) on any error. */
export function writeSnapshot(file: string, idx: VectorIndex, signature: string): boolean {
  const tmp = `${file}.tmp-${process.pid}`
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    assertNotOpenDb(file, 'vector cache', { targetIsDb: true }) // safety/fileIdentity (a planted link at the cache path)
    fs.rmSync(tmp, { force: true })
    // A compact index's rows file becomes the snapshot's (renamed, not copied); an older snapshot goes first.
    let rows: RowsMode = 'inline'
    if (idx.compact) {
      assertNotOpenDb(rowsFileOf(file), 'vector cache', { targetIsDb: true })
      removeSnapshot(file)
      rows = compactRowsMode(idx)
      if (rows === 'external' && !idx.handOverRows(rowsFileOf(file))) rows = 'inline'
    }
    const fd = fs.openSync(tmp, 'wx')
    try {
      let pos = 0
      for (const step of snapshotSteps(idx, idx.count, signature, rows)) {
        if (step === 'pause') continue
        writeAllSync(fd, step.b, pos)
        pos += step.b.byteLength
        if (step.pad && pos % 8) {
          writeAllSync(fd, new Uint8Array(align8(pos) - pos), pos)
          pos = align8(pos)
        }
      }
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(tmp, file)
    return true
  } catch {
    fs.rmSync(tmp, { force: true })
    fs.rmSync(file, { force: true }) // a rows file handed over stays readable by the index; no header points at it
    return false
  }
}

const writeAsync = (fd: number, b: Uint8Array, off: number, at: number) =>
  new Promise<number>((done, fail) => fs.write(fd, b, off, b.byteLength - off, at, (e, n) => (e ? fail(e) : done(n))))
const syncAsync = (fd: number) => new Promise<void>((done, fail) => fs.fdatasync(fd, (e) => (e ? fail(e) : done())))

/**
 * `syncBytes`: a background write syncs the file to disk after every this many bytes. Synced once at the end, the
 * whole snapshot (835 MB at 1M × 768) went to disk in one burst right after the load, and a recall made meanwhile
 * ran ~1.5–2× slower on a 2-core machine (docs/internals/performance.md, "stop 36"); a piece at a time, the writes
 * go out while the load's other background work (the BM25 build) runs. Tests lower it.
 */
export const snapshotSettings = { syncBytes: 64 << 20 }

/**
 * writeSnapshot in the background, after a load (not at close): the sections go out through the OS's
 * I/O threads a piece at a time, the thread free in between, into `<snapshot>.tmp-<pid>-bg`, synced to
 * disk every `snapshotSettings.syncBytes` and at the end; then — only if `valid()` still holds (the index
 * unchanged, the file unchanged, the store open) — a compact index's rows file is handed over and the temp
 * file renamed into place, in one synchronous step. `valid()` is asked before every piece: false stops the
 * write and removes the temp file (a close only has to say so). A crash at any point leaves no file under
 * the snapshot's name (and the reader checks the trailer besides). Resolves whether it wrote the snapshot.
 */
export async function writeSnapshotAsync(file: string, idx: VectorIndex, signature: string, valid: () => boolean): Promise<boolean> {
  const tmp = `${file}.tmp-${process.pid}-bg`
  const release = registerTemp(tmp)
  let fd: number | null = null
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    assertNotOpenDb(file, 'vector cache', { targetIsDb: true })
    if (idx.compact) assertNotOpenDb(rowsFileOf(file), 'vector cache', { targetIsDb: true })
    fs.rmSync(tmp, { force: true })
    const n = idx.count
    const rows: RowsMode = idx.compact ? compactRowsMode(idx) : 'inline'
    const external = rows === 'external'
    fd = fs.openSync(tmp, 'wx', 0o600)
    let pos = 0
    let synced = 0
    for (const step of snapshotSteps(idx, n, signature, rows)) {
      if (!valid() || idx.count !== n) return false
      if (step === 'pause') {
        await new Promise((done) => setImmediate(done))
        continue
      }
      for (let off = 0; off < step.b.byteLength;) off += await writeAsync(fd, step.b, off, pos + off)
      pos += step.b.byteLength
      if (step.pad && pos % 8) {
        const zeros = new Uint8Array(align8(pos) - pos)
        for (let off = 0; off < zeros.byteLength;) off += await writeAsync(fd, zeros, off, pos + off)
        pos = align8(pos)
      }
      if (pos - synced >= snapshotSettings.syncBytes) {
        await syncAsync(fd)
        synced = pos
      }
    }
    await syncAsync(fd)
    if (external) await idx.syncRows()
    // From here on synchronous: nothing can change the index between this check and the rename.
    if (!valid() || idx.count !== n || (idx.compact ? compactRowsMode(idx) : 'inline') !== rows) return false
    fs.closeSync(fd)
    fd = null
    removeSnapshot(file)
    if (external && !idx.handOverRows(rowsFileOf(file))) return false
    fs.renameSync(tmp, file)
    return true
  } catch {
    return false
  } finally {
    if (fd !== null) fs.closeSync(fd)
    fs.rmSync(tmp, { force: true })
    release()
  }
}

/** Whether `file` is a snapshot of this (owner type, model) written for this exact agent file: its header only. */
export function snapshotMatches(file: string, signature: string, ownerType: string, model: string): boolean {
  let fd: number
  try {
    fd = openRegularFile(file, 'vector snapshot', { noFollow: true }) // a planted FIFO or link is no snapshot
  } catch {
    return false
  }
  try {
    return readHeader(fd, fs.fstatSync(fd).size, signature, ownerType, model) !== null
  } catch {
    return false
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The header of the snapshot open as `fd` (`size` bytes) and its length, when it is one written for
 * this agent file (`signature`) and this (owner type, model); null otherwise.
 */
function readHeader(fd: number, size: number, signature: string, ownerType: string, model: string): { h: Header; headLen: number } | null {
  const pre = Buffer.alloc(12)
  if (fs.readSync(fd, pre, 0, 12, 0) !== 12 || pre.toString('latin1', 0, 8) !== MAGIC) return null
  const headLen = pre.readUInt32LE(8)
  if (headLen > 64 << 20 || 12 + headLen > size) return null
  const headBuf = Buffer.alloc(headLen)
  readAllSync(fd, headBuf, 12)
  const h = JSON.parse(headBuf.toString('utf8')) as Header
  return h.signature === signature && h.ownerType === ownerType && h.model === model ? { h, headLen } : null
}

/** One step of a restore: a section to read into place, or a point where an async restore lets other work run. */
type RestoreStep = { fd: number; dst: Uint8Array; at: number } | 'pause'

/** Rows of the id map built between two pauses of an async restore. */
const MAP_CHUNK = 50_000
/** Ids per JSON array in the ids section (parsing 50,000 takes ~20 ms; a million at once ~400 ms). */
const ID_CHUNK = 50_000

/**
 * Fill an empty `idx` from `file` when it was written for this exact agent file
 * (`signature`). A snapshot for another state is deleted. Returns whether it loaded.
 */
export function readSnapshot(file: string, idx: VectorIndex, signature: string): boolean {
  const steps = restoreSteps(file, idx, signature)
  for (let r = steps.next(); ;) {
    if (r.done) return r.value
    const s = r.value
    if (s === 'pause') r = steps.next()
    else {
      try {
        readAllSync(s.fd, s.dst, s.at)
      } catch (e) {
        r = steps.throw(e)
        continue
      }
      r = steps.next()
    }
  }
}

/**
 * readSnapshot without holding the thread: the sections are read by the OS's I/O threads and
 * the id map is built in chunks, so IPC keeps answering while a million-row index comes back.
 * `idx` must not be used until the promise settles.
 */
export async function readSnapshotAsync(file: string, idx: VectorIndex, signature: string): Promise<boolean> {
  const steps = restoreSteps(file, idx, signature)
  for (let r = steps.next(); ;) {
    if (r.done) return r.value
    const s = r.value
    try {
      if (s === 'pause') await new Promise((done) => setImmediate(done))
      else await readAllAsync(s.fd, s.dst, s.at)
    } catch (e) {
      r = steps.throw(e)
      continue
    }
    r = steps.next()
  }
}

const readAsync = (fd: number, dst: Uint8Array, off: number, len: number, at: number) =>
  new Promise<number>((done, fail) => fs.read(fd, dst, off, len, at, (e, n) => (e ? fail(e) : done(n))))

async function readAllAsync(fd: number, dst: Uint8Array, at: number): Promise<void> {
  for (let off = 0; off < dst.byteLength;) {
    const got = await readAsync(fd, dst, off, Math.min(dst.byteLength - off, 64 << 20), at + off)
    if (got <= 0) throw new Error('short read')
    off += got
  }
}

/** The restore, as steps that a sync or an async driver carries out (the reads are the only slow part). */
function* restoreSteps(file: string, idx: VectorIndex, signature: string): Generator<RestoreStep, boolean, void> {
  let fd: number
  try {
    // a FIFO planted at the snapshot path would block every recall: refused, the index loads from SQL
    fd = openRegularFile(file, 'vector snapshot', { noFollow: true })
  } catch (e) {
    // A rows file without its header (a write cut short) can never be used.
    if ((e as { code?: string }).code === 'NOT_FOUND') fs.rmSync(rowsFileOf(file), { force: true })
    return false
  }
  let ok = false
  let rowsFd: number | null = null
  try {
    const size = fs.fstatSync(fd).size
    const head = readHeader(fd, size, signature, idx.ownerType, idx.model)
    if (!head) return false
    const { h, headLen } = head
    const n = h.count
    const dim = h.dim
    let pos = align8(12 + headLen)
    const idsAt = pos
    pos = align8(pos + h.ids)
    const external = h.rows === 'external'
    const inSource = h.rows === 'source'
    if (inSource && !h.int8) return false
    const dataAt = pos
    if (!external && !inSource) pos = align8(pos + n * dim * 4)
    const normsAt = pos
    pos = align8(pos + n * 4)
    const keysAt = pos
    pos = align8(pos + n * 8)
    const heldAt = pos
    pos = align8(pos + n)
    const stride = h.int8?.stride ?? 0
    const width = h.int8?.width
    const codesAt = pos
    // the planes (3W/4 + W/4 bytes a row), or an older snapshot's int8 codes
    pos = width === undefined ? align8(pos + n * stride) : align8(align8(pos + (n * 3 * width) / 4) + (n * width) / 4)
    const scalesAt = pos
    pos = align8(pos + n * 4)
    const f64At: number[] = [] // errs, hatNorms, and with planes errs6, hatNorms6
    for (let i = 0; i < (width === undefined ? 2 : 4); i++) {
      f64At.push(pos)
      pos = align8(pos + n * 8)
    }
    const exactAt = pos
    if (inSource) pos = align8(pos + n * 8)
    const end = h.int8 ? pos : align8(heldAt + n)
    if (end + TRAILER_BYTES !== size || !Number.isInteger(dim) || dim <= 0) return false
    // A complete file ends with its trailer (a write cut short, or blocks lost in a crash, do not).
    const tail = Buffer.alloc(TRAILER_BYTES)
    readAllSync(fd, tail, end)
    if (!tail.equals(trailer(n, dim))) return false
    const idsBuf = Buffer.alloc(h.ids)
    yield { fd, dst: idsBuf, at: idsAt }
    let ids: string[] = []
    if (h.idChunks) {
      if (h.idChunks.reduce((a, b) => a + b, 0) !== h.ids) return false
      let off = 0
      for (const len of h.idChunks) {
        const part = JSON.parse(idsBuf.toString('utf8', off, off + len)) as string[]
        if (!Array.isArray(part)) return false
        for (const id of part) ids.push(id)
        off += len
        yield 'pause'
      }
    } else ids = JSON.parse(idsBuf.toString('utf8')) as string[]
    if (!Array.isArray(ids) || ids.length !== n) return false
    // The float32 rows: this file's data section, or the rows file beside it.
    if (external) {
      rowsFd = openRegularFile(rowsFileOf(file), 'vector snapshot rows', { noFollow: true })
      if (fs.fstatSync(rowsFd).size !== n * dim * 4) return false
    }
    const rows = external ? { fd: rowsFd!, file: rowsFileOf(file), at: 0 } : { fd, file, at: dataAt }
    idx.reset()
    idx.dim = dim
    idx.reserve(n)
    // Rows read back from the agent DB: only an index that can read them (and is compact) takes this snapshot.
    if (inSource && !(idx.int8 && idx.int8.stride === h.int8!.stride && idx.attachSource(n))) return false
    if (inSource) yield { fd, dst: new Uint8Array(idx.exactNorms.buffer, 0, n * 8), at: exactAt }
    if (idx.compact) {
      // Too big to hold: the rows stay on disk (read back when needed); only the int8 copy is in memory.
      if (!inSource) idx.attachRows(rows.file, rows.at, n)
      const q = idx.int8!
      if (h.int8 && h.int8.stride === q.stride && (width === undefined || width === q.width)) {
        q.n = n
        yield { fd, dst: new Uint8Array(q.scales.buffer, 0, n * 4), at: scalesAt }
        const f64 = width === undefined ? [q.errs, q.hatNorms] : [q.errs, q.hatNorms, q.errs6, q.hatNorms6]
        for (let i = 0; i < f64.length; i++) yield { fd, dst: new Uint8Array(f64[i].buffer, 0, n * 8), at: f64At[i] }
        if (width !== undefined) {
          const { hi, lo } = q.planes()
          yield { fd, dst: hi, at: codesAt }
          yield { fd, dst: lo, at: align8(codesAt + hi.byteLength) }
        } else yield* oldCodes(fd, codesAt, q, n)
      } else {
        // Written in memory mode (or another layout): quantise the rows again, a chunk at a time.
        const chunk = Math.max(1, Math.floor(CHUNK_BYTES / (dim * 4)))
        const buf = new Float32Array(chunk * dim)
        for (let r = 0; r < n; r += chunk) {
          const m = Math.min(chunk, n - r)
          yield { fd: rows.fd, dst: new Uint8Array(buf.buffer, 0, m * dim * 4), at: rows.at + r * dim * 4 }
          idx.quantizeRows(r, buf.subarray(0, m * dim))
          yield 'pause'
        }
      }
    } else yield { fd: rows.fd, dst: new Uint8Array(idx.data.buffer, idx.data.byteOffset, n * dim * 4), at: rows.at }
    yield { fd, dst: new Uint8Array(idx.norms.buffer, idx.norms.byteOffset, n * 4), at: normsAt }
    yield { fd, dst: new Uint8Array(idx.keys.buffer, idx.keys.byteOffset, n * 8), at: keysAt }
    yield { fd, dst: new Uint8Array(idx.held.buffer, idx.held.byteOffset, n), at: heldAt }
    const rowOf = new Map<string, number>()
    for (let r = 0; r < n; r++) {
      rowOf.set(ids[r], r)
      if (r % MAP_CHUNK === MAP_CHUNK - 1) yield 'pause'
    }
    idx.count = n
    idx.ids = ids
    idx.rowOf = rowOf
    Object.assign(idx.malformed, h.malformed)
    for (const [len, c] of h.lengths) idx.lengths.set(len, c)
    idx.dimRows = h.dimRows
    h.sync.forEach((s, i) => {
      const st: SourceState = idx.sync[i]
      // '' is no real version: the first refresh checks the sources' stats straight away.
      Object.assign(st, { version: '', total: s.total, maxRid: s.maxRid, rows: s.rows, rejected: new Set(s.rejected) })
    })
    ok = true
    return true
  } catch {
    return false
  } finally {
    fs.closeSync(fd)
    if (rowsFd !== null) fs.closeSync(rowsFd)
    if (!ok) {
      idx.reset()
      // A snapshot of another state (or a damaged one) can never be used: drop it.
      removeSnapshot(file)
    }
  }
}
