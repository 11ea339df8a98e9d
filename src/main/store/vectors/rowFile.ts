/**
 * Float32 rows on disk, read back one row at a time: where a compact vector
 * index (vectorIndex.ts) keeps its exact rows while only an int8 copy stays in
 * memory. A million 768-d rows are 2.9 GiB here instead of in RAM; the few
 * rows a search must rescore exactly are read with pread (page cache).
 *
 * Rows come from two places:
 *  - a read-only base: a section of an existing file (a vector snapshot's data,
 *    snapshot.ts), rows [0, base.count);
 *  - the spill file, ours: row r at byte r × dim × 4 (a sparse file), for every
 *    row written since (all of them after a load from SQL).
 * The spill file is created in the workspace's vector folder and unlinked at
 * once where the OS allows it (POSIX), so it disappears with the process
 * whatever happens; elsewhere it is registered for removal on exit.
 *
 * Sequential writes (a load) are gathered into 4 MiB writes.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { registerTemp } from '../../safety/tempFiles'

const BATCH_BYTES = 4 << 20

export class RowFile {
  private readonly rowBytes: number
  private readonly spillFd: number
  private readonly spillPath: string
  private readonly release: (() => void) | null
  private base: { fd: number; at: number; count: number } | null = null
  /** per row: 1 when its current numbers are in the spill file (only tracked while there is a base) */
  private inSpill = new Uint8Array(0)
  /** rows [pendingFrom, pendingFrom + pendingRows) written but not yet on disk */
  private readonly pending: Float32Array
  private pendingFrom = 0
  private pendingRows = 0
  private closed = false

  constructor(
    dir: string,
    readonly dim: number,
  ) {
    this.rowBytes = dim * 4
    fs.mkdirSync(dir, { recursive: true })
    this.spillPath = path.join(dir, `rows-${process.pid}-${crypto.randomBytes(6).toString('hex')}.f32`)
    this.spillFd = fs.openSync(this.spillPath, 'wx+', 0o600)
    let release: (() => void) | null = null
    try {
      fs.unlinkSync(this.spillPath) // still readable and writable through the descriptor
    } catch {
      release = registerTemp(this.spillPath) // Windows: an open file cannot be unlinked
    }
    this.release = release
    this.pending = new Float32Array(Math.max(1, Math.floor(BATCH_BYTES / this.rowBytes)) * dim)
  }

  /** Serve rows [0, count) from `file` at byte `at` (count × dim float32) until they are overwritten. */
  attachBase(file: string, at: number, count: number): void {
    this.base = { fd: fs.openSync(file, 'r'), at, count }
    this.inSpill = new Uint8Array(count)
  }

  /** Store row `r` (dim float32 values from `v[off..]`). */
  write(r: number, v: Float32Array, off = 0): void {
    const cap = this.pending.length / this.dim
    if (this.pendingRows > 0 && (r !== this.pendingFrom + this.pendingRows || this.pendingRows === cap)) this.flush()
    if (this.pendingRows === 0) this.pendingFrom = r
    this.pending.set(v.subarray(off, off + this.dim), this.pendingRows * this.dim)
    this.pendingRows++
    if (this.base && r < this.base.count) this.inSpill[r] = 1
  }

  /** Write out gathered rows. */
  flush(): void {
    if (this.pendingRows === 0) return
    const bytes = new Uint8Array(this.pending.buffer, 0, this.pendingRows * this.rowBytes)
    writeAll(this.spillFd, bytes, this.pendingFrom * this.rowBytes)
    this.pendingRows = 0
  }

  /** Row `r` into `out` (dim values). */
  read(r: number, out: Float32Array): Float32Array {
    if (r >= this.pendingFrom && r < this.pendingFrom + this.pendingRows) {
      const o = (r - this.pendingFrom) * this.dim
      out.set(this.pending.subarray(o, o + this.dim))
      return out
    }
    const bytes = new Uint8Array(out.buffer, out.byteOffset, this.rowBytes)
    const b = this.base
    if (b && r < b.count && !this.inSpill[r]) readAll(b.fd, bytes, b.at + r * this.rowBytes)
    else readAll(this.spillFd, bytes, r * this.rowBytes)
    return out
  }

  /** Rows [first, first + count) into `out` (count × dim values): large reads where the rows lie in one place. */
  readRange(first: number, count: number, out: Float32Array): void {
    this.flush()
    const b = this.base
    const fromBase = b !== null && first + count <= b.count && !this.inSpill.subarray(first, first + count).includes(1)
    const fromSpill = b === null || first >= b.count
    if (fromBase || fromSpill) {
      const bytes = new Uint8Array(out.buffer, out.byteOffset, count * this.rowBytes)
      if (fromBase) readAll(b.fd, bytes, b.at + first * this.rowBytes)
      else readAll(this.spillFd, bytes, first * this.rowBytes)
      return
    }
    for (let r = 0; r < count; r++) this.read(first + r, out.subarray(r * this.dim, (r + 1) * this.dim))
  }

  /** Close the files (the spill file is gone with its descriptor, or removed here). */
  close(): void {
    if (this.closed) return
    this.closed = true
    fs.closeSync(this.spillFd)
    if (this.base) fs.closeSync(this.base.fd)
    if (this.release) {
      fs.rmSync(this.spillPath, { force: true })
      this.release()
    }
  }
}

function writeAll(fd: number, b: Uint8Array, at: number): void {
  for (let off = 0; off < b.byteLength;) off += fs.writeSync(fd, b, off, b.byteLength - off, at + off)
}

function readAll(fd: number, b: Uint8Array, at: number): void {
  for (let off = 0; off < b.byteLength;) {
    const got = fs.readSync(fd, b, off, b.byteLength - off, at + off)
    if (got <= 0) throw new Error(`short read of a vector row at byte ${at}`)
    off += got
  }
}
