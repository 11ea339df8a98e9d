/**
 * The conformance spec (spec.ts) run against the stores opened since issue 23: Qdrant local,
 * Chroma, any LanceDB folder, Mastra, Agno and OpenMemory. Each factory writes the same canonical
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
    return { open: (workspacePath) => openSource({ path: folder, workspacePath }), files: [folder], carries: { scope: true, vectors: true, malformed: [] } }
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
    return { open: (workspacePath) => openSource({ path: folder, workspacePath }), files: [folder], carries: { scope: false, vectors: true, malformed: [] } }
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
  return { open: (workspacePath) => openSource({ path: folder, workspacePath }), files: [folder], carries: { scope: true, vectors: true, malformed: ['nan'] } }
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
  // Mastra messages carry a resource (the thread's), no agent: scope filters are not checked
  return { open: (workspacePath) => openSource({ path: file, workspacePath }), files: [file], carries: { scope: false, vectors: true, malformed: [] } }
})

describeSourceConformance('Agno (agno_memories)', (dir, content: ConfContent) => {
  const file = buildAgno(
    dir,
    content.memories.map((m) => ({ id: m.id, memory: m.content, userId: m.user, agentId: m.agent, createdAtS: m.createdAt / 1000 })),
    [],
  )
  return { open: (workspacePath) => openSource({ path: file, workspacePath }), files: [file], carries: { scope: true, vectors: false, malformed: [] } }
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
  // one OpenMemory user per file here: the user filter would not separate anything
  return { open: (workspacePath) => openSource({ path: file, workspacePath }), files: [file], carries: { scope: false, vectors: false, malformed: [] } }
})
