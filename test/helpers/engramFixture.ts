/**
 * Engram memory files in each historic layout, built exactly as
 * ../shared/reference/engram-format.md describes them:
 *
 * - v0.2: `memories` without tier / consolidated_from; no user_memories, no graph.
 * - v0.5: + tier (NOT NULL DEFAULT 'working'), consolidated_from, `user_memories`
 *   (user_id in place of session_id), graph_nodes / graph_edges, the four indices.
 * - v1.0: a v0.5 file that lived on: half its rows were written, then the 1.0
 *   ALTER TABLEs ran (importance, certainty, reinforcement_count, last_verified,
 *   memory_type, status, contradicts), then the other half was written.
 *
 * Every file carries the junk a real one accumulates, and the fixture says where
 * it planted it (so tests count from the plan, not from the code under test):
 * NULL embeddings (embedder down), JSON that does not parse, vectors of the wrong
 * length, NaN written by JSON.stringify (→ null) and as a string, metadata that
 * is not JSON, and a role outside the CHECK (written with the check switched off,
 * as a tool other than Engram might).
 */
import crypto from 'node:crypto'
import Database from 'better-sqlite3'

export type EngramVersion = 'v0.2' | 'v0.5' | 'v1.0'

export interface FixtureRow {
  table: 'memories' | 'user_memories'
  id: string
  sessionId: string | null
  userId: string | null
  content: string
  role: string
  timestamp: number
  metadata: string | null
  embedding: string | null
  tier: string | null
  consolidatedFrom: string | null
  /** v1 columns as stored (defaults applied for rows written before the ALTER) */
  v1: {
    importance: number
    certainty: number
    reinforcementCount: number
    lastVerified: number | null
    memoryType: string
    status: string
    contradicts: string | null
  } | null
}

export interface EngramFixture {
  path: string
  version: EngramVersion
  layout: 'engram-v0.2' | 'engram-v0.5' | 'engram-v1'
  /** vector length of the well-formed embeddings */
  dim: number
  rows: FixtureRow[]
  sessions: string[]
  users: string[]
  planted: {
    nullEmbedding: string[]
    badJsonEmbedding: string[]
    wrongDimension: string[]
    nullEntry: string[]
    stringEntry: string[]
    badMetadata: string[]
    unknownRole: string[]
  }
  /** a word that occurs in exactly one memory */
  uniqueWord: { word: string; id: string }
  graph: { nodes: number; edges: number }
}

const DIM = 8
const T0 = Date.UTC(2025, 0, 6, 9, 0, 0)

const TEXTS = [
  'The user prefers dark mode in every editor.',
  'We agreed to ship the billing export on Friday.',
  'Deploy failed because the migration lock was held.',
  'The staging database lives in eu-west-1.',
  'Remember the zanzibar codename for the Q3 launch.',
  'Retry the webhook with exponential backoff.',
  'The user is allergic to peanuts.',
  'Rotate the API keys every ninety days.',
  'The design review moved to Thursday afternoon.',
  'Use pnpm rather than npm in the monorepo.',
  'The on-call rotation changes on Mondays.',
  'Customer asked for invoices in PDF and CSV.',
  'Summary: the team chose Postgres and weekly releases.',
  'Old note about the legacy cron scheduler.',
  'The dashboard times out above ten thousand rows.',
  'Sara owns the data retention policy.',
  'Backups are verified every Sunday night.',
  'The mobile app uses the v2 auth flow.',
]

/** A deterministic, un-normalised vector (Ollama's legacy endpoint does not normalise either). */
export function fixtureVector(i: number, dim = DIM): number[] {
  return Array.from({ length: dim }, (_, k) => Math.round(Math.sin(i * 1.7 + k * 0.9) * 3000) / 1000)
}

const V02_MEMORIES = `CREATE TABLE memories (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  content TEXT NOT NULL,
  role TEXT CHECK (role IN ('user', 'assistant', 'system')),
  timestamp INTEGER NOT NULL,
  metadata TEXT,
  content_hash TEXT NOT NULL,
  embedding TEXT
);
CREATE INDEX idx_memories_session_ts ON memories (session_id, timestamp DESC);`

const V05 = (table: 'memories' | 'user_memories', key: 'session_id' | 'user_id') => `CREATE TABLE ${table} (
  id TEXT PRIMARY KEY,
  ${key} TEXT NOT NULL,
  content TEXT NOT NULL,
  role TEXT CHECK (role IN ('user', 'assistant', 'system')),
  timestamp INTEGER NOT NULL,
  metadata TEXT,
  content_hash TEXT NOT NULL,
  embedding TEXT,
  tier TEXT NOT NULL DEFAULT 'working',
  consolidated_from TEXT
);
CREATE INDEX idx_${table}_${key}_ts ON ${table} (${key}, timestamp DESC);
CREATE INDEX idx_${table}_${key}_tier ON ${table} (${key}, tier);`

