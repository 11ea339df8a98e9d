/**
 * Letta V1 server, SQLite backend (`~/.letta/sqlite.db`), read in place.
 *
 * Layout read from letta-ai/letta @ 56ba9c25552605eec89de8ed3dc6394b625c1993 (the last commit
 * before the repository was archived): letta/orm/passage.py (`archival_passages`: id, text,
 * embedding_config JSON, metadata_ JSON, tags JSON, embedding = CommonVector, archive_id),
 * orm/custom_columns.py + helpers/converters.py (CommonVector = sqlite-vec `serialize_float32`,
 * i.e. a little-endian f32 BLOB; padding to 4096 only on Postgres), orm/passage_tag.py,
 * orm/archives_agents.py, orm/block.py (`block`: label, value, limit, description, read_only,
 * hidden, is_template, metadata_), orm/block_history.py, orm/blocks_agents.py, orm/message.py
 * (`messages`: role, text, content JSON parts, tool_calls, name, model, sequence_id,
 * conversation_id), orm/agent.py (`agents`), orm/base.py (created_at / updated_at naive UTC
 * DateTime text, is_deleted).
 *
 * Canonical mapping (kind / tier / source per row and the tables required are shared with the
 * Postgres layout in ./mapping.ts; the three kinds of rows interleave their rowids ×3 so _rid stays unique):
 *  - archival passages → memories: id, text → content, created_at, the owning agent through
 *    archives_agents (or a legacy agent_id column) → agent_id, kind 'semantic', tier 'long_term',
 *    metadata = { archival: true, tags (passages.tags or passage_tags), metadata, archive_id };
 *    embedding BLOB → embeddings under embedding_config.embedding_model (else `letta:<dim>`).
 *  - core memory blocks → **pinned memories**: tier 'working' (always in the context window)
 *    and metadata.pinned = true; label → summary, value → content, the first attached agent →
 *    agent_id (all of them in metadata.agents), block_history → metadata.history (the
 *    block's timeline, oldest first), limit / read_only / description / updated_at in metadata.
 *  - messages → turns: role, content (text, else the content parts' text, else the tool calls),
 *    session = conversation_id or the agent, turn = sequence_id, kind 'episodic', tier 'long_term'.
 * Not shown: soft-deleted rows (is_deleted), template blocks (is_template), source (file)
 * passages, tool / run / step tables.
 */
import type { Adapter } from '../../sqlite/layouts'
import { lettaRecords } from './records'
import { isLettaStore, LETTA_ROWS, lettaDetectedBecause, lettaModelLabel } from './mapping'

/** Naive UTC DateTime text (or with an offset) → epoch ms. */
const ms = (col: string) => `CAST(round((julianday(${col}) - 2440587.5) * 86400000) AS INTEGER)`
const json = (col: string) => `CASE WHEN json_valid(${col}) THEN json(${col}) ELSE ${col} END`

