import fs from 'node:fs'
import path from 'node:path'
import { sha256File } from '../tmp'

/**
 * sha256 of every file under `root` (a file alone when `root` is a file), keyed by relative path.
 * `shm: 'presence'`: a SQLite `-shm` file (WAL mode's shared-memory index, which every reader of a
 * database with an un-checkpointed WAL writes its read marks to, by SQLite's design) counts by its
 * presence only; the database and its `-wal` (the data) are still hashed.
 */
export function hashTree(root: string, opts: { shm?: 'presence' } = {}): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (p: string) => {
    const st = fs.statSync(p)
    if (st.isDirectory()) for (const e of fs.readdirSync(p).sort()) walk(path.join(p, e))
    else out[path.relative(root, p) || path.basename(p)] = opts.shm === 'presence' && p.endsWith('-shm') ? 'present' : sha256File(p)
  }
  walk(root)
  return out
}
