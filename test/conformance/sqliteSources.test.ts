/**
 * The conformance spec (spec.ts) run against the file-based sources: canonical SQLite, Engram, a table
 * opened by a column mapping, and a LlamaIndex storage folder. Each factory writes the same
 * canonical content in that source's own format.
 */
import path from 'node:path'
import Database from 'better-sqlite3'
import { openSource } from '../../src/main/store/registry'
import type { Mapping } from '../../src/shared/mapping'
import crypto from 'node:crypto'
import { engramV05Schema } from '../helpers/engramFixture'
import { buildLlamaIndexStorage } from '../helpers/frameworks/llamaindex'
import { describeSourceConformance, writeCanonicalStore, type ConfContent } from './spec'

const MODEL = 'conf-model'
const f32 = (v: number[]) => Buffer.from(new Float32Array(v).buffer)

describeSourceConformance('canonical SQLite', (dir, content: ConfContent) => {
  const file = writeCanonicalStore(path.join(dir, 'canonical.db'), [...content.memories, ...content.bad])
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: { agent: true, user: true, vectors: true, malformed: ['wrongDimension', 'nan'], session: true, times: true },
  }
})

const MAPPING: Mapping = {
  table: 'agent_notes',
  columns: { id: 'note_key', content: 'body', created: 'created_ms', user: 'who', agent: 'bot', session: 'thread' },
  timeUnit: 'unix_ms',
  vector: { column: 'emb', encoding: 'f32', model: MODEL },
}

describeSourceConformance('a SQLite table opened by a column mapping', (dir, content: ConfContent) => {
  const file = path.join(dir, 'notes.sqlite')
  const db = new Database(file)
  db.exec(`CREATE TABLE agent_notes (note_key TEXT PRIMARY KEY, body TEXT, created_ms INTEGER, who TEXT, bot TEXT, thread TEXT, emb BLOB)`)
  const ins = db.prepare(`INSERT INTO agent_notes VALUES (?, ?, ?, ?, ?, ?, ?)`)
  for (const m of [...content.memories, ...content.bad]) ins.run(m.id, m.content, m.createdAt, m.user, m.agent, m.session, m.vector ? f32(m.vector) : null)
  db.close()
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath, mapping: MAPPING }),
    files: [file],
    carries: { agent: true, user: true, vectors: true, malformed: ['wrongDimension', 'nan'], session: true, times: true },
  }
})

describeSourceConformance('LlamaIndex default storage (JSON files)', (dir, content: ConfContent) => {
  const folder = path.join(dir, 'storage')
  // JSON holds no NaN, and the reader labels vectors by their length (llamaindex:<dim>): a vector of
  // another length is another model's, not a malformed one. So neither bad row is written.
  buildLlamaIndexStorage(
    folder,
    content.memories.map((m) => ({
      id: m.id,
      text: m.content,
      doc: m.session,
      fileName: `${m.session}.txt`,
      creationDate: new Date(m.createdAt).toISOString().slice(0, 10),
      embedding: m.vector,
    })),
  )
  return {
    open: (workspacePath) => openSource({ path: folder, workspacePath }),
    files: [folder],
    carries: {
      agent: 'LlamaIndex nodes carry no agent',
      user: 'LlamaIndex nodes carry no user',
      vectors: true,
      malformed: [],
      session: true,
      times: 'LlamaIndex keeps a creation date, no time of day',
    },
  }
})

describeSourceConformance('Engram v0.5 (JSON-text embeddings)', (dir, content: ConfContent) => {
  const file = path.join(dir, 'engram.db')
  const db = new Database(file)
  db.exec(engramV05Schema())
  const ins = db.prepare(
    `INSERT INTO memories (id, session_id, content, role, timestamp, metadata, content_hash, embedding, tier) VALUES (?, ?, ?, 'user', ?, '{}', ?, ?, 'working')`,
  )
  // JSON has no NaN: Engram's writer (JSON.stringify) stores it as null, which the reader counts as not finite.
  for (const m of [...content.memories, ...content.bad])
    ins.run(m.id, m.session, m.content, m.createdAt, crypto.createHash('sha256').update(m.content).digest('hex'), m.vector ? JSON.stringify(m.vector) : null)
  db.close()
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: {
      agent: 'Engram session memories carry a session, no agent',
      user: 'Engram session memories carry a session, no user',
      vectors: true,
      malformed: ['wrongDimension', 'nan'],
      session: true,
      times: true,
    },
  }
})
