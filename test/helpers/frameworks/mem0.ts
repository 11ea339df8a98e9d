/**
 * mem0 fixtures.
 *  - TypeScript OSS: built with the real `mem0ai` client (OSS `Memory`, SQLite vector store
 *    "memory" provider + SQLite history) and a loopback fake Ollama embedder, so the files are
 *    exactly what mem0 writes. Memories are added with `infer: false` (no LLM: each message is
 *    stored as a memory), then one is updated and one deleted through the public API.
 *  - Python OSS: `history.db` created from the DDL in mem0/memory/storage.py (no npm client),
 *    with rows shaped the way mem0's Python Memory writes them (uuid ids, isoformat() with an
 *    offset and microseconds, ADD → UPDATE → DELETE).
 */
import fs from 'node:fs'
import path from 'node:path'
import crypto from 'node:crypto'
import Database from 'better-sqlite3'
import { startFakeOllama, type FakeServer, type FakeOllamaSwitches } from '../fakeOllama'

export const MEM0_DIM = 8
export const MEM0_MODEL = 'nomic-embed-text:latest'

export interface Mem0TsFixture {
  dir: string
  vectorPath: string
  historyPath: string
  /** ids by label, as mem0 returned them */
  ids: Record<string, string>
  /** what should be current after the update and delete: label → {text, userId, agentId, runId} */
  current: Record<string, { text: string; userId: string; agentId?: string; runId?: string }>
  deleted: string[]
  updated: { label: string; before: string; after: string }
}

/** One `memory.add` (infer: false: the message is stored as the memory). */
export interface Mem0Add {
  label: string
  text: string
  userId: string
  agentId?: string
  runId?: string
}

const ADDS: Mem0Add[] = [
  { label: 'coffee', text: 'Prefers oat milk in coffee', userId: 'alice', agentId: 'barista', runId: 'run-1' },
  { label: 'tea', text: 'Drinks green tea in the afternoon', userId: 'alice', agentId: 'barista', runId: 'run-1' },
  { label: 'city', text: 'Lives in Lisbon near the river', userId: 'alice', runId: 'run-2' },
  { label: 'dog', text: 'Has a dog named Miso', userId: 'alice' },
  { label: 'bob-job', text: 'Works as a night nurse', userId: 'bob', agentId: 'helper' },
  { label: 'bob-food', text: 'Allergic to peanuts', userId: 'bob', agentId: 'helper' },
  { label: 'gone', text: 'Temporary note to be deleted', userId: 'alice' },
]

type Mem0Memory = InstanceType<(typeof import('mem0ai/oss'))['Memory']>

/**
 * A real mem0 TS OSS `Memory` over `vectorPath` + `historyPath` (SQLite "memory" vector store,
 * SQLite history) embedding with a loopback fake Ollama (vectors = fakeUnitVector(text, MEM0_DIM)).
 * The fake server is closed when `fn` is done.
 */
async function withMem0<T>(vectorPath: string, historyPath: string, fn: (memory: Mem0Memory) => Promise<T>): Promise<T> {
  // mem0 reads MEM0_TELEMETRY when its module loads: no network from a test.
  process.env.MEM0_TELEMETRY = 'false'
  const ollama: FakeServer<FakeOllamaSwitches> = await startFakeOllama({ models: [{ name: MEM0_MODEL, dim: MEM0_DIM, embeddingLength: true }] })
  try {
    const { Memory } = await import('mem0ai/oss')
    const memory = new Memory({
      version: 'v1.1',
      embedder: { provider: 'ollama', config: { url: ollama.url, model: MEM0_MODEL, embeddingDims: MEM0_DIM } },
      vectorStore: { provider: 'memory', config: { collectionName: 'memories', dimension: MEM0_DIM, dbPath: vectorPath } },
      llm: { provider: 'ollama', config: { url: ollama.url, model: 'unused-llm' } },
      historyDbPath: historyPath,
    })
    return await fn(memory)
  } finally {
    await ollama.close()
  }
}

