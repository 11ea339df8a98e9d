/**
 * Trust round 3: a LangGraph checkpoint whose message content is nested 100,000 deep (JSON serde,
 * which V8 parses without recursion; reading the message's text then overflowed the stack) made
 * the whole store unopenable ("NOT_SQLITE: Maximum call stack size exceeded"). That checkpoint is
 * skipped and counted ("could not be decoded" in detected-because); the store opens with every
 * other checkpoint's messages, and its bytes do not change.
 */
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSource } from '../../src/main/store/registry'
import { createLangGraphJsCheckpoints, THREADS } from '../helpers/frameworks/langgraph'
import { sha256File, tmpDir } from '../helpers/tmp'

let t: ReturnType<typeof tmpDir>
beforeAll(() => {
  t = tmpDir()
})
afterAll(() => t.cleanup())

describe('a deeply nested LangGraph checkpoint', () => {
  it('is skipped and counted; the store opens with the other threads; bytes unchanged', async () => {
    const file = path.join(t.dir, 'checkpoints.db')
    await createLangGraphJsCheckpoints(file)
    const baseline = openSource({ path: file, workspacePath: path.join(t.dir, 'a.ws') })
    const memories = baseline.facts().counts.memories
    baseline.close()
    expect(memories).toBeGreaterThan(0)

    const depth = 100_000
    const content = `${'['.repeat(depth)}"hello"${']'.repeat(depth)}`
    const cp = `{"v":1,"ts":"2025-01-01T00:00:00Z","id":"deep","channel_values":{"messages":[{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":${content}}}]}}`
    const w = new Database(file)
    w.prepare(
      `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES ('deep-thread', '', 'deep-1', NULL, 'json', ?, '{}')`,
    ).run(Buffer.from(cp))
    w.close()
    expect(THREADS.some((x) => x.threadId === 'deep-thread')).toBe(false)

    const before = sha256File(file)
    const s = openSource({ path: file, workspacePath: path.join(t.dir, 'b.ws') })
    try {
      const f = s.facts()
      expect(f.counts.memories).toBe(memories)
      expect(f.detectedBecause).toMatch(/1 could not be decoded/)
      expect(s.memoriesPage({ limit: 1000, sessionId: 'deep-thread' }).rows).toHaveLength(0)
    } finally {
      s.close()
    }
    expect(sha256File(file)).toBe(before)
  }, 60_000)
})
