/**
 * Judged eval cases for the demo DB, from what the generator knows is true:
 * for each (agent, user, topic), a question about the topic whose relevant
 * memories are that pair's extracted knowledge on it (facts and procedures
 * grade 2, reflections grade 1), plus off-topic questions where the right
 * recall is nothing. Written into the demo's workspace, so Evaluate has
 * something to run on first open.
 */
import path from 'node:path'
import type { DemoTruth } from './types'
import { Workspace } from '../store/workspace/workspace'
import { saveCase } from '../eval/cases'

const OFF_TOPIC = ['What is the boiling point of tungsten?', 'Recommend a good jazz album from the 1950s.', 'Who won the chess world championship in 1972?']

export function writeDemoCases(dbPath: string, truths: readonly DemoTruth[], now: number): number {
  const ws = Workspace.open(`${path.resolve(dbPath)}.recallscope`)
  try {
    let n = 0
    {
      const sorted = [...truths].sort((a, b) => `${a.agentId}|${a.userId}|${a.topic}`.localeCompare(`${b.agentId}|${b.userId}|${b.topic}`))
      for (const t of sorted) {
        if (t.knowledge.length < 3) continue
        saveCase(
          ws,
          {
            id: `demo:${t.agentId}:${t.userId}:${t.topic}`,
            name: t.question,
            query: t.question,
            scope: { agentId: t.agentId, userId: t.userId },
            now,
            relevant: t.knowledge.map((k) => ({ id: k.id, grade: k.kind === 'reflection' ? 1 : 2 })),
            tags: ['demo', `topic:${t.topic}`, t.agentId],
          },
          now,
        )
        n++
      }
      const agents = [...new Set(sorted.map((t) => t.agentId))]
      for (const agentId of agents)
        for (const [i, q] of OFF_TOPIC.entries()) {
          saveCase(
            ws,
            { id: `demo:${agentId}:off-topic-${i + 1}`, name: q, query: q, scope: { agentId }, now, expectEmpty: true, tags: ['demo', 'off-topic', agentId] },
            now,
          )
          n++
        }
    }
    return n
  } finally {
    ws.close()
  }
}