/** Add each memory through the public API; ids by label, as mem0 returned them. */
async function addMem0(memory: Mem0Memory, adds: Mem0Add[]): Promise<Record<string, string>> {
  const ids: Record<string, string> = {}
  for (const a of adds) {
    const r = (await memory.add([{ role: 'user', content: a.text }], {
      userId: a.userId,
      ...(a.agentId ? { agentId: a.agentId } : {}),
      ...(a.runId ? { runId: a.runId } : {}),
      infer: false,
    })) as { results: { id: string }[] }
    ids[a.label] = r.results[0].id
    // distinct createdAt milliseconds, so "newest first" has one answer
    await new Promise((res) => setTimeout(res, 3))
  }
  return ids
}

/**
 * Write `adds` with the real client into `dir` (vector_store.db + memory.db). Each memory's
 * vector is fakeUnitVector(text, MEM0_DIM), what the fake embedder served.
 */
export async function writeMem0TsStore(dir: string, adds: Mem0Add[]): Promise<{ vectorPath: string; historyPath: string; ids: Record<string, string> }> {
  fs.mkdirSync(dir, { recursive: true })
  const vectorPath = path.join(dir, 'vector_store.db')
  const historyPath = path.join(dir, 'memory.db')
  const ids = await withMem0(vectorPath, historyPath, (memory) => addMem0(memory, adds))
  // mem0's better-sqlite3 connections close with the process; WAL is not used.
  return { vectorPath, historyPath, ids }
}

/** Build a mem0 TypeScript OSS store (vector_store.db + memory.db) in `dir` with the real client. */
export async function createMem0TsFixture(dir: string): Promise<Mem0TsFixture> {
  fs.mkdirSync(dir, { recursive: true })
  const vectorPath = path.join(dir, 'vector_store.db')
  const historyPath = path.join(dir, 'memory.db')
  const after = 'Prefers oat milk in coffee, no sugar'
  const ids = await withMem0(vectorPath, historyPath, async (memory) => {
    const ids = await addMem0(memory, ADDS)
    await memory.update(ids.coffee, after)
    await memory.delete(ids.gone)
    return ids
  })
  const current: Mem0TsFixture['current'] = {}
  for (const a of ADDS)
    if (a.label !== 'gone') current[a.label] = { text: a.label === 'coffee' ? after : a.text, userId: a.userId, agentId: a.agentId, runId: a.runId }
  return { dir, vectorPath, historyPath, ids, current, deleted: [ids.gone], updated: { label: 'coffee', before: ADDS[0].text, after } }
}

export interface Mem0SearchHit {
  id: string
  memory: string
  score: number
  score_details: { semanticScore: number; bm25Score: number; entityBoost: number; maxPossibleScore: number; finalScore: number; threshold: number }
}

/**
 * mem0's own Memory.search (explain: true) over a fixture, with the same fake embedder: the
 * framework as the oracle for its preset.
 */
export async function searchMem0(fx: Mem0TsFixture, queries: { query: string; userId: string }[]): Promise<Mem0SearchHit[][]> {
  return withMem0(fx.vectorPath, fx.historyPath, async (memory) => {
    const out: Mem0SearchHit[][] = []
    for (const q of queries) {
      const r = (await memory.search(q.query, { filters: { user_id: q.userId }, explain: true })) as { results: Mem0SearchHit[] }
      out.push(r.results)
    }
    return out
  })
}

export interface Mem0PyFixture {
  path: string
  /** memory_id → expected current text (after replay) */
  current: Map<string, { text: string; createdAt: string; role: string | null }>
  deleted: string[]
  /** memory_id → events in order */
  events: Map<string, string[]>
  messages: { id: string; scope: string; role: string; content: string; createdAt: string }[]
}

/** One row of Python mem0's `history` table (insertion order is the real order). */
export interface Mem0PyEvent {
  memoryId: string
  old: string | null
  new: string | null
  event: 'ADD' | 'UPDATE' | 'DELETE'
  createdAt: string | null
  updatedAt: string | null
  isDeleted: 0 | 1
  actorId: string | null
  role: string | null
}

