/**
 * Mastra memory fixtures, written by Mastra's own storage client: `@mastra/libsql`'s LibSQLStore
 * (threads, messages, resources; it creates every mastra_* table from @mastra/core's schemas) and
 * LibSQLVector (the semantic-recall index table `memory_messages` with its libSQL vector index),
 * with rows shaped as `@mastra/memory` saves them: a message's content is MastraMessageContentV2
 * (`{format: 2, parts: [{type: 'step-start'}, {type: 'text', text}], content}`), a recall vector's
 * metadata `{message_id, thread_id, resource_id}`, a thread's working memory in its metadata and a
 * resource's in `workingMemory`.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { LibSQLStore, LibSQLVector } from '@mastra/libsql'

export interface MastraMessage {
  id: string
  thread: string
  role: 'user' | 'assistant'
  text: string
  at: string
  /** a semantic-recall vector (one chunk) */
  embedding?: number[]
}

export interface MastraThread {
  id: string
  resource: string
  title: string
  at: string
  /** thread-scoped working memory (kept in the thread's metadata) */
  workingMemory?: string
}

/** Write `<dir>/mastra.db` with the real client; returns its path. */
export async function buildMastra(dir: string, threads: MastraThread[], messages: MastraMessage[], resourceWm: Record<string, string>): Promise<string> {
  const file = path.join(dir, 'mastra.db')
  // The client writes a scratch file: libsql ends its connection when the object is collected, not at close(),
  // and that late close checkpoints the WAL into the file whenever it happens (measured: within a second, or
  // not for 15 s). The fixture is a consistent copy made by a connection closed here, so its bytes stay put.
  const scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recallscope-mastra-build-'))
  const scratch = path.join(scratchDir, 'mastra.db')
  const url = `file:${scratch}`
  const store = new LibSQLStore({ id: 'fixture', url })
  await store.init()
  const memory = await store.getStore('memory')
  if (!memory) throw new Error('LibSQLStore has no memory domain')
  for (const t of threads)
    await memory.saveThread({
      thread: {
        id: t.id,
        resourceId: t.resource,
        title: t.title,
        createdAt: new Date(t.at),
        updatedAt: new Date(t.at),
        metadata: t.workingMemory ? { workingMemory: t.workingMemory } : {},
      },
    })
  for (const [id, wm] of Object.entries(resourceWm))
    await memory.saveResource({
      resource: { id, workingMemory: wm, metadata: {}, createdAt: new Date('2025-01-01T00:00:00.000Z'), updatedAt: new Date('2025-02-01T00:00:00.000Z') },
    })
  const resOf = new Map(threads.map((t) => [t.id, t.resource]))
  if (messages.length)
    await memory.saveMessages({
      messages: messages.map((m) => ({
        id: m.id,
        threadId: m.thread,
        resourceId: resOf.get(m.thread),
        role: m.role,
        createdAt: new Date(m.at),
        content: { format: 2 as const, parts: [{ type: 'step-start' as const }, { type: 'text' as const, text: m.text }], content: m.text },
      })),
    })
  const withVector = messages.filter((m) => m.embedding)
  if (withVector.length) {
    const vector = new LibSQLVector({ id: 'fixture-vector', url })
    await vector.createIndex({ indexName: 'memory_messages', dimension: withVector[0].embedding!.length })
    await vector.upsert({
      indexName: 'memory_messages',
      vectors: withVector.map((m) => m.embedding!),
      metadata: withVector.map((m) => ({ message_id: m.id, thread_id: m.thread, resource_id: resOf.get(m.thread) })),
    })
    await vector.close()
  }
  // closed as an agent's process ends, so the fixture is checkpointed: one file, no -wal
  await store.close()
  const db = new Database(scratch, { readonly: true })
  try {
    await db.backup(file)
  } finally {
    db.close()
  }
  fs.rmSync(scratchDir, { recursive: true, force: true })
  return file
}
