/**
 * Opening a memory store: which source kind and layout a path (or URL) is.
 * Built-ins are registered in LAYOUTS and MATERIALIZERS, the same lists a third
 * party would extend (Datasette's DEFAULT_PLUGINS): a new store kept in SQLite
 * is one folder exporting an Adapter; a store kept in anything else (a JSONL
 * file, a folder of markdown files, a LanceDB table) exports a Materializer
 * that reads it, never writing it, into an in-memory canonical DB.
 */
import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { RecallscopeError } from '../../shared/result'
import { engramAdapter } from './engram/layout'
import type { MemorySource } from './source'
import { isSqliteFile } from './sqlite/connection'
import type { Adapter, SqlLayout } from './sqlite/layouts'
import { canonicalAdapter } from './sqlite/layouts'
import { SqliteSource, type SqliteOpenOptions } from './sqlite/source'

/** SQLite layouts, tried in order (the canonical schema first). */
export const LAYOUTS: Adapter[] = [canonicalAdapter, engramAdapter]

/** A store that is not a SQLite file, read into memory in the canonical shape. */
export interface Materializer {
  name: string
  /** Cheap check (names, a few bytes): is this path mine? Never throws. */
  sniff(p: string): boolean
  /** Read the store (never writing it) into an in-memory canonical DB; the layout says what was found. */
  materialize(p: string, opts: { nativeBinding?: string }): Promise<{ db: Database.Database; layout: SqlLayout }> | { db: Database.Database; layout: SqlLayout }
}

/** Non-SQLite stores, tried in order. */
export const MATERIALIZERS: Materializer[] = []

export type OpenOptions = SqliteOpenOptions

/** What was looked for, for the error a user sees when nothing matches. */
function lookedFor(): string {
  return [...LAYOUTS.map((l) => l.name), ...MATERIALIZERS.map((m) => m.name)].join(', ')
}

/** The materializer for a path that is not a SQLite file, or null. */
export function materializerFor(p: string): Materializer | null {
  return MATERIALIZERS.find((m) => m.sniff(p)) ?? null
}

function unknownStore(abs: string): RecallscopeError {
  const kind = fs.statSync(abs).isDirectory() ? 'a folder' : 'a file'
  return new RecallscopeError('UNKNOWN_LAYOUT', `${abs} is ${kind} recallscope cannot read as a memory store (looked for: ${lookedFor()})`)
}

function checkPath(opts: OpenOptions): string {
  if (typeof opts.path !== 'string' || opts.path.trim() === '') throw new RecallscopeError('BAD_INPUT', 'A database path is required')
  const abs = path.resolve(opts.path)
  if (!fs.existsSync(abs)) throw new RecallscopeError('NOT_FOUND', `No such file or folder: ${abs}`)
  return abs
}

/**
 * Open a memory store, synchronously: a SQLite file with a known layout, or a file
 * or folder whose materializer reads synchronously. Read-only unless `write`
 * (SQLite files only). Stores that can only be read asynchronously (LanceDB)
 * need openAnySource.
 */
export function openSource(opts: OpenOptions): SqliteSource {
  const abs = checkPath(opts)
  if (isSqliteFile(abs) || fs.statSync(abs).isFile() && !materializerFor(abs)) return SqliteSource.open(opts, LAYOUTS)
  const m = materializerFor(abs)
  if (!m) throw unknownStore(abs)
  if (opts.write) throw new RecallscopeError('READ_ONLY', `${m.name} stores open read-only (write mode is for SQLite stores)`)
  const out = m.materialize(abs, { nativeBinding: opts.nativeBinding })
  if (out instanceof Promise) {
    out.then((r) => r.db.close(), () => undefined)
    throw new RecallscopeError('BAD_INPUT', `${m.name} stores are read asynchronously: open them with openAnySource`)
  }
  return SqliteSource.fromMemory(opts, out.db, out.layout)
}

/** Open any memory store (openSource, plus materializers that read asynchronously). */
export async function openAnySource(opts: OpenOptions): Promise<SqliteSource> {
  const abs = checkPath(opts)
  if (isSqliteFile(abs)) return SqliteSource.open(opts, LAYOUTS)
  const m = materializerFor(abs)
  if (!m) {
    if (fs.statSync(abs).isFile()) return SqliteSource.open(opts, LAYOUTS) // its typed "not SQLite" error
    throw unknownStore(abs)
  }
  if (opts.write) throw new RecallscopeError('READ_ONLY', `${m.name} stores open read-only (write mode is for SQLite stores)`)
  const { db, layout } = await m.materialize(abs, { nativeBinding: opts.nativeBinding })
  return SqliteSource.fromMemory(opts, db, layout)
}

export type { MemorySource }
