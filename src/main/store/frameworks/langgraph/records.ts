/**
 * LangGraph checkpointer threads, decoded (decode.ts): for the memory view's
 * turns (adapter.ts) and for the in-store event reader (src/main/events/langgraph/:
 * langmem `search_memory` / `manage_memory` tool calls and their ToolMessages).
 * Each thread's latest checkpoint (checkpoint_ns '') gives its messages; each
 * message is dated by the first checkpoint that holds it.
 */
import type Database from 'better-sqlite3'
import type { AgentRecords, LangGraphThreadRow } from '../../agentRecords'
import { checkpointTs, decodeTyped, messagesOf, type DecodedMessage } from './decode'

/** Above this many checkpoints only the latest of each thread is decoded (its messages then share its ts). */
const FULL_WALK_MAX = 20_000

export interface ThreadWalkStats {
  threads: number
  checkpoints: number
  /** checkpoints that could not be decoded (skipped) */
  failed: number
  serdes: Set<string>
}

/** Walk the threads of a checkpointer file, one decoded thread at a time. */
export function walkThreads(db: Database.Database): { stats: ThreadWalkStats; threads(): Generator<LangGraphThreadRow> } {
  const stats: ThreadWalkStats = { threads: 0, checkpoints: 0, failed: 0, serdes: new Set() }
  return {
    stats,
    *threads() {
      const total = db.prepare(`SELECT count(*) FROM checkpoints WHERE checkpoint_ns = ''`).pluck().get() as number
      stats.checkpoints = total
      const sql =
        total <= FULL_WALK_MAX
          ? `SELECT thread_id, checkpoint_id, type, checkpoint FROM checkpoints WHERE checkpoint_ns = '' ORDER BY thread_id, checkpoint_id`
          : `SELECT thread_id, max(checkpoint_id) AS checkpoint_id, type, checkpoint FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY thread_id`
      let cur: { thread: string; seen: Map<string, number | null>; latest: DecodedMessage[] | null; latestId: string; ts: number | null } | null = null
      const done = (): LangGraphThreadRow | null => {
        if (!cur || !cur.latest) return null
        stats.threads++
        const c = cur
        return {
          threadId: c.thread,
          checkpointId: c.latestId,
          ts: c.ts,
          messages: c.latest!,
          firstSeen: c.latest!.map((m, i) => (m.id ? c.seen.get(m.id) : undefined) ?? c.seen.get(`#${i}`) ?? c.ts),
        }
      }
      for (const r of db.prepare(sql).iterate() as Iterable<{ thread_id: string; checkpoint_id: string; type: string | null; checkpoint: unknown }>) {
        if (!cur || cur.thread !== String(r.thread_id)) {
          const t = done()
          if (t) yield t
          cur = { thread: String(r.thread_id), seen: new Map(), latest: null, latestId: '', ts: null }
        }
        let msgs: DecodedMessage[] | null
        let ts: number | null
        try {
          const cp = decodeTyped(r.type, r.checkpoint)
          // Reading the messages walks the decoded value too (a content nested 100,000 deep overflows the
          // stack in JSON.stringify): a checkpoint that cannot be read is skipped and counted, never fatal.
          msgs = messagesOf(cp)
          ts = msgs ? checkpointTs(cp) : null
          stats.serdes.add(r.type ?? 'json')
        } catch {
          stats.failed++
          continue
        }
        if (!msgs) continue
        msgs.forEach((m, i) => {
          const key = m.id ?? `#${i}`
          if (!cur!.seen.has(key)) cur!.seen.set(key, ts)
        })
        cur.latest = msgs
        cur.latestId = String(r.checkpoint_id)
        cur.ts = ts
      }
      const t = done()
      if (t) yield t
    },
  }
}

/** The checkpointer's threads for the event reader (each call re-reads). */
export function langgraphRecords(db: Database.Database): AgentRecords {
  return {
    kind: 'langgraph',
    label: 'LangGraph checkpoints (langmem search_memory / manage_memory)',
    rows: () => walkThreads(db).threads(),
  }
}
