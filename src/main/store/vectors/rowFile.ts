/**
 * Float32 rows on disk, read back one row at a time: where a compact vector
 * index (vectorIndex.ts) keeps its exact rows while only an int8 copy stays in
 * memory. A million 768-d rows are 2.9 GiB here instead of in RAM; the few
 * rows a search must rescore exactly are read with pread (page cache).
 *
 * Rows come from three places:
 *  - the source: rows marked with `markSource` are not stored here at all; they
 *    are read back through the owner's callback (vectorIndex.ts reads the stored
 *    vector from the DB by its rowid and makes the unit row again, the same
 *    numbers). A fresh load from SQL marks every row so: writing 2.9 GiB at 1M ×
 *    768 cost more CPU than the whole rest of the load on a shared disk;
 *  - a read-only base: rows [0, base.count) of a file from byte `at` (a vector
 *    snapshot's rows, snapshot.ts);
 *  - the spill file, ours: row r at byte r × dim × 4 (a sparse file), for every
 *    other row written since.
 * The spill file is `rows-<pid>-<random>.f32` in the workspace's vector folder.
 * It is removed on close and registered for removal on exit; one left by a
 * process that was killed is removed by the next process that spills there.
 * `handOver` renames it into a snapshot instead (no copy of GBs at close), and
 * from then on it is this file's read-only base.
 *
 * Sequential writes (a load) are gathered into 4 MiB writes.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { registerTemp } from '../../safety/tempFiles'
import { openRegularFile } from '../safeFiles'

const BATCH_BYTES = 4 << 20
const SPILL = /^rows-(\d+)-[0-9a-f]+\.f32$/

export class RowFile {
  private readonly rowBytes: number
  private spill: { fd: number; path: string; release: () => void } | null = null
  private base: { fd: number; at: number; count: number } | null = null
  /** per row: 1 when its current numbers are in the spill file (only tracked while there is a base) */
  private inSpill = new Uint8Array(0)
  /** per row: 1 when it is read through `fromSource` (markSource), 0 when stored here */
  private inSource = new Uint8Array(0)
  /** rows marked so far (0: none, and `inSource` is not consulted) */
  private sourceRows = 0
  /** rows [pendingFrom, pendingFrom + pendingRows) written but not yet on disk */
  private readonly pending: Float32Array
  private pendingFrom = 0
  private pendingRows = 0
  private closed = false

  /** Spill into `dir` (created when needed). Throws when the folder cannot be written. */
  constructor(
    private readonly dir: string,
    readonly dim: number,
    private readonly fromSource: ((r: number, out: Float32Array) => void) | null = null,
  ) {
    this.rowBytes = dim * 4
    fs.mkdirSync(dir, { recursive: true })
    fs.accessSync(dir, fs.constants.W_OK)
    removeStaleSpills(dir)
    this.pending = new Float32Array(Math.max(1, Math.floor(BATCH_BYTES / this.rowBytes)) * dim)
  }

  /** Serve rows [0, count) from `file` (count × dim float32 from byte `at`) until they are overwritten. */
  attachBase(file: string, at: number, count: number): void {
    this.base = { fd: openRegularFile(file, 'vector snapshot', { noFollow: true }), at, count }
    this.inSpill = new Uint8Array(count)
  }

  /**
   * Rows first … first+m−1 are not stored here: `fromSource` reads them back (their numbers stay in the
   * source). Nothing is written. A later `write` of one of them stores it here again.
   */
  markSource(first: number, m: number): void {
    if (!this.fromSource) throw new Error('markSource on a row file without a source')
    if (this.inSource.length < first + m) {
      const a = new Uint8Array(Math.max(first + m, this.inSource.length * 2))
      a.set(this.inSource)
      this.inSource = a
    }
    for (let r = first; r < first + m; r++)
      if (!this.inSource[r]) {
        this.inSource[r] = 1
        this.sourceRows++
      }
  }

  /** Whether rows can be read through the source (markSource) at all. */
  get readsSource(): boolean {
    return this.fromSource !== null
  }

  /** Whether any row is read through the source. */
  get someInSource(): boolean {
    return this.sourceRows > 0
  }

  /** Whether row `r` is read through the source (its numbers are not stored here). */
  inSourceAt(r: number): boolean {
    return this.sourceRows > 0 && this.inSource[r] === 1
  }

  /** Whether rows [0, count) are all read through the source (a snapshot then needs none of their numbers). */
  allInSource(count: number): boolean {
    return count > 0 && this.sourceRows >= count && !this.inSource.subarray(0, count).includes(0)
  }

  /** Serve rows [0, count) from the source (a snapshot written with `allInSource` being restored). */
  attachSource(count: number): void {
    this.markSource(0, count)
  }

  private unmarkSource(first: number, m: number): void {
    if (this.sourceRows === 0) return
    const end = Math.min(first + m, this.inSource.length)
    for (let r = first; r < end; r++)
      if (this.inSource[r]) {
        this.inSource[r] = 0
        this.sourceRows--
      }
  }

  /** Store row `r` (dim float32 values from `v[off..]`). */
  write(r: number, v: Float32Array, off = 0): void {
    this.unmarkSource(r, 1)
    const cap = this.pending.length / this.dim
    if (this.pendingRows > 0 && (r !== this.pendingFrom + this.pendingRows || this.pendingRows === cap)) this.flush()
    if (this.pendingRows === 0) this.pendingFrom = r
    this.pending.set(v.subarray(off, off + this.dim), this.pendingRows * this.dim)
    this.pendingRows++
    if (this.base && r < this.base.count) this.inSpill[r] = 1
  }

  /** Store rows first … first+m−1 from `v` (m × dim values, written straight from there: a load's block). */
  writeRows(first: number, v: Float32Array): void {
    this.flush()
    const m = v.length / this.dim
    this.unmarkSource(first, m)
    writeAllSync(this.spillFile().fd, new Uint8Array(v.buffer, v.byteOffset, v.byteLength), first * this.rowBytes)
    if (this.base) this.inSpill.fill(1, Math.min(first, this.base.count), Math.min(first + m, this.base.count))
  }

  /** Write out gathered rows and wait until the spill file is on disk (before a snapshot names it). */
  async sync(): Promise<void> {
    this.flush()
    const s = this.spill
    if (!s || this.closed) return
    await new Promise<void>((done, fail) => fs.fdatasync(s.fd, (e) => (e ? fail(e) : done())))
  }

  /** Write out gathered rows. */
  flush(): void {
    if (this.pendingRows === 0) return
    const bytes = new Uint8Array(this.pending.buffer, 0, this.pendingRows * this.rowBytes)
    writeAllSync(this.spillFile().fd, bytes, this.pendingFrom * this.rowBytes)
    this.pendingRows = 0
  }

  private spillFile(): { fd: number; path: string; release: () => void } {
    if (!this.spill) {
      const p = path.join(this.dir, `rows-${process.pid}-${crypto.randomBytes(6).toString('hex')}.f32`)
      const fd = fs.openSync(p, 'wx+', 0o600)
      this.spill = { fd, path: p, release: registerTemp(p) }
    }
    return this.spill
  }

  /** Row `r` into `out` (dim values). */
  read(r: number, out: Float32Array): Float32Array {
    if (this.inSourceAt(r)) {
      this.fromSource!(r, out)
      return out
    }
    if (r >= this.pendingFrom && r < this.pendingFrom + this.pendingRows) {
      const o = (r - this.pendingFrom) * this.dim
      out.set(this.pending.subarray(o, o + this.dim))
      return out
    }
    const bytes = new Uint8Array(out.buffer, out.byteOffset, this.rowBytes)
    const b = this.base
    if (b && r < b.count && !this.inSpill[r]) readAllSync(b.fd, bytes, b.at + r * this.rowBytes)
    else readAllSync(this.spillFile().fd, bytes, r * this.rowBytes)
    return out
  }

  /** Rows [first, first + count) into `out` (count × dim values): large reads where the rows lie in one place. */
  readRange(first: number, count: number, out: Float32Array): void {
    this.flush()
    const b = this.base
    const bytes = new Uint8Array(out.buffer, out.byteOffset, count * this.rowBytes)
    if (this.sourceRows > 0 && this.inSource.subarray(first, first + count).includes(1))
      for (let r = 0; r < count; r++) this.read(first + r, out.subarray(r * this.dim, (r + 1) * this.dim))
    else if (b && first + count <= b.count && !this.inSpill.subarray(first, first + count).includes(1)) readAllSync(b.fd, bytes, b.at + first * this.rowBytes)
    else if (!b || first >= b.count) readAllSync(this.spillFile().fd, bytes, first * this.rowBytes)
    else for (let r = 0; r < count; r++) this.read(first + r, out.subarray(r * this.dim, (r + 1) * this.dim))
  }

  /**
   * Move the spill file to `dest` as a plain file of rows [0, count) — only when it holds exactly
   * those (no base). It then serves as this file's read-only base: later writes spill anew, so
   * `dest` never changes. Returns false (nothing moved) otherwise.
   */
  handOver(dest: string, count: number): boolean {
    if (this.base || count === 0 || this.sourceRows > 0) return false
    this.flush()
    const s = this.spillFile()
    fs.ftruncateSync(s.fd, count * this.rowBytes)
    try {
      fs.renameSync(s.path, dest)
    } catch {
      return false // e.g. Windows will not rename an open file: the caller copies the rows instead
    }
    s.release()
    this.spill = null
    this.base = { fd: s.fd, at: 0, count }
    this.inSpill = new Uint8Array(count)
    return true
  }

  /** Close the files and remove the spill file (in the background). */
  close(): void {
    if (this.closed) return
    this.closed = true
    if (this.base) fs.closeSync(this.base.fd)
    if (this.spill) {
      fs.closeSync(this.spill.fd)
      // Unlinking GBs takes the file system about a second: not on the closing thread. Until it is
      // gone the file stays registered (an exit meanwhile removes it; a crash leaves it to the sweep).
      const { path: p, release } = this.spill
      fs.rm(p, { force: true }, () => release())
    }
  }
}

/** Remove spill files of processes that are gone (killed before they could remove their own). */
function removeStaleSpills(dir: string): void {
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return
  }
  for (const name of names) {
    const pid = Number(SPILL.exec(name)?.[1])
    if (!pid || pid === process.pid || alive(pid)) continue
    fs.rmSync(path.join(dir, name), { force: true })
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM' // exists, not ours to signal
  }
}

/** Write all of `b` at byte `at` (a write may take less than asked). */
export function writeAllSync(fd: number, b: Uint8Array, at: number): void {
  for (let off = 0; off < b.byteLength;) off += fs.writeSync(fd, b, off, b.byteLength - off, at + off)
}

/** Fill `b` from byte `at`; a file that ends first is an error. */
export function readAllSync(fd: number, b: Uint8Array, at: number): void {
  for (let off = 0; off < b.byteLength;) {
    const got = fs.readSync(fd, b, off, b.byteLength - off, at + off)
    if (got <= 0) throw new Error(`short read at byte ${at + off}`)
    off += got
  }
}
