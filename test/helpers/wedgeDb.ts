import fs from 'node:fs'
import Database from 'better-sqlite3'

/**
 * A copy of a canonical DB whose `recall_events` is a VIEW over a recursive CTE that never
 * ends (the hostile store of issue 21): opening it reads nothing from the view; any query of
 * it (`events.page`) spins in SQLite forever. Used by test/storeHost.test.ts and bench/storeHost.ts.
 */
export function makeWedgeDb(from: string, to: string): string {
  fs.copyFileSync(from, to)
  const d = new Database(to)
  d.exec(`DROP TABLE recall_events;
    CREATE VIEW recall_events AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
    SELECT 'e' || x AS id, x AS at, 'a' AS agent_id, NULL AS user_id, NULL AS session_id, NULL AS turn, 'q' AS query,
      NULL AS cue, NULL AS preset, NULL AS config, '[]' AS results FROM c WHERE x < 0`)
  d.close()
  return to
}

/**
 * A LangGraph checkpointer file whose `checkpoints` is a VIEW over a recursive CTE that never
 * ends: detection counts and decodes the checkpoints, so opening it spins in SQLite forever.
 */
export function makeCheckpointsWedgeDb(to: string): string {
  const d = new Database(to)
  d.exec(`CREATE VIEW checkpoints AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
    SELECT 't' AS thread_id, '' AS checkpoint_ns, 'c' || x AS checkpoint_id, NULL AS parent_checkpoint_id, 'json' AS type,
      '{}' AS checkpoint, '{}' AS metadata FROM c WHERE x < 0`)
  d.close()
  return to
}
