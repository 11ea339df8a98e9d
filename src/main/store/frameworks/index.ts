/**
 * Framework formats beyond the SQL adapters: folders that hold a framework's files,
 * and files that are not SQLite (read into an in-memory canonical DB, "materialized").
 * store/registry.ts consults these before it opens a path as SQLite.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { openReadOnlyAgentDb } from '../sqlite/readOnlyOpen'
import { RecallscopeError } from '../../../shared/result'
import { LAYOUTS } from '../layoutList'
import { readTables } from '../sqlite/connection'
import { looksLikeSqlite } from './sql'
import { MEM0_LOOKED_FOR, resolveMem0Folder } from './mem0/adapter'
import { mcpMemoryMaterializer, resolveMcpMemoryFolder } from './mcpMemory/materialize'
import { resolveBasicMemoryFolder } from './basicMemory/adapter'
import { crewaiLanceMaterializer } from './crewai/lance'
import { lanceMaterializer } from './lance/generic'
import { lettaCodeMaterializer } from './letta/code'
import { llamaIndexMaterializer } from './llamaindex/storage'
import { qdrantLocalMaterializer } from './qdrantLocal/materialize'
import { chromaMaterializer } from './chroma/materialize'
import type { Materializer } from './materialize'

export type { Materializer } from './materialize'

/** Folder → the file inside it to open, per framework (first match wins). */
const FOLDER_RESOLVERS: { name: string; resolve: (dir: string, opts: { nativeBinding?: string }) => string | null }[] = [
  { name: 'mem0', resolve: resolveMem0Folder },
  { name: 'basic-memory', resolve: resolveBasicMemoryFolder },
  { name: 'mcp-memory', resolve: resolveMcpMemoryFolder },
  { name: 'sqlite', resolve: resolveSqliteFolder },
]

/**
 * Any other folder: the one SQLite file in it that a layout recognises (LangGraph, Agents SDK
 * sessions, a canonical DB…). Several → BAD_INPUT naming them, so the user picks one.
 */
function resolveSqliteFolder(dir: string, opts: { nativeBinding?: string }): string | null {
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return null
  }
  const found: { file: string; layout: string }[] = []
  for (const n of names
    .filter((x) => /\.(db|sqlite3?|sqlite)$/i.test(x) && !x.includes('.recallscope'))
    .sort()
    .slice(0, 24)) {
    const file = path.join(dir, n)
    if (!looksLikeSqlite(file)) continue
    let db: Database.Database | null = null
    try {
      db = openReadOnlyAgentDb(file, { fileMustExist: true, ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}) })
      db.pragma('query_only = 1')
      const tables = readTables(db)
      for (const a of LAYOUTS) {
        const src = a.detect(db, tables)
        if (src) {
          found.push({ file, layout: src.layout })
          break
        }
      }
    } catch {
      /* unreadable: not a candidate */
    } finally {
      db?.close()
    }
  }
  if (found.length > 1)
    throw new RecallscopeError(
      'BAD_INPUT',
      `${dir} holds several memory stores: ${found.map((f) => `${path.basename(f.file)} (${f.layout})`).join(', ')}; open one of them`,
    )
  return found[0]?.file ?? null
}

/** Non-SQLite formats, tried in order. */
const MATERIALIZERS: Materializer[] = [
  mcpMemoryMaterializer,
  crewaiLanceMaterializer,
  lanceMaterializer,
  lettaCodeMaterializer,
  chromaMaterializer,
  qdrantLocalMaterializer,
  llamaIndexMaterializer,
]

/** What the framework formats look for (for the unknown-file message). */
export function frameworkLookedFor(): string[] {
  return [MEM0_LOOKED_FOR, ...MATERIALIZERS.map((m) => m.lookedFor)]
}

/**
 * A folder: the framework file inside it to open, or null when none is recognised.
 * A file: itself.
 */
export function resolveFrameworkPath(p: string, opts: { nativeBinding?: string } = {}): string | null {
  let st: fs.Stats
  try {
    st = fs.statSync(p)
  } catch {
    return p
  }
  if (!st.isDirectory()) return p
  for (const r of FOLDER_RESOLVERS) {
    const f = r.resolve(p, opts)
    if (f) return f
  }
  return null
}

/** The materializer that takes this path, or null (then it is opened as SQLite). */
export function findMaterializer(p: string): Materializer | null {
  return MATERIALIZERS.find((m) => m.sniff(p)) ?? null
}
