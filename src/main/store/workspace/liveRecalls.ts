/**
 * Recalls received live over OTLP (`live_recalls`, workspace migration v5): stored as the
 * LoggedRecall JSON the reader made, so a restart reads them back exactly. A row whose
 * JSON no longer parses is skipped by the caller (counted), never fatal.
 */
import type Database from 'better-sqlite3'
import { prep, runWriteTransaction } from '../sqlite/connection'

/** One stored live recall. */
export interface LiveRecallRow {
  key: string
  traceId: string | null
  at: number
  /** when the recall span ended (epoch ms): the decision is the first LLM span after it */
  endAt: number
  receivedAt: number
  decided: boolean
  /** the LoggedRecall as JSON */
  recall: string
}

/** Insert or replace recalls (a re-sent span replaces its row). One transaction. */
export function putLiveRecalls(db: Database.Database, rows: LiveRecallRow[]): number {
  const ins = prep(db, `INSERT OR REPLACE INTO live_recalls (key, trace_id, at, end_at, received_at, decided, recall) VALUES (?, ?, ?, ?, ?, ?, ?)`)
  runWriteTransaction(db, () => {
    for (const r of rows) ins.run(r.key, r.traceId, r.at, r.endAt, r.receivedAt, r.decided ? 1 : 0, r.recall)
  })
  return rows.length
}

/** Undecided recalls of some traces (to give them the decision a later LLM span carries). */
export function undecidedLiveRecalls(db: Database.Database, traceIds: string[]): LiveRecallRow[] {
  const out: LiveRecallRow[] = []
  const q = prep(
    db,
    `SELECT key, trace_id AS traceId, at, end_at AS endAt, received_at AS receivedAt, decided, recall FROM live_recalls WHERE trace_id = ? AND decided = 0`,
  )
  for (const t of new Set(traceIds)) {
    for (const r of q.all(t) as (Omit<LiveRecallRow, 'decided'> & { decided: number })[]) out.push({ ...r, decided: r.decided === 1 })
  }
  return out
}

/** Every stored live recall, oldest first, in pages of `limit` from `afterRowid` (bounded reads). */
export function liveRecallPage(db: Database.Database, afterRowid: number, limit: number): { rowid: number; recall: string }[] {
  return prep(db, `SELECT rowid, recall FROM live_recalls WHERE rowid > ? ORDER BY rowid LIMIT ?`).all(afterRowid, limit) as { rowid: number; recall: string }[]
}

export function countLiveRecalls(db: Database.Database): number {
  return prep(db, `SELECT count(*) FROM live_recalls`).pluck().get() as number
}

/** Forget every live recall (the Trace screen's "Clear live events"). */
export function clearLiveRecalls(db: Database.Database): number {
  return db.prepare(`DELETE FROM live_recalls`).run().changes
}