const GRAPH = `CREATE TABLE graph_nodes (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, entity TEXT NOT NULL, type TEXT, created_at INTEGER NOT NULL);
CREATE UNIQUE INDEX idx_graph_nodes_session_entity ON graph_nodes (session_id, entity);
CREATE TABLE graph_edges (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, from_entity TEXT NOT NULL, relation TEXT NOT NULL,
  to_entity TEXT NOT NULL, confidence REAL DEFAULT 1.0, memory_id TEXT, created_at INTEGER NOT NULL);`

const V1_ALTERS = (table: string) =>
  [
    `ALTER TABLE ${table} ADD COLUMN importance REAL DEFAULT 0.5`,
    `ALTER TABLE ${table} ADD COLUMN certainty REAL DEFAULT 0.5`,
    `ALTER TABLE ${table} ADD COLUMN reinforcement_count INTEGER DEFAULT 0`,
    `ALTER TABLE ${table} ADD COLUMN last_verified INTEGER`,
    `ALTER TABLE ${table} ADD COLUMN memory_type TEXT DEFAULT 'episodic'`,
    `ALTER TABLE ${table} ADD COLUMN status TEXT DEFAULT 'active'`,
    `ALTER TABLE ${table} ADD COLUMN contradicts TEXT`,
  ].join(';\n')

/** Write an Engram file of one layout at `file`. */
/** Engram v0.5's DDL (session memories, user memories, the graph), for tests that write their own rows. */
export function engramV05Schema(): string {
  return `${V05('memories', 'session_id')}\n${V05('user_memories', 'user_id')}\n${GRAPH}`
}

