/**
 * mcp-memory-service fixture (Python, no npm client): the tables created from its own DDL,
 * doobidoo/mcp-memory-service @ 2e193783594cc9292682fcf4789328a6badbfd7d —
 * storage/sqlite_vec.py (`metadata`, `memories` + the v8.64 deleted_at column, the vec0
 * `memory_embeddings`, the trigram `memory_content_fts` with its triggers, the indexes) and
 * storage/migrations/008, 009, 011 — filled the way `store()` does (INSERT INTO memories, then
 * memory_embeddings (rowid = memories.id, serialize_float32)).
 */
import crypto from 'node:crypto'
import path from 'node:path'
import Database from 'better-sqlite3'
import * as sqliteVec from 'sqlite-vec'

export interface McpMemory {
  content: string
  tags?: string[]
  memoryType?: string
  metadata?: Record<string, unknown>
  /** epoch seconds */
  createdAt: number
  lastAccessed?: number | null
  confidence?: number
  deletedAt?: number | null
  supersededBy?: string | null
  /** null: no memory_embeddings row (an embedding that failed) */
  embedding: number[] | null
}

export const contentHash = (content: string) => crypto.createHash('sha256').update(content).digest('hex')

export function buildMcpMemoryService(
  dir: string,
  dim: number,
  memories: McpMemory[],
  edges: { from: string; to: string; type: string; similarity: number }[] = [],
): string {
  const file = path.join(dir, 'sqlite_vec.db')
  const db = new Database(file)
  db.loadExtension(sqliteVec.getLoadablePath())
  db.pragma('journal_mode = WAL')
  db.exec(`
    CREATE TABLE IF NOT EXISTS metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS memories (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      content_hash TEXT UNIQUE NOT NULL,
      content TEXT NOT NULL,
      tags TEXT,
      memory_type TEXT,
      metadata TEXT,
      created_at REAL,
      updated_at REAL,
      created_at_iso TEXT,
      updated_at_iso TEXT,
      deleted_at REAL DEFAULT NULL
    );
    CREATE VIRTUAL TABLE IF NOT EXISTS memory_embeddings USING vec0(
      content_embedding FLOAT[${dim}] distance_metric=cosine
    );
    INSERT OR REPLACE INTO metadata (key, value) VALUES ('distance_metric', 'cosine');
    CREATE INDEX IF NOT EXISTS idx_content_hash ON memories(content_hash);
    CREATE INDEX IF NOT EXISTS idx_created_at ON memories(created_at);
    CREATE INDEX IF NOT EXISTS idx_memory_type ON memories(memory_type);
    CREATE INDEX IF NOT EXISTS idx_deleted_at ON memories(deleted_at);
    CREATE VIRTUAL TABLE IF NOT EXISTS memory_content_fts USING fts5(
      content, content='memories', content_rowid='id', tokenize='trigram'
    );
    CREATE TRIGGER IF NOT EXISTS memories_fts_ai AFTER INSERT ON memories BEGIN
      INSERT INTO memory_content_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER IF NOT EXISTS memories_fts_au AFTER UPDATE ON memories BEGIN
      DELETE FROM memory_content_fts WHERE rowid = old.id;
      INSERT INTO memory_content_fts(rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER IF NOT EXISTS memories_fts_ad AFTER DELETE ON memories BEGIN
      DELETE FROM memory_content_fts WHERE rowid = old.id;
    END;
    INSERT INTO memory_content_fts(memory_content_fts) VALUES('rebuild');
    INSERT OR REPLACE INTO metadata (key, value) VALUES ('fts5_enabled', 'true');
    CREATE TABLE IF NOT EXISTS memory_graph (
      source_hash TEXT NOT NULL,
      target_hash TEXT NOT NULL,
      similarity REAL NOT NULL,
      connection_types TEXT NOT NULL,
      metadata TEXT,
      created_at REAL NOT NULL,
      PRIMARY KEY (source_hash, target_hash)
    );
    CREATE INDEX IF NOT EXISTS idx_graph_source ON memory_graph(source_hash);
    CREATE INDEX IF NOT EXISTS idx_graph_target ON memory_graph(target_hash);
    ALTER TABLE memory_graph ADD COLUMN relationship_type TEXT DEFAULT 'related';
    CREATE INDEX IF NOT EXISTS idx_graph_relationship ON memory_graph(relationship_type);
    ALTER TABLE memories ADD COLUMN parent_id TEXT;
    ALTER TABLE memories ADD COLUMN version INTEGER DEFAULT 1;
    ALTER TABLE memories ADD COLUMN confidence REAL DEFAULT 1.0;
    ALTER TABLE memories ADD COLUMN last_accessed INTEGER;
    ALTER TABLE memories ADD COLUMN superseded_by TEXT;
  `)
  const insMem = db.prepare(`INSERT INTO memories (content_hash, content, tags, memory_type, metadata, created_at, updated_at, created_at_iso, updated_at_iso)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const insVec = db.prepare(`INSERT INTO memory_embeddings (rowid, content_embedding) VALUES (?, ?)`)
  const later = db.prepare(`UPDATE memories SET confidence = ?, last_accessed = ?, deleted_at = ?, superseded_by = ? WHERE id = ?`)
  for (const m of memories) {
    const iso = new Date(m.createdAt * 1000).toISOString()
    const r = insMem.run(
      contentHash(m.content),
      m.content,
      (m.tags ?? []).join(','),
      m.memoryType ?? 'note',
      JSON.stringify(m.metadata ?? {}),
      m.createdAt,
      m.createdAt,
      iso,
      iso,
    )
    if (m.embedding) insVec.run(BigInt(r.lastInsertRowid), Buffer.from(new Float32Array(m.embedding).buffer))
    later.run(m.confidence ?? 1.0, m.lastAccessed ?? null, m.deletedAt ?? null, m.supersededBy ?? null, r.lastInsertRowid)
  }
  const insEdge = db.prepare(
    `INSERT INTO memory_graph (source_hash, target_hash, similarity, connection_types, metadata, created_at, relationship_type) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  )
  for (const e of edges) insEdge.run(e.from, e.to, e.similarity, JSON.stringify(['semantic']), '{}', 1_700_000_000, e.type)
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  return file
}
