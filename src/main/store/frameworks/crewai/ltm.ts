/**
 * CrewAI legacy long-term memory (SQLite `long_term_memory_storage.db`), read in place.
 *
 * DDL read from crewAIInc/crewAI @ 224f14c8f9ac55e0bbbba85ed915aebb8de31a1b,
 * lib/crewai/src/crewai/memory/storage/ltm_sqlite_storage.py:
 *   long_term_memories(id INTEGER PRIMARY KEY AUTOINCREMENT, task_description TEXT,
 *                      metadata TEXT, datetime TEXT, score REAL)
 * Rows are task evaluations: `datetime` is `str(time.time())` (epoch seconds as text;
 * older releases wrote `str(datetime.now())`), `score` is the evaluator's quality (0–10),
 * `metadata` JSON holds suggestions, quality, agent (the role) and expected_output.
 *
 * Canonical mapping: 'ltm-' || id → id · task_description → content · datetime → created_at ·
 * score / 10 → salience · metadata.agent → agent_id · metadata → metadata · kind 'reflection'
 * (a judgement about a past task) · tier 'long_term'.
 * Not shown: no vectors (CrewAI looks these rows up by exact task description, not by
 * similarity); dense recall needs a backfill into the workspace.
 */
import type { Adapter } from '../../sqlite/layouts'

/** `datetime` text → epoch ms: epoch seconds, or a naive local ISO datetime read as UTC. */
const CREATED_SQL = `CASE
  WHEN l.datetime GLOB '[0-9]*' AND l.datetime NOT GLOB '*-*' THEN CAST(round(CAST(l.datetime AS REAL) * 1000) AS INTEGER)
  ELSE CAST(round((julianday(l.datetime) - 2440587.5) * 86400000) AS INTEGER) END`

export const crewaiLtmAdapter: Adapter = {
  name: 'crewai-ltm',
  detect(_db, tables) {
    const t = tables.get('long_term_memories')
    if (!t || !['id', 'task_description', 'metadata', 'datetime', 'score'].every((c) => t.has(c))) return null
    if (tables.has('memories')) return null // a canonical DB that happens to carry the table wins
    const agent = `CASE WHEN json_valid(l.metadata) THEN json_extract(l.metadata, '$.agent') END`
    const memories = `SELECT l.rowid AS _rid, 'ltm-' || l.id AS id, ${agent} AS agent_id, NULL AS user_id, NULL AS session_id,
        NULL AS role, 'reflection' AS kind, 'long_term' AS tier, coalesce(l.task_description, '') AS content, NULL AS summary,
        CASE WHEN l.score IS NULL THEN NULL ELSE min(max(l.score / 10.0, 0), 1) END AS salience, ${CREATED_SQL} AS created_at,
        NULL AS last_used_at, NULL AS use_count, NULL AS turn, 'crewai-ltm' AS source, l.metadata AS metadata, NULL AS tenant_id
      FROM long_term_memories l`
    return {
      layout: 'crewai-ltm',
      memories,
      memoriesLite: memories,
      sessions: `SELECT NULL AS _rid, NULL AS id, NULL AS agent_id, NULL AS user_id, NULL AS tenant_id, NULL AS started_at,
        NULL AS ended_at, NULL AS summary, 0 AS is_archived WHERE 0`,
      embeddings: null,
      recallEvents: null,
      agentFts: null,
      defaultModel: null,
      detectedBecause: 'table long_term_memories(id, task_description, metadata, datetime, score): CrewAI legacy long-term memory',
    }
  },
}
