/**
 * CrewAI fixtures, built the way CrewAI writes them.
 *
 * LanceDB: with @lancedb/lancedb, replaying LanceDBStorage (crewAIInc/crewAI
 * lib/crewai/src/crewai/memory/storage/lancedb_storage.py @ 00835e15…): `_create_table`
 * (create with a `__schema_placeholder__` row, then delete it), `_ensure_scope_index`
 * (BTREE scalar index on scope) and `save` (rows shaped by `_record_to_row`, one `add`
 * per save, zero vector when a record has no embedding).
 *
 * Legacy LTM: the DDL of ltm_sqlite_storage.py @ 224f14c8… and its INSERT.
 */
import path from 'node:path'
import Database from 'better-sqlite3'
import * as lancedb from '@lancedb/lancedb'

export interface CrewaiRecord {
  id: string
  content: string
  scope?: string
  categories?: string[]
  metadata?: Record<string, unknown>
  importance?: number
  /** Python isoformat() of a naive UTC datetime, as CrewAI writes it */
  createdAt: string
  lastAccessed?: string
  source?: string | null
  private?: boolean
  /** null → CrewAI's zero placeholder */
  embedding: number[] | null
}

/** Python's `datetime.utcnow().isoformat()` for an epoch ms (naive, microseconds). */
export function pyIsoUtc(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('Z', '')
    .replace(/\.(\d{3})$/, '.$1000')
}

/** Write a CrewAI LanceDB memory folder at `dir` (the `memory/` folder CrewAI uses). */
export async function buildCrewaiLance(dir: string, dim: number, records: CrewaiRecord[]): Promise<string> {
  const db = await lancedb.connect(dir)
  const now = pyIsoUtc(Date.now())
  const table = await db.createTable('memories', [
    {
      id: '__schema_placeholder__',
      content: '',
      scope: '/',
      categories_str: '[]',
      metadata_str: '{}',
      importance: 0.5,
      created_at: now,
      last_accessed: now,
      source: '',
      private: false,
      vector: new Array(dim).fill(0),
    },
  ])
  await table.delete("id = '__schema_placeholder__'")
  try {
    await table.createIndex('scope', { config: lancedb.Index.btree() })
  } catch {
    /* CrewAI swallows this too (empty table) */
  }
  for (const r of records) {
    await table.add([
      {
        id: r.id,
        content: r.content,
        scope: r.scope ?? '/',
        categories_str: JSON.stringify(r.categories ?? []),
        metadata_str: JSON.stringify(r.metadata ?? {}),
        importance: r.importance ?? 0.5,
        created_at: r.createdAt,
        last_accessed: r.lastAccessed ?? r.createdAt,
        source: r.source ?? '',
        private: r.private ?? false,
        vector: r.embedding ?? new Array(dim).fill(0),
      },
    ])
  }
  table.close()
  db.close()
  return dir
}

export interface LtmRow {
  task: string
  metadata: Record<string, unknown>
  /** str(time.time()) or str(datetime.now()) */
  datetime: string
  score: number
}

/** CrewAI's legacy `long_term_memory_storage.db`. */
export function buildCrewaiLtm(dir: string, rows: LtmRow[], name = 'long_term_memory_storage.db'): string {
  const file = path.join(dir, name)
  const db = new Database(file)
  db.exec(`CREATE TABLE IF NOT EXISTS long_term_memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_description TEXT,
    metadata TEXT,
    datetime TEXT,
    score REAL
  )`)
  const ins = db.prepare(`INSERT INTO long_term_memories (task_description, metadata, datetime, score) VALUES (?, ?, ?, ?)`)
  for (const r of rows) ins.run(r.task, JSON.stringify(r.metadata), r.datetime, r.score)
  db.close()
  return file
}
