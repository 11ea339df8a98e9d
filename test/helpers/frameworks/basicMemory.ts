/**
 * basic-memory fixture (Python, no npm client): `~/.basic-memory/memory.db` with the tables
 * of basicmachines-co/basic-memory @ 4d1dfdb7e2cf9bfaff83c75daa8f02ce45ccc552 —
 * models/project.py, models/knowledge.py (entity, observation, relation, with their
 * indexes and constraints) and models/search.py (the SQLite `search_index` FTS5 DDL) —
 * in WAL mode as db.py sets it, times as SQLAlchemy writes DateTime on SQLite: naive local
 * `YYYY-MM-DD HH:MM:SS.ffffff`.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'

/** SQLAlchemy's SQLite DateTime text of an instant, in the machine's local time (no zone). */
export function sqlaLocal(ms: number): string {
  const d = new Date(ms)
  const p = (n: number, w = 2) => String(n).padStart(w, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}000`
}

export interface BmNote {
  title: string
  permalink: string
  noteType?: string
  createdAt: number
  updatedAt: number
  observations: { content: string; category: string; tags?: string[]; context?: string }[]
  relations?: { type: string; to: string; context?: string }[]
}

/** Writes `<dir>/memory.db` and returns the folder. */
export function buildBasicMemory(dir: string, project: string, notes: BmNote[]): string {
  fs.mkdirSync(dir, { recursive: true })
  const db = new Database(path.join(dir, 'memory.db'))
  db.pragma('journal_mode = WAL')
  db.exec(`
    CREATE TABLE project (
      id INTEGER NOT NULL PRIMARY KEY, external_id VARCHAR NOT NULL UNIQUE, name VARCHAR NOT NULL UNIQUE, description TEXT,
      permalink VARCHAR NOT NULL UNIQUE, path VARCHAR NOT NULL, is_active BOOLEAN NOT NULL, is_default BOOLEAN,
      created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL, last_scan_timestamp FLOAT, last_file_count INTEGER
    );
    CREATE TABLE entity (
      id INTEGER NOT NULL PRIMARY KEY, external_id VARCHAR NOT NULL UNIQUE, title VARCHAR NOT NULL, note_type VARCHAR NOT NULL,
      entity_metadata JSON, content_type VARCHAR NOT NULL, project_id INTEGER NOT NULL REFERENCES project (id),
      permalink VARCHAR, file_path VARCHAR NOT NULL, checksum VARCHAR, mtime FLOAT, size INTEGER,
      created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL, created_by VARCHAR, last_updated_by VARCHAR
    );
    CREATE INDEX ix_note_type ON entity (note_type);
    CREATE INDEX ix_entity_title ON entity (title);
    CREATE INDEX ix_entity_created_at ON entity (created_at);
    CREATE INDEX ix_entity_updated_at ON entity (updated_at);
    CREATE INDEX ix_entity_project_id ON entity (project_id);
    CREATE UNIQUE INDEX uix_entity_file_path_project ON entity (file_path, project_id);
    CREATE TABLE observation (
      id INTEGER NOT NULL PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES project (id),
      entity_id INTEGER NOT NULL REFERENCES entity (id) ON DELETE CASCADE, content TEXT NOT NULL,
      category VARCHAR NOT NULL, context TEXT, tags JSON DEFAULT '[]'
    );
    CREATE INDEX ix_observation_entity_id ON observation (entity_id);
    CREATE INDEX ix_observation_category ON observation (category);
    CREATE TABLE relation (
      id INTEGER NOT NULL PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES project (id),
      from_id INTEGER NOT NULL REFERENCES entity (id) ON DELETE CASCADE, to_id INTEGER REFERENCES entity (id) ON DELETE SET NULL,
      to_name VARCHAR NOT NULL, relation_type VARCHAR NOT NULL, context TEXT, generation BIGINT DEFAULT '0' NOT NULL,
      CONSTRAINT uix_relation_from_id_to_id UNIQUE (from_id, to_id, relation_type),
      CONSTRAINT uix_relation_from_id_to_name UNIQUE (from_id, to_name, relation_type)
    );
    CREATE VIRTUAL TABLE IF NOT EXISTS search_index USING fts5(
      id UNINDEXED, title, content_stems, content_snippet, permalink, file_path UNINDEXED, type UNINDEXED,
      project_id UNINDEXED, from_id UNINDEXED, to_id UNINDEXED, relation_type UNINDEXED, entity_id UNINDEXED,
      category UNINDEXED, metadata UNINDEXED, created_at UNINDEXED, updated_at UNINDEXED,
      tokenize='unicode61 tokenchars 0x2F', prefix='1,2,3,4'
    );
  `)
  const now = sqlaLocal(Date.now())
  db.prepare(`INSERT INTO project VALUES (1, 'p-ext', ?, NULL, ?, ?, 1, 1, ?, ?, NULL, NULL)`).run(project, project, `/home/u/${project}`, now, now)
  const insE =
    db.prepare(`INSERT INTO entity (id, external_id, title, note_type, entity_metadata, content_type, project_id, permalink, file_path, checksum, created_at, updated_at)
    VALUES (?, ?, ?, ?, '{}', 'text/markdown', 1, ?, ?, 'c', ?, ?)`)
  const insO = db.prepare(`INSERT INTO observation (project_id, entity_id, content, category, context, tags) VALUES (1, ?, ?, ?, ?, ?)`)
  const insR = db.prepare(`INSERT INTO relation (project_id, from_id, to_id, to_name, relation_type, context) VALUES (1, ?, ?, ?, ?, ?)`)
  const insS =
    db.prepare(`INSERT INTO search_index (id, title, content_stems, content_snippet, permalink, file_path, type, project_id, entity_id, category, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`)
  notes.forEach((n, i) => {
    const id = i + 1
    insE.run(id, `e-${id}`, n.title, n.noteType ?? 'note', n.permalink, `${n.permalink}.md`, sqlaLocal(n.createdAt), sqlaLocal(n.updatedAt))
    insS.run(id, n.title, n.title, n.title, n.permalink, `${n.permalink}.md`, 'entity', null, null, sqlaLocal(n.createdAt), sqlaLocal(n.updatedAt))
    for (const o of n.observations) {
      const r = insO.run(id, o.content, o.category, o.context ?? null, JSON.stringify(o.tags ?? []))
      insS.run(
        r.lastInsertRowid,
        n.title,
        o.content,
        o.content,
        `${n.permalink}/observations/${o.category}`,
        `${n.permalink}.md`,
        'observation',
        id,
        o.category,
        sqlaLocal(n.createdAt),
        sqlaLocal(n.updatedAt),
      )
    }
  })
  notes.forEach((n, i) => {
    for (const r of n.relations ?? []) {
      const target = notes.findIndex((x) => x.permalink === r.to)
      insR.run(i + 1, target >= 0 ? target + 1 : null, r.to, r.type, r.context ?? null)
    }
  })
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  return dir
}
