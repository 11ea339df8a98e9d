/**
 * Damaged databases: found at open (so the open is all-or-nothing) and reported as a
 * typed error naming the file, never as INTERNAL with a stack (issue 10, MEDIUM 5).
 */
import fs from 'node:fs'
import type Database from 'better-sqlite3'
import { RecallscopeError } from '../../../shared/result'

/** Files up to this size get a full `PRAGMA quick_check` at open (~100 ms per 32 MiB); bigger ones a cheaper probe. */
const QUICK_CHECK_MAX_BYTES = 32 * 1024 * 1024

const isCorrupt = (e: unknown) => {
  const code = errCode(e)
  return code.startsWith('SQLITE_CORRUPT') || /malformed/i.test(String((e as Error)?.message ?? ''))
}

/** An error's `code` (SQLite's SQLITE_CORRUPT, Node's ENOENT…) as text, '' when absent. */
function errCode(e: unknown): string {
  const c = (e as { code?: unknown } | null)?.code
  return typeof c === 'string' || typeof c === 'number' ? String(c) : ''
}

/** A SQLite failure while reading `file`, as a typed error that names it; other errors pass through. */
export function typedDbError(e: unknown, file: string): unknown {
  if (e instanceof RecallscopeError) return e
  const code = errCode(e)
  if (isCorrupt(e)) return new RecallscopeError('DB_CORRUPT', `${file}: database disk image is malformed`)
  if (code === 'SQLITE_NOTADB') return new RecallscopeError('NOT_SQLITE', `${file}: file is not a database`)
  if (/^SQLITE_(BUSY|LOCKED)/.test(code)) return new RecallscopeError('DB_BUSY', `${file}: the database stayed locked (${(e as Error).message})`)
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return new RecallscopeError('DISK_FULL', `${file}: the disk is full (${(e as Error).message})`)
  if (code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR_'))
    return new RecallscopeError('DB_CORRUPT', `${file}: cannot be read (${(e as Error).message})`)
  return e
}

/**
 * Throw DB_CORRUPT when `db` (the file at `file`) is damaged: `PRAGMA quick_check` for
 * small files, else nothing more (the first reads find it, and are typed by the dispatcher).
 */
export function probeIntegrity(db: Database.Database, file: string): void {
  let size: number
  try {
    size = fs.statSync(file).size
  } catch {
    return
  }
  if (size > QUICK_CHECK_MAX_BYTES) return
  let result: unknown
  try {
    result = db.pragma('quick_check(1)', { simple: true })
  } catch (e) {
    throw typedDbError(e, file)
  }
  if (result !== 'ok')
    throw new RecallscopeError(
      'DB_CORRUPT',
      `${file}: database disk image is malformed (${String(result)
        .replace(/\s+/g, ' ')
        .replace(/\*\*\* in database main \*\*\* /, '')
        .trim()
        .slice(0, 120)})`,
    )
}

/** Why the workspace DB at `file` could not be opened, typed (it is a path the user may have typed). */
export function workspaceOpenError(e: unknown, file: string): RecallscopeError {
  const msg = String((e as Error)?.message ?? e)
  const code = errCode(e)
  if (/directory does not exist/i.test(msg) || code === 'ENOENT') return new RecallscopeError('NOT_FOUND', `Workspace ${file}: the folder does not exist`)
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'EACCES' || code === 'EROFS')
    return new RecallscopeError('READ_ONLY', `Workspace ${file} cannot be opened for writing (${msg}); pass another workspace path`)
  if (code === 'SQLITE_NOTADB') return new RecallscopeError('NOT_SQLITE', `Workspace ${file} exists and is not a SQLite database: pass another workspace path`)
  const typed = typedDbError(e, file)
  if (typed instanceof RecallscopeError) return typed
  return new RecallscopeError('BAD_INPUT', `Workspace ${file} cannot be used: ${msg}`)
}
