/**
 * Framework formats beyond the SQL adapters: folders that hold a framework's files,
 * and files that are not SQLite (read into an in-memory canonical DB, "materialized").
 * Store.open consults these before it opens a path as SQLite.
 */
import fs from 'node:fs'
import { MEM0_LOOKED_FOR, resolveMem0Folder } from './mem0/adapter'
import { mcpMemoryMaterializer, resolveMcpMemoryFolder } from './mcpMemory/materialize'
import type { Materializer } from './types'

export type { Materialized, Materializer } from './types'

/** Folder → the file inside it to open, per framework (first match wins). */
const FOLDER_RESOLVERS: { name: string; resolve: (dir: string) => string | null }[] = [
  { name: 'mem0', resolve: resolveMem0Folder },
  { name: 'mcp-memory', resolve: resolveMcpMemoryFolder },
]

/** Non-SQLite formats, tried in order. */
export const MATERIALIZERS: Materializer[] = [mcpMemoryMaterializer]

/** What the framework formats look for (for the unknown-file message). */
export function frameworkLookedFor(): string[] {
  return [MEM0_LOOKED_FOR, ...MATERIALIZERS.map((m) => m.lookedFor)]
}

/**
 * A folder: the framework file inside it to open, or null when none is recognised.
 * A file: itself.
 */
export function resolveFrameworkPath(p: string): string | null {
  let st: fs.Stats
  try {
    st = fs.statSync(p)
  } catch {
    return p
  }
  if (!st.isDirectory()) return p
  for (const r of FOLDER_RESOLVERS) {
    const f = r.resolve(p)
    if (f) return f
  }
  return null
}

/** The materializer that takes this path, or null (then it is opened as SQLite). */
export function findMaterializer(p: string): Materializer | null {
  return MATERIALIZERS.find((m) => m.sniff(p)) ?? null
}
