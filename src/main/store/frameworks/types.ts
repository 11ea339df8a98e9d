/**
 * Shapes shared by the framework formats that are not SQLite (read into an in-memory
 * canonical DB). Kept apart from index.ts so formats import them without a cycle.
 */
import type Database from 'better-sqlite3'
import type { Layout } from '../../../shared/types'

export interface Materialized {
  /** In-memory DB with the canonical schema (store/schema.ts), filled from the source. */
  db: Database.Database
  layout: Layout
  detectedBecause: string
  /** Changes with the file's content (Source.ftsKey). */
  ftsKey: string
}

export interface Materializer {
  name: string
  /** Cheap check on a file (or folder) path: is it this format? */
  sniff(p: string): boolean
  /** Read the source (never written) into an in-memory canonical DB. */
  materialize(p: string, opts: { nativeBinding?: string }): Materialized
  /** What it looks for, for the "none of these" message. */
  lookedFor: string
}
