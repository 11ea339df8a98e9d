/**
 * File identity: is a path we are about to write one of the databases we have open?
 *
 * A name is not an identity. The same file is reachable through a symlink, a hard link,
 * `/proc/self/root/...`, `..` segments or (on case-insensitive file systems) another case.
 * Two paths are the same file when stat gives the same device + inode; a path that does
 * not exist yet is compared by its canonical spelling (realpath of the nearest existing
 * folder + the rest), case-folded so a case-insensitive FS cannot slip one through.
 * A SQLite DB is also its `-wal`, `-shm` and `-journal`: writing any of those is writing it.
 *
 * Every path the app writes (workspace, cases export, import output, caches, temp files)
 * goes through `assertNotOpenDb` first (issue 10, HIGH 2).
 */
import fs from 'node:fs'
import path from 'node:path'
import { RecallscopeError } from '../../shared/result'

/** The files one SQLite database is made of. */
export const SQLITE_SIDE_SUFFIXES = ['', '-wal', '-shm', '-journal'] as const

export interface FileId {
  dev: bigint
  ino: bigint
}

/** dev/ino of what a path names (links followed), or null when nothing is there. */
function fileIdOf(p: string): FileId | null {
  try {
    const st = fs.statSync(p, { bigint: true })
    return { dev: st.dev, ino: st.ino }
  } catch {
    return null
  }
}

function sameFileId(a: FileId | null, b: FileId | null): boolean {
  return !!a && !!b && a.dev === b.dev && a.ino === b.ino
}

/**
 * The canonical spelling of a path: realpath when it exists, else realpath of the
 * nearest existing ancestor joined with the remaining (normalised) segments.
 */
function canonicalPath(p: string, hops = 0): string {
  const abs = path.resolve(p)
  try {
    return fs.realpathSync.native(abs)
  } catch {
    /* not there (yet): canonicalise the part that is */
  }
  // A dangling symlink: writing it creates its target, so the target is what it names.
  if (hops < 40) {
    try {
      if (fs.lstatSync(abs).isSymbolicLink()) return canonicalPath(path.resolve(canonicalPath(path.dirname(abs), hops + 1), fs.readlinkSync(abs)), hops + 1)
    } catch {
      /* not a link, or unreadable: fall through */
    }
  }
  const rest: string[] = []
  let cur = abs
  for (;;) {
    const up = path.dirname(cur)
    rest.unshift(path.basename(cur))
    if (up === cur) return abs
    cur = up
    try {
      return path.join(fs.realpathSync.native(cur), ...rest)
    } catch {
      /* keep climbing */
    }
  }
}

/**
 * Strictly the same file (for allowing, not refusing): same device + inode when both
 * exist, else the same canonical path with case kept.
 */
export function sameFile(a: string, b: string): boolean {
  const ia = fileIdOf(a)
  const ib = fileIdOf(b)
  if (ia && ib) return sameFileId(ia, ib)
  if (ia || ib) return false // one exists, the other does not: different files
  return canonicalPath(a) === canonicalPath(b)
}

// ---------------------------------------------------------------------------
// The databases this process has open
// ---------------------------------------------------------------------------

export type OpenDbRole = 'agent DB' | 'workspace DB'

interface OpenDb {
  path: string
  role: OpenDbRole
}

const openDbs = new Map<number, OpenDb>()
let seq = 0

/** Record an open DB (Store.open does this for the agent DB and its workspace). Returns a release function. */
export function registerOpenDb(p: string, role: OpenDbRole): () => void {
  const id = ++seq
  openDbs.set(id, { path: path.resolve(p), role })
  return () => void openDbs.delete(id)
}

/** The DBs open right now (for messages and tests). */
export function openDbPaths(): { path: string; role: OpenDbRole }[] {
  return [...openDbs.values()].map((d) => ({ ...d }))
}

/**
 * Which protected file (a DB or one of its side files) `target` or one of `target`'s own
 * side files would write, if any. `targetIsDb`: the target will itself be a SQLite DB, so
 * its `-wal`/`-journal` are written too and are checked as well.
 */
export function findAlias(
  target: string,
  protectedDbs: { path: string; role: string }[],
  opts: { targetIsDb?: boolean } = {},
): { path: string; role: string; via: string } | null {
  const targets = (opts.targetIsDb ? SQLITE_SIDE_SUFFIXES : ([''] as const)).map((s) => path.resolve(target) + s)
  for (const db of protectedDbs) {
    for (const suffix of SQLITE_SIDE_SUFFIXES) {
      const file = db.path + suffix
      const fileId = fileIdOf(file)
      const fileCanon = canonicalPath(file).toLowerCase()
      for (const t of targets) {
        if (sameFileId(fileIdOf(t), fileId) || canonicalPath(t).toLowerCase() === fileCanon)
          return { path: file, role: suffix ? `${db.role} ${suffix} file` : db.role, via: t }
      }
    }
  }
  return null
}

/**
 * Refuse to write `target` when it is (by identity) any open DB or its side files, or
 * one of `extra` (e.g. the agent DB a workspace is being opened for, before it is registered).
 * `what` names the channel or flag in the message.
 */
export function assertNotOpenDb(
  target: string,
  what: string,
  opts: { targetIsDb?: boolean; extra?: { path: string; role: string }[]; roles?: OpenDbRole[] } = {},
): void {
  const open = [...openDbs.values()].filter((d) => !opts.roles || opts.roles.includes(d.role))
  const hit = findAlias(target, [...(opts.extra ?? []), ...open], { targetIsDb: opts.targetIsDb })
  if (hit)
    throw new RecallscopeError(
      'FORBIDDEN',
      `${what}: ${target} is the open ${hit.role} (${hit.path})${hit.via !== path.resolve(target) ? ` through ${hit.via}` : ''}; recallscope never writes it. Choose another file.`,
      { target, protected: hit.path },
    )
}

/**
 * The workspace of `agentPath` may be opened read-write at `wsPath`: it is not the agent DB
 * (nor its side files, nor any other open agent DB) by identity. Checked before either
 * file is opened, so a refused open has changed nothing. (Another store's workspace is
 * fine: reopening a DB shares its workspace.)
 */
export function assertWorkspaceTarget(wsPath: string, agentPath: string): void {
  assertNotOpenDb(wsPath, 'workspace', { targetIsDb: true, roles: ['agent DB'], extra: [{ path: path.resolve(agentPath), role: 'agent DB' }] })
}

/**
 * A temp DB about to be created at `tmp` (and its side files) must not exist yet: SQLite opens
 * without O_EXCL, so a link planted at a predictable temp name would be written through.
 */
export function assertFreshTemp(tmp: string, what: string): void {
  for (const suffix of SQLITE_SIDE_SUFFIXES) {
    let exists = false
    try {
      fs.lstatSync(tmp + suffix)
      exists = true
    } catch {
      /* free: good */
    }
    if (exists) throw new RecallscopeError('CONFLICT', `${what}: the temp file ${tmp + suffix} already exists; remove it or retry`)
  }
}
