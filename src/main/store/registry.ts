/**
 * Opening a memory store: which source kind and layout a path is. SQLite layouts
 * are listed in layoutList.ts; stores kept in anything else (a JSONL file, a
 * folder of markdown files, a LanceDB table) have a Materializer in
 * frameworks/index.ts that reads them, never writing them, into an in-memory
 * canonical DB behind the same SQLite source. A folder opens as the store file
 * a framework keeps inside it. A `postgres://` / `postgresql://` URL opens the
 * Postgres source (store/postgres/), whose layouts come from information_schema.
 */
import path from 'node:path'
import type { Mapping } from '../../shared/mapping'
import { RecallscopeError } from '../../shared/result'
import { findMaterializer, frameworkLookedFor, resolveFrameworkPath } from './frameworks'
import type { Materialized, Materializer } from './frameworks/materialize'
import { LAYOUTS } from './layoutList'
import { savedMapping } from './mapped/file'
import { mappedAdapter } from './mapped/sqlite'
import { PgSource } from './postgres/source'
import { isPostgresUrl } from './postgres/url'
import type { MemorySource } from './source'
import { assertSqliteFile, defaultWorkspacePath } from './sqlite/connection'
import { canonicalAdapter } from './sqlite/layouts'
import { detectLayout, SqliteSource, type SqliteOpenOptions } from './sqlite/source'

export interface OpenOptions extends SqliteOpenOptions {
  /**
   * Open one table by this column mapping ("any table by mapping"), whatever layout the file
   * has; it is saved in the workspace. Absent: a file of no known layout opens with the
   * mapping saved by an earlier open, if any.
   */
  mapping?: Mapping
}

/** Every layout and format looked for, for the message when a path is none of them. */
function lookedFor(): string {
  return [...LAYOUTS.map((a) => a.lookedFor ?? a.name), ...frameworkLookedFor()].join('; ')
}

/** The file (or folder) to open for a path: a folder names the store file inside it. */
function resolvePath(opts: OpenOptions): string {
  if (typeof opts.path !== 'string' || opts.path.trim() === '') throw new RecallscopeError('BAD_INPUT', 'A database path is required')
  const given = path.resolve(opts.path)
  // A folder that is itself a store (a LanceDB folder, a Letta Code memory folder) is read as it is.
  if (findMaterializer(given)) return given
  const resolved = resolveFrameworkPath(given, { nativeBinding: opts.nativeBinding })
  if (resolved === null) throw new RecallscopeError('NOT_SQLITE', `${given} is a folder recallscope does not recognise (looked for: ${lookedFor()})`)
  return resolved
}

/** An in-memory copy of a non-SQLite store, as a read-only source; its workspace sits beside the path the user gave. */
function fromMaterialized(opts: OpenOptions, abs: string, m: Materialized): SqliteSource {
  let sql
  try {
    sql = detectLayout(m.db, [canonicalAdapter])
  } catch (e) {
    m.db.close()
    throw e
  }
  if (!sql) {
    m.db.close()
    throw new RecallscopeError('INTERNAL', `${abs}: the ${m.layout} reader produced no canonical tables`)
  }
  Object.assign(sql, { layout: m.layout, detectedBecause: m.detectedBecause, ftsKey: m.ftsKey })
  return SqliteSource.fromMemory({ ...opts, path: abs }, m.db, sql)
}

/**
 * Open a memory store read-only (unless `write`, SQLite files only), with its
 * workspace: a SQLite file of a known layout, a file a materializer reads, or a
 * folder holding one of them.
 */
