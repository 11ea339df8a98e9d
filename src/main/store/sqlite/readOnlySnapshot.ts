/**
 * Reading a DB that SQLite cannot read in place without writing (issue 10, LOW 11).
 *
 * A WAL-mode DB whose `-shm` does not exist, or any DB with a leftover `-journal`, needs
 * SQLite to create or roll back a side file before the first read. In a folder we may not
 * write, that fails ("unable to open database file", "attempt to write a readonly
 * database"). better-sqlite3 takes no `file:` URIs, so `immutable=1` / `nolock=1` are not
 * available; instead the DB and its side files are copied into a private snapshot folder
 * (`$RECALLSCOPE_HOME/snapshots/`) and the copy is read. The original is never opened for
 * writing; the UI and `info` say the view is a snapshot (reopen to see newer commits).
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { RecallscopeError } from '../../../shared/result'
import { openRegularFile } from '../safeFiles'

/** recallscope's data folder: $RECALLSCOPE_HOME, else ~/.recallscope (the app's rule). */
function dataHome(): string {
  return process.env.RECALLSCOPE_HOME ? path.resolve(process.env.RECALLSCOPE_HOME) : path.join(os.homedir(), '.recallscope')
}

function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** Would reading `abs` in place need a write SQLite cannot make (read-only folder + WAL without -shm, or a -journal)? */
export function needsSnapshot(abs: string): boolean {
  if (writable(path.dirname(abs))) return false
  if (fs.existsSync(`${abs}-journal`)) return true
  let wal: boolean
  try {
    const fd = openRegularFile(abs, 'store')
    try {
      const b = Buffer.alloc(20)
      fs.readSync(fd, b, 0, 20, 0)
      wal = b[18] === 2 || b[19] === 2
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return false
  }
  return wal && !fs.existsSync(`${abs}-shm`)
}

/** Copy `abs` with its -wal / -journal into the snapshot folder; returns the copy to open read-only. */
export function makeSnapshot(abs: string, home = dataHome(), nativeBinding?: string): string {
  const dir = path.join(home, 'snapshots', crypto.createHash('sha1').update(abs).digest('hex').slice(0, 12))
  const copy = path.join(dir, path.basename(abs))
  try {
    fs.mkdirSync(dir, { recursive: true })
    for (const suffix of ['', '-wal', '-journal', '-shm']) fs.rmSync(copy + suffix, { force: true })
    // DB first, then its log: a commit landing in between is then in the log, which SQLite replays.
    fs.copyFileSync(abs, copy)
    for (const suffix of ['-wal', '-journal']) if (fs.existsSync(abs + suffix)) fs.copyFileSync(abs + suffix, copy + suffix)
    // Let SQLite recover the copy once (roll back a hot journal, replay the WAL) on a connection
    // that may write: the read-only connection that follows could not.
    const recover = new Database(copy, { fileMustExist: true, ...(nativeBinding ? { nativeBinding } : {}) })
    try {
      recover.prepare('SELECT count(*) FROM sqlite_master').get()
    } finally {
      recover.close()
    }
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith('SQLITE_')) throw new RecallscopeError('NOT_SQLITE', `${abs}: cannot be read (${(e as Error).message})`)
    throw new RecallscopeError(
      'READ_ONLY',
      `${abs} is in a read-only folder and needs a snapshot to be read, but ${dir} cannot be written (${(e as NodeJS.ErrnoException).code}): set $RECALLSCOPE_HOME`,
    )
  }
  return copy
}