export const lettaAdapter: Adapter = {
  name: 'letta',
  detect(db, tables) {
    const a = tables.get('agents')
    const b = tables.get('block')
    const msg = tables.get('messages')
    const p = tables.get('archival_passages')
    if (!a || !b || !msg || !p || !isLettaStore(tables)) return null
    const live = (cols: Set<string>, alias: string) => (cols.has('is_deleted') ? `coalesce(${alias}.is_deleted, 0) = 0` : '1')
    const aa = tables.get('archives_agents')
    const passageAgent = p.has('agent_id')
      ? 'p.agent_id'
      : aa && p.has('archive_id')
        ? '(SELECT min(aa.agent_id) FROM archives_agents aa WHERE aa.archive_id = p.archive_id)'
        : 'NULL'
    const pt = tables.get('passage_tags')
    const tagsFromTable = pt ? `(SELECT json_group_array(t.tag) FROM passage_tags t WHERE t.passage_id = p.id)` : `json('[]')`
    const passageTags = p.has('tags') ? `CASE WHEN json_valid(p.tags) AND p.tags <> 'null' THEN json(p.tags) ELSE ${tagsFromTable} END` : tagsFromTable
    const passages = `SELECT p.rowid * 3 AS _rid, p.id AS id, ${passageAgent} AS agent_id, NULL AS user_id, NULL AS session_id, NULL AS role,
        '${LETTA_ROWS.passage.kind}' AS kind, '${LETTA_ROWS.passage.tier}' AS tier, p.text AS content, NULL AS summary, NULL AS salience,
        ${ms('p.created_at')} AS created_at, NULL AS last_used_at, NULL AS use_count, NULL AS turn, '${LETTA_ROWS.passage.source}' AS source,
        json_object('archival', json('true'), 'tags', json(${passageTags}), 'metadata', ${p.has('metadata_') ? json('p.metadata_') : 'NULL'},
          'archive_id', ${p.has('archive_id') ? 'p.archive_id' : 'NULL'}) AS metadata, NULL AS tenant_id
      FROM archival_passages p WHERE ${live(p, 'p')}`

    const ba = tables.get('blocks_agents')
    const bh = tables.get('block_history')
    const blockAgent = ba ? '(SELECT min(ba.agent_id) FROM blocks_agents ba WHERE ba.block_id = b.id)' : 'NULL'
    const blockAgents = ba ? '(SELECT json_group_array(ba.agent_id) FROM blocks_agents ba WHERE ba.block_id = b.id)' : `json('[]')`
    const history =
      bh && ['block_id', 'sequence_number', 'value'].every((c) => bh.has(c))
        ? `(SELECT json_group_array(json_object('sequence', h.sequence_number, 'value', h.value, 'actor_type', ${bh.has('actor_type') ? 'h.actor_type' : 'NULL'},
             'at', ${bh.has('created_at') ? ms('h.created_at') : 'NULL'}))
           FROM (SELECT * FROM block_history h0 WHERE h0.block_id = b.id ORDER BY h0.sequence_number) h)`
        : `json('[]')`
    const opt = (col: string) => (b.has(col) ? `b."${col}"` : 'NULL')
    const blocks = `SELECT b.rowid * 3 + 1 AS _rid, b.id AS id, ${blockAgent} AS agent_id, NULL AS user_id, NULL AS session_id, NULL AS role,
        '${LETTA_ROWS.block.kind}' AS kind, '${LETTA_ROWS.block.tier}' AS tier, b.value AS content, b.label AS summary, NULL AS salience,
        ${b.has('created_at') ? ms('b.created_at') : '0'} AS created_at, NULL AS last_used_at, NULL AS use_count, NULL AS turn,
        '${LETTA_ROWS.block.source}' AS source,
        json_object('pinned', json('true'), 'label', b.label, 'description', ${opt('description')}, 'limit', ${opt('limit')},
          'read_only', ${opt('read_only')}, 'hidden', ${opt('hidden')}, 'updated_at', ${b.has('updated_at') ? ms('b.updated_at') : 'NULL'},
          'metadata', ${b.has('metadata_') ? json('b.metadata_') : 'NULL'}, 'agents', json(${blockAgents}), 'history', json(${history})) AS metadata,
        NULL AS tenant_id
      FROM block b WHERE ${live(b, 'b')}${b.has('is_template') ? ' AND coalesce(b.is_template, 0) = 0' : ''}`

    const textParts = msg.has('content')
      ? `(SELECT group_concat(json_extract(j.value, '$.text'), char(10)) FROM json_each(CASE WHEN json_valid(m.content) THEN m.content ELSE '[]' END) j
           WHERE json_extract(j.value, '$.text') IS NOT NULL)`
      : 'NULL'
    const content = `coalesce(nullif(${msg.has('text') ? 'm.text' : 'NULL'}, ''), nullif(${textParts}, ''), ${msg.has('tool_calls') ? "nullif(nullif(m.tool_calls, 'null'), '[]')" : 'NULL'}, '')`
    const session = msg.has('conversation_id') ? 'coalesce(m.conversation_id, m.agent_id)' : 'm.agent_id'
    const mopt = (col: string) => (msg.has(col) ? `m.${col}` : 'NULL')
    const messages = `SELECT m.rowid * 3 + 2 AS _rid, m.id AS id, m.agent_id AS agent_id, NULL AS user_id, ${session} AS session_id, m.role AS role,
        '${LETTA_ROWS.message.kind}' AS kind, '${LETTA_ROWS.message.tier}' AS tier, ${content} AS content, NULL AS summary, NULL AS salience,
        ${ms('m.created_at')} AS created_at, NULL AS last_used_at, NULL AS use_count, ${mopt('sequence_id')} AS turn, '${LETTA_ROWS.message.source}' AS source,
        json_object('name', ${mopt('name')}, 'model', ${mopt('model')}, 'tool_call_id', ${mopt('tool_call_id')}, 'run_id', ${mopt('run_id')}) AS metadata,
        NULL AS tenant_id
      FROM messages m WHERE ${live(msg, 'm')}`

    const memories = [passages, blocks, messages].join(' UNION ALL ')
    const sessions = `SELECT s._rid AS _rid, s.id AS id, s.agent_id AS agent_id, NULL AS user_id, NULL AS tenant_id, s.started_at AS started_at,
        s.ended_at AS ended_at, ag.name AS summary, 0 AS is_archived
      FROM (SELECT min(m.rowid * 3 + 2) AS _rid, ${session} AS id, min(m.agent_id) AS agent_id, min(${ms('m.created_at')}) AS started_at,
              max(${ms('m.created_at')}) AS ended_at
            FROM messages m WHERE ${live(msg, 'm')} GROUP BY ${session}) s
      LEFT JOIN agents ag ON ag.id = s.agent_id`
    const hasEmb = p.has('embedding')
    const firstDim = hasEmb
      ? ((db.prepare(`SELECT length(embedding) / 4 FROM archival_passages WHERE embedding IS NOT NULL LIMIT 1`).pluck().get() as number | undefined) ?? null)
      : null
    const embeddings = hasEmb
      ? `SELECT p.rowid * 3 AS _rid, 'memory' AS owner_type, p.id AS owner_id,
           ${p.has('embedding_config') ? "CASE WHEN json_valid(p.embedding_config) THEN json_extract(p.embedding_config, '$.embedding_model') END" : 'NULL'} AS model,
           NULL AS dim, p.embedding AS vector
         FROM archival_passages p WHERE p.embedding IS NOT NULL AND ${live(p, 'p')}`
      : null
    return {
      layout: 'letta',
      memories,
      memoriesLite: memories,
      sessions,
      embeddings,
      recallEvents: null,
      agentFts: null,
      defaultModel: firstDim ? lettaModelLabel(firstDim) : null,
      detectedBecause: lettaDetectedBecause(tables, ''),
      agentRecords: [lettaRecords(db, msg)],
    }
  },
}
