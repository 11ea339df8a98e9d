/**
 * The mapping dialog's questions about a SQLite file (or a LanceDB folder, read as SQLite
 * tables) that is not open (it opened as "unknown layout"): its tables, a suggested mapping, a preview through a
 * mapping. Each opens its own read-only connection and closes it; nothing is
 * written to the file, and a workspace is read only when one already exists.
 */
import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import type { Mapping, MappingPreview, TablesInfo } from '../../../shared/mapping'
import { RecallscopeError } from '../../../shared/result'
import { findMaterializer } from '../frameworks'
import { LAYOUTS } from '../layoutList'
import { assertSqliteFile, defaultWorkspacePath, openSqlite } from '../sqlite/connection'
import { detectLayout } from '../sqlite/source'
import { loadSqliteVecIfDeclared } from '../sqliteVec'
import { assertWorkspaceTarget } from '../../safety/fileIdentity'
import { readSavedMapping } from '../workspace/workspace'
import { listTables, previewMapping, sampleColumns } from './sqlite'
import { suggestMapping } from './suggest'

export interface FileOptions {
  path: string
  workspacePath?: string
  fallbackDir?: string
  nativeBinding?: string
}

/**
 * A read-only connection to the store's tables: the SQLite file itself (sqlite-vec loaded when it declares vec0
 * tables), or, for a mappable non-SQLite store (a LanceDB folder), its tables read into an in-memory SQLite DB.
 */
function connect(abs: string, opts: FileOptions): Database.Database {
  const materializer = findMaterializer(abs)
  if (materializer?.asTables) return materializer.asTables(abs, { nativeBinding: opts.nativeBinding })
  if (materializer) throw new RecallscopeError('BAD_INPUT', `${abs} is a ${materializer.name} store: its tables cannot be mapped`)
  assertSqliteFile(abs)
  return openSqlite(abs, { nativeBinding: opts.nativeBinding })
}

/** Run `fn` on a read-only connection to the store's tables (see `connect`). */
function withFile<T>(opts: FileOptions, fn: (db: Database.Database, abs: string) => T): T {
  if (typeof opts.path !== 'string' || opts.path.trim() === '') throw new RecallscopeError('BAD_INPUT', 'A database path is required')
  const abs = path.resolve(opts.path)
  const db = connect(abs, opts)
  try {
    loadSqliteVecIfDeclared(db)
    return fn(db, abs)
  } catch (e) {
    if (e instanceof RecallscopeError) throw e
    // A damaged file or a statement SQLite refuses: typed, never INTERNAL.
    throw new RecallscopeError('BAD_INPUT', `Cannot read ${path.basename(abs)}: ${(e as Error).message}`)
  } finally {
    db.close()
  }
}

/** The workspace file of a store, when it exists (never created here). */
function existingWorkspace(abs: string, opts: FileOptions): string | null {
  const ws = opts.workspacePath ? path.resolve(opts.workspacePath) : defaultWorkspacePath(abs, opts.fallbackDir)
  return fs.existsSync(ws) ? ws : null
}

/**
 * The mapping saved in a store's workspace by an earlier open, or null (no workspace, none
 * saved, unreadable). Read-only, and never from a path that is the agent DB or an alias of it.
 */
export function savedMapping(abs: string, opts: FileOptions): Mapping | null {
  const ws = existingWorkspace(abs, opts)
  if (!ws) return null
  try {
    assertWorkspaceTarget(ws, abs)
  } catch {
    return null
  }
  return readSavedMapping(ws, opts.nativeBinding)
}

/**
 * Tables, columns, types and row counts of a SQLite file (or a LanceDB folder), the layout it opens as (null:
 * unknown) and any saved mapping.
 */
export function inspectTables(opts: FileOptions): TablesInfo {
  return withFile(opts, (db, abs) => {
    // A LanceDB folder is here because it opened as unknown: its tables read as SQLite are no SQLite layout.
    const format = findMaterializer(abs) ? 'lancedb' : 'sqlite'
    let layout: string | null = null
    if (format === 'sqlite')
      try {
        layout = detectLayout(db, LAYOUTS)?.layout ?? null
      } catch {
        layout = null // a layout that recognises the file but cannot read it: the mapping is still an option
      }
    return { path: abs, layout, format, tables: listTables(db), saved: savedMapping(abs, opts) }
  })
}

/** A mapping for one table, pre-filled from column names, types and the first rows' values. */
export function suggestForFile(opts: FileOptions, table: string): Mapping {
  return withFile(opts, (db) => {
    const tables = listTables(db)
    const t = tables.find((x) => x.name === table) ?? tables.find((x) => x.name.toLowerCase() === table.toLowerCase())
    if (!t) throw new RecallscopeError('NOT_FOUND', `No table "${table}" (tables: ${tables.map((x) => x.name).join(', ') || 'none'})`, { table })
    return suggestMapping(tables, t.name, sampleColumns(db, t.name))
  })
}

/** The first 20 rows read through a mapping, with per-field problems. */
export function previewFile(opts: FileOptions, m: Mapping): MappingPreview {
  return withFile(opts, (db) => previewMapping(db, m))
}
