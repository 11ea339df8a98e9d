/**
 * Framework stores that are not SQLite (a LanceDB folder, a folder of markdown files)
 * are read into an in-memory canonical DB: the source is only read, never written,
 * and the Store then works on the copy exactly as on a canonical file (issue 14).
 */
import crypto from 'node:crypto'
import os from 'node:os'
import type Database from 'better-sqlite3'
import DatabaseCtor from 'better-sqlite3'
import type { Layout } from '../../../shared/types'
import { encodeVector, cellText } from '../decode'
import { CANONICAL_MIGRATIONS } from '../sqlite/schema'
import type { CanonicalMemoryRow, CanonicalSessionRow } from '../sqlite/canonicalWriter'

/** What a materializer hands to Store.open. */
export interface Materialized {
  /** In-memory canonical DB (schema from store/sqlite/schema.ts), filled from the source. */
  db: Database.Database
  layout: Layout
  /** Which files/tables were found, for `info` and the Library. */
  detectedBecause: string
  /** Changes with the source's content: keys the workspace's FTS rebuild (SqliteSource's ftsKey). */
  ftsKey: string
}

/**
 * A non-SQLite format (the only Materializer type): `sniff` is cheap and never throws;
 * `materialize` reads the path (file or folder), never writes it.
 */
export interface Materializer {
  name: string
  sniff(p: string): boolean
  materialize(p: string, opts?: { nativeBinding?: string }): Materialized
  /** What it looks for, for the "none of these" message. */
  lookedFor: string
  /**
   * The store's tables as tables of a fresh in-memory SQLite DB (the caller closes it), for formats whose
   * tables can be opened by a column mapping like a SQLite table (LanceDB); absent: not mappable.
   */
  asTables?(p: string, opts?: { nativeBinding?: string }): Database.Database
}

const LITTLE_ENDIAN = os.endianness() === 'LE'

/** A fresh in-memory canonical DB with row writers. Call `done()` to get the connection. */
export class MemoryDbBuilder {
  readonly db: Database.Database
  private readonly insMemory: Database.Statement
  private readonly insSession: Database.Statement
  private readonly insEmbedding: Database.Statement

  constructor(nativeBinding?: string) {
    this.db = new DatabaseCtor(':memory:', nativeBinding ? { nativeBinding } : {})
    for (const m of CANONICAL_MIGRATIONS) this.db.exec(m)
    this.insMemory = this.db.prepare(
      `INSERT OR REPLACE INTO memories (id, agent_id, user_id, session_id, role, kind, tier, content, summary, salience, created_at,
         last_used_at, use_count, turn, source, metadata)
       VALUES (@id, @agent_id, @user_id, @session_id, @role, @kind, @tier, @content, @summary, @salience, @created_at,
         @last_used_at, @use_count, @turn, @source, @metadata)`,
    )
    this.insSession = this.db.prepare(
      `INSERT OR REPLACE INTO sessions (id, agent_id, user_id, tenant_id, started_at, ended_at, summary, is_archived)
       VALUES (@id, @agent_id, @user_id, @tenant_id, @started_at, @ended_at, @summary, @is_archived)`,
    )
    this.insEmbedding = this.db.prepare(`INSERT OR REPLACE INTO embeddings (owner_type, owner_id, model, dim, vector) VALUES (?, ?, ?, ?, ?)`)
  }

  memory(row: Partial<CanonicalMemoryRow> & Pick<CanonicalMemoryRow, 'id' | 'content' | 'created_at'>): void {
    this.insMemory.run({
      agent_id: null,
      user_id: null,
      session_id: null,
      role: null,
      kind: null,
      tier: null,
      summary: null,
      salience: null,
      last_used_at: null,
      use_count: null,
      turn: null,
      source: null,
      metadata: null,
      ...row,
    })
  }

  session(row: Partial<CanonicalSessionRow> & Pick<CanonicalSessionRow, 'id'>): void {
    this.insSession.run({ agent_id: null, user_id: null, tenant_id: null, started_at: null, ended_at: null, summary: null, is_archived: 0, ...row })
  }

  embedding(ownerType: 'memory' | 'session', ownerId: string, model: string, vector: ArrayLike<number>): void {
    // A Float32Array already holds the canonical bytes on little-endian hosts: no per-float copy.
    const blob = vector instanceof Float32Array && LITTLE_ENDIAN ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength) : encodeVector(vector)
    this.insEmbedding.run(ownerType, ownerId, model, vector.length, blob)
  }

  /** Run `fn` in one transaction (fast bulk inserts). */
  batch(fn: () => void): void {
    this.db.transaction(fn)()
  }

  /**
   * The finished DB, switched to query_only like every agent connection. Every session a memory
   * names exists: a format without session records (Qdrant points' run_id, a LanceDB session_id
   * column) gets them derived from its memories, as the SQL adapters derive theirs (mem0), so the
   * Sessions view and session filters see them.
   */
  done(): Database.Database {
    this.db.exec(`INSERT INTO sessions (id, agent_id, user_id, tenant_id, started_at, ended_at, summary, is_archived)
      SELECT session_id, min(agent_id), min(user_id), NULL, min(created_at), max(created_at), NULL, 0 FROM memories
      WHERE session_id IS NOT NULL AND session_id NOT IN (SELECT id FROM sessions) GROUP BY session_id`)
    this.db.pragma('query_only = 1')
    return this.db
  }

  /** sha1 over (rowid, id, content, created_at) of every memory, in rowid order. */
  fingerprint(): string {
    const h = crypto.createHash('sha1')
    for (const r of this.db.prepare(`SELECT rowid, id, content, created_at FROM memories ORDER BY rowid`).raw().iterate() as IterableIterator<unknown[]>)
      h.update(`${r.join('\u0000')}\u0001`)
    return h.digest('hex').slice(0, 16)
  }
}

/** An id or scope value a store keeps as text or a number: as text; empty and anything else → null. */
export function idText(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null
}

/** Epoch ms from an ISO string (naive = UTC, as Python's isoformat() of utcnow()), epoch s/ms number, or null. */
export function toEpochMs(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null
  if (typeof v === 'number' || typeof v === 'bigint') {
    const n = Number(v)
    if (!Number.isFinite(n)) return null
    return n < 1e11 ? Math.round(n * 1000) : Math.round(n)
  }
  if (v instanceof Date) return v.getTime()
  const s = cellText(v).trim()
  if (/^-?\d+(\.\d+)?$/.test(s)) return toEpochMs(Number(s))
  const hasZone = /([zZ]|[+-]\d\d:?\d\d)$/.test(s)
  const iso = s.includes('T') || !/^\d{4}-\d\d-\d\d \d/.test(s) ? s : s.replace(' ', 'T')
  const t = Date.parse(hasZone ? iso : `${iso}Z`)
  return Number.isFinite(t) ? t : null
}
