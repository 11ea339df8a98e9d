/**
 * Opening an agent's SQLite file read-only without leaving anything beside it.
 *
 * A WAL-mode database needs its `-wal` and `-shm` files to be read: SQLite creates them when they
 * are missing (a cleanly closed WAL database has none). The last connection removes them on close
 * only when it can checkpoint, i.e. write, which a read-only connection never does, so they stayed
 * beside the agent's DB after recallscope exited. Every read-only opener of an agent file goes
 * through here: the side files missing at the first open are remembered, and when this process
 * closes its last connection to the file they are removed again, but only while they still say
 * that nobody wrote: the `-wal` holds no frames (0 bytes) and the database file's size and time are
 * those seen at open. Side files that existed before (an agent is running, or crashed) are never
 * touched.
 */
import fs from 'node:fs'
import Database from 'better-sqlite3'

const SIDE = ['-wal', '-shm'] as const

interface Held {
  count: number
  /** side files this process caused to exist */
  created: string[]
  /** the DB file's size and mtime at the first open */
  size: number
  mtimeMs: number
}

/** Per file: this process's open read-only connections to it. */
const held = new Map<string, Held>()

const exists = (p: string) => fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined

/** Remove the side files this process created, when nothing was written through them. */
function removeCreated(abs: string, h: Held): void {
  const st = fs.statSync(abs, { throwIfNoEntry: false })
  if (!st || st.size !== h.size || st.mtimeMs !== h.mtimeMs) return
  const wal = fs.lstatSync(`${abs}-wal`, { throwIfNoEntry: false })
  if (wal && (!wal.isFile() || wal.size !== 0)) return
  // -wal first: a -shm without a -wal is rebuilt by the next opener, the reverse is not safe.
  for (const suffix of SIDE)
    if (h.created.includes(suffix))
      try {
        const side = fs.lstatSync(abs + suffix, { throwIfNoEntry: false })
        if (side?.isFile()) fs.unlinkSync(abs + suffix)
      } catch {
        /* already gone, or not ours to remove: leave it */
      }
}

/**
 * `new Database(abs, { ...options, readonly: true })` whose `close()` also removes the `-wal`/`-shm`
 * the open created (see above). Throws what the driver throws.
 */
export function openReadOnlyAgentDb(abs: string, options: Omit<Database.Options, 'readonly'> = {}): Database.Database {
  const before = held.get(abs)
  const created = before ? null : SIDE.filter((s) => !exists(abs + s))
  const st = before ? null : fs.statSync(abs, { throwIfNoEntry: false })
  const db = new Database(abs, { ...options, readonly: true })
  const h: Held = before ?? { count: 0, created: created ?? [], size: st?.size ?? -1, mtimeMs: st?.mtimeMs ?? -1 }
  h.count++
  held.set(abs, h)
  const close = db.close.bind(db)
  let closed = false
  db.close = () => {
    const r = close()
    if (closed) return r
    closed = true
    if (--h.count === 0) {
      held.delete(abs)
      if (h.created.length) removeCreated(abs, h)
    }
    return r
  }
  return db
}