export function openSource(opts: OpenOptions): SqliteSource {
  const abs = resolvePath(opts)
  // A folder's workspace sits beside the folder, so nothing is ever added inside it.
  const given = path.resolve(opts.path)
  if (!opts.workspacePath && abs !== given) opts = { ...opts, workspacePath: defaultWorkspacePath(given, opts.fallbackDir) }
  const materializer = findMaterializer(abs)
  if (materializer) {
    // A copy in memory: there is nothing to write to.
    if (opts.write) throw new RecallscopeError('READ_ONLY', `${materializer.name} stores open read-only: ${abs} is read, never written`)
    if (opts.mapping) return openMappedTables(opts, abs, materializer, opts.mapping)
    try {
      return fromMaterialized(opts, abs, materializer.materialize(abs, { nativeBinding: opts.nativeBinding }))
    } catch (e) {
      if (!(e instanceof RecallscopeError) || e.code !== 'UNKNOWN_LAYOUT' || !materializer.asTables) throw e
      const saved = savedMapping(abs, opts)
      if (saved) return openMappedTables(opts, abs, materializer, saved)
      throw new RecallscopeError(
        'UNKNOWN_LAYOUT',
        `${e.message}. To open one of its tables anyway, map its columns: --map mapping.json, or the Library's mapping dialog`,
        {
          ...(e.details as object),
          mappable: true,
        },
      )
    }
  }
  try {
    assertSqliteFile(abs)
  } catch (e) {
    // A file that is none of the formats: one line naming what was looked for.
    if (e instanceof RecallscopeError && e.code === 'NOT_SQLITE') throw new RecallscopeError('NOT_SQLITE', `${e.message}; looked for: ${lookedFor()}`)
    throw e
  }
  if (opts.mapping) return openMapped({ ...opts, path: abs }, opts.mapping)
  try {
    return SqliteSource.open({ ...opts, path: abs }, LAYOUTS)
  } catch (e) {
    if (!(e instanceof RecallscopeError) || e.code !== 'UNKNOWN_LAYOUT') throw e
    // No layout fits: the mapping this store was opened with last time, when there is one.
    const saved = savedMapping(abs, opts)
    if (!saved)
      throw new RecallscopeError(
        'UNKNOWN_LAYOUT',
        `${e.message}. To open one of its tables anyway, map its columns: --map mapping.json, or the Library's mapping dialog`,
        { ...(e.details as object), mappable: true },
      )
    return openMapped({ ...opts, path: abs }, saved)
  }
}

/** Open a SQLite file through a column mapping (checked against the file first: BAD_INPUT naming the column) and save it in the workspace. */
function openMapped(opts: OpenOptions, mapping: Mapping): SqliteSource {
  const source = SqliteSource.open(opts, [mappedAdapter(mapping, path.basename(opts.path))])
  try {
    source.workspace.setMapping(mapping)
  } catch {
    /* a read-only workspace must not stop the store from opening: the mapping is just not remembered */
  }
  return source
}

/**
 * Open one table of a mappable non-SQLite store (a LanceDB folder) through a column mapping: its tables
 * are read into an in-memory SQLite DB and the mapped adapter runs over that, as over a SQLite file.
 */
function openMappedTables(opts: OpenOptions, abs: string, materializer: Materializer, mapping: Mapping): SqliteSource {
  if (!materializer.asTables)
    throw new RecallscopeError(
      'BAD_INPUT',
      `A column mapping opens a SQLite table, a LanceDB table or a Postgres table; ${abs} is a ${materializer.name} store`,
    )
  const db = materializer.asTables(abs, { nativeBinding: opts.nativeBinding })
  let sql
  try {
    sql = detectLayout(db, [mappedAdapter(mapping, path.basename(abs))])
  } catch (e) {
    db.close()
    throw e
  }
  if (!sql) {
    db.close()
    throw new RecallscopeError('BAD_INPUT', `${abs}: the mapping does not fit table "${mapping.table}"`)
  }
  const source = SqliteSource.fromMemory({ ...opts, path: abs }, db, sql)
  try {
    source.workspace.setMapping(mapping)
  } catch {
    /* a read-only workspace must not stop the store from opening: the mapping is just not remembered */
  }
  return source
}

/**
 * Open any memory store by path or URL: a SQLite file, or a `postgres://` URL
 * (read-only, search pushed down). What the CLI, `serve`, the app and the
 * Library use.
 */
export function openStore(opts: OpenOptions): MemorySource {
  if (isPostgresUrl(opts.path))
    return PgSource.open({
      url: opts.path,
      workspacePath: opts.workspacePath,
      fallbackDir: opts.fallbackDir,
      nativeBinding: opts.nativeBinding,
      write: opts.write,
      countCap: opts.countCap,
      mapping: opts.mapping,
    })
  return openSource(opts)
}

export type { MemorySource }
