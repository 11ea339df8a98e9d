import fs from 'node:fs'
import path from 'node:path'
import { sha256File } from '../tmp'

/** sha256 of every file under `root` (a file alone when `root` is a file), keyed by relative path. */
export function hashTree(root: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (p: string) => {
    const st = fs.statSync(p)
    if (st.isDirectory()) for (const e of fs.readdirSync(p).sort()) walk(path.join(p, e))
    else out[path.relative(root, p) || path.basename(p)] = sha256File(p)
  }
  walk(root)
  return out
}