/** Python mem0's history.db from mem0/memory/storage.py's DDL, holding `events` and `messages` as Memory writes them. */
export function writeMem0PyHistory(file: string, events: Mem0PyEvent[], messages: Mem0PyFixture['messages'] = []): void {
  const db = new Database(file)
  db.exec(`
    CREATE TABLE IF NOT EXISTS history (
        id           TEXT PRIMARY KEY,
        memory_id    TEXT,
        old_memory   TEXT,
        new_memory   TEXT,
        event        TEXT,
        created_at   DATETIME,
        updated_at   DATETIME,
        is_deleted   INTEGER,
        actor_id     TEXT,
        role         TEXT
    );
    CREATE TABLE IF NOT EXISTS messages (
        id TEXT PRIMARY KEY,
        session_scope TEXT,
        role TEXT,
        content TEXT,
        name TEXT,
        created_at DATETIME
    );`)
  const ins = db.prepare(
    `INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, updated_at, is_deleted, actor_id, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  // The UUID primary key says nothing about the order; rowid (insertion) does.
  for (const e of events) ins.run(crypto.randomUUID(), e.memoryId, e.old, e.new, e.event, e.createdAt, e.updatedAt, e.isDeleted, e.actorId, e.role)
  const insM = db.prepare(`INSERT INTO messages (id, session_scope, role, content, name, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
  for (const m of messages) insM.run(m.id, m.scope, m.role, m.content, null, m.createdAt)
  db.close()
}

/** isoformat() of datetime.now(pytz.timezone("US/Pacific")) for an epoch ms: microseconds and an offset. */
export function pyPacificIso(ms: number): string {
  return `${new Date(ms - 8 * 3_600_000).toISOString().replace('Z', '')}456-08:00`
}

/** Python mem0's history.db, from mem0/memory/storage.py's DDL. */
export function createMem0PyHistory(file: string): Mem0PyFixture {
  const uuid = () => crypto.randomUUID()
  // isoformat() of datetime.now(pytz.timezone("US/Pacific")): microseconds and an offset.
  const t = (h: number) => `2025-03-0${1 + Math.floor(h / 24)}T${String(h % 24).padStart(2, '0')}:15:30.123456-08:00`
  const m1 = uuid()
  const m2 = uuid()
  const m3 = uuid()
  const m4 = uuid()
  const rows: Mem0PyEvent[] = []
  const ev = (
    memoryId: string,
    event: Mem0PyEvent['event'],
    old: string | null,
    nu: string | null,
    c: string | null,
    u: string | null,
    del: 0 | 1,
    actor: string | null,
    role: string,
  ) => rows.push({ memoryId, event, old, new: nu, createdAt: c, updatedAt: u, isDeleted: del, actorId: actor, role })
  ev(m1, 'ADD', null, 'Name is Ana', t(1), null, 0, 'ana', 'user')
  ev(m2, 'ADD', null, 'Likes jazz', t(2), null, 0, 'ana', 'user')
  ev(m3, 'ADD', null, 'Is vegetarian', t(3), null, 0, null, 'user')
  ev(m2, 'UPDATE', 'Likes jazz', 'Likes jazz and blues', t(2), t(30), 0, 'ana', 'user')
  ev(m3, 'DELETE', 'Is vegetarian', null, null, null, 1, null, 'user')
  ev(m4, 'ADD', null, 'Assistant promised a reminder', t(40), null, 0, null, 'assistant')
  ev(m2, 'UPDATE', 'Likes jazz and blues', 'Likes jazz, blues and soul', t(2), t(50), 0, 'ana', 'user')
  const events = new Map<string, string[]>()
  for (const r of rows) events.set(r.memoryId, [...(events.get(r.memoryId) ?? []), r.event])
  const messages = [
    { id: uuid(), scope: 'user_id=ana', role: 'user', content: 'I really like soul music too', createdAt: '2025-03-03T02:15:30.000001+00:00' },
    { id: uuid(), scope: 'user_id=ana', role: 'assistant', content: 'Noted, soul it is', createdAt: '2025-03-03T02:15:31.000001+00:00' },
  ]
  writeMem0PyHistory(file, rows, messages)
  return {
    path: file,
    current: new Map([
      [m1, { text: 'Name is Ana', createdAt: t(1), role: 'user' }],
      [m2, { text: 'Likes jazz, blues and soul', createdAt: t(2), role: 'user' }],
      [m4, { text: 'Assistant promised a reminder', createdAt: t(40), role: 'assistant' }],
    ]),
    deleted: [m3],
    events,
    messages,
  }
}
