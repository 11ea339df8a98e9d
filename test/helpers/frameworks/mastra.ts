/**
 * Mastra memory fixtures: the tables LibSQLStore creates from @mastra/core's TABLE_SCHEMAS (text and
 * timestamp columns as TEXT, ISO times, camelCase names quoted) and a LibSQLVector index table
 * (`CREATE TABLE <index> (id INTEGER PRIMARY KEY, vector_id TEXT UNIQUE NOT NULL, embedding
 * F32_BLOB(dim), metadata TEXT DEFAULT '{}')` with its libsql_vector_idx index), rows shaped as
 * @mastra/memory saves them: content = MastraMessageContentV2 JSON, vector metadata
 * {message_id, thread_id, resource_id}. (The @mastra packages need Node 22: not installable here.)
 */
import path from 'node:path'
import Database from 'better-sqlite3'

const DDL = `
CREATE TABLE mastra_threads (id TEXT NOT NULL PRIMARY KEY, "resourceId" TEXT NOT NULL, title TEXT NOT NULL, metadata TEXT, "createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL);
CREATE TABLE mastra_messages (id TEXT NOT NULL PRIMARY KEY, thread_id TEXT NOT NULL, content TEXT NOT NULL, role TEXT NOT NULL, type TEXT NOT NULL, "createdAt" TEXT NOT NULL, "resourceId" TEXT);
CREATE TABLE mastra_resources (id TEXT NOT NULL PRIMARY KEY, "workingMemory" TEXT, metadata TEXT, "createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL);
CREATE TABLE mastra_workflow_snapshot (workflow_name TEXT NOT NULL, run_id TEXT NOT NULL, "resourceId" TEXT, snapshot TEXT NOT NULL, "createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL, PRIMARY KEY (workflow_name, run_id));
`

export interface MastraMessage {
  id: string
  thread: string
  role: 'user' | 'assistant'
  text: string
  at: string
  /** a semantic-recall vector (one chunk) */
  embedding?: number[]
}

export function buildMastra(
  dir: string,
  threads: { id: string; resource: string; title: string; at: string; workingMemory?: string }[],
  messages: MastraMessage[],
  resourceWm: Record<string, string>,
): string {
  const file = path.join(dir, 'mastra.db')
  const db = new Database(file)
  db.exec(DDL)
  for (const t of threads)
    db.prepare(`INSERT INTO mastra_threads VALUES (?, ?, ?, ?, ?, ?)`).run(
      t.id,
      t.resource,
      t.title,
      JSON.stringify(t.workingMemory ? { workingMemory: t.workingMemory } : {}),
      t.at,
      t.at,
    )
  for (const [id, wm] of Object.entries(resourceWm))
    db.prepare(`INSERT INTO mastra_resources VALUES (?, ?, '{}', ?, ?)`).run(id, wm, '2025-01-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z')
  const resOf = new Map(threads.map((t) => [t.id, t.resource]))
  for (const m of messages)
    db.prepare(`INSERT INTO mastra_messages VALUES (?, ?, ?, ?, 'v2', ?, ?)`).run(
      m.id,
      m.thread,
      JSON.stringify({ format: 2, parts: [{ type: 'step-start' }, { type: 'text', text: m.text }], content: m.text }),
      m.role,
      m.at,
      resOf.get(m.thread) ?? null,
    )
  const dim = messages.find((m) => m.embedding)?.embedding?.length ?? 0
  if (dim) {
    // LibSQLVector's DDL; the index function exists only in libSQL, so this connection registers a stand-in to create it
    db.function('libsql_vector_idx', { deterministic: true }, (x: unknown) => x as never)
    db.exec(`CREATE TABLE memory_messages (id INTEGER PRIMARY KEY, vector_id TEXT UNIQUE NOT NULL, embedding F32_BLOB(${dim}), metadata TEXT DEFAULT '{}')`)
    db.exec(`CREATE INDEX memory_messages_vector_idx ON memory_messages (libsql_vector_idx(embedding))`)
    let n = 0
    for (const m of messages)
      if (m.embedding)
        db.prepare(`INSERT INTO memory_messages (vector_id, embedding, metadata) VALUES (?, ?, ?)`).run(
          `vec-${++n}`,
          Buffer.from(new Float32Array(m.embedding).buffer),
          JSON.stringify({ message_id: m.id, thread_id: m.thread, resource_id: resOf.get(m.thread) }),
        )
  }
  db.close()
  return file
}
