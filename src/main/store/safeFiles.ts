/**
 * Opening files a hostile folder may have planted (trust round 3, docs/guide/safety.md):
 * - a FIFO or device where a store, snapshot or data file should be blocks `open()` (no writer)
 *   or `read()` forever and wedges the whole process; so files are opened with O_NONBLOCK and
 *   checked with fstat, and anything that is not a regular file is refused with a typed error;
 * - a symlink at a path recallscope creates or owns (the workspace `<store>.recallscope` and its
 *   `-wal`/`-shm`, vector snapshots, spill files) would redirect our writes to another agent's DB or
 *   anywhere else; such paths are lstat'ed and refused when they are links (never followed).
 */
import fs from 'node:fs'
import { RecallscopeError } from '../../shared/result'

const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW } = fs.constants

/** What an fstat says a non-regular file is, for the error message. */
function describeKind(st: fs.Stats): string {
  if (st.isFIFO()) return 'a FIFO (named pipe)'
  if (st.isDirectory()) return 'a folder'
  if (st.isSocket()) return 'a socket'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  if (st.isSymbolicLink()) return 'a symbolic link'
  return 'not a regular file'
}

/**
 * Open `file` for reading without ever blocking on a FIFO: O_NONBLOCK for the open, fstat after it,
 * then the fd is switched back to blocking reads. Throws NOT_FOUND when absent and NOT_SQLITE-free
 * `BAD_INPUT` (naming the path and what it is) when it is not a regular file. `noFollow` refuses a
 * symlink at the last component as well (paths recallscope owns).
 */
export function openRegularFile(file: string, what = 'file', opts: { noFollow?: boolean } = {}): number {
  let fd: number
  try {
    fd = fs.openSync(file, O_RDONLY | O_NONBLOCK | (opts.noFollow ? O_NOFOLLOW : 0))
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new RecallscopeError('NOT_FOUND', `No such file: ${file}`)
    if (code === 'ELOOP') throw symlinkRefused(file, what)
    if (code === 'EISDIR') throw new RecallscopeError('BAD_INPUT', `The ${what} ${file} is a folder, not a regular file`, { path: file, kind: 'folder' })
    throw new RecallscopeError('NOT_FOUND', `Cannot read the ${what} ${file}: ${(e as Error).message}`)
  }
  const st = fs.fstatSync(fd)
  if (!st.isFile()) {
    fs.closeSync(fd)
    throw new RecallscopeError('BAD_INPUT', `The ${what} ${file} is ${describeKind(st)}, not a regular file: refused`, { path: file, kind: describeKind(st) })
  }
  return fd
}

/** Read a whole regular file (see openRegularFile); a FIFO or folder is refused, never waited on. */
export function readRegularFile(file: string, what = 'file'): Buffer {
  const fd = openRegularFile(file, what)
  try {
    return fs.readFileSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

function symlinkRefused(file: string, what: string): RecallscopeError {
  return new RecallscopeError(
    'FORBIDDEN',
    `The ${what} ${file} is a symbolic link: recallscope never follows a link at a path it writes (remove it or choose another path)`,
    {
      path: file,
      kind: 'symlink',
    },
  )
}

/**
 * Check a path recallscope creates or owns before it opens it for writing: absent is fine; a
 * symlink is refused (FORBIDDEN, naming it); anything but a regular file is refused (BAD_INPUT).
 */
function assertOwnedPath(file: string, what: string): void {
  let st: fs.Stats
  try {
    st = fs.lstatSync(file)
  } catch {
    return
  }
  if (st.isSymbolicLink()) throw symlinkRefused(file, what)
  if (!st.isFile())
    throw new RecallscopeError('BAD_INPUT', `The ${what} ${file} is ${describeKind(st)}, not a regular file: refused`, { path: file, kind: describeKind(st) })
}

/** A SQLite file recallscope owns, with the side files SQLite creates beside it: none may be a link or a FIFO. */
export function assertOwnedDbPath(file: string, what: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) assertOwnedPath(file + suffix, suffix ? `${what} side file` : what)
}
