/**
 * The conformance spec (spec.ts) run against the framework adapters: mem0 (TypeScript vector store
 * + history, Python history), MCP memory (memory.jsonl), the LangGraph store, OpenAI Agents
 * sessions, CrewAI (LanceDB and the legacy SQLite), mcp-memory-service, basic-memory, the Letta
 * server and Letta Code. Each factory writes the canonical content in that framework's own format
 * with the fixture writers of test/helpers/frameworks/ — by the real npm client where one exists
 * (mem0ai, @modelcontextprotocol/server-memory).
 *
 * Where a format cannot hold a bad vector the suite writes, the row is written as the framework's
 * own writer would (same table, same payload) with the bad vector in it: what a truncated write or
 * another client leaves behind, which the reader must skip and count.
 */
import path from 'node:path'
import Database from 'better-sqlite3'
import { openSource } from '../../src/main/store/registry'
import { fakeUnitVector } from '../helpers/fakeOllama'
import { buildBasicMemory } from '../helpers/frameworks/basicMemory'
import { buildCrewaiLance, buildCrewaiLtm, pyIsoUtc } from '../helpers/frameworks/crewai'
import { createLangGraphStore } from '../helpers/frameworks/langgraph'
import { buildLettaCodeMemory, buildLettaServer, hasGit } from '../helpers/frameworks/letta'
import { callMcpMemoryTools } from '../helpers/frameworks/mcpMemory'
import { buildMcpMemoryService } from '../helpers/frameworks/mcpMemoryService'
import { MEM0_DIM, pyPacificIso, writeMem0PyHistory, writeMem0TsStore } from '../helpers/frameworks/mem0'
import { createAgentsSession } from '../helpers/frameworks/openaiAgents'
import { CONF_DIM, describeSourceConformance, type ConfBadMemory, type ConfContent, type ConfMemory } from './spec'

const f32 = (v: number[]) => Buffer.from(new Float32Array(v).buffer)
/** SQLite CURRENT_TIMESTAMP text (UTC, seconds). */
const sqlTs = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19)
const sessionsOf = (content: ConfContent) => [...new Set(content.memories.map((m) => m.session))]
const NO_VECTORS = (why: string) => ({ vectors: why, malformed: [] as ConfBadMemory['problem'][] })

describeSourceConformance('mem0 TypeScript (vector_store.db + memory.db, written by mem0ai)', async (dir, content) => {
  const folder = path.join(dir, 'mem0')
  const { vectorPath } = await writeMem0TsStore(
    folder,
    content.memories.map((m) => ({ label: m.id, text: m.content, userId: m.user, agentId: m.agent, runId: m.session })),
  )
  // The bad rows: mem0's own row shape (id, f32 BLOB, payload JSON) with a vector of another length / a NaN.
  const db = new Database(vectorPath)
  const ins = db.prepare(`INSERT INTO vectors (id, vector, payload) VALUES (?, ?, ?)`)
  for (const b of content.bad)
    ins.run(
      b.id,
      f32(b.vector),
      JSON.stringify({ data: b.content, user_id: b.user, agent_id: b.agent, run_id: b.session, createdAt: new Date(b.createdAt).toISOString() }),
    )
  db.close()
  return {
    open: (workspacePath) => openSource({ path: folder, workspacePath }),
    files: [folder],
    carries: {
      agent: true,
      user: true,
      vectors: true,
      malformed: ['wrongDimension', 'nan'],
      session: true,
      times: 'mem0 stamps each memory with the time it was added',
    },
    // mem0 embeds every memory itself: the fake Ollama served fakeUnitVector(text)
    vectorOf: (m: ConfMemory) => fakeUnitVector(m.content, MEM0_DIM),
  }
})

