/**
 * OpenMemory (mem0ai/mem0 openmemory/api) fixtures: `openmemory.db` as its SQLAlchemy models
 * create it on SQLite (app/models.py @ 0294b7a9) — UUIDs as 32 hex digits, DateTime as naive UTC
 * 'YYYY-MM-DD HH:MM:SS.ffffff', the state Enum by name, JSON as text — and rows as the MCP
 * server's search_memory writes its access log: one 'search' row per returned memory, in result
 * order, metadata {"query", "score", "hash"} (json.dumps), microseconds apart.
 */
import crypto from 'node:crypto'
import path from 'node:path'
import Database from 'better-sqlite3'

/** The DDL SQLAlchemy's create_all emits for these models on SQLite (indexes left out: they change no row). */
const DDL = `
CREATE TABLE users (id UUID NOT NULL, user_id VARCHAR NOT NULL, name VARCHAR, email VARCHAR, metadata JSON,
  created_at DATETIME, updated_at DATETIME, PRIMARY KEY (id), UNIQUE (email));
CREATE TABLE apps (id UUID NOT NULL, owner_id UUID NOT NULL, name VARCHAR NOT NULL, description VARCHAR, metadata JSON,
  is_active BOOLEAN, created_at DATETIME, updated_at DATETIME, PRIMARY KEY (id),
  CONSTRAINT uq_user_app_name UNIQUE (owner_id, name), FOREIGN KEY(owner_id) REFERENCES users (id));
CREATE TABLE memories (id UUID NOT NULL, user_id UUID NOT NULL, app_id UUID NOT NULL, content VARCHAR NOT NULL, vector VARCHAR,
  metadata JSON, state VARCHAR(8), created_at DATETIME, updated_at DATETIME, archived_at DATETIME, deleted_at DATETIME,
  PRIMARY KEY (id), FOREIGN KEY(user_id) REFERENCES users (id), FOREIGN KEY(app_id) REFERENCES apps (id));
CREATE TABLE categories (id UUID NOT NULL, name VARCHAR NOT NULL, description VARCHAR, created_at DATETIME, updated_at DATETIME,
  PRIMARY KEY (id));
CREATE TABLE memory_categories (memory_id UUID NOT NULL, category_id UUID NOT NULL, PRIMARY KEY (memory_id, category_id),
  FOREIGN KEY(memory_id) REFERENCES memories (id), FOREIGN KEY(category_id) REFERENCES categories (id));
CREATE TABLE memory_access_logs (id UUID NOT NULL, memory_id UUID NOT NULL, app_id UUID NOT NULL, accessed_at DATETIME,
  access_type VARCHAR NOT NULL, metadata JSON, PRIMARY KEY (id), FOREIGN KEY(memory_id) REFERENCES memories (id),
  FOREIGN KEY(app_id) REFERENCES apps (id));
`

/** uuid.UUID(...).hex: what SQLAlchemy's UUID type binds on SQLite. */
export function uuidHex(seed: string): string {
  return crypto.createHash('md5').update(seed).digest('hex')
}

/** str(uuid.UUID(hex)): the dashed form the MCP tools return. */
export function dashed(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** datetime.isoformat(sep=' ') of a naive UTC datetime, as SQLAlchemy stores DateTime on SQLite. */
export function sqlaDateTime(ms: number): string {
  const d = new Date(ms)
  const p = (n: number, w = 2) => String(n).padStart(w, '0')
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}000`
}

export interface OmMemory {
  key: string
  content: string
  app: string
  createdAt: number
  state?: 'active' | 'paused' | 'archived' | 'deleted'
  categories?: string[]
  metadata?: Record<string, unknown>
}

export interface OmSearch {
  app: string
  query: string
  at: number
  /** memory keys in result order, with scores */
  results: { key: string; score: number }[]
}

export function buildOpenMemory(dir: string, userId: string, apps: string[], memories: OmMemory[], searches: OmSearch[]): string {
  const file = path.join(dir, 'openmemory.db')
  const db = new Database(file)
  db.exec(DDL)
  const user = uuidHex(`user:${userId}`)
  const t0 = sqlaDateTime(Date.UTC(2025, 0, 1))
  db.prepare(`INSERT INTO users (id, user_id, name, metadata, created_at, updated_at) VALUES (?, ?, ?, '{}', ?, ?)`).run(user, userId, userId, t0, t0)
  const appId = (a: string) => uuidHex(`app:${a}`)
  for (const a of apps)
    db.prepare(`INSERT INTO apps (id, owner_id, name, metadata, is_active, created_at, updated_at) VALUES (?, ?, ?, '{}', 1, ?, ?)`).run(
      appId(a),
      user,
      a,
      t0,
      t0,
    )
  const cats = new Map<string, string>()
  for (const m of memories) {
    const id = uuidHex(`mem:${m.key}`)
    const ts = sqlaDateTime(m.createdAt)
    db.prepare(
      `INSERT INTO memories (id, user_id, app_id, content, vector, metadata, state, created_at, updated_at, archived_at, deleted_at)
       VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, NULL, ?)`,
    ).run(id, user, appId(m.app), m.content, JSON.stringify(m.metadata ?? {}), m.state ?? 'active', ts, ts, m.state === 'deleted' ? ts : null)
    for (const c of m.categories ?? []) {
      if (!cats.has(c)) {
        cats.set(c, uuidHex(`cat:${c}`))
        db.prepare(`INSERT INTO categories (id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`).run(
          cats.get(c),
          c,
          `Automatically created category for ${c}`,
          t0,
          t0,
        )
      }
      db.prepare(`INSERT INTO memory_categories (memory_id, category_id) VALUES (?, ?)`).run(id, cats.get(c))
    }
  }
  let n = 0
  for (const s of searches)
    s.results.forEach((r, i) => {
      // one commit: the default (get_current_utc_time) is taken per row at flush, microseconds apart
      const at = sqlaDateTime(s.at).replace(/\d{3}$/, String(100 + i * 7).padStart(3, '0'))
      db.prepare(`INSERT INTO memory_access_logs (id, memory_id, app_id, accessed_at, access_type, metadata) VALUES (?, ?, ?, ?, 'search', ?)`).run(
        uuidHex(`log:${n++}`),
        uuidHex(`mem:${r.key}`),
        appId(s.app),
        at,
        JSON.stringify({ query: s.query, score: r.score, hash: crypto.createHash('md5').update(r.key).digest('hex') }),
      )
    })
  db.close()
  return file
}