export function createEngramFixture(file: string, version: EngramVersion): EngramFixture {
  const db = new Database(file)
  const v05 = version !== 'v0.2'
  const v1 = version === 'v1.0'
  db.exec(v05 ? `${V05('memories', 'session_id')}\n${V05('user_memories', 'user_id')}\n${GRAPH}` : V02_MEMORIES)

  const sessions = ['s-alpha', 's-beta', 's-gamma']
  const users = v05 ? ['ana', 'ben'] : []
  const planted: EngramFixture['planted'] = {
    nullEmbedding: [],
    badJsonEmbedding: [],
    wrongDimension: [],
    nullEntry: [],
    stringEntry: [],
    badMetadata: [],
    unknownRole: [],
  }
  const rows: FixtureRow[] = []
  const roles = ['user', 'assistant']

  // Session memories: 18 rows, 6 per session, with junk planted at fixed positions.
  for (let i = 0; i < TEXTS.length; i++) {
    const id = `m-${String(i).padStart(2, '0')}`
    let embedding: string | null = JSON.stringify(fixtureVector(i))
    let metadata: string | null = JSON.stringify({ channel: i % 2 ? 'chat' : 'cli', seq: i })
    let role = roles[i % 2]
    let tier: string | null = v05 ? 'working' : null
    let consolidatedFrom: string | null = null
    if (i === 2 || i === 5) {
      embedding = null
      planted.nullEmbedding.push(id)
    }
    if (i === 7) {
      embedding = '[0.1, 0.2, '
      planted.badJsonEmbedding.push(id)
    }
    if (i === 8) {
      embedding = JSON.stringify(fixtureVector(i, DIM - 3))
      planted.wrongDimension.push(id)
    }
    if (i === 9) {
      embedding = JSON.stringify(fixtureVector(i).map((x, k) => (k === 3 ? NaN : x)))
      planted.nullEntry.push(id)
    }
    if (i === 10) {
      embedding = JSON.stringify(fixtureVector(i).map((x, k) => (k === 1 ? 'NaN' : x)))
      planted.stringEntry.push(id)
    }
    if (i === 11) {
      metadata = '{"channel": "chat",'
      planted.badMetadata.push(id)
    }
    if (i === 13) {
      metadata = 'not json at all'
      planted.badMetadata.push(id)
    }
    if (i === 15) {
      role = 'robot'
      planted.unknownRole.push(id)
    }
    if (v05 && i === 12) {
      role = 'system'
      tier = 'long_term'
      consolidatedFrom = JSON.stringify(['m-00', 'm-01', 'm-03'])
    }
    if (v05 && i === 13) tier = 'archived'
    rows.push({
      table: 'memories',
      id,
      sessionId: sessions[Math.floor(i / 6)],
      userId: null,
      content: TEXTS[i],
      role,
      timestamp: T0 + i * 90_000,
      metadata,
      embedding,
      tier,
      consolidatedFrom,
      v1: null,
    })
  }
  // Cross-session user facts (v0.5+).
  if (v05) {
    const facts = ['Ana works in the Lisbon office.', 'Ana prefers short answers.', 'Ben is the release manager.', 'Ben reviews pull requests in the morning.']
    facts.forEach((content, j) => {
      const id = `u-${String(j).padStart(2, '0')}`
      let embedding: string | null = JSON.stringify(fixtureVector(100 + j))
      if (j === 1) {
        embedding = null
        planted.nullEmbedding.push(id)
      }
      if (j === 2) {
        embedding = JSON.stringify(fixtureVector(100 + j, DIM + 4))
        planted.wrongDimension.push(id)
      }
      rows.push({
        table: 'user_memories',
        id,
        sessionId: null,
        userId: users[j < 2 ? 0 : 1],
        content,
        role: 'system',
        timestamp: T0 - 86_400_000 + j * 60_000,
        metadata: JSON.stringify({ source: 'profile' }),
        embedding,
        tier: j === 3 ? 'long_term' : 'working',
        consolidatedFrom: null,
        v1: null,
      })
    })
  }

  const hash = (s: string) => crypto.createHash('sha256').update(s).digest('hex')
  const insert = (r: FixtureRow, withV1: boolean) => {
    const key = r.table === 'memories' ? 'session_id' : 'user_id'
    const cols = ['id', key, 'content', 'role', 'timestamp', 'metadata', 'content_hash', 'embedding']
    const vals: unknown[] = [r.id, r.sessionId ?? r.userId, r.content, r.role, r.timestamp, r.metadata, hash(r.content), r.embedding]
    if (v05) {
      cols.push('tier', 'consolidated_from')
      vals.push(r.tier, r.consolidatedFrom)
    }
    if (withV1 && r.v1) {
      cols.push('importance', 'certainty', 'reinforcement_count', 'last_verified', 'memory_type', 'status', 'contradicts')
      vals.push(r.v1.importance, r.v1.certainty, r.v1.reinforcementCount, r.v1.lastVerified, r.v1.memoryType, r.v1.status, r.v1.contradicts)
    }
    // A role outside the CHECK needs the check off, as a foreign writer would have had it.
    if (!['user', 'assistant', 'system'].includes(r.role)) db.pragma('ignore_check_constraints = 1')
    db.prepare(`INSERT INTO ${r.table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...vals)
    db.pragma('ignore_check_constraints = 0')
  }

  if (v1) {
    // Rows written before the upgrade carry the ALTER defaults; the rest carry real values.
    const before = rows.filter((r) => r.table === 'memories' && Number(r.id.slice(2)) < 9)
    const after = rows.filter((r) => !before.includes(r))
    db.transaction(() => before.forEach((r) => insert(r, false)))()
    db.exec(`${V1_ALTERS('memories')};\n${V1_ALTERS('user_memories')}`)
    for (const r of before)
      r.v1 = { importance: 0.5, certainty: 0.5, reinforcementCount: 0, lastVerified: null, memoryType: 'episodic', status: 'active', contradicts: null }
    const types = ['semantic', 'procedural', 'episodic', 'fact', 'reflection']
    after.forEach((r, k) => {
      r.v1 = {
        importance: [0.9, 0.2, 1.4, 0.65][k % 4],
        certainty: 0.8,
        reinforcementCount: k % 3,
        lastVerified: k % 2 ? T0 + k * 1000 : null,
        memoryType: types[k % types.length],
        status: k === 1 ? 'superseded' : 'active',
        contradicts: k === 1 ? 'm-03' : null,
      }
    })
    db.transaction(() => after.forEach((r) => insert(r, true)))()
  } else {
    db.transaction(() => rows.forEach((r) => insert(r, false)))()
  }

  let graph = { nodes: 0, edges: 0 }
  if (v05) {
    const n = db.prepare(`INSERT INTO graph_nodes (id, session_id, entity, type, created_at) VALUES (?, ?, ?, ?, ?)`)
    n.run('n1', 's-alpha', 'billing export', 'project', T0)
    n.run('n2', 's-alpha', 'Friday', 'date', T0)
    n.run('n3', 's-beta', 'staging database', 'system', T0)
    db.prepare(`INSERT INTO graph_edges (id, session_id, from_entity, relation, to_entity, memory_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(
      'e1',
      's-alpha',
      'billing export',
      'ships_on',
      'Friday',
      'm-01',
      T0,
    )
    graph = { nodes: 3, edges: 1 }
  }
  db.close()
  return {
    path: file,
    version,
    layout: version === 'v0.2' ? 'engram-v0.2' : version === 'v0.5' ? 'engram-v0.5' : 'engram-v1',
    dim: DIM,
    rows,
    sessions,
    users,
    planted,
    uniqueWord: { word: 'zanzibar', id: 'm-04' },
    graph,
  }
}

/** Ids whose stored embedding is a well-formed vector of the fixture's dimension. */
export function validVectorIds(f: EngramFixture): string[] {
  const bad = new Set([
    ...f.planted.nullEmbedding,
    ...f.planted.badJsonEmbedding,
    ...f.planted.wrongDimension,
    ...f.planted.nullEntry,
    ...f.planted.stringEntry,
  ])
  return f.rows.filter((r) => !bad.has(r.id)).map((r) => r.id)
}