describeSourceConformance('mem0 Python (history.db replayed)', (dir, content) => {
  const file = path.join(dir, 'history.db')
  const add = (m: ConfMemory) => ({
    memoryId: m.id,
    old: null,
    new: m.content,
    event: 'ADD' as const,
    createdAt: pyPacificIso(m.createdAt),
    updatedAt: null,
    isDeleted: 0 as const,
    actorId: null,
    role: 'user',
  })
  // One more memory, added then deleted: the replay must leave it out.
  const gone = { ...content.memories[0], id: 'conf-gone', content: 'added, then deleted' }
  writeMem0PyHistory(file, [
    ...content.memories.map(add),
    add(gone),
    { ...add(gone), event: 'DELETE', old: gone.content, new: null, createdAt: null, isDeleted: 1 },
  ])
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: {
      agent: 'the history table keeps an actor, not the agent',
      user: "the history table keeps an actor, not the memory's user",
      ...NO_VECTORS("history.db holds no vectors (Python mem0's Qdrant local store is its own entry)"),
      session: 'the history table keeps no run id',
      times: true,
    },
  }
})

describeSourceConformance('MCP memory (memory.jsonl, written by @modelcontextprotocol/server-memory)', async (dir, content) => {
  const file = path.join(dir, 'memory.jsonl')
  // one entity per session, its memories as observations
  const entities = sessionsOf(content).map((s) => ({
    name: s,
    entityType: 'session',
    observations: content.memories.filter((m) => m.session === s).map((m) => m.content),
  }))
  await callMcpMemoryTools(file, [{ name: 'create_entities', args: { entities } }])
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: {
      agent: 'the graph is one shared store (no agent)',
      user: 'the graph is one shared store (no user)',
      ...NO_VECTORS('the graph holds no vectors'),
      session: true,
      times: 'memory.jsonl keeps no times (the file modification time is used)',
    },
  }
})

describeSourceConformance('LangGraph store (SqliteStore + store_vectors)', (dir, content) => {
  const file = path.join(dir, 'langgraph.db')
  createLangGraphStore(
    file,
    [...content.memories, ...content.bad].map((m) => ({
      namespace: [m.agent, m.user],
      key: m.id,
      value: { content: m.content },
      vectors: m.vector ? { content: m.vector } : null,
      createdAt: sqlTs(m.createdAt),
    })),
  )
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: {
      agent: true,
      user: true,
      vectors: true,
      malformed: ['wrongDimension', 'nan'],
      session: "store items have a namespace, no session (threads are the checkpointer's)",
      times: true,
    },
    // agent = the namespace's first segment, user = the namespace text (what LangGraph's search scopes by)
    scopeOf: { user: (m: ConfMemory) => `${m.agent}.${m.user}` },
  }
})

describeSourceConformance('OpenAI Agents SDK session (SQLiteSession)', (dir, content) => {
  const file = path.join(dir, 'agents.db')
  createAgentsSession(
    file,
    content.memories.map((m) => ({ session: m.session, item: { role: 'user', content: m.content }, at: sqlTs(m.createdAt) })),
  )
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: { agent: 'the SDK keeps no agent', user: 'the SDK keeps no user', ...NO_VECTORS('sessions hold no vectors'), session: true, times: true },
  }
})

describeSourceConformance('CrewAI unified memory (LanceDB)', async (dir, content) => {
  const folder = path.join(dir, 'memory')
  // LanceDB's fixed-size vector column cannot hold another length: only the NaN row is written
  await buildCrewaiLance(
    folder,
    CONF_DIM,
    [...content.memories, ...content.bad.filter((b) => b.problem === 'nan')].map((m) => ({
      id: m.id,
      content: m.content,
      scope: `/crew/${m.agent}`,
      source: m.user,
      createdAt: pyIsoUtc(m.createdAt),
      embedding: m.vector,
    })),
  )
  return {
    open: (workspacePath) => openSource({ path: folder, workspacePath }),
    files: [folder],
    carries: { agent: true, user: true, vectors: true, malformed: ['nan'], session: 'records carry a scope and a source, no session', times: true },
    // scope path → agent, source (a user or session id) → user
    scopeOf: { agent: (m: ConfMemory) => `/crew/${m.agent}` },
  }
})

