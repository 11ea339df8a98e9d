/**
 * Writing a user-named file safely: never an open DB (file identity), never half a
 * file (temp + rename), never through a planted link at the temp name (O_EXCL).
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'
import { assertNotOpenDb } from './fileIdentity'
import { registerTemp } from './tempFiles'

export interface AtomicWriteOptions {
  /** The channel or flag, for messages ("cases.export", "--out"). */
  what: string
  /** Replace an existing file. @default false */
  overwrite?: boolean
  /** Also refuse these (e.g. the --db of a CLI command that has not opened it through Store). */
  protect?: { path: string; role: string }[]
}

/** Check that `target` may be written (not an open DB, folder exists, conflict rule); returns its absolute path. */
function checkWriteTarget(target: string, opts: AtomicWriteOptions): string {
  const abs = path.resolve(target)
  assertNotOpenDb(abs, opts.what, { extra: opts.protect })
  let st: fs.Stats | null = null
  try {
    st = fs.statSync(abs)
  } catch {
    /* new file */
  }
  if (st?.isDirectory()) throw new RecallscopeError('BAD_INPUT', `${opts.what}: ${abs} is a folder, not a file`)
  if (st && !opts.overwrite) throw new RecallscopeError('CONFLICT', `${opts.what}: ${abs} exists (overwrite it with overwrite: true)`)
  const dir = path.dirname(abs)
  if (!fs.existsSync(dir)) throw new RecallscopeError('NOT_FOUND', `${opts.what}: folder does not exist: ${dir}`)
  return abs
}

/** Write `data` to `target` through a temp file in the same folder, renamed into place. Returns the absolute path. */
export function writeFileAtomic(target: string, data: string | Uint8Array, opts: AtomicWriteOptions): string {
  const abs = checkWriteTarget(target, opts)
  const tmp = path.join(path.dirname(abs), `.${path.basename(abs)}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`)
  const release = registerTemp(tmp)
  try {
    // 'wx': fails if anything (a planted symlink included) already has the temp name.
    const fd = fs.openSync(tmp, 'wx', 0o644)
    try {
      fs.writeFileSync(fd, data)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(tmp, abs)
    return abs
  } catch (e) {
    fs.rmSync(tmp, { force: true })
    if (e instanceof RecallscopeError) throw e
    const code = (e as NodeJS.ErrnoException).code
    throw new RecallscopeError(
      code === 'ENOENT' ? 'NOT_FOUND' : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'FORBIDDEN' : 'BAD_INPUT',
      `${opts.what}: cannot write ${abs} (${code ?? 'error'})`,
    )
  } finally {
    release()
  }
}
