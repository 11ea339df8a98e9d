/**
 * The conformance spec (spec.ts) run against the stores opened since issue 23: Qdrant local,
 * Chroma, any LanceDB folder (and a LanceDB table by column mapping), Mastra, Agno and OpenMemory. Each factory writes the same canonical
 * content in that store's own format (with the fixture writers of test/frameworks/).
 */
import path from 'node:path'
import fs from 'node:fs'
import * as lancedb from '@lancedb/lancedb'
import { openSource } from '../../src/main/store/registry'
import { buildAgno } from '../helpers/frameworks/agno'
import { buildChroma } from '../helpers/frameworks/chroma'
import { buildMastra } from '../helpers/frameworks/mastra'
import { buildOpenMemory } from '../helpers/frameworks/openmemory'
import { buildQdrantLocal, hasPython } from '../helpers/frameworks/qdrantLocal'
import { describeSourceConformance, type ConfContent } from './spec'

const iso = (ms: number) => new Date(ms).toISOString()
const PY = hasPython()
if (!PY) console.warn('[conformance] python3 not found: Qdrant local and Chroma (fixtures written by Python) are not run')

if (PY) {
  describeSourceConformance('Qdrant local (pickled points)', (dir, content: ConfContent) => {
    const folder = path.join(dir, 'qdrant')
    // JSON (the way to Python) has no NaN, and a vector of another length is another model there: bad rows are not written
    buildQdrantLocal(
      folder,
      {
        conf: {
          vectors: { size: 8, distance: 'Cosine' },
          points: content.memories.map((m) => ({
            id: m.id,
            vector: m.vector,
            payload: { data: m.content, user_id: m.user, agent_id: m.agent, run_id: m.session, created_at: iso(m.createdAt) },
          })),
        },
      },
      path.join(dir, 'never'),
    )
    return {
      open: (workspacePath) => openSource({ path: folder, workspacePath }),
      files: [folder],
      carries: { agent: true, user: true, vectors: true, malformed: [], session: true, times: true },
    }
  })

  describeSourceConformance('Chroma persistent store', (dir, content: ConfContent) => {
    const folder = path.join(dir, 'chroma')
    buildChroma(folder, {
      conf: {
        dim: 8,
        // Chroma stores a vector for every record: the memory without one gets the all-zero placeholder (read as no vector)
        records: content.memories.map((m) => ({
          id: m.id,
          document: m.content,
          metadata: { user: m.user },
          embedding: m.vector ?? new Array(8).fill(0),
          createdAt: iso(m.createdAt).replace('T', ' ').slice(0, 19),
        })),
      },
    })
    return {
      open: (workspacePath) => openSource({ path: folder, workspacePath }),
      files: [folder],
      carries: {
        agent: "a Chroma memory's agent is its collection's name",
        user: 'Chroma metadata has no user field recallscope reads',
        vectors: true,
        malformed: [],
        session: 'Chroma records have no session',
        times: true,
      },
    }
  })
}

describeSourceConformance('a LanceDB folder (any table)', async (dir, content: ConfContent) => {
  const folder = path.join(dir, 'app.lancedb')
  const db = await lancedb.connect(folder)
  const rows = [...content.memories, ...content.bad.filter((b) => b.problem === 'nan')].map((m) => ({
    id: m.id,
    text: m.content,
    user_id: m.user,
    agent_id: m.agent,
    session_id: m.session,
    created_at: iso(m.createdAt),
    // a memory without a vector gets the all-zero placeholder LanceDB writers use
    vector: m.vector ?? new Array(8).fill(0),
  }))
  await db.createTable('notes', rows)
  return {
    open: (workspacePath) => openSource({ path: folder, workspacePath }),
    files: [folder],
    carries: { agent: true, user: true, vectors: true, malformed: ['nan'], session: true, times: true },
  }
})

describeSourceConformance('Mastra memory (LibSQLStore + LibSQLVector)', async (dir, content: ConfContent) => {
  const folder = path.join(dir, 'mastra')
  fs.mkdirSync(folder)
  const sessions = [...new Set(content.memories.map((m) => m.session))]
  const file = await buildMastra(
    folder,
    sessions.map((s) => ({ id: s, resource: 'r', title: s, at: iso(content.memories[0].createdAt) })),
    content.memories.map((m) => ({ id: m.id, thread: m.session, role: 'user', text: m.content, at: iso(m.createdAt), embedding: m.vector ?? undefined })),
    {},
  )
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: {
      agent: 'Mastra messages carry no agent',
      user: "Mastra messages carry their thread's resource, not a user id",
      vectors: true,
      malformed: [],
      session: true,
      times: true,
    },
  }
})

describeSourceConformance('Agno (agno_memories)', (dir, content: ConfContent) => {
  const file = buildAgno(
    dir,
    content.memories.map((m) => ({ id: m.id, memory: m.content, userId: m.user, agentId: m.agent, createdAtS: m.createdAt / 1000 })),
    [],
  )
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: { agent: true, user: true, vectors: 'Agno memories hold no vectors', malformed: [], session: 'agno_memories rows carry no session', times: true },
  }
})

describeSourceConformance('OpenMemory (openmemory.db)', (dir, content: ConfContent) => {
  const apps = [...new Set(content.memories.map((m) => m.agent))]
  const file = buildOpenMemory(
    dir,
    'user-1',
    apps,
    content.memories.map((m) => ({ key: m.id, content: m.content, app: m.agent, createdAt: m.createdAt })),
    [],
  )
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: {
      agent: true,
      user: 'one OpenMemory user per file here (user-1)',
      vectors: 'openmemory.db holds no vectors (they live in its vector store)',
      malformed: [],
      session: 'OpenMemory memories have no session',
      times: true,
    },
  }
})

describeSourceConformance('a LanceDB table opened by a column mapping', async (dir, content: ConfContent) => {
  const folder = path.join(dir, 'mapped.lancedb')
  const db = await lancedb.connect(folder)
  // column names of the app's own (none is a text column recallscope knows by name): only a mapping opens it
  const rows = [...content.memories, ...content.bad.filter((b) => b.problem === 'nan')].map((m) => ({
    note_key: m.id,
    note_body: m.content,
    created_ms: m.createdAt,
    who: m.user,
    bot: m.agent,
    thread: m.session,
    // a memory without a vector gets the all-zero placeholder LanceDB writers use
    embedding: m.vector ?? new Array(8).fill(0),
  }))
  await db.createTable('agent_notes', rows)
  const mapping = {
    table: 'agent_notes',
    columns: { id: 'note_key', content: 'note_body', created: 'created_ms', user: 'who', agent: 'bot', session: 'thread' },
    timeUnit: 'unix_ms' as const,
    vector: { column: 'embedding', encoding: 'f32' as const },
  }
  return {
    open: (workspacePath) => openSource({ path: folder, workspacePath, mapping }),
    files: [folder],
    carries: { agent: true, user: true, vectors: true, malformed: ['nan'], session: true, times: true },
  }
})