describeSourceConformance('CrewAI legacy long-term memory (SQLite)', (dir, content) => {
  const file = buildCrewaiLtm(
    dir,
    content.memories.map((m) => ({
      task: m.content,
      metadata: { agent: m.agent, quality: 8, suggestions: [], expected_output: '' },
      datetime: String(m.createdAt / 1000),
      score: 8,
    })),
  )
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: {
      agent: true,
      user: 'task evaluations name an agent role, no user',
      ...NO_VECTORS('CrewAI looks these rows up by exact task, no vectors'),
      session: 'task evaluations have no session',
      times: true,
    },
  }
})

describeSourceConformance('mcp-memory-service (sqlite-vec)', (dir, content) => {
  // vec0's FLOAT[8] column refuses another length and sqlite-vec refuses NaN: no bad row can be stored
  const file = buildMcpMemoryService(
    dir,
    CONF_DIM,
    content.memories.map((m) => ({ content: m.content, createdAt: m.createdAt / 1000, embedding: m.vector })),
  )
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: {
      agent: 'memories carry tags, no agent',
      user: 'memories carry tags, no user',
      vectors: true,
      malformed: [],
      session: 'memories carry tags, no session',
      times: true,
    },
  }
})

describeSourceConformance('basic-memory (memory.db)', (dir, content) => {
  const folder = buildBasicMemory(
    path.join(dir, '.basic-memory'),
    'conf-project',
    sessionsOf(content).map((s) => {
      const ms = content.memories.filter((m) => m.session === s)
      return {
        title: s,
        permalink: s,
        createdAt: ms[0].createdAt,
        updatedAt: ms[ms.length - 1].createdAt,
        observations: ms.map((m) => ({ content: m.content, category: 'fact' })),
      }
    }),
  )
  return {
    open: (workspacePath) => openSource({ path: folder, workspacePath }),
    files: [path.join(folder, 'memory.db')],
    carries: {
      agent: "a memory's agent is its project (one here)",
      user: 'basic-memory keeps no user',
      ...NO_VECTORS('observations have no vectors (the chunk vectors are per text chunk)'),
      session: true,
      times: "observations carry no times: each gets its note's",
    },
    // a note is the session of its observations: 'entity-<id>', ids in the order the notes were written
    scopeOf: { session: (m: ConfMemory) => `entity-${sessionsOf(content).indexOf(m.session) + 1}` },
  }
})

describeSourceConformance('Letta server (sqlite.db archival passages)', (dir, content) => {
  const agents = [...new Set(content.memories.map((m) => m.agent))]
  const file = buildLettaServer(dir, {
    agents: agents.map((a) => ({ id: a, name: a })),
    blocks: [],
    passages: [...content.memories, ...content.bad].map((m) => ({
      id: m.id,
      agent: m.agent,
      text: m.content,
      createdAt: m.createdAt,
      embedding: m.vector,
      model: 'conf-model',
    })),
    messages: [],
  })
  return {
    open: (workspacePath) => openSource({ path: file, workspacePath }),
    files: [file],
    carries: {
      agent: true,
      user: 'Letta passages belong to an agent, no user',
      vectors: true,
      malformed: ['wrongDimension', 'nan'],
      session: 'archival passages belong to an agent, not a conversation',
      times: true,
    },
  }
})

if (!hasGit()) console.warn('[conformance] git not found: Letta Code (a git-backed memory folder) is not run')
else
  describeSourceConformance('Letta Code (memory folder, git)', (dir, content) => {
    // one commit per memory at its time (created = the file's first commit); Letta Code pins system/, the rest is reference
    const root = buildLettaCodeMemory(
      path.join(dir, 'home'),
      'agent-lc',
      content.memories.map((m) => ({
        at: m.createdAt / 1000,
        message: m.id,
        files: [{ path: `${m.session === 'sess-0' ? 'system' : 'reference'}/${m.id}.md`, description: m.id, body: m.content }],
      })),
    )
    return {
      open: (workspacePath) => openSource({ path: root, workspacePath }),
      files: [root],
      carries: {
        agent: "a memory's agent is its folder's agent (one per folder)",
        user: 'Letta Code keeps no user',
        ...NO_VECTORS('memory files have no vectors'),
        session: 'memory files have no session',
        times: true,
      },
    }
  })
